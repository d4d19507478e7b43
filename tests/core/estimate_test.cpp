// The memory model on scenarios whose numbers can be derived by hand.
#include <gtest/gtest.h>

#include <cmath>

#include <gpumem/gpumem.h>

#include "estimate_helpers.h"

using nlohmann::json;

namespace {

using gpumem::test::kLlama8B;
using gpumem::test::run;

std::uint64_t component(const json& r, const char* name) {
    return r["per_gpu"]["components"][name].get<std::uint64_t>();
}

}  // namespace

TEST(Inference, KvCacheIsGqaAware) {
    json r = run({{"model", kLlama8B},
                  {"mode", "inference"},
                  {"inference", {{"batch_size", 1}, {"context_len", 8192}, {"weight_format", "bf16"}}}});
    // 32 layers x 8 kv heads x 128 x 2 (K,V) x 2 B x 8192 tok = 1.0 GiB
    EXPECT_EQ(component(r, "kv_cache"), 32ull * 8 * 128 * 2 * 2 * 8192);
    EXPECT_EQ(component(r, "kv_cache"), 1ull << 30);
    // 8,030,261,248 parameters x 2 B
    EXPECT_EQ(component(r, "weights"), 8030261248ull * 2);
}

TEST(Inference, SlidingWindowCapsTheCache) {
    json base = {{"model", {{"preset", "mistralai/Mistral-7B-v0.1"}}},
                 {"mode", "inference"},
                 {"inference", {{"batch_size", 1}, {"context_len", 16384}}}};
    json r = run(base);
    // Mistral-7B-v0.1: sliding_window 4096 on all 32 layers: 32 x 8 x 128 x 2 x 2 B x 4096 = 512 MiB
    EXPECT_EQ(component(r, "kv_cache"), 32ull * 8 * 128 * 2 * 2 * 4096);
}

TEST(Inference, Gemma2AlternatesSlidingAndGlobalLayers) {
    json r = run({{"model", {{"preset", "google/gemma-2-9b"}}},
                  {"mode", "inference"},
                  {"inference", {{"batch_size", 1}, {"context_len", 8192}}}});
    // 42 layers, 8 kv heads x 256: 21 global layers x 8192 tokens + 21 sliding layers x 4096 tokens
    std::uint64_t per_token_layer = 2ull * 8 * 256 * 2;
    EXPECT_EQ(component(r, "kv_cache"), per_token_layer * (21 * 8192 + 21 * 4096));
}

TEST(Inference, KvCacheDtypeAndTensorParallel) {
    json r = run({{"model", kLlama8B},
                  {"mode", "inference"},
                  {"parallelism", {{"tensor_parallel_size", 2}}},
                  {"inference", {{"context_len", 8192}, {"kv_cache_dtype", "fp8"}}}});
    // 8 kv heads split over 2 GPUs, 1 byte each: a quarter of the bf16 single-GPU cache
    EXPECT_EQ(component(r, "kv_cache"), (1ull << 30) / 4);
}

TEST(Training, ZeroMixedPrecisionIs16BytesPerParameter) {
    // ZeRO paper: bf16 params 2 + bf16 grads 2 + fp32 master, m, v 12 = 16 bytes/param (K = 12),
    // sharded over 8 GPUs at stage 3.
    json r = run({{"model", kLlama8B},
                  {"engine", {{"type", "deepspeed"}, {"zero_stage", 3}}},
                  {"parallelism", {{"data_parallel_size", 8}}}});
    double P = 8030261248.0;
    EXPECT_NEAR(component(r, "weights"), P * 2 / 8, 1);
    EXPECT_NEAR(component(r, "optimizer_states"), P * 12 / 8, 1);
    EXPECT_EQ(r["scenario"]["training"]["precision"], "mixed_master_fp32");
}

TEST(Training, AmpWithFp32WeightsIsHfTrainersDefault) {
    json r = run({{"model", kLlama8B}});
    EXPECT_EQ(r["scenario"]["training"]["precision"], "amp_fp32_weights");
    double P = 8030261248.0;
    EXPECT_NEAR(component(r, "weights"), P * 4, 1);
    // AdamW m and v in fp32; the step peak also holds the fp32 gradients and a foreach temporary.
    EXPECT_NEAR(component(r, "optimizer_states"), P * 8, 1);
    EXPECT_EQ(r["per_gpu"]["peak_phase"], "optimizer_step");
    EXPECT_NEAR(component(r, "temporaries"), P * 4, 1);
}

TEST(Training, OptimizerStateFollowsTheOptimizer) {
    auto states = [&](const char* opt) {
        json r = run({{"model", kLlama8B}, {"training", {{"optimizer", opt}, {"precision", "pure"}}}});
        return static_cast<double>(component(r, "optimizer_states"));
    };
    double P = 8030261248.0;
    EXPECT_EQ(states("sgd"), 0);
    EXPECT_NEAR(states("sgd_momentum"), P * 2, 1);  // one bf16 state
    EXPECT_NEAR(states("adamw"), P * 4, 1);         // two bf16 states
    EXPECT_NEAR(states("amsgrad"), P * 6, 1);       // three
    // 8-bit: 2 x 1 byte + an fp32 absmax per 2048 elements (small vectors stay fp32): just over 2 B/param
    EXPECT_GT(states("adamw_8bit"), P * 2);
    EXPECT_LT(states("adamw_8bit"), P * 2.01);
    // Adafactor keeps row + column sums per matrix: far below one state per parameter.
    EXPECT_LT(states("adafactor"), P * 0.01);
}

TEST(Training, CheckpointingKeepsOneInputPerLayer) {
    json none = run({{"model", kLlama8B}, {"training", {{"seq_len", 4096}, {"activation_checkpointing", "none"}}}});
    json full = run({{"model", kLlama8B}, {"training", {{"seq_len", 4096}, {"activation_checkpointing", "full"}}}});
    auto at_loss = [](const json& r, const char* what) {
        for (const json& p : r["per_gpu"]["timeline"])
            if (p["phase"] == "loss")
                return std::string(what) == "total" ? p["allocated_bytes"].get<double>()
                                                    : p["components"][what].get<double>();
        return 0.0;
    };
    // 32 layers x 4096 tokens x 4096 hidden x 2 B = 1 GiB of layer inputs
    EXPECT_NEAR(at_loss(full, "activations"), 32.0 * 4096 * 4096 * 2, 1);
    EXPECT_LT(at_loss(full, "total"), at_loss(none, "total"));
}

TEST(Training, EagerAttentionAddsTheQuadraticTerm) {
    auto acts = [&](const char* attention, int seq) {
        json r = run({{"model", kLlama8B}, {"training", {{"seq_len", seq}, {"attention", attention}}}});
        for (const json& p : r["per_gpu"]["timeline"])
            if (p["phase"] == "loss") return p["components"]["activations"].get<double>();
        return 0.0;
    };
    // Eager keeps the fp32 softmax and its bf16 copy: 32 heads x s² x 6 B per layer, x 32 layers.
    double s = 2048;
    double quadratic = 32.0 * 32 * s * s * 6;
    double extra = acts("eager", 2048) - acts("sdpa", 2048);
    // ...plus repeat_kv's copies of k and v (2 x (4096 - 1024) x 2 B per token per layer)
    double repeat = 32.0 * s * 2 * (4096 - 1024) * 2;
    EXPECT_NEAR(extra, quadratic + repeat, 1);
}

TEST(Training, LoraTrainsOnlyTheAdapters) {
    json r = run({{"model", kLlama8B}, {"training", {{"method", "lora"}, {"lora", {{"rank", 16}}}}}});
    // q_proj: r(4096 + 4096), v_proj: r(4096 + 1024), 32 layers, r = 16
    std::uint64_t lora = 32ull * 16 * ((4096 + 4096) + (4096 + 1024));
    EXPECT_EQ(r["parameters"]["trainable"].get<std::uint64_t>(), lora);
    // fp32 adapters: weights 4 + grads 4 + AdamW states 8 bytes each; base stays bf16
    EXPECT_NEAR(component(r, "optimizer_states"), lora * 8.0, 1);
}

TEST(Training, QloraStoresTheBaseInFourBits) {
    json r = run({{"model", kLlama8B}, {"training", {{"method", "qlora"}, {"double_quant", true}}}});
    // Linear matrices of the layers: 32 x 218,103,808; NF4 with double quant: 0.5 + 1/64 + 4/16384 B.
    double linear = 32.0 * 218103808;
    double rest = 8030261248.0 - linear;  // embeddings, head, norms in bf16
    double lora = 32.0 * 8 * ((4096 + 4096) + (4096 + 1024));
    double expected = linear * (0.5 + 1.0 / 64 + 4.0 / 16384) + rest * 2 + lora * 4;
    EXPECT_NEAR(component(r, "weights"), expected, 2);
}

