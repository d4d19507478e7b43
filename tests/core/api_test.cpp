// The JSON API: errors as values, gpu-mem-calculator's config format, determinism, and nothing thrown.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <gpumem/gpumem.h>

#include "catalogue/presets.h"  // core/src: detail::edit_distance
#include "estimate_helpers.h"

using nlohmann::json;

namespace {

// nlohmann writes NaN and infinities as null: the only nulls allowed are the documented ones.
void expect_no_stray_null(const json& j, const std::string& path) {
    if (j.is_object()) {
        for (auto& [k, v] : j.items())
            if (v.is_null()) EXPECT_TRUE(k == "gpus_needed" || k == "serving") << path + "." + k;
            else expect_no_stray_null(v, path + "." + k);
    } else if (j.is_array()) {
        for (const json& v : j) expect_no_stray_null(v, path + "[]");
    }
}

}  // namespace

TEST(Api, MalformedJsonIsAnErrorObject) {
    json r = json::parse(gpumem::estimate_json("{\"model\": "));
    EXPECT_FALSE(r["ok"].get<bool>());
    EXPECT_NE(r["errors"][0]["message"].get<std::string>().find("malformed JSON"), std::string::npos);
}

TEST(Api, MalformedJsonWithBytesThatAreNotUtf8IsStillAnErrorObject) {
    // The parser's message quotes what it last read: here a lone 0xE5 lead byte (found by the scenario
    // fuzzer). The refusal writes it as U+FFFD instead of failing into an "internal error".
    for (const auto& call : {gpumem::estimate_json, gpumem::maxfit_json, gpumem::plan_json, gpumem::params_json}) {
        json r = json::parse(call("{\"hardware\": {\"gpu\": \"\xe5RTX\"}}"));
        EXPECT_FALSE(r["ok"].get<bool>());
        const std::string problem = r["errors"][0]["problem"];
        EXPECT_EQ(problem.rfind("malformed JSON", 0), 0u) << problem;
        EXPECT_NE(problem.find("\xef\xbf\xbd"), std::string::npos) << problem;  // U+FFFD
    }
}

TEST(Api, HostileDocumentsNeverThrow) {
    const char* inputs[] = {"",
                            "null",
                            "[]",
                            "42",
                            "\"x\"",
                            "{}",
                            "{\"model\": null}",
                            "{\"model\": []}",
                            "{\"model\": {\"preset\": 7}}",
                            "{\"model\": {\"hf_config\": \"x\"}}",
                            "{\"model\": {\"hf_config\": {\"hidden_size\": -1}}}",
                            "{\"model\": \"llama3-8b\", \"training\": [] }",
                            "{\"model\": \"llama3-8b\", \"training\": {\"batch_size\": 1e300}}",
                            "{\"model\": \"llama3-8b\", \"training\": {\"seq_len\": 1.5}}",
                            "{\"model\": {\"num_parameters\": \"1e15\"}}",
                            "{\"model\": {\"num_parameters\": \"NaN\"}}",
                            ("{\"model\": \"llama3-8b\", \"mode\": \"inference\", \"inference\": {\"context_len\": "
                             "100000000, \"batch_size\": 1000000}}")};
    for (const char* in : inputs) {
        std::string out;
        ASSERT_NO_THROW(out = gpumem::estimate_json(in)) << in;
        json r = json::parse(out, nullptr, false);
        ASSERT_FALSE(r.is_discarded()) << in;
        ASSERT_TRUE(r.contains("ok")) << in;
        if (!r["ok"].get<bool>()) {
            ASSERT_FALSE(r["errors"].empty()) << in;
        } else {
            expect_no_stray_null(r, in);
        }
    }
}

TEST(Api, DeepNestingIsRefusedNotRecursed) {
    std::string deep = "{\"model\": " + std::string(100000, '[') + std::string(100000, ']') + "}";
    json r = json::parse(gpumem::estimate_json(deep));
    ASSERT_FALSE(r["ok"].get<bool>());
    EXPECT_EQ(r["errors"][0]["message"], "JSON nested deeper than 64 levels");
    // 64 levels is still a document (and an invalid model, said as such).
    std::string ok_depth = "{\"model\": " + std::string(62, '[') + std::string(62, ']') + "}";
    json r2 = json::parse(gpumem::estimate_json(ok_depth));
    EXPECT_EQ(r2["errors"][0]["field"], "model");
}

