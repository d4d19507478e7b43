// The planner's fast path: a scenario read once, then evaluated for many layouts through the same
// memory model (evaluate() in estimate.cpp) with the notes for people off. See planner.cpp.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "memory/memory.h"

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
// are not touched: the planner reads one scenario per engine for that.
void apply_layout(Scenario& s, const Layout& l);

// The checks read_scenario() makes of a layout against the model (heads and kv heads by TP, layers
// by PP, experts by EP, EP inside DP x CP), plus the planner's stricter ones (layers divisible by
// PP, sequence divisible by CP). An empty string: allowed; otherwise why not.
std::string layout_problem(const ModelSpec& m, const Layout& l, std::uint64_t seq_len);

// The step-time model (planner.cpp, [SECTION] The step-time model) applied to a scenario's own
// layout, for the estimate's throughput: one optimizer step of dp x batch x grad accumulation
// sequences (training) or one decode step of the batch (inference), with the GPU's catalogue figures.
struct StepFigures {
    double step_s = 0;           // seconds of that step
    double tokens = 0;           // tokens it trains on (training) or generates (inference), all replicas
    double model_flops = 0;      // its model FLOPs, whole cluster
    double gpus = 1;             // GPUs of the cluster
    double peak_flops = 0;       // dense BF16 FLOP/s of one GPU (presets/gpus.json step_time.peak_tflops)
    double hbm_bytes_per_s = 0;  // one GPU's memory bandwidth (step_time.hbm_gbps)
    double mfu = 0;              // the share of the peak the compute kernels are taken to reach
    double n_compute = 0;        // parameters a token's matmuls use (active, less the input embedding)
    double attn = 0;             // layers x heads x head dim: the attention term's factor
    std::string gpu_source;      // where the GPU's figures come from
    std::vector<std::string> warnings;
};
// `f` is evaluate(s); `max_sequences` the KV pool's sequences at the context for an engine that
// preallocates one (0 otherwise): a decode step reads only the batch's share of the pool;
// `hbm_efficiency` scales the catalogue's HBM bandwidth (the share of it a decode step reaches).
StepFigures scenario_step(const Scenario& s, const Figures& f, double max_sequences, double hbm_efficiency = 1);

}  // namespace gpumem::detail