TEST(Training, QloraWithoutDoubleQuantKeepsAnFp32AbsmaxPer64) {
    // bitsandbytes' default (bnb_4bit_use_double_quant=False): 0.5 B + one fp32 absmax per 64 = 0.5625 B.
    json r = run({{"model", kLlama8B}, {"training", {{"method", "qlora"}}}});
    double linear = 32.0 * 218103808;
    double rest = 8030261248.0 - linear;
    double lora = 32.0 * 8 * ((4096 + 4096) + (4096 + 1024));
    EXPECT_NEAR(component(r, "weights"), linear * (0.5 + 4.0 / 64) + rest * 2 + lora * 4, 2);
    // MatMul4Bit dequantizes one whole matrix per matmul: the largest, an MLP one, 14336 x 4096 x 2 B.
    EXPECT_DOUBLE_EQ(r["assumptions"]["qlora_dequantized_matrix_bytes"].get<double>(), 14336.0 * 4096 * 2);
}

namespace {
// Allocated bytes of one component at one phase of the step.
double at_phase(const json& r, const std::string& phase, const char* name) {
    for (const json& p : r["per_gpu"]["timeline"])
        if (p["phase"] == phase) return p["components"][name].get<double>();
    return -1;
}
const json kPureBf16 = {{"dtype", "bf16"}, {"precision", "pure"}, {"optimizer", "adamw"}, {"seq_len", 1024}};
}  // namespace

TEST(Training, OptimizerInBackwardFreesEachGradientAfterItsStep) {
    json t = kPureBf16;
    t["optimizer_in_backward"] = true;
    json r = run({{"model", kLlama8B}, {"training", t}});
    // No optimizer_step phase: each parameter steps from its gradient hook. At most the largest tensor's
    // gradient is alive: embed_tokens or lm_head, 128256 x 4096 x 2 B (bf16) = 1.05 GB, not 16 GB.
    for (const json& p : r["per_gpu"]["timeline"]) EXPECT_NE(p["phase"], "optimizer_step");
    EXPECT_LE(at_phase(r, "backward", "gradients"), 128256.0 * 4096 * 2);
    EXPECT_DOUBLE_EQ(r["assumptions"]["optimizer_step_temp_bytes"].get<double>(), 0);
}

TEST(Training, ZeroGradWithoutSetToNoneKeepsTheGradientsThroughTheForward) {
    // Without accumulation the gradients are freed after the step (PyTorch 2's zero_grad); PyTorch 1.x
    // kept them, zeroed, so the next forward runs beside 8,030,261,248 x 2 B of bf16 gradients.
    json r = run({{"model", kLlama8B}, {"training", kPureBf16}});
    EXPECT_EQ(at_phase(r, "forward", "gradients"), 0);
    json kept = run({{"model", kLlama8B}, {"training", kPureBf16}, {"overheads", {{"zero_grad_set_to_none", 0}}}});
    EXPECT_EQ(at_phase(kept, "forward", "gradients"), 8030261248.0 * 2);
}

TEST(Training, FrozenLayersBelowTheTrainableOnesKeepNoActivations) {
    // A partial fine-tune: the top 4 of 32 layers train. A Llama-3.1-8B layer: q, o 4096^2, k, v 1024 x 4096,
    // gate, up, down 14336 x 4096, two norms of 4096 = 218,112,000 parameters.
    json t = kPureBf16;
    t["method"] = "frozen";
    t["trainable_layers"] = 4;
    json r = run({{"model", kLlama8B}, {"training", t}});
    double trainable = 4 * 218112000.0;
    EXPECT_DOUBLE_EQ(r["assumptions"]["trainable_parameters_per_gpu"].get<double>(), trainable);
    EXPECT_EQ(r["parameters"]["trainable"].get<double>(), trainable) << "the result counts what trains";
    // Over a 2-stage pipeline the count is the model's, not one stage's; with the head 128,256 x 4096 more.
    json head = t;
    head["train_lm_head"] = true;
    json staged = run({{"model", kLlama8B}, {"training", head}, {"parallelism", {{"pipeline_parallel_size", 2}}}});
    EXPECT_EQ(staged["parameters"]["trainable"].get<double>(), trainable + 128256.0 * 4096);
    EXPECT_NEAR(at_phase(r, "optimizer_step", "gradients"), trainable * 2, 1);             // bf16 grads
    EXPECT_NEAR(at_phase(r, "optimizer_step", "optimizer_states"), trainable * 2 * 2, 1);  // AdamW m, v in bf16
    EXPECT_NEAR(component(r, "weights"), 8030261248.0 * 2, 1);
    // The 28 frozen layers below run without a graph: 4/32 of full training's saved activations.
    json full = run({{"model", kLlama8B}, {"training", kPureBf16}});
    EXPECT_NEAR(at_phase(r, "loss", "activations") * 8, at_phase(full, "loss", "activations"), 8);
    // A trainable projector under the first layer needs activation gradients through all 32 frozen layers.
    t["trainable_layers"] = 0;
    t["trainable_input_parameters"] = 6600000;  // a 6.6M-parameter input projection (a multimodal adapter)
    json proj = run({{"model", kLlama8B}, {"training", t}});
    EXPECT_NEAR(at_phase(proj, "loss", "activations"), at_phase(full, "loss", "activations"), 1);
    EXPECT_NEAR(at_phase(proj, "optimizer_step", "gradients"), 6600000.0 * 2, 1);
}

TEST(Training, PipelineHoldsOneMicroBatchPerStageInFlight) {
    // 1F1B: the first of 4 stages holds 4 micro-batches (Korthikanti et al. 4.2); with no micro-batch
    // count given, the batch is split into as many micro-batches as stages (torchtitan's default).
    json r = run({{"model", kLlama8B},
                  {"engine", {{"type", "megatron"}}},
                  {"training", kPureBf16},
                  {"parallelism", {{"pipeline_parallel_size", 4}}}});
    EXPECT_DOUBLE_EQ(r["assumptions"]["activation_layers_on_gpu"].get<double>(), 8.0 * 4);
    json t = kPureBf16;
    t["pipeline_microbatches"] = 2;
    json two = run({{"model", kLlama8B},
                    {"engine", {{"type", "megatron"}}},
                    {"training", t},
                    {"parallelism", {{"pipeline_parallel_size", 4}}}});
    EXPECT_DOUBLE_EQ(two["assumptions"]["activation_layers_on_gpu"].get<double>(), 8.0 * 2);
}

TEST(Training, FsdpUnderAPipelineKeepsTheStageGatheredAndItsGradientsUnsharded) {
    // 2 stages of 16 layers, FSDP over 4: the stage's parameters stay gathered in bf16 and its gradients
    // accumulate unsharded in fp32 (amp_fp32_weights) until the last micro-batch.
    json r = run({{"model", kLlama8B},
                  {"engine", {{"type", "fsdp"}}},
                  {"training", {{"precision", "amp_fp32_weights"}}},
                  {"parallelism", {{"pipeline_parallel_size", 2}, {"data_parallel_size", 4}}}});
    double stage = 16 * 218112000.0 + 128256.0 * 4096 + 4096;  // layers + lm_head + final norm (the last stage)
    EXPECT_NEAR(r["assumptions"]["zero3_gathered_bytes"].get<double>(), stage * 2, 1);
    EXPECT_NEAR(r["assumptions"]["fsdp_pipeline_unsharded_gradient_bytes"].get<double>(), stage * 4, 1);
}

TEST(Training, FsdpHoldsTheNextUnitAndTheRunningUnitsGradients) {
    // FSDP full shard over 8 GPUs, Llama-3.1-8B in pure bf16: a decoder layer (the wrapped unit) is
    // 218,112,000 parameters. Gathered: the running unit and the next one, 2 x 218,112,000 x 2 B; in
    // backward also the running unit's unsharded bf16 gradients, 218,112,000 x 2 B, until their
    // reduce-scatter. DeepSpeed ZeRO-3 prefetches at most stage3_prefetch_bucket_size (5e7) elements.
    json t = kPureBf16;
    json fsdp = run({{"model", kLlama8B},
                     {"training", t},
                     {"engine", {{"type", "fsdp"}, {"fsdp_sharding", "full_shard"}}},
                     {"parallelism", {{"data_parallel_size", 8}}}});
    EXPECT_DOUBLE_EQ(fsdp["assumptions"]["zero3_gathered_bytes"].get<double>(), 2 * 218112000.0 * 2);
    EXPECT_DOUBLE_EQ(fsdp["assumptions"]["fsdp_unsharded_gradient_bytes"].get<double>(), 218112000.0 * 2);
    EXPECT_NEAR(at_phase(fsdp, "backward", "temporaries") - at_phase(fsdp, "forward", "temporaries"), 218112000.0 * 2,
                1);
    json zero3 = run({{"model", kLlama8B},
                      {"training", t},
                      {"engine", {{"type", "deepspeed"}, {"zero_stage", 3}}},
                      {"parallelism", {{"data_parallel_size", 8}}}});
    EXPECT_DOUBLE_EQ(zero3["assumptions"]["zero3_gathered_bytes"].get<double>(), (218112000.0 + 5e7) * 2);
    EXPECT_FALSE(zero3["assumptions"].contains("fsdp_unsharded_gradient_bytes"));
}

