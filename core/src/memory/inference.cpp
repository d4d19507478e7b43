// Inference memory with Hugging Face transformers' generate(), vLLM, llama.cpp, SGLang, TGI and
// TensorRT-LLM: weights by storage format, the KV cache by attention type, and the forward's
// transient working set.

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <string>

#include "memory/memory.h"
#include "memory/model_cache.h"

namespace gpumem::detail {

namespace {

using C = Component;

// The weights of one GPU in their storage format.
struct Weights {
    Shard shard;
    double a = 2;            // bytes per element of the compute the format dequantizes to
    double fb = 2;           // bytes per weight in the format
    double rest_bytes = 2;   // bytes per weight left in the checkpoint's dtype
    bool quantized = false;  // the format covers the layers' linear matrices only
    double bytes = 0;        // all of them
};

// The layers' linear matrices in the storage format; embeddings, head and norms stay in the
// checkpoint's dtype for quantized formats (bitsandbytes, GPTQ/AWQ and MX keep them so), as do
// modules the checkpoint's quantization_config leaves unconverted. GGUF files quantize every matrix.
Weights stored_weights(const Scenario& sc, Breakdown& out) {
    const ModelSpec& m = sc.model;
    const InferenceSettings& x = sc.inference;
    Weights w;
    w.shard = shard_of(sc, sc.parallel.tp, sc.parallel.pp, sc.parallel.ep);
    // The format's bytes per weight, from the catalogue (presets/dtypes.json or the scenario's own);
    // GPTQ/AWQ groups come from the checkpoint or the scenario, bitsandbytes' double quant from the checkpoint.
    Format fmt = sc.weight_format();
    w.a = fmt.compute_bytes();
    const auto& qc = m.quantization;
    if (fmt.builtin == WeightFormat::Int4) fmt.group_size = static_cast<double>(x.group_size);
    if (qc && qc->double_quant) apply_double_quant(fmt);
    w.fb = fmt.bytes_per_param();
    double total_params = w.shard.params();
    w.quantized = fmt.scope == FormatScope::Layers;
    double in_format = w.quantized ? w.shard.linear_params : total_params;
    bool keeps_attention =
        qc && std::any_of(qc->modules_not_converted.begin(), qc->modules_not_converted.end(),
                          [](const std::string& name) { return name.find("self_attn") != std::string::npos; });
    if (w.quantized && keeps_attention && x.weight_format_from_checkpoint) in_format -= w.shard.attention_linear_params;
    w.rest_bytes = dtype_bytes(m.checkpoint_dtype).value_or(2);
    if (x.weight_format_from_checkpoint && qc && qc->exact && w.shard.scale == 1) {
        // The checkpoint's own layout, tensor by tensor (model/quantized.cpp): packed values, their
        // scales and zero points, and what its ignore list leaves in the checkpoint's dtype.
        // vLLM repacks some layouts as it loads them (Marlin drops GPTQ's g_idx and symmetric qzeros;
        // channel scales load as fp32): model/quantized.cpp, Residency::Vllm. SGLang and TGI convert GPTQ
        // to Marlin the same way (Residency::Marlin); the rest they hold as stored.
        const bool vllm = x.engine == InferenceEngine::Vllm;
        const bool marlin = x.engine == InferenceEngine::Sglang || x.engine == InferenceEngine::Tgi;
        const char* engine = x.engine == InferenceEngine::Sglang ? "SGLang" : "TGI";
        const std::string what = vllm     ? "the parameters on this GPU as vLLM holds them after loading the checkpoint"
                                 : marlin ? std::string("the parameters on this GPU as ") + engine +
                                                " holds them after loading the checkpoint"
                                          : "the parameters on this GPU as the checkpoint stores them";
        const char* rule =
            vllm     ? "the checkpoint's bytes on this GPU (quantized Linear layers: packed values + scales + zero "
                       "points; the rest in the checkpoint's dtype), less what vLLM's loading drops (Marlin: GPTQ's "
                       "symmetric qzeros and g_idx without act-order) plus what it adds (sort indices, fp32 channel "
                       "scales)"
            : marlin ? "the checkpoint's bytes on this GPU (quantized Linear layers: packed values + scales + zero "
                       "points; the rest in the checkpoint's dtype), less what GPTQ's conversion to Marlin drops "
                       "(symmetric qzeros; g_idx without act-order) plus its int32 sort indices with act-order"
                     : "sum over the tensors on this GPU of the bytes the checkpoint stores for each (quantized "
                       "Linear layers: packed values + scales + zero points; the rest in the checkpoint's dtype)";
        w.bytes = out.explain.rule(
            "weights", what.c_str(),
            vllm     ? w.shard.vllm_bytes()
            : marlin ? w.shard.marlin_bytes()
                     : w.shard.checkpoint_bytes(),
            rule,
            {{"parameters", total_params, "params"},
             {"quantized layers' parameters", in_format, "params"},
             {"the checkpoint's bytes on this GPU", w.shard.checkpoint_bytes(), "B"}},
            marlin ? "the checkpoint's quantization_config: each format's tensor layout as its writer stores it; "
                     "SGLang gptq_kernels.py GPTQMarlinLinearKernel / TGI marlin/gptq.py repack_gptq_for_marlin "
                     "(core/src/model/quantized.cpp marlin_resident)"
                   : "the checkpoint's quantization_config: each format's tensor layout as its writer stores it, "
                     "and vLLM's process_weights_after_loading (core/src/model/quantized.cpp cites each)");
        out.assumptions["weight_bytes_per_param"] = total_params > 0 ? w.bytes / total_params : 0;
        out.assumptions["params_in_weight_format"] = in_format;
        return w;
    }
    w.bytes = out.explain.sum(
        "weights", "the parameters on this GPU in their storage format",
        {{"in the weight format",
          {{"parameters", in_format, "params"}, {"bytes per weight (scales included)", w.fb, "B"}}},
         {"kept in the checkpoint's dtype (embeddings, head, norms)",
          {{"parameters", total_params - in_format, "params"}, {"bytes per weight", w.rest_bytes, "B"}}}},
        "the weight format's bytes per parameter: presets/dtypes.json (or the scenario's formats)");
    out.assumptions["weight_bytes_per_param"] = w.fb;
    out.assumptions["params_in_weight_format"] = in_format;
    if (fmt.scope == FormatScope::Matrices && x.engine != InferenceEngine::LlamaCpp)
        out.warnings.push_back(
            "GGUF formats are llama.cpp's: set inference.engine to llama.cpp for its cache and buffers");
    return w;
}

// The KV cache's shape: K and V for every kv head on every cached layer of this stage;
// sliding-window layers keep at most the window.
struct KvCache {
    const ModelSpec* m = nullptr;
    double per_token_layer = 0;      // bytes per token on one cached layer
    std::uint64_t first_cached = 0;  // layers below this one cache nothing (an encoder's)
    std::uint64_t cache_factor = 1;  // 2 in an encoder-decoder: the cross-attention caches the source too
    // Bytes for `seqs` sequences of `tokens` each on the first `layers` cached layers here; `block`
    // rounds each sequence's tokens up to whole blocks (paged caches).
    double bytes(double tokens, double seqs, std::uint64_t layers, double block) const {
        double total = 0;
        for (std::uint64_t i = first_cached; i < layers && i < m->layer_attention.size(); ++i) {
            double t = tokens;
            if (m->layer_attention[i] == LayerAttention::SlidingWindow && m->sliding_window > 0)
                t = std::min(t, static_cast<double>(m->sliding_window));
            if (block > 1) t = std::ceil(t / block) * block;
            total += per_token_layer * t * seqs * static_cast<double>(cache_factor);
        }
        return total;
    }
    // bytes(), recorded as the figure `key` with the rule and the inputs it read.
    double recorded(Explanation& ex, const char* key, const char* what, double tokens, double seqs,
                    std::uint64_t layers, double block) const {
        const double cached = static_cast<double>(std::min<std::size_t>(layers, m->layer_attention.size()));
        return ex.rule(
            key, what, bytes(tokens, seqs, layers, block),
            "sum over the cached layers of: bytes per token per layer x tokens (a sliding-window layer at "
            "most its window; a paged cache in whole blocks) x sequences (x 2 for cross-attention)",
            {{"bytes per token per layer", per_token_layer, "B"},
             {"tokens per sequence", tokens, "tokens"},
             {"sequences", seqs, "sequences"},
             {"cached layers", cached - static_cast<double>(std::min<std::uint64_t>(first_cached, layers)), "layers"},
             {"tokens per block", block > 1 ? block : 1, "tokens"},
             {"sliding window (0: none)", static_cast<double>(m->sliding_window), "tokens"}},
            "the KV cache as transformers' cache classes and the engines' block managers lay it out");
    }
};

KvCache kv_cache(const Scenario& sc, Breakdown& out) {
    Notes& why = out.assumptions;
    const ModelSpec& m = sc.model;
    const InferenceSettings& x = sc.inference;
    const double tp = static_cast<double>(sc.parallel.tp);
    KvCache kv;
    kv.m = &m;
    double kv_bytes = storage_bytes(x.kv_cache_dtype);
    double kv_heads = std::max(1.0, static_cast<double>(m.num_key_value_heads) / tp);  // replicated when kv < tp
    kv.per_token_layer = out.explain.product("kv_bytes_per_token_per_layer", "K and V of one token on one layer",
                                             {{"K and V", 2},
                                              {"kv heads on this GPU", kv_heads, "heads"},
                                              {"head dimension", static_cast<double>(m.head_dim), "elements"},
                                              {"bytes per element (KV cache dtype)", kv_bytes, "B"}},
                                             "transformers DynamicCache / the engines' paged KV caches");
    if (m.kv_lora_rank > 0) {
        // MLA under transformers: the cache holds the up-projected keys (nope + rope dims) and values
        // for every head, not the latent (kv_lora_rank + qk_rope_head_dim) that vLLM/SGLang keep.
        double heads = static_cast<double>(m.num_attention_heads) / tp;
        kv.per_token_layer = out.explain.product(
            "kv_bytes_per_token_per_layer", "MLA under transformers: up-projected keys and values per head",
            {{"heads on this GPU", heads, "heads"},
             {"qk_nope + qk_rope + v head dims",
              static_cast<double>(m.qk_nope_head_dim + m.qk_rope_head_dim + m.v_head_dim), "elements"},
             {"bytes per element", kv_bytes, "B"}},
            "transformers DeepseekV3Attention caches key_states and value_states");
        why["mla_latent_bytes_per_token_per_layer"] =
            static_cast<double>(m.kv_lora_rank + m.qk_rope_head_dim) * kv_bytes;
    }
    // Which layers cache: none in an encoder-only model; the decoder's in an encoder-decoder, whose
    // cross-attention also caches K and V of the source (taken as long as the context here).
    if (m.structure == ModelSpec::Structure::Encoder) kv.first_cached = m.num_layers;
    if (m.structure == ModelSpec::Structure::EncoderDecoder) {
        kv.first_cached = m.encoder_layers;
        kv.cache_factor = 2;
    }
    const bool latent = x.engine == InferenceEngine::Vllm || x.engine == InferenceEngine::Sglang ||
                        x.engine == InferenceEngine::TensorrtLlm;
    if (latent && m.kv_lora_rank > 0) {
        // vLLM, SGLang (MLATokenToKVPool) and TensorRT-LLM keep MLA's latent: kv_lora_rank + qk_rope_head_dim
        // values per token per layer, on every TP rank.
        kv.per_token_layer = out.explain.product(
            "kv_bytes_per_token_per_layer", "MLA's latent: kv_lora_rank + qk_rope_head_dim per token",
            {{"latent width", static_cast<double>(m.kv_lora_rank + m.qk_rope_head_dim), "elements"},
             {"bytes per element", kv_bytes, "B"}},
            "vLLM / SGLang MLATokenToKVPool / TensorRT-LLM keep the compressed latent");
    }
    why["kv_bytes_per_token_per_layer"] = kv.per_token_layer;
    out.explain.set_unit("kv_bytes_per_token_per_layer", "B");
    return kv;
}

// Encoding the images: the tower runs layer by layer over each image's patches (SDPA: no s²
// scores), then hands the projected features to the language model. 0 without images.
double image_encode_bytes(const Scenario& sc, double a, Breakdown& out) {
    Notes& why = out.assumptions;
    const ModelSpec& m = sc.model;
    const InferenceSettings& x = sc.inference;
    if (!x.images) return 0;
    const double tp = static_cast<double>(sc.parallel.tp), b = static_cast<double>(x.batch_size);
    const auto& v = m.vision_shape;
    double vh = static_cast<double>(v.hidden) / tp,
           patches = static_cast<double>(v.patches) * static_cast<double>(x.images) * b;
    double layer =
        patches * (2 * a * vh + std::max(a * 4 * vh + 4 * vh, a * 2 * static_cast<double>(v.intermediate) / tp));
    double features = static_cast<double>(x.images * x.image_tokens) * b * static_cast<double>(m.hidden_size) * a;
    why["image_tokens_per_sequence"] = static_cast<double>(x.images * x.image_tokens);
    why["vision_encode_bytes"] = layer + features;
    return out.explain.rule(
        "image_encoding", "encoding the images: one vision layer at a time, then the features", layer + features,
        "patches x (2a x vision hidden + max(attention, MLP)) + image tokens x hidden x a",
        {{"patches (all images of the batch)", patches, "tokens"},
         {"vision hidden size on this GPU", vh, "elements"},
         {"image tokens per sequence x batch", static_cast<double>(x.images * x.image_tokens) * b, "tokens"},
         {"bytes per element", a, "B"}},
        "the vision tower under SDPA (no s² scores), layer by layer");
}

// One forward over T tokens (the transient peak): one layer's working set at a time: the residual
// stream and its normed copy, then either attention (q, k, v and output) or the MLP (gate, up and
// act(gate)·up), whichever is larger; eager attention adds the fp32 scores over `keys` positions.
struct Forward {
    double a = 2, h = 0, q = 0, kvd = 0, heads = 0, mlp = 0;
    double per_token(double keys, bool eager) const {
        double attn = a * (2 * q + 2 * kvd) + 4 * h;
        if (eager) attn += (4 + a) * heads * keys;
        return 2 * a * h + std::max(attn, mlp);
    }
    double bytes(double T, double keys, bool eager) const { return T * per_token(keys, eager); }
    // bytes(), recorded as the figure `key`: tokens x the working set per token.
    double recorded(Explanation& ex, const char* key, const char* what, double T, double keys, bool eager) const {
        return ex.product(
            key, what,
            {{"tokens in the forward", T, "tokens"},
             {"bytes per token: residual and normed copy (2ah) + max(attention, MLP)", per_token(keys, eager), "B"}},
            "one layer's working set at a time (the forward frees each layer's intermediates)");
    }
};

Forward forward_shape(const ModelSpec& m, double a, double tp) {
    Forward f;
    f.a = a;
    f.h = static_cast<double>(m.hidden_size);
    f.q = static_cast<double>(m.num_attention_heads * m.head_dim) / tp;
    f.kvd = static_cast<double>(m.num_key_value_heads * m.head_dim) / tp;
    f.heads = static_cast<double>(m.num_attention_heads) / tp;
    double I = static_cast<double>(m.intermediate_size) / tp;
    f.mlp = a * (m.gated_mlp ? 3 : 2) * I;
    if (m.num_experts) {  // the top-k experts' intermediates for each token, and the router's logits
        double k = static_cast<double>(m.num_experts_per_tok);
        f.mlp = std::max(m.moe_layer.size() == layer_count(m, Layers::Moe) ? 0.0 : f.mlp,
                         a * (m.gated_mlp ? 3 : 2) * static_cast<double>(m.moe_intermediate_size) / tp * k +
                             4 * static_cast<double>(m.num_experts) + a * f.h * k);
    }
    return f;
}

// What every engine's timeline starts from.
struct Serving {
    Weights w;
    KvCache kv;
    Forward fwd;
    double encode = 0;  // the images' encoding working set
    double ctx = 0;     // tokens per sequence, image tokens included
    double b = 1;       // sequences
    double V = 0;       // vocabulary entries on one GPU
};

// vLLM's profile-run sampler (GPUModelRunner._dummy_sampler_run, vllm/v1/worker/gpu_model_runner.py):
// the lm_head's logits for the last token of each of `rows` dummy requests, in the compute dtype,
// all-gathered to the whole vocabulary on every TP rank (LogitsProcessor,
// vllm/model_executor/layers/logits_processor.py), then Sampler.forward (vllm/v1/sample/sampler.py) with
// dummy top-k and top-p set. Bytes per logit alive at the sampler's peak, by release family:
// - PyTorch-native top-k/top-p (0.11.1 on; vllm/v1/sample/ops/topk_topp_sampler.py apply_top_k_top_p): the
//   caller's logits (a) + their fp32 copy (4) + logits.sort's outputs, fp32 values and int64 indices (12) +
//   the sort's scratch while it runs (pytorch aten/src/ATen/native/cuda/SortStable.cu, rows wider than the
//   in-place bitonic sort): from 128 rows segmented_sort_pairs, an int64 index sequence (8) and cub
//   DeviceSegmentedRadixSort::SortPairs' alternate keys and values (4 + 8); from 2 to 127 rows
//   segmented_sort_pairs_by_full_sort, two int2 index/segment arrays (8 + 8), the keys' output (4) and
//   cub DeviceRadixSort::SortPairs' alternates (4 + 8); one row, the alternates only (4 + 8).
// - FlashInfer's kernel (0.10.0 to 0.11.0; flashinfer.sampling.top_k_top_p_sampling_from_logits): the
//   caller's logits (a) + the fp32 copy (4) + the top-k masked logits (4) + their softmax (4); no sort.
// - The V0 engine (0.8/0.9 with VLLM_USE_V1=0; vllm/model_executor/layers/sampler.py Sampler.forward and
//   _apply_top_k_top_p, _sample_with_torch, _multinomial): the dummy requests sample with top_p 0.99 and
//   top_k vocab - 1 (vllm/worker/model_runner.py profile_run), so the logits go through logits.sort like the
//   native family above, then, with the sort's outputs still alive, the top-k mask (bool, 1), the sorted
//   softmax and its cumsum (4 + 4), the top-p mask (1) and the re-scattered logits (4): a + 30 bytes; then
//   softmax and log_softmax (4 + 4) and _multinomial's copy of the rows and its exponential noise (4 + 4) over
//   the fp32 logits: a + 20. The peak is the larger of the sort's and the scatter's.
double vllm_sampler_bytes_per_logit(VllmSampler family, double a, double rows) {
    if (family == VllmSampler::FlashInfer) return a + 4 + 4 + 4;
    const double scratch = rows >= 128 ? 8 + 4 + 8 : rows >= 2 ? 8 + 8 + 4 + 4 + 8 : 4 + 8;
    const double sort = a + 4 + (4 + 8) + scratch;
    if (family == VllmSampler::V0) return std::max(sort, a + 4 + (4 + 8) + 1 + 4 + 4 + 1 + 4);
    return sort;
}

// The largest context one sequence can have in `pool` bytes (vLLM's "estimated maximum model length"):
// a bisection over whole blocks, bounded by the context asked.
double vllm_max_model_len(const Serving& v, double pool, std::uint64_t layers, double block, double asked) {
    double lo = 0, hi = std::ceil(asked / block);  // in blocks
    for (int i = 0; i < 64 && hi - lo > 1; ++i) {
        double mid = std::floor((lo + hi) / 2);
        (v.kv.bytes(mid * block, 1, layers, block) <= pool ? lo : hi) = mid;
    }
    return lo * block;
}

// NCCL's buffers for one ring connection (one channel, one peer), all three protocols, as the receiver allocates
// them (NVIDIA/nccl src/transport/p2p.cc p2pRecvSetup sums comm->buffSizes over the protocols; with P2P read the
// SIMPLE buffer moves to the sender, the same bytes per rank), at NCCL's defaults (src/init.cc @v2.27.3-1,
// 72d2432, the NCCL PyTorch 2.8 / vLLM 0.11 ship): LL = NCCL_LL_LINES_PER_THREAD 8 x NCCL_LL_MAX_NTHREADS 512
// x NCCL_STEPS 8 x sizeof(ncclLLFifoLine) 16 B; LL128 = NCCL_LL128_ELEMS_PER_THREAD 120 x NCCL_LL128_MAX_NTHREADS
// 640 x NCCL_STEPS 8 x 8 B; SIMPLE = DEFAULT_BUFFSIZE 1 << 22 (src/include/device.h for the constants).
constexpr double kNcclLlBytes = 8.0 * 512 * 8 * 16, kNcclLl128Bytes = 120.0 * 640 * 8 * 8, kNcclSimpleBytes = 4194304.0;
// NCCL's channel count is the result of its topology search (src/graph/search.cc ncclTopoCompute over the
// machine's NVLink/PCIe graph, then ncclTopoPostset's duplication): no source fixes it without the machine's
// topology. 24 is what NCCL prints on H100 NVSwitch nodes ("Channel 00/0" to "Channel 23/0" on 4 x H100,
// vllm-project/vllm issue #10453; "24 coll channels", issue #18567): an H100 SXM figure, taken for every card.
constexpr double kNcclChannelsH100 = 24;

// Memory that grows outside PyTorch's allocator during vLLM's profile run: vllm/utils memory_profiling's
// non_torch_increase, (CUDA's used memory - torch's reserved) after the run less the same at the init snapshot
// (vllm/v1/worker/gpu_worker.py init_device). By term:
// - cuBLAS/cuBLASLt workspaces are not here: PyTorch allocates them through its caching allocator
//   (aten/src/ATen/cuda/CublasHandlePool.cpp getNewWorkspace), so they sit in the torch peak.
// - What the libraries map on first use (CUDA's lazy module loading of the kernels the forward runs: PyTorch's,
//   FlashAttention's, Triton's; cuBLAS handles' own buffers; cuDNN): no source sizes it. Measured: vLLM logged
//   "non_torch_memory takes 0.16GiB" for one H100 (vllm-project/vllm PR #12126, 2025-01-16), a log independent of
//   the start-up figures in tests/data/serving, which check it (0.13-0.14 GiB at vLLM 0.11).
// - With TP > 1, the NCCL communicator torch.distributed's ProcessGroupNCCL creates at its first collective (the
//   logits' all-gather, DeviceCommunicatorBase.all_gather on the device group, in the profile run): NCCL
//   connects rings at run time (NCCL_RUNTIME_CONNECT 1, src/init.cc), and all-gather runs on rings: one ring
//   connection per channel.
// - From 0.11 the snapshot is taken after init_worker_distributed_environment (vLLM PR #25359, merged 2025-09-22,
//   before 0.11.0's release; not checked against the tag), so vLLM's own PyNccl communicator (warmed up at
//   init) and the custom all-reduce's IPC buffers (CustomAllreduce: meta + max_size 8 MiB, and an 8 MiB
//   registered buffer, both cudaMalloc'd: custom_all_reduce.py) are in the baseline; before 0.11 they grow here.
// Left out, not derivable from a source: NCCL's device-side communicator state and its kernels' code, the
// custom all-reduce's Signal block (a few KiB), pipeline-parallel send/recv connections, and for 0.10.x the
// torch symmetric-memory all-reduce buffer (SymmMemCommunicator, 64 MiB at TP 2 on sm90, on by default from vLLM
// PR #24111, merged 2025-09-02: which 0.10 release first shipped it is not known here). Against vLLM 0.11's logs
// at TP 2 on H100 (0.54-0.55 GiB) these terms give 0.16 + 0.22 GiB: the rest is what is left out.
double vllm_non_torch(const Scenario& sc, Explanation& ex) {
    const double GiB = static_cast<double>(kGiB);
    const bool tp = sc.parallel.tp > 1;
    const std::string& version = sc.inference.engine_version;  // validated by vllm_family: 0.MINOR[.PATCH]
    // V0 takes its snapshot (Worker.init_device's baseline_snapshot, vllm/worker/worker.py, 0.8/0.9) before
    // init_worker_distributed_environment, as V1 did before 0.11.
    const bool v0 = sc.inference.vllm_sampler == VllmSampler::V0;
    const bool before_snapshot_fix = v0 || version == "0.10" || version.rfind("0.10.", 0) == 0;
    const double per_connection = kNcclLlBytes + kNcclLl128Bytes + kNcclSimpleBytes;
    const double communicators = tp ? (before_snapshot_fix ? 2 : 1) : 0;
    // CustomAllreduce._SUPPORTED_WORLD_SIZES: 2, 4, 6, 8.
    const std::uint64_t t = sc.parallel.tp;
    const bool custom_ar_sizes = t == 2 || t == 4 || t == 6 || t == 8;
    const double custom_ar = tp && before_snapshot_fix && custom_ar_sizes ? 2 * 8388608.0 : 0;
    return ex.sum(
        "vllm_non_torch", "memory grown outside torch during the profile run",
        {{"libraries' code and handles mapped on first use (measured on one H100: no source sizes it)",
          {{"GiB", 0.16}, {"bytes per GiB", GiB}}},
         {"NCCL ring buffers (TP > 1): the communicators created after the init snapshot",
          {{"communicators: torch's device group (+ vLLM's PyNccl in V0 and before 0.11)", communicators},
           {"channels (NCCL's topology search on H100 NVSwitch)", kNcclChannelsH100},
           {"ring connections per channel", 1},
           {"bytes per connection: LL + LL128 + SIMPLE", per_connection, "B"}}},
         {"custom all-reduce IPC buffers (TP > 1, V0 and before 0.11): 2 x max_size 8 MiB",
          {{"bytes", custom_ar, "B"}}}},
        "vllm/utils memory_profiling (non_torch_increase); vllm/v1/worker/gpu_worker.py init_device; NVIDIA/nccl "
        "src/init.cc, src/transport/p2p.cc @v2.27.3-1; vllm/distributed/device_communicators/custom_all_reduce.py");
}

// vLLM V1 (0.10 on; vllm/v1/worker/gpu_worker.py Worker.determine_available_memory): it requests
// gpu_memory_utilization x the total CUDA reports, runs one profile step (GPUModelRunner.profile_run:
// max_num_batched_tokens dummy tokens through the model, then the sampler over the last token of each of
// min(max_num_seqs, max_num_batched_tokens) dummy requests), and hands the KV cache what the request
// leaves after the weights, the step's torch peak increase and the memory that grew outside torch
// (vllm/utils memory_profiling). CUDA graphs are captured after the KV cache is allocated
// (GPUModelRunner.capture_model): outside the request.
// The V0 engine (0.8/0.9 with VLLM_USE_V1=0) budgets the same way (vllm/worker/worker.py
// Worker.determine_num_available_blocks: total x gpu_memory_utilization - memory_profiling's
// non_kv_cache_memory, i.e. weights + torch peak increase + non-torch increase; read in a copy of 0.8.4,
// WenhaoHe02/vllm_0_8_4 @0590de0f, and matched by the V0 logs' "the rest of the memory reserved for KV
// Cache"), and captures its graphs after the cache too (Worker._warm_up_model). Its profile run differs
// (vllm/worker/model_runner.py GPUModelRunnerBase.profile_run / _dummy_run): max_num_seqs dummy prompts
// sharing max_num_batched_tokens tokens, each sampled once by the V0 sampler; and its step defaults
// (scenario.cpp read_engine_settings).
void vllm(const Scenario& sc, const Serving& v, Breakdown& out) {
    const ModelSpec& m = sc.model;
    const InferenceSettings& x = sc.inference;
    Notes& why = out.assumptions;
    Explanation& ex = out.explain;
    const double weights = v.w.bytes, a = v.w.a, GiB = static_cast<double>(kGiB);
    const VllmSampler family = x.vllm_sampler;
    const bool v0 = family == VllmSampler::V0;
    const double total = static_cast<double>(sc.hardware.cuda_total_bytes);
    double budget = ex.product(
        "vllm_requested_memory", "what vLLM requests: gpu_memory_utilization x the CUDA total",
        {{"gpu_memory_utilization", x.gpu_memory_utilization}, {"the card's total as CUDA reports it", total, "bytes"}},
        v0 ? "vllm/worker/worker.py determine_num_available_blocks (memory_for_current_instance)"
           : "vllm/v1/worker/gpu_worker.py determine_available_memory (requested_memory)");
    const double tokens = static_cast<double>(x.max_num_batched_tokens);
    const double reqs = std::min(static_cast<double>(x.max_num_seqs), tokens);
    double forward = v.fwd.recorded(ex, "profile_forward", "the profile step's forward working set", tokens, 0, false);
    double held = ex.product("profile_hidden_states", "the step's last hidden states, held while the sampler runs",
                             {{"tokens of the step (max_num_batched_tokens)", tokens, "tokens"},
                              {"hidden size", static_cast<double>(m.hidden_size), "elements"},
                              {"bytes per element", a, "B"}},
                             v0 ? "vllm/worker/model_runner.py execute_model (hidden_or_intermediate_states)"
                                : "vllm/v1/worker/gpu_model_runner.py profile_run (hidden_states)");
    const char* per_logit =
        family == VllmSampler::Native ? "bytes per logit: logits + fp32 copy + sort values/indices + the sort's scratch"
        : family == VllmSampler::V0
            ? "bytes per logit (V0 sampler): logits + fp32 copy + sort values/indices + max(the sort's scratch, "
              "top-k/top-p masks + sorted softmax + cumsum + re-scattered logits)"
            : "bytes per logit: logits + fp32 copy + top-k masked logits + softmax (FlashInfer)";
    const char* sampler_source =
        family == VllmSampler::Native
            ? "vllm/v1/worker/gpu_model_runner.py _dummy_sampler_run; vllm/v1/sample/ops/"
              "topk_topp_sampler.py apply_top_k_top_p (logits.sort); aten/src/ATen/native/cuda/SortStable.cu"
        : family == VllmSampler::V0
            ? "vllm/worker/model_runner.py profile_run (top_p 0.99, top_k vocab - 1); "
              "vllm/model_executor/layers/sampler.py Sampler.forward, _apply_top_k_top_p, _multinomial (V0)"
            : "vllm/v1/worker/gpu_model_runner.py _dummy_sampler_run; topk_topp_sampler.py "
              "flashinfer_sample (top_k_top_p_sampling_from_logits)";
    double sampler =
        ex.product("profile_sampler", "the dummy sampler run's peak: vocabulary-wide logits and top-k/top-p buffers",
                   {{v0 ? "dummy prompts, one sampled row each: min(max_num_seqs, "
                          "max_num_batched_tokens)"
                        : "dummy requests: min(max_num_seqs, max_num_batched_tokens)",
                     reqs, "sequences"},
                    {v0 ? "vocabulary (whole, on the rank that samples)" : "vocabulary (all-gathered on every TP rank)",
                     static_cast<double>(m.vocab_size), "elements"},
                    {per_logit, vllm_sampler_bytes_per_logit(family, a, reqs), "B"}},
                   sampler_source);
    double peak =
        ex.rule("vllm_activation_peak", "the profile step's torch peak increase", std::max(forward, held + sampler),
                "max(forward working set, held hidden states + sampler peak)",
                {{"forward working set", forward, "bytes"},
                 {"held hidden states", held, "bytes"},
                 {"sampler peak", sampler, "bytes"}},
                v0 ? "vllm/worker/model_runner.py profile_run" : "vllm/v1/worker/gpu_model_runner.py profile_run");
    double non_torch = vllm_non_torch(sc, ex);
    double graphs = ex.product(
        "vllm_cuda_graphs", "CUDA graph capture, after the KV cache: outside the request",
        {{"GiB (tunable vllm_cuda_graph_gib)", sc.tunable(Tunable::VllmCudaGraphGib), "GiB"}, {"bytes per GiB", GiB}},
        "vllm/v1/worker/gpu_model_runner.py capture_model");
    double pool = budget - weights - peak - non_torch;
    double block = static_cast<double>(x.block_size);
    std::uint64_t layers_here = static_cast<std::uint64_t>(v.w.shard.layers);
    double per_block = 0;  // one block on every cached layer
    for (std::uint64_t i = v.kv.first_cached; i < layers_here && i < m.layer_attention.size(); ++i)
        per_block += v.kv.per_token_layer * block * static_cast<double>(v.kv.cache_factor);
    double blocks = pool > 0 && per_block > 0 ? std::floor(pool / per_block) : 0;
    double per_sequence = v.kv.bytes(v.ctx, 1, layers_here, block);
    double max_seqs = per_sequence > 0 && pool > 0 ? std::floor(pool / per_sequence) : 0;
    double kv_pool = ex.rule("kv_cache", "vLLM's KV blocks: what its request leaves", std::max(0.0, pool),
                             "requested memory - weights - profile peak - non-torch increase (kept when positive)",
                             {{"requested memory", budget, "bytes"},
                              {"weights", weights, "bytes"},
                              {"profile activation peak", peak, "bytes"},
                              {"non-torch increase", non_torch, "bytes"}},
                             v0 ? "vllm/worker/worker.py determine_num_available_blocks (available_kv_cache_memory)"
                                : "vllm/v1/worker/gpu_worker.py determine_available_memory");
    // What the process holds once serving: the CUDA context, the non-torch memory, and the allocator's
    // tensors (weights, the KV pool, the profile peak's cached blocks, the graphs' pools) with its slack on
    // what it hands out piecemeal (the peak's and the graphs'; the weights and the pool are few large
    // blocks). With a pool, that is the request + graphs + context + slack. s002 bounds it: gpt-oss-120b
    // ran at utilization 0.95 (75.22 GiB) and captured 1.03 GiB of graphs on a 79.18 GiB card.
    out.claimed = sc.tunable(Tunable::CudaContextGib) * GiB + non_torch + weights + kv_pool + peak + graphs +
                  (peak + graphs) * sc.tunable(Tunable::AllocatorFragmentation);
    out.engine_fits = pool > 0 && max_seqs >= v.b;
    out.serving = {{"engine", "vllm"},
                   {"kv_cache_bytes", static_cast<std::uint64_t>(kv_pool)},
                   {"kv_cache_blocks", static_cast<std::uint64_t>(blocks)},
                   {"kv_cache_tokens", static_cast<std::uint64_t>(blocks * block)},
                   {"max_concurrent_sequences", static_cast<std::uint64_t>(max_seqs)},
                   {"at_context_len", x.context_len},
                   {"requested_sequences", x.batch_size},
                   {"fills_budget", true}};
    why["vllm_budget_bytes"] = budget;
    why["vllm_cuda_total_bytes"] = total;
    why["vllm_profile_tokens"] = tokens;
    why["vllm_profile_requests"] = reqs;
    why["vllm_activation_peak_bytes"] = peak;
    why["vllm_non_torch_bytes"] = non_torch;
    why["vllm_cuda_graph_bytes"] = graphs;
    why["vllm_sampler_native"] = family == VllmSampler::Native ? 1 : 0;
    why["vllm_v0_engine"] = v0 ? 1 : 0;
    if (v0)
        out.warnings.push_back("vLLM " + x.engine_version +
                               ": the V0 engine (VLLM_USE_V1=0) of that release; its default V1 engine budgets "
                               "differently and gpumem follows V1 from 0.10 on");
    const auto gib = [](double bytes) {
        char s[32];
        std::snprintf(s, sizeof s, "%.2f GiB", bytes / static_cast<double>(kGiB));
        return std::string(s);
    };
    const std::string fix = "; `gpumem fit` finds a card count or setting that fits";
    if (pool <= 0)
        out.warnings.push_back("vLLM would not start: no memory is left for KV cache blocks (its request, " +
                               gib(budget) + ", goes to the weights " + gib(weights) + ", the profile run's peak " +
                               gib(peak) + " and " + gib(non_torch) +
                               " outside torch); raise gpu_memory_utilization or use more GPUs" + fix);
    else if (max_seqs < 1)
        out.warnings.push_back(
            "vLLM would not start: one sequence of max_model_len " + std::to_string(x.context_len) + " tokens needs " +
            gib(per_sequence) + " of KV cache, more than the " + gib(pool) +
            " available; the longest it could serve is about " +
            std::to_string(static_cast<long long>(vllm_max_model_len(v, pool, layers_here, block, v.ctx))) +
            " tokens: lower max_model_len (context_len) or raise gpu_memory_utilization" + fix);
    else if (max_seqs < v.b)
        out.warnings.push_back("the KV cache holds " + std::to_string(static_cast<long long>(max_seqs)) +
                               " sequences of " + std::to_string(x.context_len) + " tokens, fewer than the batch of " +
                               std::to_string(x.batch_size) + ": vLLM would queue the rest");
    const Term w{"weights", weights}, kv{"kv_cache", kv_pool}, act{"vllm_activation_peak", peak};
    push_phase(out, "load", {{C::Weights, {w}}});
    if (v.encode > 0)
        push_phase(out, "encode_images",
                   {{C::Weights, {w}}, {C::KvCache, {kv}}, {C::Activations, {{"image_encoding", v.encode}}}});
    push_phase(out, "profile", {{C::Weights, {w}}, {C::Activations, {act}}});
    push_phase(out, "serve",
               {{C::Weights, {w}},
                {C::KvCache, {kv}},
                {C::Activations, {act}},
                {C::Temporaries, {{"vllm_cuda_graphs", graphs}}}});
}

// What a pool engine (SGLang, TGI, TensorRT-LLM) reserves beside its KV pool, and how it sizes it.
struct Pool {
    const char* engine = "";
    double pool = 0;           // bytes of KV cache
    double block = 1;          // tokens per block (1: a token pool)
    double acts = 0;           // the profiling / warm-up forward's working set, kept by the allocator
    double logits = 0;         // that step's logits in fp32
    double outside = 0;        // CUDA graphs and buffers outside the pool and the allocator's tensors
    const char* refused = "";  // the warning when nothing is left for the pool
};

// The CUDA graphs and buffers an engine keeps outside its pool and the allocator's tensors (SGLang, TGI):
// the measured reserve of the serving engines' graph capture (tunable vllm_cuda_graph_gib).
double cuda_graphs(const Scenario& sc, Explanation& ex) {
    return ex.product("engine_cuda_graphs", "CUDA graphs and buffers outside the pool",
                      {{"GiB (tunable vllm_cuda_graph_gib)", sc.tunable(Tunable::VllmCudaGraphGib), "GiB"},
                       {"bytes per GiB", static_cast<double>(kGiB)}},
                      "measured CUDA graph capture of the serving engines (docs/memory-model.md)");
}

// The serving capacity of a preallocated pool: whole blocks of every cached layer, and the
// sequences of `context_len` tokens (each rounded up to whole blocks) it holds; the device total is
// what the engine holds once serving (it claims the pool at start-up).
void pool_engine(const Scenario& sc, const Serving& v, const Pool& p, Breakdown& out) {
    const InferenceSettings& x = sc.inference;
    const double weights = v.w.bytes;
    std::uint64_t layers_here = static_cast<std::uint64_t>(v.w.shard.layers);
    double per_block = v.kv.bytes(1, 1, layers_here, 0) * p.block;
    double blocks = p.pool > 0 && per_block > 0 ? std::floor(p.pool / per_block) : 0;
    double per_sequence = v.kv.bytes(v.ctx, 1, layers_here, p.block);
    double max_seqs = per_sequence > 0 && p.pool > 0 ? std::floor(p.pool / per_sequence) : 0;
    double kv_pool = out.explain.scale("kv_cache", p.pool, {"kept when positive (max with 0)", p.pool > 0 ? 1.0 : 0.0});
    double context = sc.tunable(Tunable::CudaContextGib) * static_cast<double>(kGiB);
    // The allocator's slack on everything but the pool (one block), as evaluate() counts it.
    double rest = (weights + p.acts + p.logits + p.outside) * (1 + sc.tunable(Tunable::AllocatorFragmentation));
    out.claimed = context + kv_pool + rest;
    out.engine_fits = p.pool > 0 && max_seqs >= v.b && out.claimed <= static_cast<double>(sc.hardware.gpu_memory_bytes);
    out.serving = {{"engine", p.engine},
                   {"kv_cache_bytes", static_cast<std::uint64_t>(kv_pool)},
                   {"kv_cache_blocks", static_cast<std::uint64_t>(blocks)},
                   {"kv_cache_tokens", static_cast<std::uint64_t>(blocks * p.block)},
                   {"max_concurrent_sequences", static_cast<std::uint64_t>(max_seqs)},
                   {"at_context_len", x.context_len},
                   {"requested_sequences", x.batch_size},
                   {"fills_budget", true}};
    out.assumptions["kv_pool_block_tokens"] = p.block;
    out.assumptions["engine_outside_tensors_bytes"] = p.outside;
    if (p.pool <= 0) out.warnings.push_back(p.refused);
    else if (max_seqs < v.b)
        out.warnings.push_back("the KV cache holds " + std::to_string(static_cast<long long>(max_seqs)) +
                               " sequences of " + std::to_string(x.context_len) + " tokens, fewer than the batch of " +
                               std::to_string(x.batch_size) + ": " + p.engine + " would queue the rest");
    const Term w{"weights", weights}, kv{"kv_cache", kv_pool}, act{"profile_activations", p.acts};
    const Term logits{"profile_logits", p.logits};
    push_phase(out, "load", {{C::Weights, {w}}});
    if (v.encode > 0)
        push_phase(out, "encode_images",
                   {{C::Weights, {w}}, {C::KvCache, {kv}}, {C::Activations, {{"image_encoding", v.encode}}}});
    push_phase(out, "profile", {{C::Weights, {w}}, {C::Activations, {act}}, {C::Logits, {logits}}});
    push_phase(out, "serve",
               {{C::Weights, {w}},
                {C::KvCache, {kv}},
                {C::Activations, {act}},
                {C::Logits, {logits}},
                {C::Temporaries, {{"engine_cuda_graphs", p.outside}}}});
}

// SGLang: mem_fraction_static of the memory free at start-up (the card less the CUDA context)
// holds the weights and the token KV pool: ModelRunner.profile_max_num_token takes
// rest = free after loading - free before loading x (1 - mem_fraction_static), i.e.
// mem_fraction_static x free before - weights, and divides it by the cell size (K and V of every
// layer); page_size 1 (sgl-project/sglang python/sglang/srt/model_executor/model_runner.py and
// server_args.py, 2025). The chunked prefill's activations and the CUDA graphs live in the rest.
void sglang(const Scenario& sc, const Serving& v, Breakdown& out) {
    const InferenceSettings& x = sc.inference;
    double free_at_start = static_cast<double>(sc.hardware.cuda_total_bytes) -
                           sc.tunable(Tunable::CudaContextGib) * static_cast<double>(kGiB);
    Pool p;
    p.engine = "sglang";
    // What the engine measures after loading is what the allocator reserved: the weights and its slack.
    const double slack = 1 + sc.tunable(Tunable::AllocatorFragmentation);
    Explanation& ex = out.explain;
    p.pool = ex.rule("kv_cache", "SGLang's token KV pool", x.mem_fraction_static * free_at_start - v.w.bytes * slack,
                     "mem_fraction_static x (card - CUDA context) - weights x (1 + allocator slack)",
                     {{"mem_fraction_static", x.mem_fraction_static},
                      {"free at start (card - CUDA context)", free_at_start, "bytes"},
                      {"weights", v.w.bytes, "bytes"},
                      {"1 + allocator slack", slack}},
                     "sglang/srt/model_executor/model_runner.py profile_max_num_token");
    p.acts = v.fwd.recorded(ex, "profile_activations", "one chunked-prefill step's forward working set",
                            static_cast<double>(x.chunked_prefill_size), 0, false);
    p.logits = ex.product("profile_logits", "the chunk's logits (up to 256 positions) in compute dtype and fp32",
                          {{"positions", std::min<double>(static_cast<double>(x.chunked_prefill_size), 256), "tokens"},
                           {"vocabulary on this GPU", v.V, "elements"},
                           {"bytes per logit: compute dtype + fp32", v.w.a + 4, "B"}},
                          "sglang/srt/layers/logits_processor.py");
    p.outside = cuda_graphs(sc, ex);
    p.refused = "SGLang has no room for the KV pool: the weights need more than mem_fraction_static of the free memory";
    out.assumptions["sglang_static_bytes"] = x.mem_fraction_static * free_at_start;
    pool_engine(sc, v, p, out);
}

// TGI: after loading, the warm-up prefills max_batch_prefill_tokens tokens (the allocator keeps
// their working set), then get_free_memory() = free - (1 - cuda_memory_fraction) x total, and
// TGI_WIGGLE_ROOM (0.90) of it becomes KV blocks (huggingface/text-generation-inference
// server/text_generation_server/models/flash_causal_lm.py warmup(), models/globals.py, v3).
// Flashinfer attention (TGI 3's default) pages one token per block.
void tgi(const Scenario& sc, const Serving& v, Breakdown& out) {
    const InferenceSettings& x = sc.inference;
    // get_cuda_free_memory (server/text_generation_server/utils/import_utils.py @db931fcf): mem_get_info's free
    // less (1 - cuda_memory_fraction) x get_device_properties().total_memory, the total CUDA reports.
    const double cap = static_cast<double>(sc.hardware.cuda_total_bytes);
    Pool p;
    p.engine = "tgi";
    Explanation& ex = out.explain;
    p.acts = v.fwd.recorded(ex, "profile_activations", "the warm-up prefill's forward working set",
                            static_cast<double>(x.max_batch_prefill_tokens), 0, false);
    // the warm-up samples its one sequence's last position
    p.logits = ex.product(
        "profile_logits", "the warm-up's logits for one position",
        {{"vocabulary on this GPU", v.V, "elements"}, {"bytes per logit: compute dtype + fp32", v.w.a + 4, "B"}},
        "text_generation_server/models/flash_causal_lm.py warmup()");
    // torch.cuda.mem_get_info sees what the allocator reserved: the tensors and their slack.
    const double slack = 1 + sc.tunable(Tunable::AllocatorFragmentation);
    double used =
        sc.tunable(Tunable::CudaContextGib) * static_cast<double>(kGiB) + (v.w.bytes + p.acts + p.logits) * slack;
    double free = std::max(0.0, cap - used - (1 - x.cuda_memory_fraction) * cap);
    p.pool = ex.product("kv_cache", "TGI's KV blocks: 90 % of what the warm-up leaves",
                        {{"TGI_WIGGLE_ROOM", 0.90},
                         {"free after warm-up: card - context - (weights + warm-up) x (1 + slack) - (1 - "
                          "cuda_memory_fraction) x card",
                          free, "bytes"}},
                        "text_generation_server/models/globals.py TGI_WIGGLE_ROOM; flash_causal_lm.py warmup()");
    p.outside = cuda_graphs(sc, ex);  // its CUDA graphs, in the 10 %
    p.refused = "TGI has no room left for the KV cache after its warm-up prefill: lower max_batch_prefill_tokens";
    out.assumptions["tgi_free_after_warmup_bytes"] = free;
    pool_engine(sc, v, p, out);
}

// TensorRT-LLM: the KV cache takes free_gpu_memory_fraction of the memory free once the weights
// and the engine's activation buffers (max_num_tokens tokens) are allocated
// (NVIDIA/TensorRT-LLM tensorrt_llm/llmapi/llm_args.py KvCacheConfig: free_gpu_memory_fraction 0.9,
// tokens_per_block 32; docs/source/reference/memory.md).
void tensorrt_llm(const Scenario& sc, const Serving& v, Breakdown& out) {
    const InferenceSettings& x = sc.inference;
    const double cap = static_cast<double>(sc.hardware.cuda_total_bytes);  // cudaMemGetInfo's total
    Pool p;
    p.engine = "tensorrt_llm";
    p.block = 32;
    Explanation& ex = out.explain;
    p.acts = v.fwd.recorded(ex, "profile_activations", "the engine's activation buffers for max_num_tokens",
                            static_cast<double>(x.max_num_tokens), 0, false);
    p.logits = ex.product(
        "profile_logits", "fp32 logits for one position per sequence",
        {{"positions: min(max_num_tokens, batch)",
          std::min<double>(static_cast<double>(x.max_num_tokens), static_cast<double>(x.batch_size)), "tokens"},
         {"vocabulary on this GPU", v.V, "elements"},
         {"bytes per fp32 logit", 4, "B"}},
        "tensorrt_llm runtime: logits in fp32 (gather_generation_logits off)");
    // The free memory it measures is after the allocator's reservations: the tensors and their slack.
    const double slack = 1 + sc.tunable(Tunable::AllocatorFragmentation);
    double free =
        cap - sc.tunable(Tunable::CudaContextGib) * static_cast<double>(kGiB) - (v.w.bytes + p.acts + p.logits) * slack;
    p.pool = ex.product(
        "kv_cache", "TensorRT-LLM's KV blocks",
        {{"free_gpu_memory_fraction", x.free_gpu_memory_fraction},
         {"free: card - context - (weights + buffers + logits) x (1 + slack)", std::max(0.0, free), "bytes"}},
        "tensorrt_llm/llmapi/llm_args.py KvCacheConfig.free_gpu_memory_fraction");
    p.refused = "TensorRT-LLM has no room for the KV cache: the weights and activation buffers fill the card";
    out.assumptions["tensorrt_llm_free_bytes"] = free;
    pool_engine(sc, v, p, out);
}

// llama.cpp: `gpu_layers` layers (and, with all of them, the output matrix) go to the GPU; the
// token embeddings stay on the host. The cache holds the whole context (n_ctx = sequences x
// context) for the GPU's layers, allocated at load. The compute buffer holds one ubatch's graph:
// f32 intermediates, and KQ scores over the context unless flash attention is on.
void llama_cpp(const Scenario& sc, const Serving& v, Breakdown& out) {
    const ModelSpec& m = sc.model;
    const InferenceSettings& x = sc.inference;
    Notes& why = out.assumptions;
    const Shard& shard = v.w.shard;
    const double fb = v.w.fb, h = static_cast<double>(m.hidden_size);
    std::uint64_t L = m.num_layers;
    std::uint64_t on_gpu = x.gpu_layers < 0 ? L : std::min<std::uint64_t>(L, static_cast<std::uint64_t>(x.gpu_layers));
    // One layer: its matrices in the format, its norms and biases in the checkpoint dtype (GGUF: all in the format).
    double layer_matrices = shard.linear_params / std::max(1.0, shard.layers);
    double layer_bytes = v.w.quantized ? layer_matrices * fb + (shard.layer_params - layer_matrices) * v.w.rest_bytes
                                       : shard.layer_params * fb;
    double embed = 0, head = 0;
    for (const Tensor& t : tensors_of(sc)) {
        double n = static_cast<double>(t.elements());
        if (t.layers == Layers::None && t.group == Group::Embedding) embed += n;
        if (t.layers == Layers::None && (t.group == Group::LmHead || t.group == Group::Norm)) head += n;
    }
    if (m.tie_word_embeddings) head += embed;  // the output uses the embedding matrix: a GPU copy
    Explanation& ex = out.explain;
    double gpu_weights =
        ex.sum("weights", "the GPU's layers in the format, and the output matrix when every layer is there",
               {{"layers on the GPU",
                 {{"bytes per layer", layer_bytes, "bytes"}, {"layers", static_cast<double>(on_gpu), "layers"}}},
                {"output matrix and final norm",
                 {{"parameters", on_gpu == L ? head : 0, "params"}, {"bytes per weight", fb, "B"}}}},
               "llama.cpp llama_model_load: -ngl layers offloaded; token embeddings stay on the host");
    double host_weights = std::max(0.0, v.w.bytes + (m.tie_word_embeddings ? head * fb : 0) - gpu_weights);
    double n_ctx = v.b * v.ctx;
    // n_ctx padded to 256
    double kv_gpu = x.kv_cache ? v.kv.recorded(ex, "kv_cache", "the whole context's cache for the GPU's layers", n_ctx,
                                               1, on_gpu, 256)
                               : 0;
    double kv_host = x.kv_cache ? v.kv.bytes(n_ctx, 1, L, 256) - kv_gpu : 0;
    double ub = static_cast<double>(std::min<std::uint64_t>(x.ubatch, x.batch_size * x.context_len));
    bool flash = x.attention == Attention::Flash || x.attention == Attention::Sdpa;
    // Without flash attention the graph holds, per token, KQ (one f32 score per head and cached position)
    // and its softmax (ggml_soft_max_ext writes a new tensor while reading KQ): 2 x heads x n_ctx
    // elements, 4 bytes each like every intermediate here.
    double scores = flash ? 0 : 2 * static_cast<double>(m.num_attention_heads) * n_ctx;
    double compute = ex.sum(
        "compute_buffer", "llama.cpp's compute buffer: one ubatch's graph in f32",
        {{"intermediates",
          {{"ubatch tokens", ub, "tokens"},
           {"f32", 4, "B"},
           {"per token: 2h + max(KQ scores over the context, MLP)",
            2 * h + std::max(scores, (m.gated_mlp ? 3 : 2) * static_cast<double>(m.intermediate_size)), "elements"}}},
         {"logits",
          {{"ubatch tokens", ub, "tokens"},
           {"f32", 4, "B"},
           {"vocabulary (with the output on the GPU)", v.V * (on_gpu == L ? 1 : 0), "elements"}}}},
        "ggml-backend graph allocator (ggml_gallocr) over llama_build_graph");
    out.host_bytes = host_weights + kv_host;
    why["llama_cpp_gpu_layers"] = static_cast<double>(on_gpu);
    why["llama_cpp_n_ctx"] = n_ctx;
    why["llama_cpp_compute_buffer_bytes"] = compute;
    const Term w{"weights", gpu_weights}, kv{"kv_cache", kv_gpu};
    push_phase(out, "load", {{C::Weights, {w}}, {C::KvCache, {kv}}});
    push_phase(out, "prompt", {{C::Weights, {w}}, {C::KvCache, {kv}}, {C::Temporaries, {{"compute_buffer", compute}}}});
    if (v.encode > 0) out.warnings.push_back("llama.cpp encodes images with its own projector (mmproj): not modelled");
    if (on_gpu < L)
        out.warnings.push_back(std::to_string(L - on_gpu) + " layers run on the CPU from host RAM (host_bytes)");
}

// transformers' generate(): the cache grows to the context; the prompt is prefilled in one forward
// (taken here as the whole context: the upper bound); logits only for the last position, upcast to fp32.
void transformers_generate(const Scenario& sc, const Serving& v, Breakdown& out) {
    const InferenceSettings& x = sc.inference;
    Explanation& ex = out.explain;
    double kv = x.kv_cache ? v.kv.recorded(ex, "kv_cache", "the KV cache grown to the context", v.ctx, v.b,
                                           static_cast<std::uint64_t>(v.w.shard.layers), 0)
                           : 0;
    double acts = v.fwd.recorded(ex, "prefill_activations", "the prefill's forward working set (the whole prompt)",
                                 v.b * v.ctx, v.ctx, x.attention == Attention::Eager);
    double logits = ex.product("last_logits", "the last position's logits, upcast to fp32",
                               {{"sequences", v.b, "sequences"},
                                {"vocabulary on this GPU", v.V, "elements"},
                                {"bytes per logit: compute dtype + fp32", v.w.a + 4, "B"}},
                               "transformers GenerationMixin: logits[:, -1, :].float()");
    out.assumptions["prefill_tokens"] = v.b * v.ctx;
    const Term w{"weights", v.w.bytes}, cache{"kv_cache", kv}, last{"last_logits", logits};
    push_phase(out, "load", {{C::Weights, {w}}});
    if (v.encode > 0)
        push_phase(out, "encode_images", {{C::Weights, {w}}, {C::Activations, {{"image_encoding", v.encode}}}});
    push_phase(out, "prefill",
               {{C::Weights, {w}},
                {C::KvCache, {cache}},
                {C::Activations, {{"prefill_activations", acts}}},
                {C::Logits, {last}}});
    push_phase(out, "decode", {{C::Weights, {w}}, {C::KvCache, {cache}}, {C::Logits, {last}}});
    if (!x.kv_cache)
        out.warnings.push_back(
            "without a KV cache every generated token re-runs the whole prefix: memory stays at the prefill's");
}

}  // namespace

// Generation on the heaviest rank: the weights in their format, the KV cache's shape, the images'
// encoding and the forward's working set, then the engine's own timeline.
Breakdown inference_memory(const Scenario& sc) {
    const ModelSpec& m = sc.model;
    const InferenceSettings& x = sc.inference;
    const double tp = static_cast<double>(sc.parallel.tp);
    Breakdown out(sc);
    Serving v;
    v.w = stored_weights(sc, out);
    v.kv = kv_cache(sc, out);
    // Image tokens (multimodal prompts) join each sequence's context.
    v.ctx = static_cast<double>(x.context_len + x.images * x.image_tokens);
    v.b = static_cast<double>(x.batch_size);
    v.encode = image_encode_bytes(sc, v.w.a, out);
    if (m.structure == ModelSpec::Structure::Encoder)
        out.warnings.push_back("an encoder-only model generates nothing: no KV cache; context_len is its input length");
    v.fwd = forward_shape(m, v.w.a, tp);
    v.V = static_cast<double>(m.vocab_size) / tp;
    if (x.engine == InferenceEngine::Vllm) vllm(sc, v, out);
    else if (x.engine == InferenceEngine::LlamaCpp) llama_cpp(sc, v, out);
    else if (x.engine == InferenceEngine::Sglang) sglang(sc, v, out);
    else if (x.engine == InferenceEngine::Tgi) tgi(sc, v, out);
    else if (x.engine == InferenceEngine::TensorrtLlm) tensorrt_llm(sc, v, out);
    else transformers_generate(sc, v, out);
    return out;
}

}  // namespace gpumem::detail