TEST(Api, NumbersBeyondDoubleAreMalformedNotFatal) {
    // Found by the config fuzzer: nlohmann reports 1e1643 as out_of_range, not as a parse error.
    std::string error;
    EXPECT_FALSE(gpumem::parse_json("{\"rms_norm_eps\": 1e1643}", error));
    EXPECT_NE(error.find("malformed JSON"), std::string::npos);
    json r = json::parse(gpumem::params_json("{\"hidden_size\": 1e400}"));
    EXPECT_FALSE(r["ok"].get<bool>());
    EXPECT_NE(r["errors"][0]["message"].get<std::string>().find("number overflow"), std::string::npos);
}

TEST(Api, ErrorsNameFieldValueAndWhatIsAllowed) {
    json r = gpumem::estimate({{"model", "llama3-8b"}, {"training", {{"batch_size", -4}}}});
    ASSERT_FALSE(r["ok"].get<bool>());
    EXPECT_EQ(r["errors"][0]["message"], "training.batch_size: must be a positive integer, got -4");
    json e = gpumem::estimate({{"model", "llama3-8b"}, {"training", {{"optimizer", "adamx"}}}});
    EXPECT_EQ(e["errors"][0]["field"], "training.optimizer");
    EXPECT_NE(e["errors"][0]["problem"].get<std::string>().find("adamw"), std::string::npos);
}

TEST(Api, Seed001ConfigFileIsAValidScenario) {
    // gpu-mem-calculator's configuration file, as its README shows it: sizes as strings, checkpointing as a level.
    json seed = gpumem::test::seed001_config();
    json r = gpumem::estimate(seed);
    ASSERT_TRUE(r["ok"].get<bool>()) << r.dump(2);
    EXPECT_EQ(r["parameters"]["total"], 7000000000ull);
    EXPECT_FALSE(r["parameters"]["exact"].get<bool>());
    // Its level 1 ("checkpoint attention output") recomputes inside the attention only: our selective.
    EXPECT_EQ(r["scenario"]["training"]["activation_checkpointing"], "selective");
    // The optimizer lives on the host: 7e9 x 12 B (fp32 master + m + v) / 8 ranks, plus fp32 grads.
    EXPECT_GT(r["host_bytes"].get<double>(), 7e9 * 12 / 8);
    EXPECT_EQ(r["per_gpu"]["components"]["optimizer_states"], 0);
}

TEST(Api, DefaultsAreListed) {
    json r = gpumem::estimate({{"model", "llama3-8b"}});
    std::string all = r["defaults_applied"].dump();
    EXPECT_NE(all.find("training.batch_size = 1"), std::string::npos);
    EXPECT_NE(all.find("training.precision = \\\"amp_fp32_weights\\\""), std::string::npos);
}

TEST(Api, SameInputSameBytes) {
    std::string a = gpumem::estimate_json(R"({"model": {"preset": "Qwen/Qwen3-8B"}, "mode": "inference"})");
    std::string b = gpumem::estimate_json(R"({"model": {"preset": "Qwen/Qwen3-8B"}, "mode": "inference"})");
    EXPECT_EQ(a, b);
}

TEST(Api, PresetsAndParams) {
    json p = json::parse(gpumem::presets_json());
    EXPECT_GE(p["models"].size(), 20u);
    EXPECT_GE(p["gpus"].size(), 10u);
    auto record = gpumem::find_preset("Qwen/Qwen3-8B");
    json r = json::parse(gpumem::params_json((*record)["config"].dump()));
    EXPECT_EQ(r["total"], 8190735360ull);  // Qwen's published 8,190,735,360
}