TEST(Training, HybridShardShardsWithinANode) {
    // HYBRID_SHARD over 32 GPUs: the states shard over one node's GPUs and replicate across nodes.
    // 8 per node unless hardware.gpus_per_node says otherwise: weights 8,030,261,248 x 2 B / 8, or / 4.
    auto hybrid = [](std::uint64_t per_node) {
        json hw = {{"num_gpus", 32}};
        if (per_node) hw["gpus_per_node"] = per_node;
        return run({{"model", kLlama8B},
                    {"training", kPureBf16},
                    {"engine", {{"type", "fsdp"}, {"fsdp_sharding", "hybrid_shard"}}},
                    {"hardware", hw}});
    };
    json eight = hybrid(0), four = hybrid(4);
    EXPECT_EQ(eight["assumptions"]["shard_group"].get<double>(), 8);
    EXPECT_NE(eight["defaults_applied"].dump().find("hardware.gpus_per_node = 8"), std::string::npos);
    EXPECT_EQ(four["assumptions"]["shard_group"].get<double>(), 4);
    EXPECT_EQ(four["scenario"]["hardware"]["gpus_per_node"], 4) << "the resolved scenario keeps it";
    EXPECT_NEAR(at_phase(four, "optimizer_step", "weights"), 8030261248.0 * 2 / 4, 1);
    EXPECT_NEAR(at_phase(eight, "optimizer_step", "weights"), 8030261248.0 * 2 / 8, 1);
}

TEST(Training, FsdpCpuOffloadTakesTheGradientsToo) {
    json r = run({{"model", kLlama8B},
                  {"engine", {{"type", "fsdp"}, {"offload_param", "cpu"}, {"offload_optimizer", "cpu"}}},
                  {"training", kPureBf16},
                  {"parallelism", {{"data_parallel_size", 8}}}});
    EXPECT_EQ(component(r, "gradients"), 0u);
    // host: bf16 params 2 + grads 2 + AdamW states 4 bytes per parameter, over 8 ranks
    EXPECT_NEAR(r["host_bytes"].get<double>(), 8030261248.0 * 8 / 8, 8);
}

TEST(Training, ActivationOffloadingKeepsTwoLayersOnTheGpu) {
    json t = kPureBf16;
    json full = run({{"model", kLlama8B}, {"training", t}});
    t["activation_offloading"] = true;
    json off = run({{"model", kLlama8B}, {"training", t}});
    double per_layer = at_phase(full, "loss", "activations") / 32;
    EXPECT_NEAR(at_phase(off, "loss", "activations"), 2 * per_layer, 2);
    EXPECT_NEAR(off["host_bytes"].get<double>(), 30 * per_layer, 32);
}

TEST(Training, LoraDropoutKeepsADroppedCopyOfEachAdaptedInput) {
    // Llama-3.1-8B, LoRA r 8 on q_proj and v_proj (hidden 4096). Each adapter keeps A's output for B:
    // 8 x 2 B per token. With dropout, A's input is a bf16 copy of the 4096-wide input plus a 1-byte mask:
    // 3 x 4096 = 12288 B per token and adapted linear; PEFT drops q's and v's inputs separately, litgpt
    // once for its fused qkv.
    json t = kPureBf16;
    t["method"] = "lora";
    t["lora"] = {{"rank", 8}, {"target_modules", {"q_proj", "v_proj"}}};
    auto per_token = [](const json& r) {
        return r["assumptions"]["activation_bytes_per_token_per_layer"].get<double>();
    };
    json none = run({{"model", kLlama8B}, {"training", t}});
    EXPECT_EQ(none["scenario"]["training"]["lora"]["dropout"], 0.0);  // PEFT's default
    t["lora"]["dropout"] = 0.1;
    json peft = run({{"model", kLlama8B}, {"training", t}});
    EXPECT_DOUBLE_EQ(per_token(peft) - per_token(none), 2 * 12288.0);
    t["framework"] = "litgpt";
    json lit = run({{"model", kLlama8B}, {"training", t}});
    EXPECT_DOUBLE_EQ(per_token(lit) - per_token(none), 12288.0);
    t.erase("lora");
    t["lora"] = {{"rank", 8}, {"target_modules", {"q_proj", "v_proj"}}};
    EXPECT_EQ(run({{"model", kLlama8B}, {"training", t}})["scenario"]["training"]["lora"]["dropout"],
              0.05);  // litgpt's
    // torchtune's LoRA builders passed lora_dropout=0.05 until 2024-09-11 (#1492); today's builders pass 0.
    t["framework"] = "torchtune";
    EXPECT_EQ(run({{"model", kLlama8B}, {"training", t}})["scenario"]["training"]["lora"]["dropout"], 0.0);
    t["framework_version"] = "torchtune_0.1";
    EXPECT_EQ(run({{"model", kLlama8B}, {"training", t}})["scenario"]["training"]["lora"]["dropout"], 0.05);
    t.erase("framework_version");
    // Mixtral-8x7B: every layer is MoE with 2 of 8 experts per token, each expert's down_proj reading a
    // 14336-wide input: 2 x 3 x 14336 = 86016 B more per token with dropout on down_proj.
    json mixtral = {{"preset", "mistralai/Mixtral-8x7B-v0.1"}};
    json down = kPureBf16;
    down["method"] = "lora";
    down["lora"] = {{"rank", 8}, {"target_modules", {"down_proj"}}, {"dropout", 0.0}};
    json dry = run({{"model", mixtral}, {"training", down}});
    down["lora"]["dropout"] = 0.1;
    EXPECT_DOUBLE_EQ(per_token(run({{"model", mixtral}, {"training", down}})) - per_token(dry), 2 * 3 * 14336.0);
    t["lora"]["dropout"] = 1.5;
    json bad = gpumem::estimate({{"model", kLlama8B}, {"training", t}});
    ASSERT_FALSE(bad["ok"].get<bool>());
    EXPECT_EQ(bad["errors"][0]["field"], "training.lora.dropout");
}

TEST(Training, TorchCompileFusesTheNormsAndTheLossUpcast) {
    // Llama-3.1-8B (hidden 4096, vocab 128256). Eager RMSNorm keeps its fp32 input (4 B), the normalised
    // value and the output (2 B each): 8 x 4096 B per token per norm. Compiled, it keeps its bf16 input
    // and an fp32 rstd: 2 x 4096 + 4. Two norms per layer: 2 x (32768 - 8196) = 49144 B less per token.
    json t = kPureBf16;
    json eager = run({{"model", kLlama8B}, {"training", t}});
    t["compile"] = "layers";
    json layers = run({{"model", kLlama8B}, {"training", t}});
    EXPECT_DOUBLE_EQ(eager["assumptions"]["activation_bytes_per_token_per_layer"].get<double>() -
                         layers["assumptions"]["activation_bytes_per_token_per_layer"].get<double>(),
                     49144.0);
    // The loss, eager: bf16 logits + 3 fp32 logits-sized tensors at the loss's peak (14 B per logit).
    // Compiled: the logits and their bf16 gradient (4 B per logit) plus an fp32 log-sum-exp per token.
    const double tokens = 1024, logits = tokens * 128256;  // seq_len 1024, batch 1
    EXPECT_NEAR(at_phase(layers, "loss", "logits"), 14 * logits, 1);
    t["compile"] = true;  // torch.compile of the whole step: the layers and the loss
    json all = run({{"model", kLlama8B}, {"training", t}});
    EXPECT_NEAR(at_phase(all, "loss", "logits"), 4 * logits + 4 * tokens, 1);
    EXPECT_EQ(all["scenario"]["training"]["compile"], "layers_and_loss");
    t["compile"] = "everything";
    json bad = gpumem::estimate({{"model", kLlama8B}, {"training", t}});
    ASSERT_FALSE(bad["ok"].get<bool>());
    EXPECT_EQ(bad["errors"][0]["field"], "training.compile");
}

TEST(Training, LitgptKeepsAnUntiedHeadAndTheLastStepsLogits) {
    // litgpt copies a tied checkpoint's embeddings into its own lm_head: Llama-3.2-1B (tied, 2048 x 128256)
    // carries 262,668,288 more bf16 parameters, and its loop holds the last step's logits (1024 tokens x
    // 128256 x 2 B) through the next forward.
    json base = {{"model", {{"preset", "meta-llama/Llama-3.2-1B"}}},
                 {"training", {{"method", "lora"}, {"seq_len", 1024}, {"dtype", "bf16"}, {"precision", "pure"}}}};
    json lit = base;
    lit["training"]["framework"] = "litgpt";
    json a = run(base), b = run(lit);
    // less its adapters' 2 B each: bf16 under litgpt, fp32 under PEFT
    const double adapters = b["assumptions"]["lora_parameters_per_gpu"].get<double>();
    EXPECT_NEAR(component(b, "weights") - component(a, "weights"), 2048.0 * 128256 * 2 - adapters * 2, 2);
    EXPECT_DOUBLE_EQ(b["assumptions"]["previous_step_retained_bytes"].get<double>(), 1024.0 * 128256 * 2);
}

