// What every evaluation of one model shares, computed once: the tensor list and, per layout, the
// shard and the optimizer-state totals (model_cache.h). Memoised, never approximated: a
// cached figure is the one the uncached code computes.

#include <algorithm>
#include <cmath>
#include <functional>
#include <stdexcept>
#include <string>

#include "memory/model_cache.h"

namespace gpumem::detail {

namespace {

// The quantization's facts that change a tensor's stored bytes, as one number.
std::uint64_t quantization_print(const ModelSpec& m) {
    if (!m.quantization) return 0;
    const auto& q = *m.quantization;
    std::string key = q.method + "|" + q.format + "|" + m.checkpoint_dtype;
    for (const auto& s : q.schemes)
        key += "|" + std::to_string(s.bits) + s.strategy + std::to_string(s.group_size) + (s.symmetric ? "s" : "a");
    for (const auto& n : q.modules_not_converted) key += "|" + n;
    return std::hash<std::string>{}(key) | 1u;
}

std::array<std::uint64_t, 14> fingerprint(const ModelSpec& m) {
    return {m.num_layers,
            m.hidden_size,
            m.vocab_size,
            m.num_attention_heads,
            m.num_key_value_heads,
            m.head_dim,
            m.intermediate_size,
            m.num_experts,
            m.moe_intermediate_size,
            m.shared_expert_intermediate_size,
            m.kv_lora_rank,
            (m.tie_word_embeddings ? 1u : 0u) + (m.declared_parameters ? 2u : 0u),
            m.declared_parameters.value_or(0),
            quantization_print(m)};
}

}  // namespace

Shard shard_of(const ModelSpec& m, const std::vector<Tensor>& tensors, std::uint64_t tp, std::uint64_t pp,
               std::uint64_t ep, const std::vector<std::uint64_t>* stored, const std::vector<std::uint64_t>* vllm,
               const std::vector<std::uint64_t>* marlin) {
    Shard s;
    double emb = 0, head = 0, emb_bytes = 0, head_bytes = 0, emb_vllm = 0, head_vllm = 0, emb_marlin = 0,
           head_marlin = 0;
    const bool with_bytes = stored && stored->size() == tensors.size();
    const bool with_vllm = vllm && vllm->size() == tensors.size();
    const bool with_marlin = marlin && marlin->size() == tensors.size();
    std::size_t k = 0;
    const double L = static_cast<double>(std::max<std::uint64_t>(1, m.num_layers));
    const LayerCounts counts(m);
    for (const Tensor& t : tensors) {
        const double split =
            (t.tp_sharded ? static_cast<double>(tp) : 1.0) * (t.expert ? static_cast<double>(ep) : 1.0);
        double n = static_cast<double>(t.elements()) / split;
        // The stored bytes over the layers holding it, as the mean layer's share (scales split with the weight).
        double b = with_bytes ? static_cast<double>((*stored)[k]) / split : 0;
        double bv = with_vllm ? static_cast<double>((*vllm)[k]) / split : 0;
        double bm = with_marlin ? static_cast<double>((*marlin)[k]) / split : 0;
        ++k;
        if (t.in_layers() && t.is_matrix()) s.largest_layer_matrix = std::max(s.largest_layer_matrix, n);
        s.largest_tensor = std::max(s.largest_tensor, n);
        if (t.in_layers()) {
            // the mean layer: MoE and dense layers averaged over the depth
            n *= static_cast<double>(counts[t.layers]) / L;
            s.layer_params += n;
            s.layer_bytes += b / L;
            s.vllm_layer_bytes += bv / L;
            s.marlin_layer_bytes += bm / L;
            // MoE routers stay in full precision under every quantization scheme (and are tiny).
            if (t.is_matrix() && t.name.rfind("router", 0) != 0) s.linear_params += n;
            if (t.is_matrix() && t.expert) s.expert_params += n;
            if (t.is_matrix() && t.group == Group::Attention) s.attention_linear_params += n;
        } else if (t.group == Group::Embedding) {
            emb += n;
            emb_bytes += b;
            emb_vllm += bv;
            emb_marlin += bm;
        } else {
            head += n;  // final norm and lm_head live on the last stage
            head_bytes += b;
            head_vllm += bv;
            head_marlin += bm;
        }
    }
    s.scale = declared_scale(m);
    s.layers = std::ceil(static_cast<double>(m.num_layers) / static_cast<double>(pp));
    // Megatron keeps a copy of tied embeddings on the last stage to compute the logits.
    double tied_copy = m.tie_word_embeddings ? emb : 0;
    s.non_layer_params = pp == 1 ? emb + head : std::max(emb, head + tied_copy);
    double tied_copy_bytes = m.tie_word_embeddings ? emb_bytes : 0;
    s.non_layer_bytes = pp == 1 ? emb_bytes + head_bytes : std::max(emb_bytes, head_bytes + tied_copy_bytes);
    double tied_copy_vllm = m.tie_word_embeddings ? emb_vllm : 0;
    s.vllm_non_layer_bytes = pp == 1 ? emb_vllm + head_vllm : std::max(emb_vllm, head_vllm + tied_copy_vllm);
    double tied_copy_marlin = m.tie_word_embeddings ? emb_marlin : 0;
    s.marlin_non_layer_bytes =
        pp == 1 ? emb_marlin + head_marlin : std::max(emb_marlin, head_marlin + tied_copy_marlin);
    s.linear_params *= s.layers;
    s.expert_params *= s.layers;
    s.attention_linear_params *= s.layers;
    return s;
}

ModelCache& cache_of(const Scenario& s) {
    auto print = fingerprint(s.model);
    if (!s.cache || !std::equal(print.begin(), print.end(), s.cache->fingerprint.begin())) {
        auto c = std::make_shared<ModelCache>();
        c->fingerprint = print;
        c->tensors = list_tensors(s.model);
        // The stored bytes per tensor matter only for a quantized checkpoint held in its own layout
        // (inference.cpp stored_weights); an unquantized one is its parameters x its dtype.
        if (s.model.quantization) {
            c->stored = checkpoint_tensor_bytes(s.model, c->tensors);
            c->vllm = checkpoint_tensor_bytes(s.model, c->tensors, Residency::Vllm);
            c->marlin = checkpoint_tensor_bytes(s.model, c->tensors, Residency::Marlin);
        }
        s.cache = std::move(c);
    }
    return *s.cache;
}

const std::vector<Tensor>& tensors_of(const Scenario& s) { return cache_of(s).tensors; }

Shard shard_of(const Scenario& s, std::uint64_t tp, std::uint64_t pp, std::uint64_t ep) {
    ModelCache& c = cache_of(s);
    auto key = pack_layout(tp, pp, ep);
    auto it = c.shards.find(key);
    if (it != c.shards.end()) return it->second;
    return c.shards[key] = shard_of(s.model, c.tensors, tp, pp, ep, &c.stored, &c.vllm, &c.marlin);
}

}  // namespace gpumem::detail
