// The scenario reader on gpu-mem-calculator's config format: its engine and sharding names, its
// checkpointing levels, null fields, num_gpus as the cluster and a model given by its shape.
// tests/compat/config_files.test.mjs runs the files that project ships through the CLI.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include <gpumem/gpumem.h>

#include "estimate_helpers.h"

using nlohmann::json;

namespace {

// gpu-mem-calculator's README example: Llama 2 7B under ZeRO-3 on 8 GPUs.
using gpumem::test::seed001_config;

bool any_contains(const json& lines, const std::string& text) {
    return std::any_of(lines.begin(), lines.end(),
                       [&](const json& l) { return l.get<std::string>().find(text) != std::string::npos; });
}

}  // namespace

TEST(Scenario, CheckpointingLevelsMapToOurModes) {
    // Its levels: 0 none; 1 attention output, 2 attention input (recomputed inside the attention:
    // selective); 3 layer + attention, 4 full (whole layers: full).
    const char* expected[] = {"none", "selective", "selective", "full", "full"};
    for (int level = 0; level <= 4; ++level) {
        json doc = seed001_config();
        doc["training"]["activation_checkpointing"] = level;
        json r = gpumem::estimate(doc);
        ASSERT_TRUE(r["ok"].get<bool>()) << r.dump(2);
        EXPECT_EQ(r["scenario"]["training"]["activation_checkpointing"], expected[level]) << level;
        EXPECT_TRUE(any_contains(r["defaults_applied"], "gpu-mem-calculator's level " + std::to_string(level)));
    }
    json doc = seed001_config();
    doc["training"]["activation_checkpointing"] = true;
    EXPECT_EQ(gpumem::estimate(doc)["scenario"]["training"]["activation_checkpointing"], "full");
    doc["training"]["activation_checkpointing"] = 5;
    json bad = gpumem::estimate(doc);
    ASSERT_FALSE(bad["ok"].get<bool>());
    EXPECT_EQ(bad["errors"][0]["field"], "training.activation_checkpointing");
}

TEST(Scenario, AFrameworkReleaseNeedsItsFramework) {
    // training.framework_version names a release family of one framework: torchtune_0.1 under another
    // framework is refused naming the field; an unknown family is refused with the families listed.
    json doc = {{"model", {{"preset", "meta-llama/Llama-2-7b-hf"}}},
                {"training", {{"framework", "transformers"}, {"framework_version", "torchtune_0.1"}}}};
    json bad = gpumem::estimate(doc);
    ASSERT_FALSE(bad["ok"].get<bool>());
    EXPECT_EQ(bad["errors"][0]["field"], "training.framework_version");
    EXPECT_NE(bad["errors"][0]["problem"].get<std::string>().find("torchtune"), std::string::npos);
    doc["training"]["framework"] = "torchtune";
    EXPECT_TRUE(gpumem::estimate(doc)["ok"].get<bool>());
    // A release names its framework: left out, the framework is the release's (recorded as a default).
    json open = {{"model", {{"preset", "meta-llama/Llama-2-7b-hf"}}},
                 {"training", {{"framework_version", "torchtune_0.1"}}}};
    json r = gpumem::estimate(open);
    ASSERT_TRUE(r["ok"].get<bool>()) << r.dump().substr(0, 400);
    EXPECT_EQ(r["scenario"]["training"]["framework"], "torchtune");
    const auto& applied = r["defaults_applied"];
    EXPECT_TRUE(std::any_of(applied.begin(), applied.end(), [](const json& d) {
        return d == "training.framework = \"torchtune\"";
    })) << applied.dump();
    open["training"]["framework_version"] = "transformers_2022";
    EXPECT_EQ(gpumem::estimate(open)["scenario"]["training"]["framework"], "transformers");
    doc["training"]["framework_version"] = "0.9";
    bad = gpumem::estimate(doc);
    ASSERT_FALSE(bad["ok"].get<bool>());
    EXPECT_EQ(bad["errors"][0]["field"], "training.framework_version");
    EXPECT_NE(bad["errors"][0]["problem"].get<std::string>().find("current, transformers_2022, torchtune_0.1"),
              std::string::npos);
}

TEST(Scenario, Transformers2022SetsPyTorch1sDefaultsWhichOverheadsOverride) {
    // PyTorch 1.x under the Trainer of 2022: zero_grad keeps the gradients, adamw_hf has no foreach temporary,
    // and the CUDA context with every kernel module loaded measured 1343 MiB (perf_train_gpu_one.mdx, V100).
    json doc = {{"model", {{"preset", "bert-large-uncased"}}},
                {"training", {{"framework_version", "transformers_2022"}}}};
    json r = gpumem::estimate(doc);
    ASSERT_TRUE(r["ok"].get<bool>()) << r.dump(2);
    EXPECT_EQ(r["scenario"]["overheads"]["zero_grad_set_to_none"], 0);
    EXPECT_EQ(r["scenario"]["overheads"]["optimizer_step_temp_copies"], 0);
    EXPECT_DOUBLE_EQ(r["scenario"]["overheads"]["cuda_context_gib"].get<double>(), 1343.0 / 1024);
    doc["overheads"] = {{"cuda_context_gib", 0.4}};
    EXPECT_DOUBLE_EQ(gpumem::estimate(doc)["scenario"]["overheads"]["cuda_context_gib"].get<double>(), 0.4);
    doc["training"]["framework"] = "litgpt";
    json bad = gpumem::estimate(doc);
    ASSERT_FALSE(bad["ok"].get<bool>());
    EXPECT_EQ(bad["errors"][0]["field"], "training.framework_version");
}