TEST(Training, LitgptFsdpKeepsTheRootGatheredAndNoSyncGradientsUnsharded) {
    // litgpt shards with Lightning's FSDPStrategy (FSDP1, a unit per Block). Llama-3.2-1B, tied, untied by
    // litgpt: the root unit is embed_tokens + lm_head (2 x 128256 x 2048) + the final norm (2048) =
    // 525,338,624 parameters, kept gathered in bf16 through forward and backward (FSDP1 does not reshard the
    // root after forward). With 4 micro-batches Fabric runs the first three in FSDP1's no_sync(): every
    // gradient stays unsharded, 1,235,814,400 + 262,668,288 parameters x 2 B, and at the end of backward the
    // root's flat gradient is assembled (cat) from its per-parameter gradients: 2 more root-sized gradients.
    const double root = 2 * 128256.0 * 2048 + 2048, all = 1235814400.0 + 128256.0 * 2048;
    json t = kPureBf16;
    t["framework"] = "litgpt";
    t["gradient_accumulation_steps"] = 4;
    t["activation_checkpointing"] = "full";
    json s = {{"model", {{"preset", "meta-llama/Llama-3.2-1B"}}},
              {"training", t},
              {"engine", {{"type", "fsdp"}, {"fsdp_sharding", "full_shard"}}},
              {"parallelism", {{"data_parallel_size", 4}}}};
    json r = run(s);
    EXPECT_DOUBLE_EQ(r["assumptions"]["fsdp1_root_gathered_bytes"].get<double>(), root * 2);
    EXPECT_DOUBLE_EQ(r["assumptions"]["fsdp1_no_sync_unsharded_gradient_bytes"].get<double>(), all * 2);
    EXPECT_NEAR(at_phase(r, "forward", "gradients"), all * 2, 1);
    EXPECT_NEAR(at_phase(r, "backward", "gradients"), all * 2 + 2 * root * 2, 1);
    EXPECT_NEAR(at_phase(r, "optimizer_step", "gradients"), all * 2 / 4,
                1);  // reduce-scattered at the last micro-batch
    // Without accumulation nothing is kept unsharded; the HF Trainer's own FSDP path is not modelled this way.
    s["training"]["gradient_accumulation_steps"] = 1;
    EXPECT_DOUBLE_EQ(run(s)["assumptions"]["fsdp1_no_sync_unsharded_gradient_bytes"].get<double>(), 0);
    s["training"]["framework"] = "transformers";
    EXPECT_FALSE(run(s)["assumptions"].contains("fsdp1_root_gathered_bytes"));
}

TEST(Training, Gemma2SandwichNormsAndLitgptsSoftcappedAttention) {
    // Gemma-2-9B, bf16, SDPA, per token and layer: the two pre-norms keep the fp32 input, the normalised
    // value and the output (4 + 2 + 2) x 3584 each = 57,344; the two post-norms the same less the output
    // (it feeds the residual add): 2 x 6 x 3584 = 43,008; attention q, k, v, out, o_proj input 2 x (3 x 4096 +
    // 2 x 2048) + the fp32 log-sum-exp 4 x 16 = 32,832; the gated MLP 4 x 2 x 14336 = 114,688.
    json s = {{"model", {{"preset", "google/gemma-2-9b"}}},
              {"training", {{"method", "full"}, {"seq_len", 512}, {"dtype", "bf16"}, {"precision", "pure"}}}};
    EXPECT_DOUBLE_EQ(run(s)["assumptions"]["activation_bytes_per_token_per_layer"].get<double>(),
                     57344.0 + 43008 + 32832 + 114688);
    // litgpt cannot use SDPA with attention-logit softcapping and computes attention by hand: k and v
    // expanded to the 16 heads, 2 x 2 x (4096 - 2048) = 8,192, and per head and key position the tanh output
    // (bf16), the fp32 softmax and its bf16 copy, (2 + 4 + 2) x 16 x 512 = 65,536.
    s["training"]["framework"] = "litgpt";
    EXPECT_DOUBLE_EQ(run(s)["assumptions"]["activation_bytes_per_token_per_layer"].get<double>(),
                     57344.0 + 43008 + 32832 + 114688 + 8192 + 65536);
}

TEST(Training, TorchtitanFsdpKeepsItsRootGroupGathered) {
    // torchtitan: fully_shard on each block, then on the model, whose own group is tok_embeddings, norm and
    // output: 2 x 128256 x 4096 + 4096 = 1,050,677,248 parameters of Llama-3.1-8B. FSDP2 does not reshard
    // the root after forward, so they stay gathered in bf16 through forward and backward, and the output
    // weight's unsharded bf16 gradient (128256 x 4096 x 2 B) waits for the root's post-backward at the end.
    const double root = 2 * 128256.0 * 4096 + 4096;
    json t = kPureBf16;
    t["framework"] = "torchtitan";
    json s = {{"model", kLlama8B},
              {"training", t},
              {"engine", {{"type", "fsdp"}}},
              {"parallelism", {{"data_parallel_size", 8}}}};
    json r = run(s);
    EXPECT_DOUBLE_EQ(r["assumptions"]["fsdp_root_gathered_bytes"].get<double>(), root * 2);
    EXPECT_DOUBLE_EQ(r["assumptions"]["fsdp_root_output_gradient_bytes"].get<double>(), 128256.0 * 4096 * 2);
    s["training"]["framework"] = "transformers";
    json plain = run(s);
    EXPECT_NEAR(at_phase(r, "loss", "temporaries") - at_phase(plain, "loss", "temporaries"), root * 2, 1);
    EXPECT_NEAR(at_phase(r, "backward", "temporaries") - at_phase(plain, "backward", "temporaries"),
                root * 2 + 128256.0 * 4096 * 2, 1);
}

TEST(Training, TorchtuneFsdpGathersTheOutputProjectionAsItsOwnUnit) {
    // torchtune shards tok_embeddings and output as units of their own: Llama-3.1-8B's output, 128256 x 4096 =
    // 525,336,576 parameters, outweighs a decoder layer (218,112,000), and at the start of backward it is
    // gathered (bf16) beside the prefetched last layer, with its own unsharded bf16 gradient.
    json t = kPureBf16;
    t["framework"] = "torchtune";
    json r = run({{"model", kLlama8B},
                  {"training", t},
                  {"engine", {{"type", "fsdp"}}},
                  {"parallelism", {{"data_parallel_size", 8}}}});
    EXPECT_DOUBLE_EQ(r["assumptions"]["zero3_gathered_bytes"].get<double>(), (128256.0 * 4096 + 218112000.0) * 2);
    EXPECT_DOUBLE_EQ(r["assumptions"]["fsdp_unsharded_gradient_bytes"].get<double>(), 128256.0 * 4096 * 2);
}

// torchtune 0.1 (spring 2024), Llama-2-7B (vocabulary 32,000, hidden 4,096, MLP 11,008): the release family
// whose recipes allocated differently from today's.
const json kLlama2_7B = {{"preset", "meta-llama/Llama-2-7b-hf"}};

TEST(Training, Torchtune01FsdpIsFsdp1WithAForeachAdamw) {
    // full_finetune_distributed @fef3ed10d: FSDP1 with one unit per decoder layer, so the root unit (2 x 32,000 x
    // 4,096 + 4,096 = 262,148,096 parameters) stays gathered in bf16 after forward; tok_embeddings and output are
    // no units of their own (today's custom_sharded_layers), and the config's torch.optim.AdamW is not fused: its
    // foreach step allocates one state-sized temporary, 6,738,415,616 / 4 ranks x 2 B.
    json t = kPureBf16;
    t["framework"] = "torchtune";
    t["framework_version"] = "torchtune_0.1";
    json s = {{"model", kLlama2_7B},
              {"training", t},
              {"engine", {{"type", "fsdp"}}},
              {"parallelism", {{"data_parallel_size", 4}}}};
    json r = run(s);
    EXPECT_EQ(r["scenario"]["training"]["framework_version"], "torchtune_0.1");
    EXPECT_DOUBLE_EQ(r["assumptions"]["fsdp1_root_gathered_bytes"].get<double>(), (2 * 32000.0 * 4096 + 4096) * 2);
    EXPECT_DOUBLE_EQ(r["assumptions"]["optimizer_step_temp_bytes"].get<double>(), 6738415616.0 / 4 * 2);
    s["training"].erase("framework_version");  // today's torchtune: fused AdamW, FSDP2
    json now = run(s);
    EXPECT_EQ(now["scenario"]["training"]["framework_version"], "current");
    EXPECT_DOUBLE_EQ(now["assumptions"]["optimizer_step_temp_bytes"].get<double>(), 0);
    EXPECT_FALSE(now["assumptions"].contains("fsdp1_root_gathered_bytes"));
}