TEST(Api, UnknownPresetSuggestsNearest) {
    json r = gpumem::estimate({{"model", {{"preset", "meta-llama/Llama-3.1-8b-instrukt"}}}});
    ASSERT_FALSE(r["ok"].get<bool>());
    EXPECT_NE(r["errors"][0]["problem"].get<std::string>().find("meta-llama/Llama-3.1-8B"), std::string::npos);
}

TEST(Api, NearestPresetsForATypoAWrongOrganisationOrAVariant) {
    EXPECT_EQ(gpumem::nearest_presets("qwen/qwen2.5-7b-instruct").at(0), "Qwen/Qwen2.5-7B") << "a variant";
    EXPECT_EQ(gpumem::nearest_presets("someorg/Qwen2.5-7B").at(0), "Qwen/Qwen2.5-7B") << "a wrong organisation";
    EXPECT_EQ(gpumem::nearest_presets("Qwen/Qwen2.5-7C").at(0), "Qwen/Qwen2.5-7B") << "a typo";
    EXPECT_TRUE(gpumem::nearest_presets("completely-different/something-else-entirely").empty());
    EXPECT_LE(gpumem::nearest_presets("llama", 2).size(), 2u);
}

// GPU names as users type them (presets/gpus.json: ids, names, aliases, families).
TEST(Api, GpuNamesAsUsersTypeThem) {
    auto read = [](const std::string& typed) {
        return gpumem::estimate({{"model", {{"preset", "llama3-8b"}}}, {"hardware", {{"gpu", typed}}}});
    };
    const std::vector<std::pair<std::string, std::string>> exact = {{"rtx 3090", "RTX-3090-24GB"},
                                                                    {"NVIDIA GeForce RTX 4090", "RTX-4090-24GB"},
                                                                    {"a100 80gb", "A100-80GB"},
                                                                    {"A100_40GB", "A100-40GB"},
                                                                    {"H100 SXM", "H100-80GB"},
                                                                    {"h100-pcie", "H100-PCIe-80GB"},
                                                                    {"L40", "L40-48GB"},
                                                                    {"l40s", "L40S-48GB"},
                                                                    {"T4", "T4-16GB"},
                                                                    {"RTX 6000 Ada", "RTX-6000-Ada-48GB"}};
    // Names as nvidia-smi --query-gpu=name prints them: model, form factor, memory.
    const std::vector<std::pair<std::string, std::string>> smi = {
        {"NVIDIA A100-SXM4-40GB", "A100-40GB"},
        {"NVIDIA A100-SXM4-80GB", "A100-80GB"},
        {"NVIDIA A100-PCIE-40GB", "A100-40GB"},
        {"NVIDIA A100 80GB PCIe", "A100-80GB"},
        {"Tesla V100-SXM2-16GB", "V100-16GB"},
        {"Tesla V100-PCIE-32GB", "V100-32GB"},
        {"Tesla T4", "T4-16GB"},
        {"NVIDIA H100 80GB HBM3", "H100-80GB"},
        {"NVIDIA H100 PCIe", "H100-PCIe-80GB"},
        {"NVIDIA GH200 480GB", "GH200-96GB"},
        {"NVIDIA RTX 6000 Ada Generation", "RTX-6000-Ada-48GB"}};
    for (const auto* names : {&exact, &smi})
        for (const auto& [typed, id] : *names) {
            json r = read(typed);
            ASSERT_TRUE(r["ok"].get<bool>()) << typed << ": " << r.dump();
            EXPECT_EQ(r["scenario"]["hardware"]["gpu"], id) << typed;
        }
    EXPECT_NE(read("NVIDIA A100-SXM4-40GB")["defaults_applied"].dump().find("read as A100-40GB"), std::string::npos);
    // A model and a size the catalogue does not have: not guessed.
    EXPECT_FALSE(read("NVIDIA A100-SXM4-48GB")["ok"].get<bool>());
    // A family: its documented default, said in defaults_applied with the family's other cards.
    json a100 = read("A100");
    ASSERT_TRUE(a100["ok"].get<bool>());
    EXPECT_EQ(a100["scenario"]["hardware"]["gpu"], "A100-80GB");
    EXPECT_NE(a100["defaults_applied"].dump().find("names a family: read as A100-80GB"), std::string::npos);
    EXPECT_NE(a100["defaults_applied"].dump().find("also has A100-40GB"), std::string::npos);
    EXPECT_EQ(read("h100")["scenario"]["hardware"]["gpu"], "H100-80GB");
    // Part of one card's name: read as that card, and said.
    json r4090 = read("4090");
    EXPECT_EQ(r4090["scenario"]["hardware"]["gpu"], "RTX-4090-24GB");
    EXPECT_NE(r4090["defaults_applied"].dump().find("\\\"4090\\\" read as RTX-4090-24GB"), std::string::npos);
    // Ambiguous without a family, or unknown: an error naming the choices.
    json a10 = read("A10");
    ASSERT_FALSE(a10["ok"].get<bool>());
    EXPECT_NE(a10["errors"][0]["problem"].get<std::string>().find("could be any of A10G-24GB, A100-40GB, A100-80GB"),
              std::string::npos);
    json none = read("Z9");
    ASSERT_FALSE(none["ok"].get<bool>());
    EXPECT_NE(none["errors"][0]["problem"].get<std::string>().find("is not in the GPU catalogue"), std::string::npos);
}

