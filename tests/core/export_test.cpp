// The exporters: each writes the values of the resolved scenario it estimated, fills what the format
// decides, and refuses, naming the field, what it cannot express. A DeepSpeed config read back gives
// the scenario (and so the figures) it was written from.
#include <gtest/gtest.h>

#include <gpumem/gpumem.h>

using nlohmann::json;

namespace {

json exported(const std::string& format, const json& scenario) {
    return gpumem::export_config({{"format", format}, {"scenario", scenario}});
}

// The first error's field, or "" when the export succeeded.
std::string refused_field(const json& r) {
    return r.value("ok", false) ? "" : r["errors"][0]["field"].get<std::string>();
}

bool has_line(const std::string& text, const std::string& line) {
    return text.find("\n  " + line + " \\\n") != std::string::npos ||
           text.find("\n  " + line + "\n") != std::string::npos;
}

const json kZero3 = {{"model", "meta-llama/Llama-3.1-8B"},
                     {"engine", {{"zero_stage", 3}, {"offload_optimizer", "cpu"}}},
                     {"parallelism", {{"data_parallel_size", 8}}},
                     {"hardware", {{"num_gpus", 8}}},
                     {"training", {{"batch_size", 2}, {"gradient_accumulation_steps", 4}}}};

}  // namespace

TEST(Export, DeepSpeedWritesTheBatchArithmeticAndTheZeroSection) {
    json r = exported("deepspeed", kZero3);
    ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
    EXPECT_EQ(r["kind"], "json");
    json ds = json::parse(r["text"].get<std::string>());
    EXPECT_EQ(ds["train_micro_batch_size_per_gpu"], 2);
    EXPECT_EQ(ds["gradient_accumulation_steps"], 4);
    EXPECT_EQ(ds["train_batch_size"], 64);  // 2 per GPU x 4 steps x 8 data-parallel GPUs
    EXPECT_EQ(ds["bf16"]["enabled"], true);
    EXPECT_EQ(ds["zero_optimization"]["stage"], 3);
    EXPECT_EQ(ds["zero_optimization"]["offload_optimizer"]["device"], "cpu");
    EXPECT_FALSE(ds["zero_optimization"].contains("offload_param"));
    // The bucket sizes the estimate assumed (overheads.*) are the ones written.
    EXPECT_EQ(ds["zero_optimization"]["reduce_bucket_size"], 500000000);
    EXPECT_EQ(ds["zero_optimization"]["stage3_prefetch_bucket_size"], 50000000);
    EXPECT_EQ(r["scenario"]["engine"]["type"], "deepspeed");  // the format's engine, filled in
}

TEST(Export, DeepSpeedReadBackGivesTheSameFigures) {
    json r = exported("deepspeed", kZero3);
    ASSERT_TRUE(r["ok"].get<bool>());
    json back = gpumem::import_deepspeed(json::parse(r["text"].get<std::string>()));
    ASSERT_TRUE(back["ok"].get<bool>()) << back.dump();
    json scenario = back["scenario"];
    scenario["model"] = "meta-llama/Llama-3.1-8B";
    scenario["hardware"] = {{"num_gpus", 8}};
    json again = gpumem::estimate(scenario);
    ASSERT_TRUE(again["ok"].get<bool>()) << again.dump();
    EXPECT_EQ(again["per_gpu"]["device_total_bytes"], r["estimate"]["per_gpu"]["device_total_bytes"]);
    EXPECT_EQ(scenario["parallelism"]["data_parallel_size"], 8);  // 64 / (2 x 4)
}

