// The serving engines that preallocate a KV pool beside vLLM: SGLang, TGI and TensorRT-LLM
// (memory/inference.cpp), their settings (scenario.cpp) and their "serving" figures.
#include <cmath>
#include <cstdint>

#include <gtest/gtest.h>

#include "gpumem/gpumem.h"

#include "estimate_helpers.h"

namespace {

using json = nlohmann::json;

using gpumem::test::kLlama8B;
using gpumem::test::run;

constexpr double kMiB = 1048576.0;
constexpr double kWeights = 8030261248.0 * 2;         // Llama 3.1 8B in bf16
constexpr double kPerToken = 32.0 * 8 * 128 * 2 * 2;  // 32 layers x 8 kv heads x 128 x (K, V) x 2 B = 128 KiB
constexpr double kForwardPerToken = 2 * 2 * 4096.0 + 3 * 2 * 14336;  // residual + normed copy, then the MLP
constexpr double kContext = 0.5 * 1024 * kMiB;                       // cuda_context_gib
// An H100 80GB HBM3's total as CUDA reports it (presets/gpus.json cuda_total_gib 79.18, from vLLM's
// start-up log): what the engines' fractions of the card multiply; nvidia-smi's 81,559 MiB is larger.
const double kCudaTotal = static_cast<double>(static_cast<std::uint64_t>(79.18 * 1073741824.0));

TEST(Serving, EnginesAreNamedWithTheirAliases) {
    for (const char* spelling :
         {"sglang", "tgi", "text-generation-inference", "tensorrt_llm", "tensorrt-llm", "trtllm"}) {
        json r = run({{"model", kLlama8B}, {"mode", "inference"}, {"inference", {{"engine", spelling}}}});
        EXPECT_TRUE(r["serving"].is_object()) << spelling;
    }
    json bad = gpumem::estimate({{"model", kLlama8B}, {"mode", "inference"}, {"inference", {{"engine", "tgx"}}}});
    EXPECT_EQ(bad["errors"][0]["field"], "inference.engine");
    EXPECT_NE(bad["errors"][0]["problem"].get<std::string>().find("sglang, tgi, tensorrt_llm"), std::string::npos);
}

TEST(Serving, SglangKeepsMemFractionStaticOfTheFreeMemory) {
    json r = run({{"model", kLlama8B},
                  {"mode", "inference"},
                  {"inference", {{"engine", "sglang"}, {"context_len", 8192}, {"batch_size", 32}}}});
    // SGLang 0.5.3 (the default family), H100: 81,559 MiB; chunks of 8192 tokens and CUDA graphs up to
    // batch 256 (under 90 GiB, TP < 4); it reserves 512 + 1.5 x 8192 + 2 x 256 + 1 / 8 x 1024 = 13,440 MiB,
    // so mem_fraction_static = round((81,559 - 13,440) / 81,559, 3) = 0.835.
    EXPECT_DOUBLE_EQ(r["scenario"]["inference"]["mem_fraction_static"].get<double>(), 0.835);
    EXPECT_EQ(r["scenario"]["inference"]["chunked_prefill_size"], 8192);
    EXPECT_EQ(r["scenario"]["inference"]["engine_version"], "0.5.3");
    // Pool = 0.835 x (the CUDA total - the 512 MiB CUDA context) - the weights as the allocator
    // reserves them (x 1.05, allocator_fragmentation); 128 KiB a token, page size 1.
    double pool = 0.835 * (kCudaTotal - kContext) - kWeights * 1.05;
    const json& sv = r["serving"];
    EXPECT_EQ(sv["engine"], "sglang");
    EXPECT_EQ(sv["kv_cache_tokens"].get<double>(), std::floor(pool / kPerToken));
    EXPECT_EQ(sv["max_concurrent_sequences"].get<double>(), std::floor(pool / (8192 * kPerToken)));
    EXPECT_TRUE(r["fits"].get<bool>());
    // A given fraction wins, and is checked.
    json given = run({{"model", kLlama8B},
                      {"mode", "inference"},
                      {"inference", {{"engine", "sglang"}, {"mem_fraction_static", 0.5}}}});
    EXPECT_EQ(given["serving"]["kv_cache_tokens"].get<double>(),
              std::floor((0.5 * (kCudaTotal - kContext) - kWeights * 1.05) / kPerToken));
    json bad = gpumem::estimate({{"model", kLlama8B},
                                 {"mode", "inference"},
                                 {"inference", {{"engine", "sglang"}, {"mem_fraction_static", 2}}}});
    EXPECT_EQ(bad["errors"][0]["field"], "inference.mem_fraction_static");
}

TEST(Serving, SglangDefaultFractionFollowsTheCardAndTp) {
    // SGLang 0.4.7 to 0.5.2 (PR #7054's rule): H100 (81,559 MiB, under 90 GiB) at TP 2: reserve
    // (9.5 + 2 / 2) GiB = 10,752 MiB; round(70,807 / 81,559, 3) = 0.868. An RTX 4090 (24,564 MiB, under
    // 35 GiB): (2.8 + 0.1) GiB = 2,969.6 MiB; round(21,594.4 / 24,564, 3) = 0.879, and chunks of 2048 tokens.
    const auto sglang = [](const char* version, json hardware, json parallelism, const char* preset) {
        return run({{"model", {{"preset", preset}}},
                    {"mode", "inference"},
                    {"inference", {{"engine", "sglang"}, {"engine_version", version}}},
                    {"parallelism", parallelism},
                    {"hardware", hardware}});
    };
    const json tp2p = {{"tensor_parallel_size", 2}}, tp2h = {{"num_gpus", 2}};
    const json rtxh = {{"gpu", "RTX-4090-24GB"}};
    json tp2 = sglang("0.5.2", tp2h, tp2p, "meta-llama/Llama-3.1-8B");
    EXPECT_DOUBLE_EQ(tp2["scenario"]["inference"]["mem_fraction_static"].get<double>(), 0.868);
    json rtx = sglang("0.4.7", rtxh, json::object(), "meta-llama/Llama-3.2-3B");
    EXPECT_DOUBLE_EQ(rtx["scenario"]["inference"]["mem_fraction_static"].get<double>(), 0.879);
    EXPECT_EQ(rtx["scenario"]["inference"]["chunked_prefill_size"], 2048);
    // From 0.5.3 (PRs #10975 and #11076): 512 MiB + 1.5 x max(chunk, 2048) + 2 x cuda_graph_max_bs +
    // TP x PP / 8 x 1024. H100 at TP 2: 512 + 12,288 + 512 + 256 = 13,568; round(67,991 / 81,559, 3) = 0.834.
    // TP 4 doubles the graphs' batch (512): 512 + 12,288 + 1,024 + 512 = 14,336; round(67,223 / 81,559, 3)
    // = 0.824. The RTX 4090: chunks of 2048, graphs to 24: 512 + 3,072 + 48 + 128 = 3,760;
    // round(20,804 / 24,564, 3) = 0.847.
    EXPECT_DOUBLE_EQ(
        sglang("0.5.3", tp2h, tp2p, "meta-llama/Llama-3.1-8B")["scenario"]["inference"]["mem_fraction_static"]
            .get<double>(),
        0.834);
    json tp4 = sglang("0.5.4", {{"num_gpus", 4}}, {{"tensor_parallel_size", 4}}, "meta-llama/Llama-3.1-8B");
    EXPECT_DOUBLE_EQ(tp4["scenario"]["inference"]["mem_fraction_static"].get<double>(), 0.824);
    json rtx5 = sglang("0.5.3", rtxh, json::object(), "meta-llama/Llama-3.2-3B");
    EXPECT_DOUBLE_EQ(rtx5["scenario"]["inference"]["mem_fraction_static"].get<double>(), 0.847);
    EXPECT_EQ(rtx5["scenario"]["inference"]["chunked_prefill_size"], 2048);
    // A given chunk sets the reserve: 4096 on the H100 at TP 1: 512 + 6,144 + 512 + 128 = 7,296;
    // round(74,263 / 81,559, 3) = 0.911.
    json chunk = run({{"model", kLlama8B},
                      {"mode", "inference"},
                      {"inference", {{"engine", "sglang"}, {"chunked_prefill_size", 4096}}}});
    EXPECT_DOUBLE_EQ(chunk["scenario"]["inference"]["mem_fraction_static"].get<double>(), 0.911);
    // Releases it does not follow are refused, naming the field; vLLM's versions are not SGLang's.
    for (const char* bad : {"0.4.6", "0.3", "0.12", "1.0", "latest"}) {
        json r = gpumem::estimate({{"model", kLlama8B},
                                   {"mode", "inference"},
                                   {"inference", {{"engine", "sglang"}, {"engine_version", bad}}}});
        ASSERT_FALSE(r["errors"].empty()) << bad;
        EXPECT_EQ(r["errors"][0]["field"], "inference.engine_version") << bad;
    }
    // The field is vLLM's and SGLang's only.
    json tgi = gpumem::estimate(
        {{"model", kLlama8B}, {"mode", "inference"}, {"inference", {{"engine", "tgi"}, {"engine_version", "0.5.3"}}}});
    ASSERT_FALSE(tgi["errors"].empty());
    EXPECT_NE(tgi["errors"][0]["problem"].get<std::string>().find("vllm or sglang"), std::string::npos);
}

TEST(Serving, TgiFillsNinetyPercentOfWhatItsWarmUpLeaves) {
    json r =
        run({{"model", kLlama8B}, {"mode", "inference"}, {"inference", {{"engine", "tgi"}, {"context_len", 4096}}}});
    // max_total_tokens min(131,072, 4096) = 4096; the warm-up prefills 4095 + 50 = 4145 tokens, whose
    // working set the allocator keeps; its one sequence's logits in bf16 + fp32. 90 % of the rest
    // (cuda_memory_fraction 1) becomes one-token blocks.
    EXPECT_EQ(r["scenario"]["inference"]["max_total_tokens"], 4096);
    EXPECT_EQ(r["scenario"]["inference"]["max_batch_prefill_tokens"], 4145);
    double used = kContext + (kWeights + 4145 * kForwardPerToken + 128256.0 * 6) * 1.05;  // x allocator slack
    double pool = 0.9 * (kCudaTotal - used);  // torch.cuda.mem_get_info's total
    EXPECT_EQ(r["serving"]["engine"], "tgi");
    EXPECT_EQ(r["serving"]["kv_cache_tokens"].get<double>(), std::floor(pool / kPerToken));
    EXPECT_EQ(r["serving"]["max_concurrent_sequences"].get<double>(), std::floor(pool / (4096 * kPerToken)));
    // Half the card: 0.5 of it is held back from what is free.
    json half = run({{"model", kLlama8B},
                     {"mode", "inference"},
                     {"inference", {{"engine", "tgi"}, {"cuda_memory_fraction", 0.5}}}});
    EXPECT_EQ(half["serving"]["kv_cache_tokens"].get<double>(),
              std::floor(0.9 * (0.5 * kCudaTotal - used) / kPerToken));
    // A context longer than the max_total_tokens given is refused, naming the field.
    json bad =
        gpumem::estimate({{"model", kLlama8B},
                          {"mode", "inference"},
                          {"inference", {{"engine", "tgi"}, {"context_len", 8192}, {"max_total_tokens", 4096}}}});
    EXPECT_EQ(bad["errors"][0]["field"], "inference.context_len");
}

TEST(Serving, TensorrtLlmTakesItsFractionOfTheFreeMemory) {
    json r = run({{"model", kLlama8B},
                  {"mode", "inference"},
                  {"inference", {{"engine", "trtllm"}, {"context_len", 8192}, {"batch_size", 8}}}});
    // free = the CUDA total - context - (weights + the activations of max_num_tokens (8192) tokens + 8 fp32 logits
    // rows) x 1.05 (the allocator's slack); the KV cache is 0.9 of it in blocks of 32 tokens.
    double free = kCudaTotal - kContext - (kWeights + 8192 * kForwardPerToken + 8 * 128256.0 * 4) * 1.05;
    double blocks = std::floor(0.9 * free / (32 * kPerToken));
    EXPECT_EQ(r["scenario"]["inference"]["engine"], "tensorrt_llm");
    EXPECT_DOUBLE_EQ(r["scenario"]["inference"]["free_gpu_memory_fraction"].get<double>(), 0.9);
    EXPECT_EQ(r["serving"]["kv_cache_blocks"].get<double>(), blocks);
    EXPECT_EQ(r["serving"]["kv_cache_tokens"].get<double>(), blocks * 32);
    EXPECT_EQ(r["serving"]["max_concurrent_sequences"].get<double>(), std::floor(0.9 * free / (8192 * kPerToken)));
    EXPECT_TRUE(r["fits"].get<bool>());
    // 70B in bf16 on one card: no room, and the serving engines grow tensor parallelism.
    json big = run({{"model", {{"preset", "meta-llama/Llama-3.1-70B-Instruct"}}},
                    {"mode", "inference"},
                    {"inference", {{"engine", "tensorrt_llm"}}}});
    EXPECT_FALSE(big["fits"].get<bool>());
    EXPECT_EQ(big["gpus_needed"], 2);
}

TEST(Serving, SettingsOfOtherEnginesAreNotListedAsDefaults) {
    json r = run({{"model", kLlama8B}, {"mode", "inference"}, {"inference", {{"engine", "vllm"}}}});
    for (const auto& d : r["defaults_applied"]) {
        EXPECT_EQ(d.get<std::string>().find("mem_fraction_static"), std::string::npos);
        EXPECT_EQ(d.get<std::string>().find("max_total_tokens"), std::string::npos);
    }
    EXPECT_FALSE(r["scenario"]["inference"].contains("free_gpu_memory_fraction"));
}

TEST(Serving, SglangAndTgiHoldGptqAsMarlinDoes) {
    // Qwen2.5-7B-Instruct-GPTQ-Int4 (4 bits, group 128, symmetric, no act-order): SGLang (GPTQMarlinLinearKernel)
    // and TGI (repack_gptq_for_marlin) convert it to Marlin as vLLM does: qweight and scales repacked at their
    // size, the symmetric qzeros and g_idx replaced by empty tensors. A layer's Linears (hidden 3584,
    // intermediate 18944, 4 kv heads of 128): g_idx 6 x 3584 + 18944 int32 = 161,792 B; qzeros in x out / 256
    // = (2 x 3584^2 + 2 x 3584 x 512 + 3 x 3584 x 18944) / 256 = 910,336 B; 28 layers.
    auto weights = [](const char* engine) {
        json r = run({{"model", {{"preset", "Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4"}}},
                      {"mode", "inference"},
                      {"inference", {{"engine", engine}}}});
        return r["per_gpu"]["components"]["weights"].get<double>();
    };
    const double dropped = 28.0 * (161792 + 910336);
    EXPECT_DOUBLE_EQ(weights("transformers") - weights("sglang"), dropped);
    EXPECT_DOUBLE_EQ(weights("tgi"), weights("sglang"));
    EXPECT_DOUBLE_EQ(weights("vllm"), weights("sglang"));
}

}  // namespace
