// The settings tables (core/include/gpumem/settings.h): names round-trip, aliases parse, unknown values are
// refused with the allowed names, no spelling is claimed twice, and settings() lists them all.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include <gpumem/gpumem.h>

#include "scenario/fields.h"
#include "catalogue/presets.h"
#include "scenario/tunables.h"
#include "gpumem/settings.h"

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
    for (const Setting<E>& row : rows(E{}))
        expected += std::string(row.name) + (&row + 1 == rows(E{}).end() ? "" : ", ");
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
    json ok =
        gpumem::estimate({{"model", "llama3-8b"}, {"training", {{"optimizer", "Adam-8bit"}, {"dtype", "bfloat16"}}}});
    ASSERT_TRUE(ok["ok"].get<bool>()) << ok.dump();
    EXPECT_EQ(ok["scenario"]["training"]["optimizer"], "adamw_8bit");
    EXPECT_EQ(ok["scenario"]["training"]["dtype"], "bf16");
}

TEST(Settings, SettingsListsEveryFieldWithItsDefaultAndValues) {
    json s = gpumem::settings();
    for (const char* path : {"mode",
                             "training.method",
                             "training.dtype",
                             "training.precision",
                             "training.optimizer",
                             "training.optimizer_state_dtype",
                             "training.activation_checkpointing",
                             "training.attention",
                             "training.loss",
                             "training.quantization",
                             "training.framework",
                             "training.compile",
                             "training.lora.target_modules",
                             "inference.weight_format",
                             "inference.kv_cache_dtype",
                             "inference.engine",
                             "inference.attention",
                             "engine.type",
                             "engine.fsdp_sharding",
                             "engine.offload_optimizer",
                             "engine.offload_param",
                             "formats[].scope"}) {
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
        else
            for (const json& d : f["default"]) EXPECT_TRUE(names.count(d.get<std::string>())) << d;
    }
    EXPECT_EQ(s["training.optimizer"]["default"], "adamw");
    EXPECT_EQ(s["training.quantization"]["values"][1]["name"], "fp4");
    EXPECT_EQ(json::parse(gpumem::settings_json()), s);
}

TEST(Settings, BytesPerElementComeFromOneTable) {
    // kElementSizes: fp32 4, fp16 / bf16 2, fp8 / int8 1, int4 / fp4 half a byte.
    EXPECT_EQ(storage_bytes(Dtype::Fp32), 4);
    EXPECT_EQ(storage_bytes(Dtype::Bf16), 2);
    EXPECT_EQ(storage_bytes(Dtype::Fp8), 1);
    // Compute: fp8 runs keep bf16 weights and activations.
    EXPECT_EQ(compute_bytes(Dtype::Fp8), 2);
    EXPECT_EQ(compute_bytes(Dtype::Fp32), 4);
    EXPECT_EQ(storage_bytes(StateDtype::Int8), 1);
    EXPECT_EQ(storage_bytes(StateDtype::Fp16), 2);
    // quanto's int4 cache: 4 bits + an fp16 scale and zero point per 64 = 0.5 + 4/64 bytes.
    EXPECT_EQ(storage_bytes(KvCacheDtype::Int4), 0.5 + 4.0 / 64);
    EXPECT_EQ(storage_bytes(KvCacheDtype::Fp8), 1);
    EXPECT_EQ(dtype_bytes("bfloat16"), 2.0);
    EXPECT_FALSE(dtype_bytes("auto"));
    // Every settings row that names an element type has its bytes.
    for (const auto& row : kDtypes) EXPECT_GT(element_bytes(row.name), 0) << row.name;
    for (const auto& row : kKvCacheDtypes) {
        if (row.value == KvCacheDtype::Auto) continue;
        EXPECT_GT(storage_bytes(row.value), 0) << row.name;
    }
}

TEST(Settings, TunablesAreOneTableFoundByName) {
    std::set<std::string> names;
    TunableValues defaults;
    for (const TunableRow& t : kTunables) {
        SCOPED_TRACE(t.name);
        EXPECT_TRUE(names.insert(t.name).second);
        ASSERT_TRUE(find_tunable(t.name));
        EXPECT_EQ(*find_tunable(t.name), t.id);
        EXPECT_EQ(defaults[t.id], t.fallback);
        EXPECT_TRUE(*t.unit && *t.doc);
    }
    EXPECT_FALSE(find_tunable("nope"));
    // The result lists every tunable with its value, unit and doc, and an override by name.
    json r = gpumem::estimate(
        {{"model", {{"preset", "meta-llama/Llama-3.1-8B"}}}, {"overheads", {{"loss_fp32_copies", 2}}}});
    ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
    EXPECT_EQ(r["assumptions"]["overheads"].size(), kTunableCount);
    EXPECT_EQ(r["assumptions"]["overheads"]["loss_fp32_copies"]["value"], 2.0);
    EXPECT_EQ(r["scenario"]["overheads"]["loss_fp32_copies"], 2.0);
    EXPECT_EQ(r["assumptions"]["overheads"]["cuda_context_gib"]["unit"], "GiB");
    json bad = gpumem::estimate({{"model", {{"preset", "meta-llama/Llama-3.1-8B"}}}, {"overheads", {{"nope", 1}}}});
    ASSERT_FALSE(bad["ok"].get<bool>());
    EXPECT_NE(
        bad["errors"][0]["problem"].get<std::string>().find("known: allocator_fragmentation, chunked_loss_chunks"),
        std::string::npos);
}

TEST(Settings, ManualModelDtypeThatIsNoWeightFormatIsAnIssue) {
    // It was a null dereference: the checkpoint's dtype resolved to a format the scenario does not have.
    json r = gpumem::estimate({{"model", {{"num_parameters", "7B"}, {"dtype", "foo"}}}, {"mode", "inference"}});
    ASSERT_FALSE(r["ok"].get<bool>());
    EXPECT_EQ(r["errors"][0]["field"], "inference.weight_format");
    // A plain dtype resolves to its format, and the KV cache to that dtype.
    json ok = gpumem::estimate({{"model", {{"num_parameters", "7B"}, {"dtype", "fp16"}}}, {"mode", "inference"}});
    ASSERT_TRUE(ok["ok"].get<bool>()) << ok.dump();
    EXPECT_EQ(ok["scenario"]["inference"]["weight_format"], "fp16");
    EXPECT_EQ(ok["scenario"]["inference"]["kv_cache_dtype"], "fp16");
}
