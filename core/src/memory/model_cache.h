// What every evaluation of one model shares, computed once per model and kept with the scenario
// (Scenario::cache): its tensor list and, per layout, its shard and optimizer-state totals. The
// figures are the same as computing them afresh (memoised, not approximated). The memory model and
// the planner read it; it knows nothing of them.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "model/model.h"
#include "scenario/scenario.h"

namespace gpumem::detail {

// Weights of one GPU's shard: the heaviest pipeline stage, tensor- and expert-parallel splits applied.
struct Shard {
    double layers = 0;                   // decoder layers on the heaviest stage
    double layer_params = 0;             // parameters of one layer on one GPU
    double non_layer_params = 0;         // embeddings / head / final norm on the heaviest stage, one GPU
    double linear_params = 0;            // of those, in the layers' linear (quantizable) matrices, routers excepted
    double expert_params = 0;            // of those, inside routed experts
    double attention_linear_params = 0;  // of those, attention's q/k/v/o matrices
    double largest_layer_matrix = 0;     // the largest weight matrix in a layer, one GPU's part
    double largest_tensor = 0;           // the largest tensor of the model, one GPU's part
    double layer_bytes = 0;      // the checkpoint's stored bytes of one layer on one GPU (checkpoint_tensor_bytes)
    double non_layer_bytes = 0;  // and of embeddings / head / final norm on the heaviest stage
    double vllm_layer_bytes = 0, vllm_non_layer_bytes = 0;      // the same once vLLM has loaded them (Residency::Vllm)
    double marlin_layer_bytes = 0, marlin_non_layer_bytes = 0;  // as SGLang and TGI load them (Residency::Marlin)
    double scale = 1;  // a model known only by size: its declared total over its guessed shape's (declared_scale)
    double total() const { return layers * layer_params + non_layer_params; }
    // The parameters one GPU holds: total(), scaled to the declared size for a model known only by it.
    double params() const { return total() * scale; }
    // The bytes one GPU holds with every tensor as the checkpoint stores it (0 without `stored`, which
    // the cache computes for quantized checkpoints only).
    double checkpoint_bytes() const { return layers * layer_bytes + non_layer_bytes; }
    double vllm_bytes() const { return layers * vllm_layer_bytes + vllm_non_layer_bytes; }
    double marlin_bytes() const { return layers * marlin_layer_bytes + marlin_non_layer_bytes; }
};
// `stored`, `vllm` and `marlin`, when given, hold checkpoint_tensor_bytes(model, tensors) for the checkpoint,
// for vLLM's residency and for Marlin's (SGLang, TGI).
Shard shard_of(const ModelSpec& model, const std::vector<Tensor>& tensors, std::uint64_t tp, std::uint64_t pp,
               std::uint64_t ep, const std::vector<std::uint64_t>* stored = nullptr,
               const std::vector<std::uint64_t>* vllm = nullptr, const std::vector<std::uint64_t>* marlin = nullptr);

// layer_count() for each Layers kind, counted once (it walks the per-layer MoE flags). Every kind
// is filled in a loop, so a kind added to Layers is counted without touching this.
struct LayerCounts {
    explicit LayerCounts(const ModelSpec& m) {
        for (std::size_t i = 0; i < kLayerKinds; ++i) n[i] = layer_count(m, static_cast<Layers>(i));
    }
    std::uint64_t operator[](Layers l) const { return n.at(static_cast<std::size_t>(l)); }
    std::array<std::uint64_t, kLayerKinds> n{};
};
// Two tensors whose optimizer state and shard share are the same (names aside).
inline bool same_shape(const Tensor& a, const Tensor& b) {
    return a.rows == b.rows && a.cols == b.cols && a.layers == b.layers && a.tp_sharded == b.tp_sharded &&
           a.expert == b.expert;
}

// The scenario's tensor list and shard, from its cache.
const std::vector<Tensor>& tensors_of(const Scenario& s);
Shard shard_of(const Scenario& s, std::uint64_t tp, std::uint64_t pp, std::uint64_t ep);
// {elements, optimizer state bytes} of the whole model sharded by tp (and experts by ep), as
// `compute` returns them; memoised by (tp, ep, optimizer, state dtype).
template <typename Fn>
std::pair<double, double> optimizer_totals(const Scenario& s, std::uint64_t tp, std::uint64_t ep, double state_dtype,
                                           Fn compute);

struct ModelCache {
    std::array<std::uint64_t, 14> fingerprint{};  // the model's shape it was built for
    std::vector<Tensor> tensors;
    std::vector<std::uint64_t> stored;                // checkpoint_tensor_bytes(model, tensors); quantized only
    std::vector<std::uint64_t> vllm;                  // the same, Residency::Vllm
    std::vector<std::uint64_t> marlin;                // the same, Residency::Marlin
    std::unordered_map<std::uint64_t, Shard> shards;  // by packed (tp, pp, ep)
    std::optional<Optimizer> optimizer;               // the optimizer and state dtype `states` is for
    double state_dtype = -1;
    std::unordered_map<std::uint64_t, std::pair<double, double>> states;  // by packed (tp, ep)
};
// The scenario's cache, built on first use (and rebuilt when a copy's model no longer matches it).
ModelCache& cache_of(const Scenario& s);
// Layout sizes are at most 2^20 (scenario.cpp), so three fit in 63 bits.
inline std::uint64_t pack_layout(std::uint64_t a, std::uint64_t b, std::uint64_t c) {
    return (a << 42) | (b << 21) | c;
}

template <typename Fn>
std::pair<double, double> optimizer_totals(const Scenario& s, std::uint64_t tp, std::uint64_t ep, double state_dtype,
                                           Fn compute) {
    ModelCache& c = cache_of(s);
    if (c.optimizer != s.training.optimizer || c.state_dtype != state_dtype) {
        c.states.clear();
        c.optimizer = s.training.optimizer;
        c.state_dtype = state_dtype;
    }
    auto key = pack_layout(tp, 0, ep);
    auto it = c.states.find(key);
    if (it != c.states.end()) return it->second;
    return c.states[key] = compute();
}

}  // namespace gpumem::detail
