// The settings tables (core/src/settings.h): names round-trip, aliases parse, unknown values are
// refused with the allowed names, no spelling is claimed twice, and settings() lists them all.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include <gpumem/gpumem.h>

#include "scenario/fields.h"
#include "catalogue/presets.h"
#include "settings.h"

using nlohmann::json;
using namespace gpumem::detail;

namespace {

std::vector<std::string> split_aliases(const char* aliases) {
    std::vector<std::string> out;
    std::string rest(aliases);
    while (!rest.empty()) {
        std::size_t comma = rest.find(',');
        out.push_back(rest.substr(0, comma));
        if (comma == std::string::npos) break;
        rest.erase(0, comma + 1);
    }
    return out;
}

// Every property of one table, for any of the enums.
template <typename E>
void check_table(const char* what) {
    SCOPED_TRACE(what);
    std::set<std::string> spellings;
    std::set<E> values;
    for (const Setting<E>& row : rows(E{})) {
        EXPECT_TRUE(values.insert(row.value).second) << "two rows for one value: " << row.name;
        // The JSON name parses back to its own value and is what name() gives.
        EXPECT_EQ(parse_setting<E>(row.name), row.value) << row.name;
        EXPECT_STREQ(name(row.value), row.name);
        EXPECT_EQ(normalize_setting(row.name), row.name) << "a name must be in the normalized spelling";
        EXPECT_TRUE(spellings.insert(row.name).second) << "spelling used twice: " << row.name;
        // Upper case and '-' for '_' are the same spelling.
        std::string shouted = row.name;
        for (char& c : shouted) c = c == '_' ? '-' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        EXPECT_EQ(parse_setting<E>(shouted), row.value) << shouted;
        for (const std::string& alias : split_aliases(row.aliases)) {
            EXPECT_EQ(parse_setting<E>(alias), row.value) << alias;
            EXPECT_EQ(normalize_setting(alias), alias) << "an alias must be in the normalized spelling";
            EXPECT_TRUE(spellings.insert(alias).second) << "spelling used twice: " << alias;
        }
        EXPECT_GT(std::string(row.label).size(), 0u) << row.name;
        EXPECT_GT(std::string(row.help).size(), 0u) << row.name;
    }
    EXPECT_FALSE(parse_setting<E>("no-such-value"));
    EXPECT_FALSE(parse_setting<E>(""));
    // The refusal lists every name, in the table's order.
    std::string expected = "must be one of ";
    for (const Setting<E>& row : rows(E{})) expected += std::string(row.name) + (&row + 1 == rows(E{}).end() ? "" : ", ");
    EXPECT_EQ(allowed_text<E>(), expected);
}

}  // namespace

TEST(Settings, EveryTableRoundTripsAndClaimsEachSpellingOnce) {
    check_table<Mode>("mode");
    check_table<Method>("method");
    check_table<Dtype>("dtype");
    check_table<Precision>("precision");
    check_table<Optimizer>("optimizer");
    check_table<StateDtype>("optimizer_state_dtype");
    check_table<Checkpointing>("activation_checkpointing");
    check_table<Attention>("attention");
    check_table<Loss>("loss");
    check_table<Quantization>("quantization");
    check_table<Framework>("framework");
    check_table<Compile>("compile");
    check_table<InferenceEngine>("inference.engine");
    check_table<KvCacheDtype>("kv_cache_dtype");
    check_table<WeightFormat>("weight_format");
    check_table<EngineType>("engine.type");
    check_table<FsdpSharding>("fsdp_sharding");
    check_table<Offload>("offload");
    check_table<LoraTarget>("target_modules");
    check_table<FormatScope>("formats[].scope");
}

TEST(Settings, AliasesResolveToTheirValue) {
    EXPECT_EQ(parse_setting<Optimizer>("adam_8bit"), Optimizer::Adamw8bit);
    EXPECT_EQ(parse_setting<Optimizer>("paged_adamw"), Optimizer::PagedAdamw32bit);
    EXPECT_EQ(parse_setting<Dtype>("bfloat16"), Dtype::Bf16);
    EXPECT_EQ(parse_setting<InferenceEngine>("llama.cpp"), InferenceEngine::LlamaCpp);
    EXPECT_EQ(parse_setting<LoraTarget>("all-linear"), LoraTarget::AllLinear);
}

TEST(Settings, WeightFormatsAreAutoThenTheCatalogueInItsOrder) {
    std::vector<std::string> table, catalogue{"auto"};
    for (const auto& row : kWeightFormats) table.push_back(row.name);
    for (const Format& f : builtin_formats()) catalogue.push_back(f.id);
    EXPECT_EQ(table, catalogue);
}

TEST(Settings, TheScenarioReaderRefusesWithTheTableAndAcceptsAliases) {
    json bad = gpumem::estimate({{"model", "llama3-8b"}, {"engine", {{"type", "horovod"}}}});
    ASSERT_FALSE(bad["ok"].get<bool>());
    EXPECT_EQ(bad["errors"][0]["message"],
              "engine.type: must be one of none, ddp, deepspeed, fsdp, megatron, megatron_deepspeed, got \"horovod\"");
    // An alias reads as its name; the resolved scenario holds the name.
    json ok = gpumem::estimate({{"model", "llama3-8b"}, {"training", {{"optimizer", "Adam-8bit"}, {"dtype", "bfloat16"}}}});
    ASSERT_TRUE(ok["ok"].get<bool>()) << ok.dump();
    EXPECT_EQ(ok["scenario"]["training"]["optimizer"], "adamw_8bit");
    EXPECT_EQ(ok["scenario"]["training"]["dtype"], "bf16");
}

TEST(Settings, SettingsListsEveryFieldWithItsDefaultAndValues) {
    json s = gpumem::settings();
    for (const char* path : {"mode", "training.method", "training.dtype", "training.precision", "training.optimizer",
                             "training.optimizer_state_dtype", "training.activation_checkpointing", "training.attention",
                             "training.loss", "training.quantization", "training.framework", "training.compile",
                             "training.lora.target_modules", "inference.weight_format", "inference.kv_cache_dtype",
                             "inference.engine", "inference.attention", "engine.type", "engine.fsdp_sharding",
                             "engine.offload_optimizer", "engine.offload_param", "formats[].scope"}) {
        SCOPED_TRACE(path);
        ASSERT_TRUE(s.contains(path));
        const json& f = s[path];
        EXPECT_TRUE(f["help"].is_string());
        ASSERT_TRUE(f["values"].is_array());
        std::set<std::string> names;
        for (const json& v : f["values"]) {
            names.insert(v["name"].get<std::string>());
            EXPECT_TRUE(v["aliases"].is_array());
            EXPECT_TRUE(v["label"].is_string());
            EXPECT_TRUE(v["help"].is_string());
        }
        if (f["default"].is_string()) EXPECT_TRUE(names.count(f["default"].get<std::string>())) << f["default"];
        else for (const json& d : f["default"]) EXPECT_TRUE(names.count(d.get<std::string>())) << d;
    }
    EXPECT_EQ(s["training.optimizer"]["default"], "adamw");
    EXPECT_EQ(s["training.quantization"]["values"][1]["name"], "fp4");
    EXPECT_EQ(json::parse(gpumem::settings_json()), s);
}
