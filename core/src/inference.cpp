// Inference memory with Hugging Face transformers' generate() (MEMORY_MODEL.md §4): weights by
// storage format, the KV cache by attention type, and the prefill's transient working set.

#include <algorithm>
#include <cmath>

#include "memory.h"

namespace gpumem::detail {

namespace {

// Bytes per weight element of a storage format, scales included.
double format_bytes(const std::string& format) {
    if (format == "int4") return 0.5 + 2.0 / 128 + 0.5 / 128;  // GPTQ/AWQ g128: fp16 scale + 4-bit zero per group
    if (format == "nf4") return 0.5 + 1.0 / 64 + 4.0 / (64 * 256);  // bitsandbytes NF4 with double quant
    if (format == "fp8") return 1.0;
    if (format == "int8") return 1.0 + 4.0 / 4096;  // LLM.int8: row-wise fp32 scale for each 4096-wide row
    return dtype_bytes(format).value_or(2);
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
    // stay in the compute dtype for the quantized formats (bitsandbytes and GPTQ skip them).
    Shard shard = shard_of(m, par.tp, par.pp, par.ep);
    double a = x.weight_format == "fp32" ? 4 : 2;
    double fb = format_bytes(x.weight_format);
    bool quantized = x.weight_format == "int4" || x.weight_format == "nf4" || x.weight_format == "int8" || x.weight_format == "fp8";
    double total_params = shard.total();
    if (m.declared_parameters) {
        ModelSpec shape = m;
        shape.declared_parameters.reset();
        double shape_total = static_cast<double>(count_parameters(shape).total);
        if (shape_total > 0) total_params *= static_cast<double>(*m.declared_parameters) / shape_total;
    }
    double weights = quantized ? shard.linear_params * fb + (total_params - shard.linear_params) * a : total_params * fb;
    why["weight_bytes_per_param"] = fb;

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
