// The memory model: per-GPU bytes over the phases of a step, for the heaviest rank.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "model.h"
#include "scenario.h"

namespace gpumem::detail {

// Component names, in display order. Their sum at the peak is the device total.
inline const std::vector<std::string>& component_names() {
    static const std::vector<std::string> names = {"weights", "gradients", "optimizer_states", "activations",
                                                   "logits", "kv_cache", "temporaries", "overheads"};
    return names;
}

struct Phase {
    std::string name;                       // "forward", "loss", "backward", "optimizer_step", "prefill", ...
    std::map<std::string, double> bytes;    // allocated bytes by component at this phase's high point
    double allocated() const;
};

struct Breakdown {
    std::vector<Phase> timeline;
    double outside_allocator = 0;           // on the GPU but not in PyTorch's allocator (paged optimizer state)
    double host_bytes = 0;                  // CPU RAM for offloaded state
    double nvme_bytes = 0;                  // NVMe for offloaded state
    json assumptions = json::object();      // the figures behind each component, for people
    json serving;                           // serving capacity (engines that preallocate), or null
    double claimed = 0;                     // an engine that claims a fixed share of the card (vLLM): the device total
    bool engine_fits = true;                // false when the engine cannot hold the requested load
    std::vector<std::string> warnings;
};

// Weights of one GPU's shard: the heaviest pipeline stage, tensor- and expert-parallel splits applied.
struct Shard {
    double layers = 0;           // decoder layers on the heaviest stage
    double layer_params = 0;     // parameters of one layer on one GPU
    double non_layer_params = 0; // embeddings / head / final norm on the heaviest stage, one GPU
    double linear_params = 0;    // of those, in the layers' linear (quantizable) matrices, routers excepted
    double expert_params = 0;    // of those, inside routed experts
    double attention_linear_params = 0;  // of those, attention's q/k/v/o matrices
    double total() const { return layers * layer_params + non_layer_params; }
};
Shard shard_of(const ModelSpec& model, std::uint64_t tp, std::uint64_t pp, std::uint64_t ep);

Breakdown training_memory(const Scenario& s);
Breakdown inference_memory(const Scenario& s);

}  // namespace gpumem::detail