TEST(Training, Torchtune01ModelReturnsFp32LogitsTheRecipeHolds) {
    // TransformerDecoder.forward returned self.output(h).float() and the recipe held its shifted .contiguous()
    // copy: forward keeps 4 + 4 (log_softmax) bytes per logit, the loss's gradient 4 + 3 x 4.
    json t = kPureBf16;
    t["framework"] = "torchtune";
    t["framework_version"] = "torchtune_0.1";
    json s = {{"model", kLlama2_7B}, {"training", t}};
    json r = run(s);
    const double TV = 1024.0 * 32000;
    EXPECT_DOUBLE_EQ(at_phase(r, "forward", "logits"), 8 * TV);
    EXPECT_DOUBLE_EQ(at_phase(r, "loss", "logits"), 16 * TV);
    s["training"].erase("framework_version");
    EXPECT_DOUBLE_EQ(at_phase(run(s), "loss", "logits"), 14 * TV);  // bf16 logits + 3 fp32 copies
}

TEST(Training, Torchtune01QloraReservesTheNf4QuantizationPeakOfLoading) {
    // torchao's NF4 (a7670be58), Llama-2-7B's largest quantized matrix 4,096 x 11,008 = 45,088,768 elements:
    // quantizing it at load takes two new segments of 32 B per element beside every weight and the segments
    // q_proj's quantization (4,096^2 x 68 B) left cached; the recipe's reserved peak keeps them. Each matmul's
    // get_original_weight holds 14 B per element (bitsandbytes': the bf16 matrix, 2 B).
    json t = kPureBf16;
    t["method"] = "qlora";
    t["seq_len"] = 512;
    t["batch_size"] = 2;
    t["activation_checkpointing"] = "full";
    t["framework"] = "torchtune";
    t["framework_version"] = "torchtune_0.1";
    json s = {{"model", kLlama2_7B}, {"training", t}};
    json r = run(s);
    const double matrix = 4096.0 * 11008;
    const double weights = at_phase(r, "forward", "weights");
    const double load = weights + 64 * matrix + 68 * 4096.0 * 4096;
    EXPECT_DOUBLE_EQ(r["assumptions"]["nf4_load_peak_bytes"].get<double>(), load);
    EXPECT_DOUBLE_EQ(r["assumptions"]["qlora_dequantized_matrix_bytes"].get<double>(), 14 * matrix);
    EXPECT_NEAR(r["per_gpu"]["peak_reserved_bytes"].get<double>(), load, 1);
    EXPECT_LT(r["per_gpu"]["peak_allocated_bytes"].get<double>(), load);
    s["training"].erase("framework_version");
    json now = run(s);
    EXPECT_FALSE(now["assumptions"].contains("nf4_load_peak_bytes"));
    EXPECT_DOUBLE_EQ(now["assumptions"]["qlora_dequantized_matrix_bytes"].get<double>(), 2 * matrix);
}

TEST(Training, LitgptQloraQuantizesTheHeadAndCastsItsFp16Dequantization) {
    // litgpt's QLoRA (Lightning's BitsandbytesPrecision): every torch.nn.Linear is 4-bit, Llama-2-7B's untied
    // lm_head (32,000 x 4,096) too, and each weight is quantized from fp16, so MatMul4Bit dequantizes to fp16 and
    // casts to bf16 beside it: 2 + 2 B per element of the largest quantized matrix, the head.
    json t = kPureBf16;
    t["method"] = "qlora";
    t["seq_len"] = 512;
    t["framework"] = "litgpt";
    json s = {{"model", kLlama2_7B}, {"training", t}};
    json r = run(s);
    const double head = 32000.0 * 4096, mlp = 4096.0 * 11008;
    EXPECT_DOUBLE_EQ(r["assumptions"]["quantized_lm_head_parameters_per_gpu"].get<double>(), head);
    EXPECT_DOUBLE_EQ(r["assumptions"]["qlora_dequantized_matrix_bytes"].get<double>(), 4 * head);
    // The same run under transformers: the head stays bf16 (2 B), the largest quantized matrix is an MLP one,
    // dequantized straight to bf16.
    s["training"].erase("framework");
    json hf = run(s);
    EXPECT_FALSE(hf["assumptions"].contains("quantized_lm_head_parameters_per_gpu"));
    EXPECT_DOUBLE_EQ(hf["assumptions"]["qlora_dequantized_matrix_bytes"].get<double>(), 2 * mlp);
    // and litgpt's adapters (rank 8 on q_proj, v_proj: 32 x 8 x 4 x 4,096) are bf16, PEFT's fp32
    const double adapters = 32.0 * 8 * 4 * 4096;
    EXPECT_NEAR(at_phase(hf, "forward", "weights") - at_phase(r, "forward", "weights"),
                head * (2 - 0.5625) + adapters * 2, 2);
}

TEST(Training, TorchtuneAndLitgptAdaptersAreInTheComputeDtype) {
    // torchtune and litgpt build the adapters under the run's default dtype (bf16 under a pure recipe): 2 B per
    // adapter parameter for the weight and the gradient, and torch.optim's AdamW keeps its two moments in the
    // parameter's dtype; PEFT keeps them in fp32. Llama-2-7B, rank 64 on q_proj and v_proj: 32 x 64 x 4 x 4,096.
    json t = kPureBf16;
    t["method"] = "lora";
    t["seq_len"] = 512;
    t["lora"] = {{"rank", 64}, {"target_modules", {"q_proj", "v_proj"}}};
    json s = {{"model", kLlama2_7B}, {"training", t}};
    const double adapters = 32.0 * 64 * 4 * 4096;
    json peft = run(s);
    EXPECT_DOUBLE_EQ(peft["assumptions"]["lora_parameters_per_gpu"].get<double>(), adapters);
    EXPECT_DOUBLE_EQ(at_phase(peft, "optimizer_step", "gradients"), adapters * 4);
    EXPECT_DOUBLE_EQ(at_phase(peft, "optimizer_step", "optimizer_states"), adapters * 8);
    for (const char* framework : {"torchtune", "litgpt"}) {
        s["training"]["framework"] = framework;
        json r = run(s);
        EXPECT_DOUBLE_EQ(at_phase(r, "optimizer_step", "gradients"), adapters * 2) << framework;
        EXPECT_DOUBLE_EQ(at_phase(r, "optimizer_step", "optimizer_states"), adapters * 4) << framework;
        EXPECT_NEAR(at_phase(peft, "forward", "weights") - at_phase(r, "forward", "weights"), adapters * 2, 2)
            << framework;
    }
    // bitsandbytes' 32-bit optimizers keep fp32 moments for bf16 adapters (paged: outside the allocator, so read
    // from the optimizer_states figure).
    s["training"]["optimizer"] = "paged_adamw_32bit";
    s["explain"] = true;
    json paged = run(s);
    EXPECT_DOUBLE_EQ(paged["explain"]["figures"]["optimizer_states"]["value"].get<double>(), adapters * 8);
}

TEST(Training, AutocastCachesTheCastWeightsThroughTheLoss) {
    // bf16 autocast over fp32 weights: every linear's bf16 copy is cached until autocast exits. Llama-2-7B:
    // 32 x (4 x 4,096^2 + 3 x 4,096 x 11,008) + the untied head 32,000 x 4,096 = 6,607,077,376 parameters x 2 B,
    // alive in forward and loss, and as saved tensors at the start of backward without checkpointing.
    json t = {{"dtype", "bf16"}, {"precision", "amp_fp32_weights"}, {"seq_len", 256}};
    json s = {{"model", kLlama2_7B}, {"training", t}};
    json r = run(s);
    const double cache = (32 * (4 * 4096.0 * 4096 + 3 * 4096.0 * 11008) + 32000.0 * 4096) * 2;
    EXPECT_DOUBLE_EQ(r["assumptions"]["autocast_weight_cache_bytes"].get<double>(), cache);
    // FSDP casts its parameters itself (its mixed precision): no autocast cache.
    s["engine"] = {{"type", "fsdp"}};
    s["parallelism"] = {{"data_parallel_size", 2}};
    json f = run(s);
    EXPECT_DOUBLE_EQ(f["assumptions"]["autocast_weight_cache_bytes"].get<double>(), 0);
    // Pure bf16 has nothing to cast.
    json pure = run({{"model", kLlama2_7B}, {"training", kPureBf16}});
    EXPECT_DOUBLE_EQ(pure["assumptions"]["autocast_weight_cache_bytes"].get<double>(), 0);
}

