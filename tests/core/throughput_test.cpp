// The estimate's "throughput" (throughput/throughput.cpp): decode bound by HBM bandwidth, prefill by
// FLOPs, training from the planner's step time.
#include <gtest/gtest.h>

#include "gpumem/gpumem.h"

#include "estimate_helpers.h"

namespace {

using json = nlohmann::json;

using gpumem::test::kLlama8B;
using gpumem::test::run;

// Llama 3.1 8B: 8,030,261,248 parameters, 525,336,576 in the (untied) input embedding, which a
// token looks up rather than multiplies: N = 7,504,924,672. L x H x Q = 32 x 32 x 128 = 131,072.
constexpr double kN = 8030261248.0 - 525336576.0;
constexpr double kLHQ = 32.0 * 32 * 128;

TEST(Throughput, DecodeIsBoundByTheBytesReadPerStep) {
    json r = run({{"model", kLlama8B}, {"mode", "inference"}, {"inference", {{"context_len", 4096}}}});
    const json& t = r["throughput"];
    // H100 (presets/gpus.json): 3,350 GB/s, 989 dense BF16 TFLOPS. One step reads the bf16 weights
    // (16.06 GB) and the sequence's cache (4096 x 128 KiB = 0.54 GB) at 0.7 of the peak
    // (decode_bandwidth_efficiency): 16.6 GB / 2.345 TB/s = 7.08 ms, far above its compute
    // (2N + 4 x 131,072 x 4096 = 17.2 GFLOP at 0.45 x 989 TFLOPS = 39 us).
    double bytes = 8030261248.0 * 2 + 4096.0 * 32 * 8 * 128 * 2 * 2;
    EXPECT_NEAR(t["decode_tokens_per_s"].get<double>(), 0.7 * 3350e9 / bytes, 1e-6);  // about 141 tokens/s
    EXPECT_EQ(t["hbm_gbps"], 3350);
    EXPECT_EQ(t["compute_dtype"], "bf16");
    // A batch of 8 reads the weights once and 8 caches: more tokens per second, less per sequence.
    json b8 =
        run({{"model", kLlama8B}, {"mode", "inference"}, {"inference", {{"context_len", 4096}, {"batch_size", 8}}}});
    double bytes8 = 8030261248.0 * 2 + 8 * 4096.0 * 32 * 8 * 128 * 2 * 2;
    EXPECT_NEAR(b8["throughput"]["decode_tokens_per_s"].get<double>(), 8 * 0.7 * 3350e9 / bytes8, 1e-6);
    EXPECT_NE(r["throughput"]["model"].get<std::string>().find("decode"), std::string::npos);
}

TEST(Throughput, PrefillIsBoundByFlops) {
    json r = run({{"model", kLlama8B}, {"mode", "inference"}, {"inference", {{"context_len", 4096}}}});
    const json& t = r["throughput"];
    // 2N + 2 x L x H x Q x 4096 = 15.01 + 1.07 = 16.08 GFLOP a token, at 989 TFLOPS x 0.5
    // (prefill_efficiency): about 30,700 tokens/s; one 4096-token prompt in 0.133 s.
    double per_token = 2 * kN + 2 * kLHQ * 4096;
    EXPECT_DOUBLE_EQ(t["prefill_flops_per_token"].get<double>(), per_token);
    EXPECT_NEAR(t["prefill_tokens_per_s"].get<double>(), 989e12 * 0.5 / per_token, 1e-6);
    EXPECT_NEAR(t["prefill_s_per_sequence"].get<double>(), 4096 * per_token / (989e12 * 0.5), 1e-12);
    // fp8 weights on an FP8 card run at twice the BF16 peak; the efficiency is a tunable.
    json fp8 = run({{"model", kLlama8B},
                    {"mode", "inference"},
                    {"inference", {{"context_len", 4096}, {"weight_format", "fp8"}}},
                    {"overheads", {{"prefill_efficiency", 0.25}}}});
    EXPECT_EQ(fp8["throughput"]["compute_dtype"], "fp8");
    EXPECT_NEAR(fp8["throughput"]["prefill_tokens_per_s"].get<double>(), 2 * 989e12 * 0.25 / per_token, 1e-6);
}

TEST(Throughput, TrainingComesFromThePlannersStepTime) {
    json r = run({{"model", kLlama8B},
                  {"mode", "training"},
                  {"training", {{"batch_size", 1}, {"seq_len", 2048}}},
                  {"hardware", {{"gpu_memory_gb", 1000}}}});
    const json& t = r["throughput"];
    // One GPU, no communication: the step is 2048 x (6N + 12 x L x H x Q x 2048) FLOPs at 0.45 of
    // the peak, so the tokens per second are 0.45 x 989e12 / (6N + 12 x 131,072 x 2048) (about
    // 9,170) and the MFU is 0.45.
    double per_token = 6 * kN + 12 * kLHQ * 2048;
    EXPECT_NEAR(t["training_tokens_per_s"].get<double>(), 0.45 * 989e12 / per_token, 1e-6);
    EXPECT_NEAR(t["mfu"].get<double>(), 0.45, 1e-12);
    EXPECT_NEAR(t["step_time_s"].get<double>(), 2048 / t["training_tokens_per_s"].get<double>(), 1e-12);
    // Data parallelism over 8 GPUs adds the gradient all-reduce's exposed part: per GPU it is no faster.
    json dp = run({{"model", kLlama8B},
                   {"mode", "training"},
                   {"training", {{"batch_size", 1}, {"seq_len", 2048}}},
                   {"engine", {{"type", "fsdp"}}},
                   {"parallelism", {{"data_parallel_size", 8}}},
                   {"hardware", {{"num_gpus", 8}}}});
    EXPECT_LE(dp["throughput"]["training_tokens_per_s_per_gpu"].get<double>(),
              t["training_tokens_per_s"].get<double>() + 1e-6);
    EXPECT_LE(dp["throughput"]["mfu"].get<double>(), 0.45);
}

}  // namespace
