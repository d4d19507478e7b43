// Parameter counts from config.json: every bundled preset must match its published total exactly.
#include <gtest/gtest.h>

#include <gpumem/gpumem.h>

#include "model.h"

using nlohmann::json;

TEST(Presets, EveryBundledModelCountsExactlyItsPublishedTotal) {
    json list = gpumem::list_presets();
    ASSERT_GE(list.size(), 20u);
    for (const json& p : list) {
        auto record = gpumem::find_preset(p["id"].get<std::string>());
        ASSERT_TRUE(record) << p["id"];
        gpumem::ModelRead read = gpumem::read_hf_config((*record)["config"]);
        ASSERT_TRUE(read.model) << p["id"];
        EXPECT_TRUE(read.warnings.empty()) << p["id"] << ": a bundled family must not fall back to the generic reading";
        EXPECT_EQ(gpumem::count_parameters(*read.model).total, (*record)["total_params"].get<std::uint64_t>()) << p["id"];
    }
}

TEST(Model, Llama31_8BCountsByComponent) {
    auto record = gpumem::find_preset("meta-llama/Llama-3.1-8B");
    ASSERT_TRUE(record);
    gpumem::ParamCount c = gpumem::count_parameters(*gpumem::read_hf_config((*record)["config"]).model);
    // embed 128256 x 4096 = 525,336,576; untied lm_head the same.
    EXPECT_EQ(c.embedding, 525336576u);
    EXPECT_EQ(c.lm_head, 525336576u);
    // per layer: q 4096² + k,v 2 x 1024 x 4096 + o 4096² = 41,943,040 attention;
    // 3 x 4096 x 14336 = 176,160,768 MLP; 2 x 4096 norms = 8,192 -> 218,112,000.
    EXPECT_EQ(c.per_layer, 218112000u);
    // 32 layers + embed + head + final norm 4096 = 8,030,261,248 (meta-llama's published total).
    EXPECT_EQ(c.total, 8030261248u);
}

TEST(Model, TiedEmbeddingsCountedOnce) {
    auto record = gpumem::find_preset("Qwen/Qwen2.5-0.5B");
    ASSERT_TRUE(record);
    gpumem::ParamCount c = gpumem::count_parameters(*gpumem::read_hf_config((*record)["config"]).model);
    EXPECT_EQ(c.lm_head, 0u);
    EXPECT_EQ(c.total, 494032768u);  // Qwen's published 0.49B (494,032,768)
}

TEST(Model, AliasesAndTwinsResolve) {
    EXPECT_EQ((*gpumem::find_preset("llama3-8b"))["model_id"], "meta-llama/Meta-Llama-3-8B");
    EXPECT_EQ((*gpumem::find_preset("META-LLAMA/llama-3.1-8b-instruct"))["model_id"], "meta-llama/Llama-3.1-8B");
    EXPECT_EQ((*gpumem::find_preset("https://huggingface.co/Qwen/Qwen3-8B"))["model_id"], "Qwen/Qwen3-8B");
    EXPECT_FALSE(gpumem::find_preset("no-such/model"));
}

TEST(Model, UnknownFamilyFallsBackWithAWarning) {
    json c = {{"model_type", "brand_new"}, {"hidden_size", 1024}, {"num_hidden_layers", 2},
              {"num_attention_heads", 8}, {"vocab_size", 1000}, {"intermediate_size", 4096}};
    gpumem::ModelRead read = gpumem::read_hf_config(c);
    ASSERT_TRUE(read.model);
    ASSERT_EQ(read.warnings.size(), 1u);
    EXPECT_NE(read.warnings[0].find("brand_new"), std::string::npos);
    // 2 x (4 x 1024² + 3 x 1024 x 4096 + 2 x 1024) + 2 x 1000 x 1024 + 1024
    EXPECT_EQ(gpumem::count_parameters(*read.model).total, 2u * (4u * 1048576u + 3u * 4194304u + 2048u) + 2048000u + 1024u);
}

