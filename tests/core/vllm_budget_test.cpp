// vLLM's budget as its source computes it (memory/inference.cpp vllm()), the card totals CUDA reports
// (presets/gpus.json cuda_total_gib) and the settings that choose them (scenario.cpp): each mechanism
// with its derivation.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include <gtest/gtest.h>

#include "gpumem/gpumem.h"

#include "estimate_helpers.h"

namespace {

using json = nlohmann::json;

using gpumem::test::kLlama8B;
using gpumem::test::run;

constexpr double kGiB = 1073741824.0;
// The H100 80GB HBM3's total as CUDA reports it (vLLM's log: "Free memory on device: 78.57/79.18 GiB").
const double kH100 = static_cast<double>(static_cast<std::uint64_t>(79.18 * kGiB));
constexpr double kWeights = 8030261248.0 * 2;         // Llama 3.1 8B in bf16
constexpr double kPerToken = 32.0 * 8 * 128 * 2 * 2;  // its KV: 32 layers x 8 kv heads x 128 x (K, V) x 2 B
constexpr double kVocab = 128256;

json vllm(json inference, json hardware = json::object(), json parallelism = json::object()) {
    inference["engine"] = "vllm";
    json s = {{"model", kLlama8B}, {"mode", "inference"}, {"inference", inference}};
    if (!hardware.empty()) s["hardware"] = hardware;
    if (!parallelism.empty()) s["parallelism"] = parallelism;
    return gpumem::estimate(s);
}

double note(const json& r, const char* key) { return r["assumptions"][key].get<double>(); }

TEST(Catalogue, CudaTotalsAreSourcedAndBelowTheCardsSize) {
    int published = 0;
    for (const json& g : gpumem::list_gpus()) {
        const double cuda = g["cuda_total_bytes"].get<double>(), card = g["memory_bytes"].get<double>();
        EXPECT_LE(cuda, card) << g["id"];
        EXPECT_GT(cuda, 0.9 * card) << g["id"];  // the driver keeps a few hundred MiB, not more
        if (g.contains("cuda_total_gib")) {
            ++published;
            EXPECT_FALSE(g.value("cuda_total_source", "").empty()) << g["id"];
        } else {
            EXPECT_EQ(cuda, card) << g["id"] << ": without a published total, the card's size stands in";
        }
    }
    EXPECT_GE(published, 5);
}

TEST(VllmBudget, RequestsItsShareOfTheTotalCudaReports) {
    // requested = gpu_memory_utilization x 79.18 GiB; every other term is the same at 0.5 and 0.9, so
    // the pools differ by 0.4 x the CUDA total.
    json hi = vllm({{"gpu_memory_utilization", 0.9}}), lo = vllm({{"gpu_memory_utilization", 0.5}});
    EXPECT_NEAR(note(hi, "vllm_budget_bytes"), 0.9 * kH100, 1);
    EXPECT_NEAR(hi["serving"]["kv_cache_bytes"].get<double>() - lo["serving"]["kv_cache_bytes"].get<double>(),
                0.4 * kH100, 2);
    // The marketed size given back for the same card keeps CUDA's total; another size is taken as it.
    json same = vllm({{"gpu_memory_utilization", 0.9}}, {{"gpu", "H100-80GB"}, {"gpu_memory_gb", 80}});
    EXPECT_NEAR(note(same, "vllm_budget_bytes"), 0.9 * kH100, 1);
    json custom = vllm({{"gpu_memory_utilization", 0.9}}, {{"gpu", "my-card"}, {"gpu_memory_gb", 48}});
    EXPECT_NEAR(note(custom, "vllm_budget_bytes"), 0.9 * 48 * kGiB, 1);
}

TEST(VllmBudget, BatchDefaultsFollowTheCardAsVllmServeSetsThem) {
    // EngineArgs._set_default_args: at least 70 GiB (CUDA's total) and not an A100: 8192 tokens, 1024
    // sequences; else 2048 and 256 (vllm serve, the OpenAI API server's usage context).
    auto defaults = [](const char* gpu) {
        json r = vllm(json::object(), {{"gpu", gpu}});
        return std::make_pair(r["scenario"]["inference"]["max_num_batched_tokens"].get<int>(),
                              r["scenario"]["inference"]["max_num_seqs"].get<int>());
    };
    EXPECT_EQ(defaults("H100-80GB"), std::make_pair(8192, 1024));
    EXPECT_EQ(defaults("H200-141GB"), std::make_pair(8192, 1024));
    EXPECT_EQ(defaults("A100-80GB"), std::make_pair(2048, 256));
    EXPECT_EQ(defaults("L40S-48GB"), std::make_pair(2048, 256));
    json given = vllm({{"max_num_seqs", 64}, {"max_num_batched_tokens", 4096}}, {{"gpu", "A100-80GB"}});
    EXPECT_EQ(given["scenario"]["inference"]["max_num_seqs"], 64);
    EXPECT_EQ(given["scenario"]["inference"]["engine_version"], "0.12");
}

TEST(VllmBudget, TheProfileRunsSamplerPeakByReleaseFamily) {
    // 1024 dummy requests (min(max_num_seqs 1024, 8192 tokens)) x 128,256 logits; held hidden states
    // 8192 x 4096 x 2 B. PyTorch-native top-k/top-p (0.11.1 on): 38 B a logit (bf16 logits 2, fp32 copy 4,
    // sort values 4 + indices 8, sort scratch 8 + 4 + 8); FlashInfer's kernel (0.10.0 to 0.11.0): 14 B
    // (2 + 4 + top-k masked 4 + softmax 4).
    const double held = 8192.0 * 4096 * 2;
    for (const char* v : {"0.12", "0.11.1", "0.14"})
        EXPECT_NEAR(note(vllm({{"engine_version", v}}), "vllm_activation_peak_bytes"), held + 1024 * kVocab * 38, 1)
            << v;
    for (const char* v : {"0.11.0", "0.11", "0.10", "0.10.2"})
        EXPECT_NEAR(note(vllm({{"engine_version", v}}), "vllm_activation_peak_bytes"), held + 1024 * kVocab * 14, 1)
            << v;
    // The same weights and request: the pools differ by what the peaks differ.
    EXPECT_NEAR(vllm({{"engine_version", "0.11.0"}})["serving"]["kv_cache_bytes"].get<double>() -
                    vllm({{"engine_version", "0.12"}})["serving"]["kv_cache_bytes"].get<double>(),
                1024 * kVocab * 24, 2);
    // The sort's scratch follows PyTorch's path for the number of rows (SortStable.cu): 128 rows or more,
    // 20 B (int64 index sequence + cub's alternate keys and values); 2 to 127 rows, 32 B (two int2
    // index/segment arrays, the keys' output, the alternates); one row, 12 B (the alternates).
    auto sampler = [](int seqs) {
        json s = {{"model", kLlama8B},
                  {"mode", "inference"},
                  {"explain", true},
                  {"inference", {{"engine", "vllm"}, {"max_num_seqs", seqs}}}};
        return run(s)["explain"]["figures"]["profile_sampler"]["value"].get<double>();
    };
    EXPECT_NEAR(sampler(128), 128 * kVocab * (2 + 4 + 12 + 20), 1);
    EXPECT_NEAR(sampler(64), 64 * kVocab * (2 + 4 + 12 + 32), 1);
    EXPECT_NEAR(sampler(1), 1 * kVocab * (2 + 4 + 12 + 12), 1);
    for (const char* bad : {"0.7", "0.7.3", "0.6.6", "1.0", "0.11.0.1", "v0.11", "latest", "0.x", "0..11", "0.11.", "",
                            "0.9999999999999999"}) {
        json r = vllm({{"engine_version", bad}});
        ASSERT_FALSE(r["ok"].get<bool>()) << bad;
        EXPECT_EQ(r["errors"][0]["field"], "inference.engine_version") << bad;
    }
}

TEST(VllmBudget, TheV0EngineOf08And09HasItsOwnDefaultsProfileAndSampler) {
    // 0.8 and 0.9's V0 engine (VLLM_USE_V1=0), spelled "0.9-v0". EngineArgs._set_default_args_v0: 256 sequences;
    // chunked prefill only above a max_model_len of 32K, then SchedulerConfig's 2048 tokens a step, else
    // max(max_model_len, 2048).
    auto defaults = [](const char* version, int context) {
        json r = vllm({{"engine_version", version}, {"context_len", context}});
        return std::make_pair(r["scenario"]["inference"]["max_num_batched_tokens"].get<int>(),
                              r["scenario"]["inference"]["max_num_seqs"].get<int>());
    };
    EXPECT_EQ(defaults("0.8.5-v0", 4096), std::make_pair(4096, 256));
    EXPECT_EQ(defaults("0.9-v0", 8192), std::make_pair(8192, 256));
    EXPECT_EQ(defaults("0.9.2-v0", 1000), std::make_pair(2048, 256));
    EXPECT_EQ(defaults("0.8-v0", 32768), std::make_pair(32768, 256));
    EXPECT_EQ(defaults("0.8-v0", 65536), std::make_pair(2048, 256));
    EXPECT_EQ(defaults("0.10", 4096), std::make_pair(8192, 1024));  // V1's card rule from 0.10
    // The profile run: 256 dummy prompts sharing 4096 tokens, each sampled once: the held hidden states
    // (4096 x 4096 x 2 B) + 256 rows x 128,256 logits x 38 B (the sort's path for 128 rows or more, as in V1's
    // native sampler), above the forward's working set.
    json r = vllm({{"engine_version", "0.8.5-v0"}});
    EXPECT_NEAR(note(r, "vllm_activation_peak_bytes"), 4096.0 * 4096 * 2 + 256 * kVocab * 38, 1);
    EXPECT_EQ(note(r, "vllm_v0_engine"), 1);
    EXPECT_TRUE(std::any_of(r["warnings"].begin(), r["warnings"].end(), [](const json& w) {
        return w.get<std::string>().find("V0 engine (VLLM_USE_V1=0)") != std::string::npos;
    }));
    // V0's sampler (sampler.py _apply_top_k_top_p) keeps the sort's outputs while it builds the masks, the
    // sorted softmax, its cumsum and the re-scattered logits: 2 + 4 + 12 + 1 + 4 + 4 + 1 + 4 = 32 B a logit,
    // above the one-row sort (2 + 4 + 12 + 12 = 30 B) that V1's native sampler peaks at.
    auto sampler = [](const char* version, int seqs) {
        json s = {{"model", kLlama8B},
                  {"mode", "inference"},
                  {"explain", true},
                  {"inference", {{"engine", "vllm"}, {"engine_version", version}, {"max_num_seqs", seqs}}}};
        return run(s)["explain"]["figures"]["profile_sampler"]["value"].get<double>();
    };
    // A check against vLLM's own log of its V0 profile run (PR #10511, 2024-12-13: `vllm serve
    // meta-llama/Meta-Llama-3-8B` on one H100, max_model_len 8192, so 8192 tokens in 256 dummy prompts; the same
    // vocabulary and hidden size as Llama 3.1 8B): "PyTorch activation peak memory 1.26GiB". That log predates
    // 0.8 (its non-torch figure follows older accounting and is not compared); the profile run and the sampler's
    // sort have the structure read at 0.8/0.9. gpumem: 8192 x 4096 x 2 B + 256 x 128,256 x 38 B = 1.22 GiB.
    json llama3 = vllm({{"engine_version", "0.8-v0"}, {"context_len", 8192}});
    EXPECT_NEAR(note(llama3, "vllm_activation_peak_bytes") / kGiB, 1.26, 0.05 * 1.26);
    EXPECT_NEAR(sampler("0.9-v0", 1), 1 * kVocab * 32, 1);
    EXPECT_NEAR(sampler("0.12", 1), 1 * kVocab * 30, 1);
    EXPECT_NEAR(sampler("0.9-v0", 64), 64 * kVocab * (2 + 4 + 12 + 32), 1);
    // The snapshot precedes the distributed init (Worker.init_device): vLLM's PyNccl communicator and the
    // custom all-reduce's buffers grow in the profile run, as before V1's 0.11.
    json v0 = vllm({{"engine_version", "0.9.2-v0"}}, {{"num_gpus", 2}}, {{"tensor_parallel_size", 2}});
    json v1 = vllm({{"engine_version", "0.10.2"}}, {{"num_gpus", 2}}, {{"tensor_parallel_size", 2}});
    EXPECT_NEAR(note(v0, "vllm_non_torch_bytes"), note(v1, "vllm_non_torch_bytes"), 1);
    EXPECT_GT(note(v0, "vllm_non_torch_bytes"),
              note(vllm(json::object(), {{"num_gpus", 2}}, {{"tensor_parallel_size", 2}}), "vllm_non_torch_bytes"));
}

TEST(VllmBudget, TheForwardSetsThePeakWhenTheSamplerIsSmall) {
    // One sequence a step: the sampler holds 1 x 128,256 x 38 B, far below the forward's working set
    // over 8192 tokens: residual and normed copy 2 x 2 B x 4096, then the MLP 3 x 2 B x 14,336 a token.
    json r = vllm({{"max_num_seqs", 1}});
    EXPECT_NEAR(note(r, "vllm_activation_peak_bytes"), 8192.0 * (2 * 2 * 4096 + 3 * 2 * 14336), 1);
}

TEST(VllmBudget, NonTorchMemoryGrowsWithMoreThanOneGpu) {
    // One GPU: the libraries' code and handles mapped on first use, measured (vLLM PR #12126's log on one H100:
    // 0.16 GiB; no source sizes it). vLLM 0.11's own logs (tests/data/serving) say 0.13-0.14: a check, not an input.
    EXPECT_NEAR(note(vllm(json::object()), "vllm_non_torch_bytes"), 0.16 * kGiB, 1);
    // TP 2: + torch's NCCL communicator, created at the profile run's first all-gather: 24 channels (NCCL on
    // H100 NVSwitch) x one ring connection x (LL 8 x 512 x 8 x 16 B + LL128 120 x 640 x 8 x 8 B + SIMPLE 4 MiB)
    // = 24 x 9,633,792 B = 0.215 GiB (NCCL src/init.cc DEFAULT_*BUFFSIZE @v2.27.3-1).
    const double connection = 524288.0 + 4915200.0 + 4194304.0;
    EXPECT_DOUBLE_EQ(connection, 9633792.0);
    json tp2 = vllm(json::object(), {{"num_gpus", 2}}, {{"tensor_parallel_size", 2}});
    const double nt2 = 0.16 * kGiB + 24 * connection;
    EXPECT_NEAR(note(tp2, "vllm_non_torch_bytes"), nt2, 1);
    // Below vLLM's 0.11 logs at TP 2 (0.54-0.55 GiB): NCCL's device state and kernels' code are left out.
    EXPECT_LT(nt2, 0.54 * kGiB);
    // Before 0.11 the init snapshot preceded the distributed init (vLLM PR #25359): vLLM's PyNccl communicator
    // and the custom all-reduce's two 8 MiB cudaMalloc'd buffers grow in the profile run too.
    json old = vllm({{"engine_version", "0.10.2"}}, {{"num_gpus", 2}}, {{"tensor_parallel_size", 2}});
    EXPECT_NEAR(note(old, "vllm_non_torch_bytes"), 0.16 * kGiB + 2 * 24 * connection + 2 * 8 * 1048576.0, 1);
    // The custom all-reduce runs on 2, 4, 6 or 8 GPUs only (CustomAllreduce._SUPPORTED_WORLD_SIZES).
    json tp16 = vllm({{"engine_version", "0.10.2"}}, {{"num_gpus", 16}}, {{"tensor_parallel_size", 16}});
    EXPECT_NEAR(note(tp16, "vllm_non_torch_bytes"), 0.16 * kGiB + 2 * 24 * connection, 1);
    json old1 = vllm({{"engine_version", "0.10.2"}});
    EXPECT_NEAR(note(old1, "vllm_non_torch_bytes"), 0.16 * kGiB, 1);
    // The pool: requested - weights - peak - non-torch; the weights halve at TP 2, the sampler does not
    // (the logits are all-gathered on every rank).
    const double peak = 8192.0 * 4096 * 2 + 1024 * kVocab * 38;
    EXPECT_NEAR(tp2["serving"]["kv_cache_bytes"].get<double>(),
                0.9 * kH100 - tp2["per_gpu"]["components"]["weights"].get<double>() - peak - nt2, 2);
}

TEST(VllmBudget, RefusesAsVllmWouldAndPointsToFit) {
    // 70B in bf16 (141 GB) on one H100: no memory left for KV blocks.
    json big = gpumem::estimate({{"model", {{"preset", "meta-llama/Llama-3.1-70B-Instruct"}}},
                                 {"mode", "inference"},
                                 {"inference", {{"engine", "vllm"}}}});
    ASSERT_TRUE(big["ok"].get<bool>());
    EXPECT_EQ(big["serving"]["kv_cache_bytes"], 0);
    EXPECT_FALSE(big["fits"].get<bool>());
    auto warned = [](const json& r, const std::string& what) {
        for (const json& w : r["warnings"])
            if (w.get<std::string>().find(what) != std::string::npos) return w.get<std::string>();
        return std::string();
    };
    EXPECT_NE(warned(big, "no memory is left for KV cache blocks").find("gpumem fit"), std::string::npos);
    // A pool under one sequence: vLLM's "to serve at least one request with the model's max seq len"
    // check. Utilization 0.3: 0.3 x 79.18 GiB - 14.96 GiB weights - 4.71 GiB peak - 0.16 GiB leaves
    // about 3.9 GiB, 31,000-odd tokens of 128 KiB: a 100,000-token context does not fit.
    json tight = vllm({{"gpu_memory_utilization", 0.3}, {"context_len", 100000}});
    const double pool = tight["serving"]["kv_cache_bytes"].get<double>();
    const double peak = 8192.0 * 4096 * 2 + 1024 * kVocab * 38;
    EXPECT_NEAR(pool, 0.3 * kH100 - kWeights - peak - 0.16 * kGiB, 2);
    EXPECT_EQ(tight["serving"]["max_concurrent_sequences"], 0);
    EXPECT_FALSE(tight["fits"].get<bool>());
    std::string w = warned(tight, "one sequence of max_model_len 100000");
    ASSERT_FALSE(w.empty()) << tight["warnings"].dump();
    // The longest it could serve: whole 16-token blocks of 128 KiB a token within the pool.
    const long long longest = static_cast<long long>(std::floor(pool / (16 * kPerToken)) * 16);
    EXPECT_NE(w.find("about " + std::to_string(longest) + " tokens"), std::string::npos) << w;
    EXPECT_NE(w.find("gpumem fit"), std::string::npos);
}

}  // namespace