TEST(Training, TorchtitanLossParallelHoldsFourFp32ShardsInBackward) {
    // torchtitan with TP computes the cross-entropy with DTensor's loss_parallel ops on the vocab shard: the fused
    // nll + log_softmax backward holds the saved result, zeros_like, exp and their sum/product: 4 x 4 B per logit
    // of this GPU's shard (Llama-3.1-8B: 128,256 / 2), more than the plain loss's 2 + 3 x 4.
    json t = kPureBf16;
    t["framework"] = "torchtitan";
    json s = {{"model", kLlama8B},
              {"training", t},
              {"engine", {{"type", "fsdp"}}},
              {"parallelism", {{"data_parallel_size", 2}, {"tensor_parallel_size", 2}}}};
    const double TV = 1024.0 * 128256 / 2;
    EXPECT_DOUBLE_EQ(at_phase(run(s), "loss", "logits"), 16 * TV);
    s["training"]["framework"] = "transformers";
    EXPECT_DOUBLE_EQ(at_phase(run(s), "loss", "logits"), 14 * TV);
}

TEST(Training, PerOpSelectiveCheckpointingKeepsTheOddNumberedMatmuls) {
    // torchtitan's op policy counts the layer's aten.mm calls and recomputes every second one: of wq, wk, wv, wo,
    // w1, w3, w2 it keeps wq, wv, w1 and w2. Llama-3.1-8B, bf16, per token and layer: the input 2 x 4,096, the
    // attention output 2 x 4,096 and log-sum-exp 4 x 32, and 2 x (4,096 + 1,024 + 14,336 + 4,096).
    json t = kPureBf16;
    t["framework"] = "torchtitan";
    t["activation_checkpointing"] = "selective";
    json r = run({{"model", kLlama8B},
                  {"training", t},
                  {"engine", {{"type", "fsdp"}}},
                  {"parallelism", {{"data_parallel_size", 8}}},
                  {"explain", true}});
    EXPECT_DOUBLE_EQ(r["explain"]["figures"]["saved_bytes_per_token_per_layer"]["value"].get<double>(),
                     2 * 4096.0 + 2 * 4096 + 4 * 32 + 2 * (4096 + 1024 + 14336 + 4096));
}

TEST(Training, TorchtitanSequenceParallelSavesTheGatheredInputs) {
    // torchtitan's TP plan all-gathers the sequence before attention and the feed-forward: their linears save the
    // whole input, 2 x 4,096 bf16 per token for each of the two, where a rank's share (4,096 / 2) is what Megatron
    // keeps. Llama-3.1-8B, TP 2 with sequence parallelism, no checkpointing: 2 x 2 x (4,096 - 2,048) more bytes.
    json t = kPureBf16;
    t["framework"] = "torchtitan";
    json s = {{"model", kLlama8B},
              {"training", t},
              {"engine", {{"type", "fsdp"}}},
              {"parallelism", {{"data_parallel_size", 2}, {"tensor_parallel_size", 2}, {"sequence_parallel", true}}}};
    const double titan = run(s)["assumptions"]["activation_bytes_per_token_per_layer"].get<double>();
    s["training"]["framework"] = "transformers";
    const double plain = run(s)["assumptions"]["activation_bytes_per_token_per_layer"].get<double>();
    EXPECT_DOUBLE_EQ(titan - plain, 2 * 2 * (4096.0 - 2048));
}

TEST(Training, TorchtitanHeadSavesTheGatheredSequenceThroughTheLoss) {
    // torchtitan's final RMSNorm runs eagerly above the last block (its fp32 input, 4 B, and its bf16 output, 2 B, on
    // this rank's share of the sequence under SP: 4,096 / 2), and the output projection, ColwiseParallel with
    // input_layouts Shard(1), saves the all-gathered [B, S, H] input (2 B x 4,096): alive through the forward and
    // the loss. Llama-3.1-8B, TP 2 with sequence parallelism, 1,024 tokens. transformers' runs do not model it.
    json t = kPureBf16;
    t["framework"] = "torchtitan";
    json s = {{"model", kLlama8B},
              {"training", t},
              {"engine", {{"type", "fsdp"}}},
              {"parallelism", {{"data_parallel_size", 2}, {"tensor_parallel_size", 2}, {"sequence_parallel", true}}},
              {"explain", true}};
    json r = run(s);
    const double head = 1024.0 * ((4 + 2) * 2048 + 2 * 4096);
    const json& figures = r["explain"]["figures"];
    ASSERT_TRUE(figures.contains("final_norm_and_head_input"));
    EXPECT_DOUBLE_EQ(figures["final_norm_and_head_input"]["value"].get<double>(), head);
    EXPECT_DOUBLE_EQ(at_phase(r, "loss", "activations"), figures["activations_saved"]["value"].get<double>() + head);
    EXPECT_DOUBLE_EQ(at_phase(r, "forward", "activations"), figures["activations_saved"]["value"].get<double>() + head);
    s["training"]["framework"] = "transformers";
    EXPECT_FALSE(run(s)["explain"]["figures"].contains("final_norm_and_head_input"));
}

TEST(Training, ExpertStateShardsOverTheExpertDataParallelGroup) {
    // Mixtral-8x7B, Megatron distributed optimizer, DP 8, EP 8 (Megatron's expert_data_parallel = 8 / 8 = 1):
    // each GPU holds 1/8 of the experts (45,098,205,184 / 8) and shards their fp32 master + m + v (12 B) over
    // 1 rank; the other 1,604,587,520 parameters shard their 12 B over all 8 ranks.
    json r = run({{"model", {{"preset", "mistralai/Mixtral-8x7B-v0.1"}}},
                  {"engine", {{"type", "megatron"}}},
                  {"training", {{"precision", "mixed_fp32_grads"}}},
                  {"parallelism", {{"data_parallel_size", 8}, {"expert_parallel_size", 8}}}});
    double experts = 45098205184.0, rest = 46702792704.0 - experts;
    EXPECT_NEAR(component(r, "optimizer_states"), experts / 8 * 12 + rest * 12 / 8, 16);
}

TEST(Training, TensorParallelSplitsMatricesNotNorms) {
    json r1 = run({{"model", kLlama8B}, {"engine", {{"type", "megatron"}}}});
    json r2 =
        run({{"model", kLlama8B}, {"engine", {{"type", "megatron"}}}, {"parallelism", {{"tensor_parallel_size", 2}}}});
    // norms: 65 x 4096 replicated; everything else halves
    double norms = 65.0 * 4096;
    double P = 8030261248.0;
    EXPECT_NEAR(component(r2, "weights"), ((P - norms) / 2 + norms) * 2, 1);
    EXPECT_NEAR(component(r1, "weights"), P * 2, 1);
}

TEST(Training, PipelineReportsTheHeaviestStage) {
    json r = run(
        {{"model", kLlama8B}, {"engine", {{"type", "megatron"}}}, {"parallelism", {{"pipeline_parallel_size", 4}}}});
    // 8 layers per stage; the first holds the embedding (525,336,576), the last the head + final norm
    // (525,336,576 + 4,096): the last stage is heaviest.
    double expected = 8.0 * 218112000 + 525336576 + 4096;
    EXPECT_NEAR(component(r, "weights"), expected * 2, 1);
}

TEST(Fit, GpusNeededGrowsDataParallelUnderZero3) {
    json r = run({{"model", kLlama8B},
                  {"engine", {{"type", "deepspeed"}, {"zero_stage", 3}}},
                  {"hardware", {{"gpu", "RTX-4090-24GB"}}}});
    EXPECT_FALSE(r["fits"].get<bool>());
    ASSERT_TRUE(r["gpus_needed"].is_number());
    std::uint64_t n = r["gpus_needed"];
    json at_n = run({{"model", kLlama8B},
                     {"engine", {{"type", "deepspeed"}, {"zero_stage", 3}}},
                     {"hardware", {{"gpu", "RTX-4090-24GB"}, {"num_gpus", n}}}});
    json below = run({{"model", kLlama8B},
                      {"engine", {{"type", "deepspeed"}, {"zero_stage", 3}}},
                      {"hardware", {{"gpu", "RTX-4090-24GB"}, {"num_gpus", n - 1}}}});
    EXPECT_TRUE(at_n["fits"].get<bool>());    // exact at the boundary: n fits...
    EXPECT_FALSE(below["fits"].get<bool>());  // ...and n - 1 does not
}

TEST(Figures, AllocatedReservedDeviceAreOrdered) {
    json r = run({{"model", kLlama8B}, {"mode", "inference"}});
    const json& g = r["per_gpu"];
    EXPECT_LT(g["peak_allocated_bytes"].get<std::uint64_t>(), g["peak_reserved_bytes"].get<std::uint64_t>());
    EXPECT_LT(g["peak_reserved_bytes"].get<std::uint64_t>(), g["device_total_bytes"].get<std::uint64_t>());
    std::uint64_t sum = 0;
    for (auto& [k, v] : g["components"].items()) sum += v.get<std::uint64_t>();
    EXPECT_NEAR(static_cast<double>(sum), g["device_total_bytes"].get<double>(), 8);  // rounding of each part
}

