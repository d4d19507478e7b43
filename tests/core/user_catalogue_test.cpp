// A user's data_types.json and gpu_types.json (core/include/gpumem/user_catalogue.h), the reader
// `gpumem table --config-dir` and the page's file import share: every shape the files come in,
// the rows they give, and an error naming the file and the field for each way an entry is wrong.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <gpumem/gpumem.h>

#include "gpumem/user_catalogue.h"

using nlohmann::json;
using namespace gpumem::detail;

namespace {

struct Read {
    bool ok = false;
    json rows;
    std::vector<std::string> notes;
    std::string error;
};

Read dtypes(const json& doc, const std::string& file = "data_types.json") {
    Read r;
    r.ok = read_user_dtypes(doc, file, r.rows, r.notes, r.error);
    return r;
}

Read gpus(const json& doc, const std::string& file = "gpu_types.json") {
    Read r;
    r.ok = read_user_gpus(doc, file, r.rows, r.notes, r.error);
    return r;
}

}  // namespace

// vram_calculator.py's README example: {"name": {"bytes_per_param", "description"}}.
TEST(UserCatalogue, DtypesInVramCalculatorsShape) {
    Read r = dtypes(json::parse(R"({"about": "my formats",
        "your_custom_format": {"bytes_per_param": 0.75, "description": "Your custom 6-bit format"},
        "my_fp6": {"bytes_per_param": 0.75}})"));
    ASSERT_TRUE(r.ok) << r.error;
    ASSERT_EQ(r.rows.size(), 2u);  // the "about" remark is no dtype
    const json& custom = r.rows[1]["id"] == "your_custom_format" ? r.rows[1] : r.rows[0];
    EXPECT_EQ(custom["bytes_per_param"], 0.75);
    EXPECT_EQ(custom["about"], "Your custom 6-bit format");
    ASSERT_FALSE(r.notes.empty());
    EXPECT_EQ(r.notes.back(), "data_types.json: 2 dtype(s) added");
}

// The catalogue's own shape (presets/dtypes.json): bits, or bytes_per_param.
TEST(UserCatalogue, DtypesInTheCataloguesShape) {
    Read r = dtypes(json::parse(R"({"formats": [{"id": "q6", "bits": 6, "about": "six bits"},
                                                {"id": "q3", "bytes_per_param": 0.375}]})"));
    ASSERT_TRUE(r.ok) << r.error;
    ASSERT_EQ(r.rows.size(), 2u);
    EXPECT_EQ(r.rows[0], json({{"id", "q6"}, {"bytes_per_param", 0.75}, {"about", "six bits"}}));
    EXPECT_EQ(r.rows[1]["bytes_per_param"], 0.375);
    EXPECT_EQ(r.notes.back(), "data_types.json: 2 dtype(s) added");
}

// A catalogue id is the catalogue's: skipped, with a note only when the file's size differs.
TEST(UserCatalogue, CatalogueDtypesAreNotReplaced) {
    Read r = dtypes(json::parse(R"({"int8": {"bytes_per_param": 3}, "bf16": {"bytes_per_param": 2}})"));
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_TRUE(r.rows.empty());
    ASSERT_EQ(r.notes.size(), 2u);
    EXPECT_NE(r.notes[0].find("data_types.json: int8 is a catalogue format"), std::string::npos) << r.notes[0];
    EXPECT_EQ(r.notes[1], "data_types.json: 0 dtype(s) added");
}

TEST(UserCatalogue, DtypeErrorsNameTheFileAndTheField) {
    Read r = dtypes(json::parse(R"({"mine": {"description": "no size"}})"), "cfg/data_types.json");
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.error, "cfg/data_types.json: mine.bytes_per_param: must be a number of bytes above 0 and at most 8");
    EXPECT_TRUE(r.rows.empty());

    r = dtypes(json::parse(R"({"mine": {"bytes_per_param": "0.75"}})"));  // text, not a number
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.error.find("data_types.json: mine.bytes_per_param:"), std::string::npos) << r.error;

    r = dtypes(json::parse(R"({"huge": {"bytes_per_param": 9}})"));
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.error.find("huge.bytes_per_param"), std::string::npos) << r.error;

    r = dtypes(json::parse(R"({"formats": [{"id": "ok", "bits": 6}, {"bits": 6}]})"));
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.error, "data_types.json: formats[1].id: each needs an \"id\"");

    r = dtypes(json::parse(R"({"formats": [{"id": "nobits"}]})"));
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.error.find("data_types.json: nobits.bytes_per_param:"), std::string::npos) << r.error;

    r = dtypes(json::parse("[1, 2]"));
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.error.rfind("data_types.json: must be a JSON object", 0), 0u) << r.error;
}

