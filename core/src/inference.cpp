// Inference memory with Hugging Face transformers' generate() (MEMORY_MODEL.md §4): weights by
// storage format, the KV cache by attention type, and the prefill's transient working set.

#include <algorithm>
#include <cctype>
#include <cmath>

#include "memory.h"

namespace gpumem::detail {

namespace {

// Bytes per weight element of a storage format, its scales included. `group` is the scale group of
// int4 (GPTQ/AWQ); `double_quant` says whether bitsandbytes quantizes its absmax values again.
double format_bytes(const std::string& format, std::uint64_t group, bool double_quant) {
    if (format == "int4") return 0.5 + (group ? 2.5 / static_cast<double>(group) : 0);  // fp16 scale + 4-bit zero per group
    if (format == "nf4" || format == "fp4")  // 4 bits + an fp32 absmax per 64 (double quant: 8-bit + fp32 per 256 of them)
        return 0.5 + (double_quant ? 1.0 / 64 + 4.0 / (64 * 256) : 4.0 / 64);
    if (format == "int8") return 1.0 + 4.0 / 4096;  // LLM.int8: an fp32 scale per row (rows ~4096 wide)
    if (format == "fp8") return 1.0 + 4.0 / (128 * 128);  // e4m3 + an fp32 scale per 128x128 block
    if (format == "mxfp4") return 0.5 + 1.0 / 32;   // OCP MX: e2m1 + one e8m0 scale per 32
    if (format == "nvfp4") return 0.5 + 1.0 / 16;   // e2m1 + one e4m3 scale per 16 (+ a per-tensor fp32)
    // GGUF blocks (llama.cpp ggml-common.h): q8_0 34 B / 32, q4_0 18 B / 32, q6_K 210 B / 256.
    if (format == "q8_0") return 34.0 / 32;
    if (format == "q4_0") return 18.0 / 32;
    if (format == "q6_k") return 210.0 / 256;
    // The _M mixes keep some tensors at a higher type: their average bits per weight (MEMORY_MODEL.md §4
    // for Q4_K_M ~4.8; Q5_K_M: q5_K's 5.5 with the same promotions, ~5.7).
    if (format == "q4_k_m") return 4.8 / 8;
    if (format == "q5_k_m") return 5.7 / 8;
    return dtype_bytes(format).value_or(2);
}

bool is_gguf(const std::string& format) {
    return format.size() > 1 && format[0] == 'q' && std::isdigit(static_cast<unsigned char>(format[1]));
}

}  // namespace

Breakdown inference_memory(const Scenario& sc) {
    const ModelSpec& m = sc.model;
    const InferenceSettings& x = sc.inference;
    const Parallelism& par = sc.parallel;
    Breakdown out;
    json& why = out.assumptions;
    const double tp = static_cast<double>(par.tp);

    // ---- Weights: the layers' linear matrices in the storage format; embeddings, head and norms
    // stay in the checkpoint's dtype for quantized formats (bitsandbytes, GPTQ/AWQ and MX keep them
    // so), as do modules the checkpoint's quantization_config leaves unconverted. GGUF files
    // quantize every matrix.
    Shard shard = shard_of(m, par.tp, par.pp, par.ep);
    double a = x.weight_format == "fp32" ? 4 : 2;
    const auto& qc = m.quantization;
    double fb = format_bytes(x.weight_format, x.group_size, qc ? qc->double_quant : false);
    bool quantized = x.weight_format != "fp32" && x.weight_format != "fp16" && x.weight_format != "bf16";
    double total_params = shard.total();
    if (m.declared_parameters) {
        ModelSpec shape = m;
        shape.declared_parameters.reset();
        double shape_total = static_cast<double>(count_parameters(shape).total);
        if (shape_total > 0) total_params *= static_cast<double>(*m.declared_parameters) / shape_total;
    }
    double in_format = quantized ? shard.linear_params : total_params;
    if (is_gguf(x.weight_format)) in_format = total_params;
    bool keeps_attention = qc && std::any_of(qc->modules_not_converted.begin(), qc->modules_not_converted.end(),
                                            [](const std::string& name) { return name.find("self_attn") != std::string::npos; });
    if (quantized && keeps_attention && x.weight_format_from_checkpoint) in_format -= shard.attention_linear_params;
    double rest_bytes = dtype_bytes(m.checkpoint_dtype).value_or(2);
    double weights = in_format * fb + (total_params - in_format) * rest_bytes;
    why["weight_bytes_per_param"] = fb;
    why["params_in_weight_format"] = in_format;
    if (is_gguf(x.weight_format))
        out.warnings.push_back("GGUF formats are llama.cpp's; the KV cache and workspace here are modelled the transformers way");

    // ---- KV cache: K and V for every kv head on every layer of this stage; sliding-window layers
    // keep at most the window.
    double kv_bytes = dtype_bytes(x.kv_cache_dtype).value_or(2);
    double kv_heads = std::max(1.0, static_cast<double>(m.num_key_value_heads) / tp);  // replicated when kv < tp
    double per_token_layer = 2 * kv_heads * static_cast<double>(m.head_dim) * kv_bytes;
    if (m.kv_lora_rank > 0) {
        // MLA under transformers: the cache holds the up-projected keys (nope + rope dims) and values
        // for every head, not the latent (kv_lora_rank + qk_rope_head_dim) that vLLM/SGLang keep.
        double heads = static_cast<double>(m.num_attention_heads) / tp;
        per_token_layer = heads * static_cast<double>(m.qk_nope_head_dim + m.qk_rope_head_dim + m.v_head_dim) * kv_bytes;
        why["mla_latent_bytes_per_token_per_layer"] = static_cast<double>(m.kv_lora_rank + m.qk_rope_head_dim) * kv_bytes;
    }
    // Which layers cache: none in an encoder-only model; the decoder's in an encoder-decoder, whose
    // cross-attention also caches K and V of the source (taken as long as the context here).
    std::uint64_t first_cached = 0, cache_factor = 1;
    if (m.structure == ModelSpec::Structure::Encoder) first_cached = m.num_layers;
    if (m.structure == ModelSpec::Structure::EncoderDecoder) {
        first_cached = m.encoder_layers;
        cache_factor = 2;
    }
    double ctx = static_cast<double>(x.context_len), b = static_cast<double>(x.batch_size);
    double kv = 0;
    if (x.kv_cache) {
        std::uint64_t layers_here = static_cast<std::uint64_t>(shard.layers);
        for (std::uint64_t i = first_cached; i < layers_here && i < m.layer_attention.size(); ++i) {
            double tokens = ctx;
            if (m.layer_attention[i] == LayerAttention::SlidingWindow && m.sliding_window > 0)
                tokens = std::min(ctx, static_cast<double>(m.sliding_window));
            kv += per_token_layer * tokens * b * static_cast<double>(cache_factor);
        }
        if (m.structure == ModelSpec::Structure::Encoder)
            out.warnings.push_back("an encoder-only model generates nothing: no KV cache; context_len is its input length");
    }
    why["kv_bytes_per_token_per_layer"] = per_token_layer;

    // ---- Prefill of the whole context in one forward (the transient peak). One layer's working set
    // at a time: the residual stream and its normed copy, then either attention (q, k, v and output)
    // or the MLP (gate, up and act(gate)·up), whichever is larger.
    double T = b * ctx, h = static_cast<double>(m.hidden_size);
    double q = static_cast<double>(m.num_attention_heads * m.head_dim) / tp;
    double kvd = static_cast<double>(m.num_key_value_heads * m.head_dim) / tp;
    double I = static_cast<double>(m.intermediate_size) / tp;
    double attn = a * (2 * q + 2 * kvd) + 4 * h;
    if (x.attention == "eager") attn += (4 + a) * static_cast<double>(m.num_attention_heads) / tp * ctx;
    double mlp = a * (m.gated_mlp ? 3 : 2) * I;
    if (m.num_experts) {  // the top-k experts' intermediates for each token, and the router's logits
        double k = static_cast<double>(m.num_experts_per_tok);
        mlp = std::max(m.moe_layer.size() == layer_count(m, Layers::Moe) ? 0.0 : mlp,
                       a * (m.gated_mlp ? 3 : 2) * static_cast<double>(m.moe_intermediate_size) / tp * k +
                           4 * static_cast<double>(m.num_experts) + a * h * k);
    }
    double acts = T * (2 * a * h + std::max(attn, mlp));
    // generate() computes logits for the last position only, and upcasts them to fp32.
    double logits = b * static_cast<double>(m.vocab_size) / tp * (a + 4);
    why["prefill_tokens"] = T;

    out.timeline.push_back({"load", {{"weights", weights}}});
    out.timeline.push_back({"prefill", {{"weights", weights}, {"kv_cache", kv}, {"activations", acts}, {"logits", logits}}});
    out.timeline.push_back({"decode", {{"weights", weights}, {"kv_cache", kv}, {"logits", logits}}});
    if (!x.kv_cache)
        out.warnings.push_back("without a KV cache every generated token re-runs the whole prefix: memory stays at the prefill's");
    return out;
}

}  // namespace gpumem::detail
