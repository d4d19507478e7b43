// What every evaluation of one model shares, computed once: the tensor list and, per layout, the
// shard and the optimizer-state totals (memory.h, ModelCache). Memoised, never approximated: a
// cached figure is the one the uncached code computes.

#include <algorithm>
#include <stdexcept>

#include "memory/memory.h"

namespace gpumem::detail {

namespace {

std::array<std::uint64_t, 13> fingerprint(const ModelSpec& m) {
    return {m.num_layers, m.hidden_size, m.vocab_size, m.num_attention_heads, m.num_key_value_heads, m.head_dim,
            m.intermediate_size, m.num_experts, m.moe_intermediate_size, m.shared_expert_intermediate_size,
            m.kv_lora_rank, (m.tie_word_embeddings ? 1u : 0u) + (m.declared_parameters ? 2u : 0u),
            m.declared_parameters.value_or(0)};
}

}  // namespace

ModelCache& cache_of(const Scenario& s) {
    auto print = fingerprint(s.model);
    if (!s.cache || !std::equal(print.begin(), print.end(), s.cache->fingerprint.begin())) {
        auto c = std::make_shared<ModelCache>();
        c->fingerprint = print;
        c->tensors = list_tensors(s.model);
        s.cache = std::move(c);
    }
    return *s.cache;
}

const std::vector<Tensor>& tensors_of(const Scenario& s) {
    return cache_of(s).tensors;
}

Shard shard_of(const Scenario& s, std::uint64_t tp, std::uint64_t pp, std::uint64_t ep) {
    ModelCache& c = cache_of(s);
    auto key = pack_layout(tp, pp, ep);
    auto it = c.shards.find(key);
    if (it != c.shards.end()) return it->second;
    return c.shards[key] = shard_of(s.model, c.tensors, tp, pp, ep);
}

}  // namespace gpumem::detail