// Every GPU shape: one object, a list, {"gpus": [...]}, {"gpu_types": [...]}; memory_gb x 1024 MiB.
TEST(UserCatalogue, GpusInEveryShape) {
    const json card = {{"name", "RTX 5090"}, {"memory_gb", 32}, {"category", "consumer"}};
    const json other = {{"name", "My Card 20GB"}, {"id", "mine"}, {"memory_gb", 20}};
    for (const json& doc : {json(card), json::array({card, other}), json({{"gpus", {card, other}}}),
                            json({{"gpu_types", {card, other}}})}) {
        SCOPED_TRACE(doc.dump());
        Read r = gpus(doc);
        ASSERT_TRUE(r.ok) << r.error;
        ASSERT_EQ(r.rows.size(), doc.is_array() || !doc.contains("name") ? 2u : 1u);
        EXPECT_EQ(r.rows[0], json({{"id", "RTX-5090"},
                                   {"name", "RTX 5090"},
                                   {"memory_gb", 32},
                                   {"memory_bytes", std::uint64_t{32} << 30}}));
        if (r.rows.size() == 2) {
            EXPECT_EQ(r.rows[1]["id"], "mine");  // an id given is kept
            EXPECT_EQ(r.rows[1]["memory_bytes"], std::uint64_t{20} << 30);
        }
        EXPECT_EQ(r.notes.back(), "gpu_types.json: " + std::to_string(r.rows.size()) + " GPU(s) added");
    }
}

TEST(UserCatalogue, GpuErrorsNameTheFileAndTheField) {
    const std::string head = "gpu_types.json: each GPU needs a \"name\" and a positive \"memory_gb\", got ";
    Read r = gpus(json::parse(R"({"name": "X"})"));
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.error, head + R"({"name":"X"}: "memory_gb" is missing)");
    EXPECT_TRUE(r.rows.empty());

    r = gpus(json::parse(R"([{"name": "A", "memory_gb": 24}, {"memory_gb": 24}])"));
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.error, head + R"({"memory_gb":24} (entry 1): "name" is missing)");

    r = gpus(json::parse(R"({"name": "A", "memory_gb": "24"})"));
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.error.find(": \"memory_gb\" is not a number"), std::string::npos) << r.error;

    for (const char* bad : {R"({"name": "A", "memory_gb": 0})", R"({"name": "A", "memory_gb": -8})",
                            R"({"name": "A", "memory_gb": 1e300})"}) {
        r = gpus(json::parse(bad));
        EXPECT_FALSE(r.ok) << bad;
        EXPECT_NE(r.error.find(": \"memory_gb\" must be above 0 and at most 100000"), std::string::npos) << r.error;
    }

    r = gpus(json::parse(R"({"gpus": [7]})"), "my/gpu_types.json");
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.error.rfind("my/gpu_types.json: ", 0), 0u) << r.error;
    EXPECT_NE(r.error.find("an entry is not an object"), std::string::npos) << r.error;
}

// Pasted text has no file name: the shape tells the files apart, and from a scenario.
TEST(UserCatalogue, KindByShape) {
    EXPECT_EQ(user_catalogue_kind(json::parse(R"({"a": {"bytes_per_param": 0.75}, "about": "x"})")), "data_types.json");
    EXPECT_EQ(user_catalogue_kind(json::parse(R"({"formats": [{"id": "q6", "bits": 6}]})")), "data_types.json");
    EXPECT_EQ(user_catalogue_kind(json::parse(R"({"name": "C", "memory_gb": 20})")), "gpu_types.json");
    EXPECT_EQ(user_catalogue_kind(json::parse(R"([{"name": "C", "memory_gb": 20}])")), "gpu_types.json");
    EXPECT_EQ(user_catalogue_kind(json::parse(R"({"gpus": [{"name": "C", "memory_gb": 20}]})")), "gpu_types.json");
    EXPECT_EQ(user_catalogue_kind(json::parse(R"({"gpu_types": [{"name": "C", "memory_gb": 2}]})")), "gpu_types.json");
    // A scenario with its own formats, a config.json, a scenario: neither.
    EXPECT_EQ(user_catalogue_kind(json::parse(R"({"version": 1, "formats": [{"id": "q6", "bits": 6}]})")), "");
    EXPECT_EQ(user_catalogue_kind(json::parse(R"({"model_type": "llama", "hidden_size": 8})")), "");
    EXPECT_EQ(user_catalogue_kind(json::parse(R"({"mode": "inference", "inference": {"batch_size": 2}})")), "");
    EXPECT_EQ(user_catalogue_kind(json::parse("[1]")), "");
}

// A dtype row as a scenario's format: the estimate's weights are the parameters x bytes_per_param.
TEST(UserCatalogue, DtypeAsAScenarioFormat) {
    Read r = dtypes(json::parse(R"({"your_custom_format": {"bytes_per_param": 0.75}})"));
    ASSERT_TRUE(r.ok) << r.error;
    const json format = user_format(r.rows[0]);
    EXPECT_EQ(format["bits"], 6.0);
    const json scenario = {{"model", "openai-community/gpt2-medium"},
                           {"mode", "inference"},
                           {"formats", {format}},
                           {"inference", {{"weight_format", "your_custom_format"}}}};
    const json result = gpumem::estimate(scenario);
    ASSERT_TRUE(result.value("ok", false)) << result.dump();
    const double params = result["parameters"]["total"].get<double>();
    EXPECT_EQ(result["per_gpu"]["components"]["weights"].get<double>(), params * 0.75);
}
