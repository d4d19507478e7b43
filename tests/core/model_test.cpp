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
