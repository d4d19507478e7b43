// fit(): the changes that make a scenario fit, each a scenario that runs as it stands and gives the
// figure the suggestion shows, ranked by tier (how much of the run it changes).
#include <gtest/gtest.h>

#include <gpumem/gpumem.h>

using nlohmann::json;

namespace {

const char* const kTiers[] = {"same_math", "slower", "numerics", "data", "hardware", "method"};

int tier_rank(const std::string& tier) {
    for (int i = 0; i < 6; ++i)
        if (tier == kTiers[i]) return i;
    return -1;
}

// Every suggestion's scenario, estimated again, gives its figure and fits; the least change comes
// first, then the tiers never go down.
void expect_consistent(const json& r) {
    int last = 0;
    bool first = true;
    for (const json& s : r["suggestions"]) {
        json again = gpumem::estimate(s["scenario"]);
        ASSERT_TRUE(again["ok"].get<bool>()) << s["change"];
        EXPECT_EQ(again["per_gpu"]["device_total_bytes"], s["device_total_bytes"]) << s["change"];
        EXPECT_EQ(again["fits"], s["fits"]) << s["change"];
        EXPECT_TRUE(again["fits"].get<bool>()) << s["change"];
        // What fit suggests is not borderline: the top of the run's error band fits too.
        EXPECT_EQ(again["verdict"], "fits") << s["change"];
        EXPECT_EQ(again["throughput"].value(
                      r["estimate"]["scenario"]["mode"] == "training" ? "step_time_s" : "decode_step_s", 0.0),
                  s["step_time_s"].get<double>())
            << s["change"];
        const int rank = tier_rank(s["tier"]);
        ASSERT_GE(rank, 0) << s["tier"];
        if (first && s["least_change"] == true) {
            first = false;
            continue;
        }
        first = false;
        EXPECT_GE(rank, last) << s["change"];
        last = rank;
    }
}

bool mentions(const json& r, const std::string& text) {
    for (const json& s : r["suggestions"])
        if (s["change"].get<std::string>().find(text) != std::string::npos) return true;
    return false;
}

bool suggests(const json& r, const std::string& change_prefix) {
    for (const json& s : r["suggestions"])
        if (s["change"].get<std::string>().rfind(change_prefix, 0) == 0) return true;
    return false;
}

}  // namespace

TEST(FitSuggestions, FullFineTuningOfAn8BOnOneH100ListsWhatFits) {
    // 8.03e9 parameters x (4 weights + 4 gradients + 8 AdamW states) = 128 GB of state alone: no
    // activation or loss change can fit it on 80 GB; adapters, a second GPU with ZeRO-3, or 8-bit
    // states in paged memory do.
    json r = gpumem::fit({{"model", "meta-llama/Llama-3.1-8B"}});
    ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
    EXPECT_FALSE(r["fits"].get<bool>());
    EXPECT_LT(r["headroom_bytes"].get<double>(), 0);
    ASSERT_FALSE(r["suggestions"].empty());
    for (const json& s : r["suggestions"]) EXPECT_TRUE(s["fits"].get<bool>()) << s["change"];
    EXPECT_TRUE(mentions(r, "LoRA"));
    EXPECT_TRUE(mentions(r, " GPUs with ZeRO-3"));  // 4: 2 fit the point (93 %), not the band's top
    // Checkpointing alone does not fit: it is never the whole change.
    for (const json& s : r["suggestions"]) EXPECT_NE(s["change"], "activation checkpointing: full");
    expect_consistent(r);
}