TEST(Export, DeepSpeedImportLeavesAutoValuesOutAndNamesBadFields) {
    json r = gpumem::import_deepspeed({{"train_micro_batch_size_per_gpu", "auto"},
                                       {"bf16", {{"enabled", "auto"}}},
                                       {"zero_optimization", {{"stage", 2}}}});
    ASSERT_TRUE(r["ok"].get<bool>());
    EXPECT_FALSE(r["scenario"]["training"].contains("batch_size"));
    EXPECT_EQ(r["scenario"]["training"]["dtype"], "bf16");
    EXPECT_EQ(r["scenario"]["engine"]["zero_stage"], 2);
    EXPECT_EQ(r["notes"].size(), 2u);
    EXPECT_EQ(refused_field(gpumem::import_deepspeed({{"zero_optimization", {{"stage", 4}}}})),
              "zero_optimization.stage");
    EXPECT_EQ(
        refused_field(gpumem::import_deepspeed({{"zero_optimization", {{"offload_optimizer", {{"device", "gpu"}}}}}})),
        "zero_optimization.offload_optimizer.device");
    // 10 is not 2 x 3 x a whole number of GPUs.
    EXPECT_EQ(
        refused_field(gpumem::import_deepspeed(
            {{"train_batch_size", 10}, {"train_micro_batch_size_per_gpu", 2}, {"gradient_accumulation_steps", 3}})),
        "train_batch_size");
}

TEST(Export, DeepSpeedRefusesWhatItsJsonCannotSay) {
    json fsdp = kZero3;
    fsdp["engine"] = {{"type", "fsdp"}};
    EXPECT_EQ(refused_field(exported("deepspeed", fsdp)), "engine.type");
    // fp16 weights with no fp32 master copy: DeepSpeed has no such mode (bf16 has one since 0.18,
    // bf16_master_weights_and_grads, which is written).
    json pure = kZero3;
    pure["training"]["precision"] = "pure";
    pure["training"]["dtype"] = "fp16";
    EXPECT_EQ(refused_field(exported("deepspeed", pure)), "training.precision");
    pure["training"]["dtype"] = "bf16";
    json r = exported("deepspeed", pure);
    ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
    EXPECT_EQ(json::parse(r["text"].get<std::string>())["bf16"]["bf16_master_weights_and_grads"], true);
}

TEST(Export, AccelerateFsdpYaml) {
    json s = {{"model", "meta-llama/Llama-3.1-8B"},
              {"engine", {{"type", "fsdp"}, {"fsdp_sharding", "shard_grad_op"}}},
              {"parallelism", {{"data_parallel_size", 16}}},
              {"hardware", {{"num_gpus", 16}}},
              {"training", {{"activation_checkpointing", "full"}}}};
    json r = exported("accelerate", s);
    ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
    const std::string y = r["text"];
    EXPECT_NE(y.find("distributed_type: FSDP\n"), std::string::npos) << y;
    EXPECT_NE(y.find("num_machines: 2\n"), std::string::npos);  // 16 GPUs, 8 per node
    EXPECT_NE(y.find("num_processes: 16\n"), std::string::npos);
    EXPECT_NE(y.find("  fsdp_sharding_strategy: SHARD_GRAD_OP\n"), std::string::npos);
    EXPECT_NE(y.find("  fsdp_activation_checkpointing: true\n"), std::string::npos);
    EXPECT_NE(y.find("mixed_precision: bf16\n"), std::string::npos);
}

TEST(Export, TorchrunCarriesTrainerFlags) {
    json s = {{"model", "meta-llama/Llama-3.1-8B"},
              {"engine", {{"type", "fsdp"}, {"offload_optimizer", "cpu"}, {"offload_param", "cpu"}}},
              {"parallelism", {{"data_parallel_size", 4}}},
              {"hardware", {{"num_gpus", 4}}},
              {"training", {{"optimizer", "adamw_8bit"}, {"batch_size", 3}}}};
    json r = exported("torchrun", s);
    ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
    const std::string t = r["text"];
    EXPECT_TRUE(has_line(t, "--nproc-per-node 4")) << t;
    EXPECT_TRUE(has_line(t, "--per_device_train_batch_size 3"));
    EXPECT_TRUE(has_line(t, "--optim adamw_bnb_8bit"));  // transformers' name for bitsandbytes AdamW 8-bit
    EXPECT_TRUE(has_line(t, "--fsdp 'full_shard auto_wrap offload'"));
    json muon = s;
    muon["training"]["optimizer"] = "muon";
    EXPECT_EQ(refused_field(exported("torchrun", muon)), "training.optimizer");
}

