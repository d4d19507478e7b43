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

// Every suggestion's scenario, estimated again, gives its figure; the tiers never go down.
void expect_consistent(const json& r) {
    int last = 0;
    for (const json& s : r["suggestions"]) {
        json again = gpumem::estimate(s["scenario"]);
        ASSERT_TRUE(again["ok"].get<bool>()) << s["change"];
        EXPECT_EQ(again["per_gpu"]["device_total_bytes"], s["device_total_bytes"]) << s["change"];
        EXPECT_EQ(again["fits"], s["fits"]) << s["change"];
        const int rank = tier_rank(s["tier"]);
        ASSERT_GE(rank, 0) << s["tier"];
        if (s["change"].get<std::string>().find(" + ") == std::string::npos) {  // the combination comes last
            EXPECT_GE(rank, last) << s["change"];
            last = rank;
        }
    }
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
    EXPECT_TRUE(suggests(r, "LoRA"));
    EXPECT_TRUE(suggests(r, "QLoRA"));
    EXPECT_TRUE(suggests(r, "2 GPUs with ZeRO-3"));
    EXPECT_FALSE(suggests(r, "activation checkpointing"));  // alone it does not fit
    expect_consistent(r);
}

TEST(FitSuggestions, WhenNothingAloneFitsTheChangesAreCombined) {
    json r = gpumem::fit({{"model", "meta-llama/Llama-3.1-8B"},
                          {"training", {{"batch_size", 8}}},
                          {"parallelism", {{"data_parallel_size", 8}}},
                          {"hardware", {{"num_gpus", 8}}}});
    ASSERT_TRUE(r["ok"].get<bool>());
    ASSERT_FALSE(r["suggestions"].empty());
    const json& last = r["suggestions"].back();
    EXPECT_NE(last["change"].get<std::string>().find(" + "), std::string::npos) << last["change"];
    EXPECT_TRUE(last["fits"].get<bool>());
    expect_consistent(r);
}

TEST(FitSuggestions, InferenceSuggestsFormatsSizesAndTensorParallelism) {
    json r = gpumem::fit({{"model", "meta-llama/Llama-3.1-8B"},
                          {"mode", "inference"},
                          {"inference", {{"context_len", 131072}, {"batch_size", 8}}}});
    ASSERT_TRUE(r["ok"].get<bool>());
    EXPECT_TRUE(suggests(r, "concurrent sequences: "));
    EXPECT_TRUE(suggests(r, "context "));
    EXPECT_TRUE(suggests(r, "4 GPUs with tensor parallelism"));
    expect_consistent(r);
}

TEST(FitSuggestions, AScenarioThatFitsGetsWhatEachChangeSaves) {
    json r = gpumem::fit({{"model", "meta-llama/Llama-3.2-1B"}, {"training", {{"method", "lora"}}}});
    ASSERT_TRUE(r["ok"].get<bool>());
    EXPECT_TRUE(r["fits"].get<bool>());
    EXPECT_GT(r["headroom_bytes"].get<double>(), 0);
    for (const json& s : r["suggestions"]) EXPECT_GT(s["saves_bytes"].get<double>(), 0) << s["change"];
    expect_consistent(r);
}

TEST(FitSuggestions, BadInputIsTheEstimatesError) {
    json r = gpumem::fit({{"model", "no/such-model"}});
    EXPECT_FALSE(r["ok"].get<bool>());
    EXPECT_EQ(r["errors"][0]["field"], "model.preset");
    EXPECT_FALSE(json::parse(gpumem::fit_json("[")).value("ok", true));
}