// The example: 8B full fine-tuning, batch 4 x 4096 tokens, one H100. Nothing single fits;
// combinations of the same method do (ZeRO-Offload of the optimizer; bf16 weights + 8-bit optimizer
// + smaller micro-batches), and the least change comes first.
TEST(FitSuggestions, WhenNothingAloneFitsTheSearchCombinesKnobsAndRanksBySpeed) {
    json r = gpumem::fit({{"model", "meta-llama/Llama-3.1-8B"},
                          {"training", {{"method", "full"}, {"batch_size", 4}, {"seq_len", 4096}}},
                          {"hardware", {{"gpu", "H100-80GB"}, {"num_gpus", 1}}}});
    ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
    EXPECT_FALSE(r["fits"].get<bool>());
    ASSERT_FALSE(r["suggestions"].empty());
    EXPECT_GT(r["search"]["candidates"].get<int>(), 10);
    const json& least = r["suggestions"][0];
    EXPECT_TRUE(least["least_change"].get<bool>());
    EXPECT_NE(least["change"].get<std::string>().find(" + "), std::string::npos) << least["change"];
    // The fastest run that keeps the method (tiers up to numerics) exists and is no slower than the
    // least change.
    const json* fastest_same_method = nullptr;
    for (const json& s : r["suggestions"])
        if (s["fastest"] == true && tier_rank(s["tier"]) <= tier_rank("numerics") &&
            (!fastest_same_method || s["step_time_s"] < (*fastest_same_method)["step_time_s"]))
            fastest_same_method = &s;
    ASSERT_NE(fastest_same_method, nullptr);
    EXPECT_EQ((*fastest_same_method)["scenario"]["training"]["method"], "full");
    EXPECT_LE((*fastest_same_method)["step_time_s"].get<double>(), least["step_time_s"].get<double>());
    expect_consistent(r);
}

TEST(FitSuggestions, InferenceSuggestsFormatsSizesAndTensorParallelism) {
    json r = gpumem::fit({{"model", "meta-llama/Llama-3.1-8B"},
                          {"mode", "inference"},
                          {"inference", {{"context_len", 131072}, {"batch_size", 8}}}});
    ASSERT_TRUE(r["ok"].get<bool>());
    EXPECT_TRUE(suggests(r, "concurrent sequences: "));
    EXPECT_TRUE(suggests(r, "context "));
    EXPECT_TRUE(mentions(r, " GPUs with tensor parallelism"));  // 8: 4 fit the point, not the band's top
    expect_consistent(r);
}

TEST(FitSuggestions, AScenarioThatFitsGetsWhatEachChangeSaves) {
    json r = gpumem::fit({{"model", "meta-llama/Llama-3.2-1B"}, {"training", {{"method", "lora"}}}});
    ASSERT_TRUE(r["ok"].get<bool>());
    EXPECT_TRUE(r["fits"].get<bool>());
    EXPECT_GT(r["headroom_bytes"].get<double>(), 0);
    ASSERT_FALSE(r["savings"].empty());
    for (const json& s : r["savings"]) EXPECT_GT(s["saves_bytes"].get<double>(), 0) << s["change"];
    // The faster runs the search found (e.g. without recomputation) are each faster than the scenario.
    for (const json& s : r["suggestions"]) EXPECT_LT(s["step_time_s"], r["step_time_s"]) << s["change"];
    expect_consistent(r);
}

// By default a run counts as fitting when the top of its error band fits; asked, its estimate is
// enough, and the borderline runs come back (2 GPUs with ZeRO-3 at 93 % of the card).
TEST(FitSuggestions, BorderlineRunsOnlyWhenAsked) {
    json strict = gpumem::fit({{"model", "meta-llama/Llama-3.1-8B"}});
    json loose = gpumem::fit({{"model", "meta-llama/Llama-3.1-8B"}, {"fit", {{"include_borderline", true}}}});
    ASSERT_TRUE(loose["ok"].get<bool>()) << loose.dump();
    EXPECT_FALSE(suggests(strict, "2 GPUs with ZeRO-3"));
    EXPECT_TRUE(suggests(loose, "2 GPUs with ZeRO-3"));
    EXPECT_TRUE(loose["include_borderline"].get<bool>());
    for (const json& s : loose["suggestions"]) EXPECT_TRUE(s["fits"].get<bool>()) << s["change"];
    json bad = gpumem::fit({{"model", "meta-llama/Llama-3.1-8B"}, {"fit", {{"include_borderline", "yes"}}}});
    EXPECT_FALSE(bad["ok"].get<bool>());
    EXPECT_EQ(bad["errors"][0]["field"], "fit.include_borderline");
    json unknown = gpumem::fit({{"model", "meta-llama/Llama-3.1-8B"}, {"fit", {{"top", 3}}}});
    EXPECT_EQ(unknown["errors"][0]["field"], "fit.top");
}

TEST(FitSuggestions, BadInputIsTheEstimatesError) {
    json r = gpumem::fit({{"model", "no/such-model"}});
    EXPECT_FALSE(r["ok"].get<bool>());
    EXPECT_EQ(r["errors"][0]["field"], "model.preset");
    EXPECT_FALSE(json::parse(gpumem::fit_json("[")).value("ok", true));
}
