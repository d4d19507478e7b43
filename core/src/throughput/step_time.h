// The step-time model (step_time.cpp has its derivation): the seconds of one training step or one
// decode step of a scenario on a layout, from the memory model's figures and the GPU's catalogue
// figures. Below it: the memory model; above it: the throughput object and the searches.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "memory/memory.h"
#include "scenario/layout.h"

namespace gpumem::detail {

// One named constant of the model, with its unit and where its value comes from.
struct Constant {
    const char* name;
    double value;
    const char* unit;
    std::string about;
};

struct Constants {
    std::vector<Constant> list;
    double get(const char* name) const;
};

// The constants for a GPU of the catalogue (its step_time figures; H100-80GB's, with a warning,
// for a card without them).
Constants default_constants(const std::string& gpu, std::vector<std::string>& warnings);

// The engine and sharding of a training step.
struct EngineVariant {
    EngineType type;
    std::uint64_t zero;
    FsdpSharding fsdp;
    Offload offload_optimizer;
    Offload offload_param;
};

// The model's figures the step-time model needs.
struct ModelFigures {
    double n_compute = 0;  // parameters a token's matmuls use (active, less the input embedding)
    double attn = 0;       // L x H x Q
    double layers = 0, hidden = 0, kv_dim = 0, moe_layers = 0, top_k = 0;
};
ModelFigures model_figures(const Scenario& s);

// The parts of one step, in seconds.
struct StepTime {
    double compute = 0, recompute = 0, tp_comm = 0, pp_bubble = 0, pp_p2p = 0, dp_comm = 0, zero3_gather = 0,
           cp_comm = 0, ep_comm = 0, offload = 0, memory_bound = 0, total = 0;
    double model_flops = 0;  // per step, whole cluster (for the reported MFU)
};

// The cluster's figures in SI units.
struct Cluster {
    double gpus = 1, per_node = 8;
    double peak = 0, mfu = 0, hbm = 0, intra = 0, inter = 0, pcie = 0, host_mem = 0, cpu_opt_bytes = 0, latency = 0;
};
Cluster cluster_of(std::uint64_t num_gpus, std::uint64_t gpus_per_node, const Constants& c);

// One optimizer step of `global_batch` sequences on layout `l` with engine `v`; `f` is evaluate(s)
// with the layout applied.
StepTime training_step(const Scenario& s, const Figures& f, const Layout& l, const EngineVariant& v,
                       const ModelFigures& mf, const Cluster& k, double global_batch);
// One decode step of the layout's batch; `max_sequences`: the KV pool's sequences at the context
// for an engine that preallocates one (0 otherwise).
StepTime inference_step(const Scenario& s, const Figures& f, const Layout& l, const ModelFigures& mf, const Cluster& k,
                        double max_sequences);
json step_json(const StepTime& t, bool training);

// The step-time model applied to a scenario's own layout, for the estimate's throughput: one
// optimizer step of dp x batch x grad accumulation sequences (training) or one decode step of the
// batch (inference), with the GPU's catalogue figures.
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
// `f` is evaluate(s); `max_sequences` as for inference_step; `hbm_efficiency` scales the
// catalogue's HBM bandwidth (the share of it a decode step reaches).
StepFigures scenario_step(const Scenario& s, const Figures& f, double max_sequences, double hbm_efficiency = 1);

}  // namespace gpumem::detail