TEST(Export, TorchtuneNamesItsRecipeAndConfig) {
    json lora = {{"model", "meta-llama/Llama-3.1-8B"}, {"training", {{"method", "lora"}, {"loss", "chunked"}}}};
    json r = exported("torchtune", lora);
    ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
    const std::string t = r["text"];
    EXPECT_EQ(t.rfind("tune run lora_finetune_single_device --config llama3_1/8B_lora_single_device", 0), 0u) << t;
    EXPECT_TRUE(has_line(t, "loss._component_=torchtune.modules.loss.CEWithChunkedOutputLoss"));
    EXPECT_EQ(r["scenario"]["training"]["framework"], "torchtune");  // filled in
    EXPECT_EQ(r["scenario"]["training"]["precision"], "pure");       // torchtune's weights are in its dtype
    json other = lora;
    other["training"]["framework"] = "litgpt";
    EXPECT_EQ(refused_field(exported("torchtune", other)), "training.framework");
}

TEST(Export, ServingCommandsCarryTheEstimatesMemoryFlags) {
    json v = exported(
        "vllm", {{"model", "meta-llama/Llama-3.1-8B"},
                 {"inference", {{"kv_cache_dtype", "fp8"}, {"batch_size", 64}, {"gpu_memory_utilization", 0.85}}}});
    ASSERT_TRUE(v["ok"].get<bool>()) << v.dump();
    const std::string t = v["text"];
    EXPECT_TRUE(has_line(t, "--gpu-memory-utilization 0.85")) << t;
    EXPECT_TRUE(has_line(t, "--max-num-seqs 64"));
    EXPECT_TRUE(has_line(t, "--max-model-len 4096"));
    EXPECT_TRUE(has_line(t, "--kv-cache-dtype fp8"));
    EXPECT_EQ(v["scenario"]["inference"]["engine"], "vllm");

    json l =
        exported("llama.cpp", {{"model", "meta-llama/Llama-3.1-8B"},
                               {"inference", {{"weight_format", "q4_k_m"}, {"context_len", 8192}, {"batch_size", 4}}}});
    ASSERT_TRUE(l["ok"].get<bool>()) << l.dump();
    const std::string c = l["text"];
    EXPECT_TRUE(has_line(c, "--ctx-size 32768")) << c;  // llama.cpp's context is shared: 4 sequences x 8192
    EXPECT_TRUE(has_line(c, "--parallel 4"));
    EXPECT_EQ(refused_field(exported(
                  "llama.cpp", {{"model", "meta-llama/Llama-3.1-8B"}, {"inference", {{"weight_format", "int4"}}}})),
              "inference.weight_format");
    // The engine a scenario names is kept: asking vllm for a llama.cpp scenario is an error.
    EXPECT_EQ(refused_field(exported("vllm", {{"model", "meta-llama/Llama-3.1-8B"},
                                              {"mode", "inference"},
                                              {"inference", {{"engine", "llama.cpp"}}}})),
              "inference.engine");
}

TEST(Export, BadRequestsAreErrorsThatNameTheField) {
    EXPECT_EQ(refused_field(gpumem::export_config({{"format", "nope"}, {"scenario", json::object()}})), "format");
    EXPECT_EQ(refused_field(gpumem::export_config({{"format", "vllm"}})), "scenario");
    EXPECT_EQ(refused_field(gpumem::export_config(json::array())), "");
    EXPECT_EQ(refused_field(exported("vllm", {{"model", "meta-llama/Llama-3.1-8B"}, {"mode", "training"}})), "mode");
    json r = json::parse(gpumem::export_json("{\"format\": "));
    EXPECT_FALSE(r["ok"].get<bool>());
}