// Text from outside shown on one line: what moves or hides text is escaped, letters kept, length bounded.
TEST(Api, DisplayTextIsOneLineEscapedAndBounded) {
    EXPECT_EQ(gpumem::display_text("llama"), "llama");
    EXPECT_EQ(gpumem::display_text("Qwen3 \xc3\xa9t\xc3\xa9"), "Qwen3 \xc3\xa9t\xc3\xa9");  // UTF-8 letters kept
    EXPECT_EQ(gpumem::display_text("a\nNOTICE: verified to fit"), "a\\nNOTICE: verified to fit");
    EXPECT_EQ(gpumem::display_text("\x1b[31mred\r\t"), "\\x1b[31mred\\r\\t");
    EXPECT_EQ(gpumem::display_text("x\x7fy"), "x\\x7fy");
    EXPECT_EQ(gpumem::display_text("\xc2\x85"), "\\u0085");  // C1 NEL
    EXPECT_EQ(gpumem::display_text("a\xe2\x80\xae"
                                   "cba"),
              "a\\u202ecba");  // right-to-left override
    EXPECT_EQ(gpumem::display_text("a\xe2\x80\xa8"
                                   "b"),
              "a\\u2028b");                                              // line separator
    EXPECT_EQ(gpumem::display_text("\xff\xc3"), "\\xff\\xc3");           // not UTF-8, truncated sequence
    EXPECT_EQ(gpumem::display_text("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // a surrogate is not UTF-8
    EXPECT_EQ(gpumem::display_text(std::string(500, 'a'), 10), std::string(10, 'a') + "...");
    EXPECT_EQ(gpumem::display_text("abc\n", 4), "abc...");  // an escape is never cut in two
    EXPECT_EQ(gpumem::display_text(std::string(3, '\0')), "\\x00\\x00\\x00");
}

// parse_json is linear in the text (issue #31): its depth check was a parse callback, and
// nlohmann's callback parser rescans the parent container at every closing brace, so a 300 kB
// document of empty objects took 11 s and these of 2 MiB would take minutes each. These take well
// under a second each natively; the bound is a stall detector, not a timing.
TEST(Api, WideDocumentsParseInLinearTime) {
    const std::size_t n = std::size_t{2} << 20;
    std::string array = "[", object = "{", arrays = "[";
    std::size_t objects = 0, members = 0;
    while (array.size() < n) array += objects++ ? ",{}" : "{}";
    array += "]";
    for (; object.size() < n; members++) object += (members ? ",\"k" : "\"k") + std::to_string(members) + "\":{}";
    object += "}";
    while (arrays.size() < n) arrays += arrays.size() > 1 ? ",[]" : "[]";
    arrays += "]";
    const auto start = std::chrono::steady_clock::now();
    std::string error;
    std::optional<json> a = gpumem::parse_json(array, error);
    ASSERT_TRUE(a) << error;
    EXPECT_EQ(a->size(), objects);
    std::optional<json> o = gpumem::parse_json(object, error);
    ASSERT_TRUE(o) << error;
    EXPECT_EQ(o->size(), members);
    EXPECT_TRUE(gpumem::parse_json(arrays, error)) << error;
    // And through the API, as a scenario: read, and refused for what it is.
    json r = json::parse(gpumem::estimate_json(object));
    EXPECT_FALSE(r["ok"].get<bool>());
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_LT(seconds, 30.0) << "three 2 MiB documents";
}

TEST(Api, JsonPastTheSizeLimitIsRefusedBySize) {
    std::string error;
    std::string at_limit = std::string(gpumem::kMaxJsonBytes - 2, ' ') + "{}";
    EXPECT_TRUE(gpumem::parse_json(at_limit, error)) << error;
    std::string over = at_limit + " ";
    EXPECT_FALSE(gpumem::parse_json(over, error));
    EXPECT_EQ(error, "JSON text of 16777217 bytes is larger than the limit of 16777216 bytes (16 MiB)");
    json r = json::parse(gpumem::params_json(over));
    EXPECT_FALSE(r["ok"].get<bool>());
    EXPECT_EQ(r["errors"][0]["message"], error);
}

TEST(Api, JsonDepthIsContainersOpenAtOnce) {
    std::string error;
    const int limit = gpumem::kMaxJsonDepth;
    EXPECT_TRUE(gpumem::parse_json(std::string(limit, '[') + "1" + std::string(limit, ']'), error)) << error;
    EXPECT_FALSE(gpumem::parse_json(std::string(limit + 1, '[') + std::string(limit + 1, ']'), error));
    EXPECT_EQ(error, "JSON nested deeper than 64 levels");
    // Depth, not count: many containers side by side at level 2 are fine.
    std::string side_by_side = "[";
    for (int i = 0; i < 1000; i++) side_by_side += std::string(i ? "," : "") + "[[]]";
    EXPECT_TRUE(gpumem::parse_json(side_by_side + "]", error)) << error;
    // A syntax error says where, whatever comes after it.
    EXPECT_FALSE(gpumem::parse_json("{\"a\": [1, 2,, 3]}" + std::string(1000, '['), error));
    EXPECT_EQ(error.rfind("malformed JSON: [json.exception.parse_error.101] parse error at line 1, column 13", 0), 0u)
        << error;
}

// The near-miss suggestion is bounded in the typed name (issue #31: a 1 MB model.preset spent 12 s
// in the edit distance). A 4 MiB name now gets its answer at once, the name shown bounded.
TEST(Api, AHugePresetNameIsAnsweredAtOnce) {
    const std::string huge = "meta-llama/Llama-3.1-8B" + std::string(std::size_t{4} << 20, 'x');
    const auto start = std::chrono::steady_clock::now();
    EXPECT_TRUE(gpumem::nearest_presets(huge).empty());
    json r = gpumem::estimate({{"model", {{"preset", huge}}}});
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ASSERT_FALSE(r["ok"].get<bool>());
    EXPECT_EQ(r["errors"][0]["field"], "model.preset");
    EXPECT_LT(r["errors"][0]["message"].get<std::string>().size(), 300u);
    EXPECT_LT(seconds, 10.0);
    // At the length limit a near miss is still found; past it, none is looked for.
    const std::string longest = "meta-llama/llama-3.1-8b-" + std::string(256 - 24, 'x');
    EXPECT_TRUE(gpumem::nearest_presets(longest).size() > 0u);
    EXPECT_TRUE(gpumem::nearest_presets(longest + "x").empty());
}

// GPU names and enumerated values take no edit distance, and a huge one is answered at once and
// shown bounded, in the error and in the note of a card read from a board name.
TEST(Api, HugeGpuNamesAndValuesAreAnsweredAtOnce) {
    const std::string junk(std::size_t{4} << 20, 'q');
    const auto start = std::chrono::steady_clock::now();
    json gpu = gpumem::estimate({{"model", {{"preset", "llama3-8b"}}}, {"hardware", {{"gpu", junk}}}});
    ASSERT_FALSE(gpu["ok"].get<bool>());
    EXPECT_EQ(gpu["errors"][0]["field"], "hardware.gpu");
    EXPECT_LT(gpu["errors"][0]["message"].get<std::string>().size(), 2000u);
    std::string board = "NVIDIA A100 80GB";
    while (board.size() < (std::size_t{1} << 20)) board += " PCIe";
    json read = gpumem::estimate({{"model", {{"preset", "llama3-8b"}}}, {"hardware", {{"gpu", board}}}});
    ASSERT_TRUE(read["ok"].get<bool>()) << read.dump().substr(0, 500);
    for (const json& note : read["scenario"]["defaults_applied"]) EXPECT_LT(note.get<std::string>().size(), 400u);
    json dtype = gpumem::estimate({{"model", {{"preset", "llama3-8b"}}}, {"training", {{"dtype", junk}}}});
    ASSERT_FALSE(dtype["ok"].get<bool>());
    EXPECT_LT(dtype["errors"][0]["message"].get<std::string>().size(), 400u);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_LT(seconds, 10.0);
}

// The banded edit distance is Levenshtein's wherever it is within the limit, and limit + 1 past it.
TEST(Api, EditDistanceWithinALimitIsLevenshtein) {
    auto full = [](const std::string& a, const std::string& b) {  // the whole table
        std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
        for (std::size_t i = 0; i <= a.size(); i++) d[i][0] = i;
        for (std::size_t j = 0; j <= b.size(); j++) d[0][j] = j;
        for (std::size_t i = 1; i <= a.size(); i++)
            for (std::size_t j = 1; j <= b.size(); j++)
                d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] != b[j - 1])});
        return d[a.size()][b.size()];
    };
    const std::vector<std::string> words = {"",           "a",          "ab",        "ba",         "kitten",
                                            "sitting",    "--seq-len",  "--seqlen",  "--seq-lens", "llama3-8b",
                                            "llama-3-8b", "qwen2.5-7b", "abcabcabc", "cbacbacba"};
    for (const std::string& a : words)
        for (const std::string& b : words)
            for (std::size_t limit = 0; limit <= 12; limit++) {
                const std::size_t exact = full(a, b);
                EXPECT_EQ(gpumem::detail::edit_distance(a, b, limit), exact <= limit ? exact : limit + 1)
                    << a << " / " << b << " within " << limit;
            }
    // A huge word against a short one is one comparison of lengths; two huge ones a band of the table.
    const std::string huge(std::size_t{1} << 20, 'a');
    EXPECT_EQ(gpumem::detail::edit_distance(huge, "llama", 3), 4u);
    EXPECT_EQ(gpumem::detail::edit_distance(huge, huge + "b", 3), 1u);
    EXPECT_EQ(gpumem::detail::edit_distance(huge, "b" + huge.substr(1), 3), 1u);
    EXPECT_EQ(gpumem::detail::edit_distance("abc", "xyz", static_cast<std::size_t>(-1)), 3u);
}

// An error's "value" quotes the input: the characters that reorder text are escaped, and a long
// value is cut at a character, never inside one (it stays UTF-8).
TEST(Api, AnErrorQuotesItsValueEscapedAndCutAtACharacter) {
    json r = json::parse(gpumem::estimate_json(R"({"model": {"preset": "llama3-8b"}, "mode": "fits\u202egniniart"})"));
    ASSERT_FALSE(r["ok"].get<bool>());
    EXPECT_EQ(r["errors"][0]["value"], "\"fits\\u202egniniart\"");
    std::string long_value;
    for (int i = 0; i < 100; i++) long_value += "\xc3\xa9";  // 100 x U+00E9, 2 bytes each
    r = json::parse(gpumem::estimate_json(R"({"model": {"preset": "llama3-8b"}, "mode": ")" + long_value + "\"}"));
    ASSERT_FALSE(r["ok"].get<bool>());
    const std::string value = r["errors"][0]["value"];
    EXPECT_EQ(value, "\"" + long_value.substr(0, 76 * 2) + "...");  // the quote and 76 characters, then the cut
}