TEST(Figures, OverheadsAreNamedAndOverridable) {
    json r = run({{"model", kLlama8B}, {"mode", "inference"}, {"overheads", {{"cuda_context_gib", 2}}}});
    EXPECT_EQ(r["assumptions"]["overheads"]["cuda_context_gib"]["value"], 2);
    json bad = gpumem::estimate({{"model", kLlama8B}, {"overheads", {{"no_such", 1}}}});
    EXPECT_FALSE(bad["ok"].get<bool>());
    EXPECT_EQ(bad["errors"][0]["field"], "overheads.no_such");
}

TEST(Inference, MlaCachesUpProjectedKeysAndValuesUnderTransformers) {
    json r = run({{"model", {{"preset", "deepseek-ai/DeepSeek-V3"}}},
                  {"mode", "inference"},
                  {"inference", {{"context_len", 4096}, {"weight_format", "fp8"}}},
                  {"hardware", {{"gpu_memory_gb", 2000}}}});
    // transformers keeps k (128 nope + 64 rope) and v (128) for all 128 heads: 40,960 values x 2 B,
    // on each of 61 layers, for 4096 tokens. (The latent alone would be 512 + 64 = 576 values.)
    EXPECT_EQ(component(r, "kv_cache"), 61ull * 4096 * 128 * (128 + 64 + 128) * 2);
    EXPECT_EQ(r["assumptions"]["mla_latent_bytes_per_token_per_layer"], 576 * 2);
}

TEST(Inference, EncodersCacheNothingAndT5CachesItsDecoder) {
    json bert = run({{"model", {{"preset", "google-bert/bert-base-uncased"}}},
                     {"mode", "inference"},
                     {"inference", {{"context_len", 512}}}});
    EXPECT_EQ(component(bert, "kv_cache"), 0u);
    json t5 = run(
        {{"model", {{"preset", "google-t5/t5-small"}}}, {"mode", "inference"}, {"inference", {{"context_len", 512}}}});
    // 6 decoder layers x (self + cross attention) x K,V x 8 heads x 64 x 4 B (fp32 checkpoint) x 512 tokens
    EXPECT_EQ(component(t5, "kv_cache"), 6ull * 2 * 2 * 8 * 64 * 4 * 512);
}

TEST(Inference, WeightFormatAutoReadsQuantizationConfig) {
    json r = run(
        {{"model", {{"preset", "openai/gpt-oss-20b"}}}, {"mode", "inference"}, {"inference", {{"context_len", 1024}}}});
    EXPECT_EQ(r["scenario"]["inference"]["weight_format"], "mxfp4");
    // Only the experts are MXFP4 (attention, router, embeddings and head are listed in
    // modules_to_not_convert): 24 layers x 32 experts x 3 x 2880 x 2880 = 19,110,297,600 weights at
    // 4 bits + an 8-bit scale per 32 (0.53125 B); the other 1,804,459,584 parameters in bf16.
    double experts = 24.0 * 32 * 3 * 2880 * 2880;
    EXPECT_NEAR(component(r, "weights"), experts * 0.53125 + (20914757184.0 - experts) * 2, 2);
}

TEST(Inference, FormatBytesIncludeTheirScales) {
    auto weights = [&](const json& inference) {
        json r = run({{"model", kLlama8B}, {"mode", "inference"}, {"inference", inference}});
        return component(r, "weights");
    };
    double linear = 32.0 * 218103808, rest = 8030261248.0 - linear;  // layer matrices vs embeddings, head, norms
    // GPTQ int4, group 128: 4 bits + an fp16 scale and a 4-bit zero per 128 weights.
    EXPECT_NEAR(weights({{"weight_format", "int4"}, {"group_size", 128}}), linear * (0.5 + 2.5 / 128) + rest * 2, 2);
    // NVFP4: 4 bits + an fp8 scale per 16.
    EXPECT_NEAR(weights({{"weight_format", "nvfp4"}}), linear * (0.5 + 1.0 / 16) + rest * 2, 2);
    // GGUF q4_0 quantizes every matrix: 18 bytes per block of 32.
    EXPECT_NEAR(weights({{"weight_format", "q4_0"}}), 8030261248.0 * 18 / 32, 2);
    json bad =
        gpumem::estimate({{"model", kLlama8B}, {"mode", "inference"}, {"inference", {{"weight_format", "int3"}}}});
    EXPECT_EQ(bad["errors"][0]["field"], "inference.weight_format");
}

TEST(Serving, VllmFillsItsShareOfTheCardWithKvBlocks) {
    json r = run({{"model", kLlama8B},
                  {"mode", "inference"},
                  {"inference", {{"engine", "vllm"}, {"context_len", 8192}, {"batch_size", 32}}}});
    // vLLM V1 (engine_version 0.12, the default: PyTorch-native sampler), H100: it requests 0.9 x the
    // total CUDA reports (79.18 GiB). The profile run (vllm serve's defaults on this card: 8192 tokens,
    // 1024 sequences) peaks in the dummy sampler: 1024 rows x 128,256 logits x 38 B (bf16 logits 2 +
    // fp32 copy 4 + sort values 4 and int64 indices 8 + the sort's scratch 8 + 4 + 8), over the held
    // hidden states (8192 x 4096 x 2 B); the forward's working set (8192 x 102,400 B) is smaller.
    // Less the weights (8,030,261,248 x 2 B) and 0.16 GiB outside torch, the rest is KV blocks of
    // 16 tokens x 32 layers x 8 kv heads x 128 x 2 x 2 B.
    const double GiB = 1073741824.0, total = static_cast<double>(static_cast<std::uint64_t>(79.18 * GiB));
    const double budget = 0.9 * total, weights = 8030261248.0 * 2;
    const double peak = std::max(8192.0 * 102400, 8192.0 * 4096 * 2 + 1024.0 * 128256 * 38);
    const double pool = budget - weights - peak - 0.16 * GiB;
    double per_block = 16.0 * 32 * 8 * 128 * 2 * 2;
    const json& sv = r["serving"];
    EXPECT_EQ(sv["kv_cache_blocks"].get<double>(), std::floor(pool / per_block));
    EXPECT_EQ(sv["kv_cache_tokens"].get<double>(), std::floor(pool / per_block) * 16);
    EXPECT_EQ(sv["max_concurrent_sequences"].get<double>(), std::floor(pool / (8192.0 * 32 * 8 * 128 * 2 * 2)));
    EXPECT_NEAR(r["assumptions"]["vllm_activation_peak_bytes"].get<double>(), peak, 1);
    EXPECT_TRUE(r["fits"].get<bool>());
    // nvidia-smi shows the request, the CUDA graphs (0.5 GiB) and the context (0.5 GiB) outside it, and the
    // allocator's slack (5 %) on what it hands out piecemeal (the peak's and the graphs' blocks; the weights
    // and the pool are few large ones).
    EXPECT_NEAR(r["per_gpu"]["device_total_bytes"].get<double>(), budget + GiB + 0.05 * (peak + 0.5 * GiB), 2);
    EXPECT_LE(r["per_gpu"]["peak_allocated_bytes"].get<double>(), r["per_gpu"]["peak_reserved_bytes"].get<double>());
    EXPECT_LE(r["per_gpu"]["peak_reserved_bytes"].get<double>(), r["per_gpu"]["device_total_bytes"].get<double>());
    // A batch larger than the cache holds does not fit.
    json over = run({{"model", kLlama8B},
                     {"mode", "inference"},
                     {"inference", {{"engine", "vllm"}, {"context_len", 8192}, {"batch_size", 100}}}});
    EXPECT_FALSE(over["fits"].get<bool>());
}

TEST(Serving, VllmCachesMlaLatents) {
    json r = run({{"model", {{"preset", "deepseek-ai/DeepSeek-V3"}}},
                  {"mode", "inference"},
                  {"inference", {{"engine", "vllm"}, {"context_len", 4096}}},
                  {"hardware", {{"gpu_memory_gb", 2000}}}});
    // The latent (kv_lora_rank 512 + rope 64) in the cache's dtype: bf16 (fp8 weights, bf16 activations).
    EXPECT_EQ(r["scenario"]["inference"]["kv_cache_dtype"], "bf16");
    EXPECT_EQ(r["assumptions"]["kv_bytes_per_token_per_layer"], (512 + 64) * 2);
}