TEST(Model, MissingFieldIsNamed) {
    json c = {{"model_type", "llama"}, {"hidden_size", 1024}, {"num_attention_heads", 8}, {"vocab_size", 1000}};
    gpumem::ModelRead read = gpumem::read_hf_config(c, "model.hf_config");
    EXPECT_FALSE(read.model);
    ASSERT_FALSE(read.issues.empty());
    EXPECT_EQ(read.issues[0].field, "model.hf_config.num_hidden_layers");
}

TEST(Model, HeadsMustDivideHidden) {
    json c = {{"model_type", "llama"}, {"hidden_size", 1000}, {"num_hidden_layers", 2},
              {"num_attention_heads", 7}, {"vocab_size", 1000}};
    gpumem::ModelRead read = gpumem::read_hf_config(c);
    EXPECT_FALSE(read.model);
}

TEST(Model, MixtureOfExpertsTotalAndActive) {
    auto count = [](const char* id) {
        auto record = gpumem::find_preset(id);
        EXPECT_TRUE(record) << id;
        return gpumem::count_parameters(*gpumem::read_hf_config((*record)["config"]).model);
    };
    // Mixtral 8x7B: per layer attention 41,943,040 + 8 experts x 3 x 4096 x 14336 + router 8 x 4096 + norms 8192
    // = 1,451,270,144; x 32 + embed and head 2 x 131,072,000 + final norm 4096.
    gpumem::ParamCount mixtral = count("mistralai/Mixtral-8x7B-v0.1");
    EXPECT_EQ(mixtral.total, 32ull * 1451270144 + 262144000 + 4096);
    // Active: 2 of 8 experts -> less 6 x 3 x 4096 x 14336 x 32 layers = 12,879,925,248 ("12.9B").
    EXPECT_EQ(mixtral.active, mixtral.total - 6ull * 3 * 4096 * 14336 * 32);
    // gpt-oss-20b: expert biases, router bias and per-head attention sinks all count.
    EXPECT_EQ(count("openai/gpt-oss-20b").total, 20914757184ull);
    // Qwen3-30B-A3B: 128 experts of width 768, top-8; OpenAI-style "3.3B active".
    gpumem::ParamCount qwen = count("Qwen/Qwen3-30B-A3B");
    EXPECT_EQ(qwen.total, 30532122624ull);
    EXPECT_EQ(qwen.active, qwen.total - 120ull * 3 * 2048 * 768 * 48);
}

TEST(Model, ExpertParallelismSplitsOnlyTheExperts) {
    json ep1 = gpumem::estimate({{"model", "mixtral-8x7b"}, {"engine", {{"type", "megatron"}}},
                                 {"parallelism", {{"data_parallel_size", 8}}}});
    json ep8 = gpumem::estimate({{"model", "mixtral-8x7b"}, {"engine", {{"type", "megatron"}}},
                                 {"parallelism", {{"data_parallel_size", 8}, {"expert_parallel_size", 8}}}});
    ASSERT_TRUE(ep8["ok"].get<bool>()) << ep8.dump();
    double experts = 32.0 * 8 * 3 * 4096 * 14336;
    double w1 = ep1["per_gpu"]["components"]["weights"].get<double>(), w8 = ep8["per_gpu"]["components"]["weights"].get<double>();
    EXPECT_NEAR(w1 - w8, experts * 7 / 8 * 2, 2);  // bf16: 7/8 of the expert weights leave each GPU
    json bad = gpumem::estimate({{"model", "mixtral-8x7b"}, {"parallelism", {{"data_parallel_size", 3}, {"expert_parallel_size", 3}}}});
    EXPECT_EQ(bad["errors"][0]["field"], "parallelism.expert_parallel_size");  // 3 does not divide 8 experts
    json no_dp = gpumem::estimate({{"model", "mixtral-8x7b"}, {"parallelism", {{"expert_parallel_size", 2}}}});
    EXPECT_EQ(no_dp["errors"][0]["field"], "parallelism.expert_parallel_size");  // needs dp x cp divisible by 2
}
