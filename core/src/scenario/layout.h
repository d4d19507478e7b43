// A layout: the parallel sizes, batch and length a search varies on a scenario that was read once.
// Used by the step-time model (throughput/step_time.h) and the searches (search/search.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "scenario/scenario.h"

namespace gpumem::detail {

// What the planner and the max-fit solvers vary. Applied to a read scenario by apply_layout().
struct Layout {
    std::uint64_t dp = 1, tp = 1, pp = 1, cp = 1, ep = 1;
    bool sequence_parallel = false;
    std::uint64_t batch_size = 1;                // training: micro-batch per GPU; inference: concurrent sequences
    std::uint64_t grad_accum = 1;                // training only
    std::uint64_t seq_len = 0;                   // training.seq_len / inference.context_len (0: as read)
    std::optional<Checkpointing> checkpointing;  // training.activation_checkpointing (none: as read)
};

// Sets the layout's fields (and hardware.num_gpus = dp x tp x pp x cp) on a read scenario. Fields
// the reader resolves from others (precision from the engine, attention from the inference engine)
// are not touched: a search reads one scenario per engine for that.
void apply_layout(Scenario& s, const Layout& l);

// The scenario's own layout, as read.
Layout layout_of(const Scenario& s);

// The checks read_scenario() makes of a layout against the model (heads and kv heads by TP, layers
// by PP, experts by EP, EP inside DP x CP), plus the planner's stricter ones (layers divisible by
// PP, sequence divisible by CP). An empty string: allowed; otherwise why not.
std::string layout_problem(const ModelSpec& m, const Layout& l, std::uint64_t seq_len);

}  // namespace gpumem::detail