TEST(Serving, LlamaCppOffloadsWholeLayers) {
    json all = run({{"model", kLlama8B},
                    {"mode", "inference"},
                    {"inference", {{"engine", "llama.cpp"}, {"weight_format", "q8_0"}, {"context_len", 4096}}}});
    json half =
        run({{"model", kLlama8B},
             {"mode", "inference"},
             {"inference",
              {{"engine", "llama.cpp"}, {"weight_format", "q8_0"}, {"context_len", 4096}, {"gpu_layers", 16}}}});
    // q8_0: 34 B per 32 weights. All layers: 32 x 218,112,000 + the output matrix and final norm on
    // the GPU; the token embeddings stay on the host. Half: 16 layers, no output.
    double layer = 218112000.0 * 34 / 32;
    EXPECT_NEAR(component(all, "weights"), 32 * layer + (525336576.0 + 4096) * 34 / 32, 2);
    EXPECT_NEAR(component(half, "weights"), 16 * layer, 2);
    // f16 cache for the whole context on the GPU's layers: 16 x 4096 x 8 x 128 x 2 x 2 B
    EXPECT_EQ(component(half, "kv_cache"), 16ull * 4096 * 8 * 128 * 2 * 2);
    EXPECT_GT(half["host_bytes"].get<double>(), 16 * layer);
}

TEST(Inference, ImageTokensJoinTheContext) {
    json r = run({{"model", {{"preset", "llava-hf/llava-1.5-7b-hf"}}},
                  {"mode", "inference"},
                  {"inference", {{"images", 2}, {"context_len", 1024}}}});
    // CLIP ViT-L/14 at 336 px: (336 / 14)² = 576 tokens per image (the class token dropped).
    // 1024 + 2 x 576 tokens x 32 layers x 32 kv heads x 128 x 2 (K,V) x 2 B (fp16)
    EXPECT_EQ(component(r, "kv_cache"), (1024ull + 2 * 576) * 32 * 32 * 128 * 2 * 2);
    bool encoded = false;
    for (const json& p : r["per_gpu"]["timeline"]) encoded |= p["phase"] == "encode_images";
    EXPECT_TRUE(encoded);
    // Gemma 3 pools an image to mm_tokens_per_image = 256 soft tokens.
    json g =
        run({{"model", {{"preset", "google/gemma-3-4b-it"}}}, {"mode", "inference"}, {"inference", {{"images", 1}}}});
    EXPECT_EQ(g["scenario"]["inference"]["image_tokens"], 256);
    // A text-only model has no tower to feed.
    json bad = gpumem::estimate({{"model", kLlama8B}, {"mode", "inference"}, {"inference", {{"images", 1}}}});
    EXPECT_EQ(bad["errors"][0]["field"], "inference.images");
}

TEST(Inference, Int4KvCacheKeepsGroupScales) {
    json r = run({{"model", kLlama8B},
                  {"mode", "inference"},
                  {"inference", {{"context_len", 8192}, {"kv_cache_dtype", "int4"}}}});
    // 4 bits + fp16 scale and zero per 64 values: 0.5625 B per value instead of 2 (of the 1 GiB bf16 cache).
    EXPECT_NEAR(component(r, "kv_cache"), (1ull << 30) / 2.0 * 0.5625, 1);
}

TEST(Formats, CatalogueHasEveryFormatWithItsBytes) {
    json formats = gpumem::list_formats();
    std::map<std::string, double> bytes;
    for (const json& f : formats) bytes[f["id"]] = f["bytes_per_param"].get<double>();
    ASSERT_EQ(bytes.size(), 15u);  // every entry of presets/dtypes.json parsed
    EXPECT_DOUBLE_EQ(bytes["bf16"], 2);
    EXPECT_DOUBLE_EQ(bytes["fp8"], 1 + 4.0 / 16384);  // fp32 scale per 128x128 block
    EXPECT_DOUBLE_EQ(bytes["int8"], 1 + 4.0 / 4096);
    EXPECT_DOUBLE_EQ(bytes["nf4"], 0.5 + 4.0 / 64);  // fp32 absmax per 64 (no double quant)
    EXPECT_DOUBLE_EQ(bytes["mxfp4"], 0.5 + 1.0 / 32);
    EXPECT_DOUBLE_EQ(bytes["q8_0"], 34.0 / 32);
    EXPECT_DOUBLE_EQ(bytes["q6_k"], 210.0 / 256);
    EXPECT_DOUBLE_EQ(bytes["q4_0"], 18.0 / 32);
    EXPECT_DOUBLE_EQ(bytes["q4_k_m"], 4.8 / 8);
}

TEST(Formats, EachScopeAndAUserFormat) {
    auto weights = [&](const json& scenario) { return component(run(scenario), "weights"); };
    json base = {{"model", kLlama8B}, {"mode", "inference"}};
    double P = 8030261248.0, linear = 32.0 * 218103808, rest = P - linear;
    json fp8 = base, q6 = base, mine = base;
    fp8["inference"] = {{"weight_format", "fp8"}};
    q6["inference"] = {{"weight_format", "q6_k"}};
    EXPECT_NEAR(weights(fp8), linear * (1 + 4.0 / 16384) + rest * 2, 2);  // layers' matrices only
    EXPECT_NEAR(weights(q6), P * 210.0 / 256, 2);                         // GGUF: every matrix
    // A user format: 6 bits + 2 bytes of scales per 64 weights, on the layers' matrices.
    mine["formats"] =
        json::array({{{"id", "my6bit"}, {"bits", 6}, {"group_size", 64}, {"scale_bytes", 2}, {"scope", "layers"}}});
    mine["inference"] = {{"weight_format", "my6bit"}};
    EXPECT_NEAR(weights(mine), linear * (0.75 + 2.0 / 64) + rest * 2, 2);
}

TEST(Inference, GptOssAlternatesSlidingAndFullLayers) {
    json r = run(
        {{"model", {{"preset", "openai/gpt-oss-20b"}}}, {"mode", "inference"}, {"inference", {{"context_len", 8192}}}});
    // layer_types: 12 sliding (window 128) and 12 full layers; 8 kv heads x 64 x 2 (K,V) x 2 B
    std::uint64_t per_token_layer = 8ull * 64 * 2 * 2;
    EXPECT_EQ(component(r, "kv_cache"), per_token_layer * (12 * 8192 + 12 * 128));
}

TEST(Multimodal, MllamaCountsItsCrossAttentionLayers) {
    // Llama-3.2-11B-Vision's config (presets/pending/meta-llama__Llama-3.2-11B-Vision.json, its
    // `config`). Its tensors of kind Layers::CrossAttention (cross_attn.q_norm, k_norm: head_dim
    // 4096 / 32 = 128 each, and the attention and MLP gates: 1 each, 258 per layer) sit in the 8
    // layers of cross_attention_layers; weights, gradients and optimizer state count them once per
    // layer. Total (model_test's MllamaTiledTowerAndGatedCrossAttention): 10,670,220,835 parameters,
    // of which 8 x 258 = 2,064 are those.
    json config = json::parse(R"({"architectures": ["MllamaForConditionalGeneration"], "image_token_index": 128256,
      "model_type": "mllama",
      "text_config": {"model_type": "mllama_text_model", "vocab_size": 128256, "hidden_size": 4096,
        "intermediate_size": 14336, "num_hidden_layers": 40, "num_attention_heads": 32, "num_key_value_heads": 8,
        "cross_attention_layers": [3, 8, 13, 18, 23, 28, 33, 38], "rms_norm_eps": 1e-05, "rope_theta": 500000.0,
        "max_position_embeddings": 131072, "hidden_act": "silu", "tie_word_embeddings": false},
      "vision_config": {"model_type": "mllama_vision_model", "hidden_size": 1280, "intermediate_size": 5120,
        "num_hidden_layers": 32, "num_global_layers": 8, "attention_heads": 16, "image_size": 560, "patch_size": 14,
        "max_num_tiles": 4, "num_channels": 3, "norm_eps": 1e-05, "vision_output_dim": 7680,
        "intermediate_layers_indices": [3, 7, 15, 23, 30],
        "supported_aspect_ratios": [[1, 1], [1, 2], [1, 3], [1, 4], [2, 1], [2, 2], [3, 1], [4, 1]],
        "hidden_act": "gelu"}})");
    const std::uint64_t P = 10670220835ull;
    json train = run({{"model", {{"hf_config", config}}},
                      {"mode", "training"},
                      {"training", {{"batch_size", 1}, {"seq_len", 1024}, {"dtype", "bf16"}}}});
    EXPECT_EQ(train["parameters"]["total"], P);
    // HF Trainer's bf16 AMP: fp32 weights and gradients (4 B each), AdamW's fp32 m and v (8 B).
    EXPECT_EQ(component(train, "weights"), P * 4);
    EXPECT_EQ(component(train, "gradients"), P * 4);
    EXPECT_EQ(component(train, "optimizer_states"), P * 8);
    json infer = run({{"model", {{"hf_config", config}}},
                      {"mode", "inference"},
                      {"inference", {{"batch_size", 1}, {"context_len", 4096}, {"weight_format", "bf16"}}}});
    EXPECT_EQ(component(infer, "weights"), P * 2);  // bf16: 2 B per parameter
}