TEST(Scenario, EngineAndShardingNamesAndNullStages) {
    json doc = seed001_config();
    doc["engine"] = {{"type", "pytorch_ddp"}, {"zero_stage", nullptr}};
    json r = gpumem::estimate(doc);
    ASSERT_TRUE(r["ok"].get<bool>()) << r.dump(2);
    EXPECT_EQ(r["scenario"]["engine"]["type"], "ddp");
    EXPECT_EQ(r["scenario"]["engine"]["zero_stage"], 0);
    doc["engine"] = {{"type", "megatron_lm"}, {"zero_stage", nullptr}};
    EXPECT_EQ(gpumem::estimate(doc)["scenario"]["engine"]["type"], "megatron");
    doc["engine"] = {{"type", "fsdp"}, {"sharding_strategy", "shard_grad_op"}};
    EXPECT_EQ(gpumem::estimate(doc)["scenario"]["engine"]["fsdp_sharding"], "shard_grad_op");
    // Our own key wins over its spelling.
    doc["engine"]["fsdp_sharding"] = "no_shard";
    EXPECT_EQ(gpumem::estimate(doc)["scenario"]["engine"]["fsdp_sharding"], "no_shard");
}

TEST(Scenario, NumGpusIsTheClusterWhenItIsAMultipleOfTheModelParallelSize) {
    json doc = seed001_config();
    doc["parallelism"] = {{"tensor_parallel_size", 2}, {"pipeline_parallel_size", 2}, {"data_parallel_size", 1}};
    doc["hardware"]["num_gpus"] = 32;  // 32 / (2 x 2) = 8 replicas
    json r = gpumem::estimate(doc);
    ASSERT_TRUE(r["ok"].get<bool>()) << r.dump(2);
    EXPECT_EQ(r["scenario"]["parallelism"]["data_parallel_size"], 8);
    EXPECT_TRUE(any_contains(r["defaults_applied"], "parallelism.data_parallel_size = 8 (num_gpus 32"));
    doc["hardware"]["num_gpus"] = 30;  // no multiple of 4
    json bad = gpumem::estimate(doc);
    ASSERT_FALSE(bad["ok"].get<bool>());
    EXPECT_EQ(bad["errors"][0]["field"], "hardware.num_gpus");
    EXPECT_NE(bad["errors"][0]["problem"].get<std::string>().find("(4)"), std::string::npos);
}

TEST(Scenario, AShapeGivenByHandIsNotCalledAGuess) {
    json r = gpumem::estimate(seed001_config());
    ASSERT_TRUE(r["ok"].get<bool>()) << r.dump(2);
    // Only intermediate_size is missing: 8 x 4096 / 3 rounded up to 256 = 11008.
    EXPECT_TRUE(any_contains(r["warnings"], "guessed Llama-like intermediate_size"));
    EXPECT_FALSE(any_contains(r["warnings"], "known only by its declared size"));
    EXPECT_EQ(r["parameters"]["per_component"]["mlp"], 32ull * 3 * 4096 * 11008);
    // The step runs at max_seq_len, as that project computes.
    EXPECT_EQ(r["scenario"]["training"]["seq_len"], 4096);
    json doc = seed001_config();
    doc["model"]["intermediate_size"] = 11008;
    json given = gpumem::estimate(doc);
    EXPECT_FALSE(any_contains(given["warnings"], "Llama-like"));
    // A training.seq_len of its own wins.
    doc["training"]["seq_len"] = 1024;
    EXPECT_EQ(gpumem::estimate(doc)["scenario"]["training"]["seq_len"], 1024);
    // Only a size: the whole shape is guessed and the warning says so.
    json size_only = gpumem::estimate({{"model", {{"num_parameters", "350M"}}}});
    EXPECT_EQ(size_only["parameters"]["total"], 350000000);
    EXPECT_TRUE(any_contains(size_only["warnings"], "a guessed Llama-like shape"));
}

TEST(Scenario, ItsMixtureOfExpertsFields) {
    json doc = seed001_config();
    doc["model"] = {{"num_layers", 2},    {"hidden_size", 256},  {"num_attention_heads", 4},
                    {"vocab_size", 1000}, {"moe_enabled", true}, {"num_experts", 4}};
    json r = gpumem::estimate(doc);
    ASSERT_TRUE(r["ok"].get<bool>()) << r.dump(2);
    // Its defaults: top_k 2, expert_intermediate_size 4 x 256 = 1024. Per layer 4 x 256² = 262,144
    // attention, 4 experts x 3 x 256 x 1024 = 3,145,728, router 4 x 256 = 1,024, norms 512:
    // 3,409,408 x 2 + 2 x 1000 x 256 + 256 = 7,331,072.
    EXPECT_EQ(r["parameters"]["total"], 7331072);
    EXPECT_TRUE(any_contains(r["defaults_applied"], "model.expert_intermediate_size = 1024"));
    EXPECT_TRUE(any_contains(r["defaults_applied"], "model.top_k = 2"));
    // Routed 2 x 3,145,728, of which a token visits 2 of 4.
    EXPECT_EQ(r["parameters"]["active"], 7331072 - 2 * 3145728 / 2);
    doc["model"]["top_k"] = 5;
    json bad = gpumem::estimate(doc);
    ASSERT_FALSE(bad["ok"].get<bool>());
    EXPECT_EQ(bad["errors"][0]["field"], "model.top_k");
    // Switched off (its web page writes num_experts 1 then): a dense model.
    doc["model"]["moe_enabled"] = false;
    EXPECT_EQ(gpumem::estimate(doc)["parameters"]["per_component"]["experts"], 0);
}
