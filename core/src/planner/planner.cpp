// The max-fit solvers and the planner (gpumem.h, [SECTION] Max-fit solvers and the planner).
//
// Both evaluate one scenario many times. The scenario is read once (once per engine, for the
// planner, since the reader resolves the precision recipe from the engine); each candidate then
// sets its layout on that read scenario (apply_layout) and runs the normal evaluation (evaluate() in
// estimate.cpp) with Scenario::details off, which leaves out the notes for people and allocates
// nothing. The memory figures are therefore the estimate's own; tests/core/planner_test.cpp checks
// them against estimate() byte for byte.
//
// [SECTION] The step-time model
// -----------------------------
// A plan row's step time is one optimizer step of `global_batch_size` sequences, on the critical
// path of one GPU. Every constant is named, overridable under plan.step_time, and returned in the
// result's "constants" with its source.
//
//   compute      model FLOPs / (GPUs x peak x mfu). Model FLOPs per token: 6 N + 12 L H Q s for
//                training (Kaplan et al. 2020 for 6N; the attention term is PaLM's, Chowdhery et al.
//                2022, appendix B, also torchtitan's); 4 N + 12 L H Q s for LoRA / QLoRA (no weight
//                gradients for the frozen base: forward 2N, activation gradients 2N; Hu et al. 2021
//                §4.2); (2 + 4 f) N for frozen (partial) training where f of the parameters train
//                (+ 2 (1 - f) N when a module below the frozen layers trains too); 2 N + 4 L H Q c
//                for one decoded token. N: the
//                parameters one token uses (MoE: active), less the input embedding (a lookup);
//                L layers, H heads of Q dims, s the sequence length, c the context.
//   recompute    full activation checkpointing runs the forward again: + (2 N + 4 L H Q s) per token
//                (8N instead of 6N, Korthikanti et al. 2022 §5); selective recomputes the attention
//                core only: + 4 L H Q s per token.
//   tp_comm      Megatron tensor parallelism: per layer and micro-batch 2 all-reduces forward and 2
//                backward (+2 when the forward is recomputed) of b x s/cp x h activations in the
//                compute dtype (Shoeybi et al. 2019, fig. 4; sequence parallelism turns each into an
//                all-gather plus a reduce-scatter of the same volume). Ring all-reduce:
//                2 (t-1)/t x bytes / bandwidth. TP stays inside a node (NVLink); not overlapped.
//   pp_bubble    1F1B pipeline with m = gradient_accumulation_steps micro-batches: the bubble is
//                (p-1)/(m+p-1) of the step (Narayanan et al. 2021, §2.2), i.e. (p-1)/m x the busy time.
//   pp_p2p       each micro-batch crosses each stage boundary twice (activations forward, their
//                gradients backward), b x s/cp x h x 2 bytes each way.
//   dp_comm      gradients of the trainable parameters this GPU holds, reduced over DP x CP ranks:
//                an all-reduce (DDP, ZeRO-1/2, Megatron's distributed optimizer: reduce-scatter +
//                all-gather, the same volume) once per step; ZeRO-3 / FSDP full_shard reduce-scatter
//                per micro-batch. Overlapped with the backward pass (2/3 of the compute: PyTorch DDP's
//                bucketing, Li et al. 2020): only what exceeds it is exposed.
//   zero3_gather ZeRO-3 / FSDP full_shard gather the parameters twice per micro-batch (forward and
//                backward: 1.5x DDP's volume, Rajbhandari et al. 2020 §7); hybrid_shard inside a node,
//                then an all-reduce of the gradient shard across nodes. Prefetched: overlapped with
//                the whole forward and backward, only the excess is exposed.
//   cp_comm      ring attention passes each rank's K and V round the CP ring forward, and K, V and
//                their gradients backward: 3 x (cp-1) x b x s/cp x kv dims x 2 bytes per layer, less
//                what hides behind the attention core's compute (Liu et al. 2023, Ring Attention).
//   ep_comm      MoE all-to-all: dispatch and combine forward and backward, 4 x b x s/cp x top_k x h x
//                2 bytes x (ep-1)/ep per MoE layer and micro-batch; not overlapped (Lepikhin et al.
//                2020, GShard: dispatch and combine all-to-alls).
//   offload      ZeRO-Offload: fp16 gradients down and fp16 parameters up over PCIe once per step,
//                plus the CPU optimizer, memory-bound at cpu_optimizer_bytes_per_param per parameter
//                over the node's host memory bandwidth shared by its GPUs (Ren et al. 2021).
//                Parameter offload streams the parameter shard up twice per micro-batch.
//   Bandwidths: a group whose ranks fit in one node uses intra_node_gbps (NVLink), else
//   inter_node_gbps (the per-GPU network share). Rank order is Megatron's: TP innermost, then CP,
//   then DP (EP drawn from DP), PP outermost. Every collective also pays collective_latency_us.
//
// Inference rows: one decode step of `batch_size` sequences per replica (DP = replicas): each
// pipeline stage in turn reads its weights and the batch's KV cache from HBM or computes, whichever
// is slower (roofline), plus 2 all-reduces per layer of b x h activations under TP. Prefill is not
// modelled. tokens_per_s = replicas x batch / step.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <map>

#include "planner/planner.h"
#include "memory/model_cache.h"

namespace gpumem::detail {

void apply_layout(Scenario& s, const Layout& l) {
    s.parallel.dp = l.dp;
    s.parallel.tp = l.tp;
    s.parallel.pp = l.pp;
    s.parallel.cp = l.cp;
    s.parallel.ep = l.ep;
    s.parallel.sequence_parallel = l.sequence_parallel;
    s.hardware.num_gpus = s.parallel.world();
    if (s.mode == Mode::Training) {
        s.training.batch_size = l.batch_size;
        s.training.gradient_accumulation_steps = l.grad_accum;
        if (l.seq_len) s.training.seq_len = l.seq_len;
        if (l.checkpointing) s.training.activation_checkpointing = *l.checkpointing;
        // As the reader resolves it (scenario.cpp): the step's micro-batches, at least one per stage.
        if (!s.parallel.pipeline_microbatches_given) s.parallel.pipeline_microbatches = std::max(l.grad_accum, l.pp);
    } else {
        s.inference.batch_size = l.batch_size;
        if (l.seq_len) s.inference.context_len = l.seq_len;
    }
}

std::string layout_problem(const ModelSpec& m, const Layout& l, std::uint64_t seq_len) {
    if (m.num_attention_heads && m.num_attention_heads % l.tp)
        return "tensor_parallel_size must divide the attention heads";
    if (m.num_key_value_heads && l.tp > 1 && m.num_key_value_heads % l.tp && l.tp % m.num_key_value_heads)
        return "tensor_parallel_size must divide the kv heads or be a multiple of them";
    if (m.num_layers && m.num_layers % l.pp) return "pipeline_parallel_size must divide the layers";
    if (l.ep > 1 && (m.num_experts == 0 || m.num_experts % l.ep)) return "expert_parallel_size must divide the experts";
    if (l.ep > 1 && (l.dp * l.cp) % l.ep) return "expert_parallel_size must divide data x context parallel sizes";
    if (l.cp > 1 && seq_len % l.cp) return "context_parallel_size must divide the sequence length";
    return "";
}

}  // namespace gpumem::detail

namespace gpumem {

using detail::json;
using detail::Layout;
using detail::Mode;
using detail::Scenario;
using detail::Checkpointing;
using detail::EngineType;
using detail::FsdpSharding;
using detail::InferenceEngine;
using detail::Method;
using detail::Offload;
using detail::Precision;
using detail::name;

namespace {

std::uint64_t round_bytes(double b) {
    return b <= 0 || !std::isfinite(b) ? 0 : static_cast<std::uint64_t>(std::llround(std::min(b, 1.8e19)));
}

// The scenario as read, with the notes off and the model's cache shared: the planner's evaluator.
struct Prepared {
    Scenario s;
    Layout as_read;  // the scenario's own layout
};

Layout layout_of(const Scenario& s) {
    Layout l;
    l.dp = s.parallel.dp, l.tp = s.parallel.tp, l.pp = s.parallel.pp, l.cp = s.parallel.cp, l.ep = s.parallel.ep;
    l.sequence_parallel = s.parallel.sequence_parallel;
    if (s.mode == Mode::Training) {
        l.batch_size = s.training.batch_size;
        l.grad_accum = s.training.gradient_accumulation_steps;
        l.seq_len = s.training.seq_len;
    } else {
        l.batch_size = s.inference.batch_size;
        l.seq_len = s.inference.context_len;
    }
    return l;
}

//-----------------------------------------------------------------------------
// Max-fit solvers
//-----------------------------------------------------------------------------

struct Solver {
    const char* field;      // scenario field
    std::uint64_t maximum;  // the reader's upper limit for it (scenario.cpp)
    bool is_length;         // sets Layout::seq_len (else Layout::batch_size)
};

// The largest value in [1, maximum] at which the scenario fits, the boundary checked both sides.
json solve(Scenario& s, const Layout& base, const Solver& solver, int& evaluations) {
    auto device_at = [&](std::uint64_t v, bool& fits) {
        Layout l = base;
        (solver.is_length ? l.seq_len : l.batch_size) = v;
        detail::apply_layout(s, l);
        detail::Figures f = detail::evaluate(s);
        ++evaluations;
        fits = f.fits;
        return f.device;
    };
    bool fits = false;
    double device_one = device_at(1, fits);
    json out = {{"field", solver.field}, {"field_maximum", solver.maximum}};
    if (!fits) {
        out["value"] = 0;
        out["device_total_bytes"] = nullptr;
        out["next_device_total_bytes"] = round_bytes(device_one);
        out["limited_by"] = "does_not_fit";
        detail::apply_layout(s, base);
        return out;
    }
    // Memory grows with every size field: double until it no longer fits, then bisect.
    std::uint64_t lo = 1, hi = 2;
    while (hi <= solver.maximum && (device_at(hi, fits), fits)) {
        lo = hi;
        hi *= 2;
    }
    hi = std::min(hi, solver.maximum + 1);
    while (hi - lo > 1) {
        std::uint64_t mid = lo + (hi - lo) / 2;
        device_at(mid, fits);
        (fits ? lo : hi) = mid;
    }
    double at = device_at(lo, fits);
    out["value"] = lo;
    out["device_total_bytes"] = round_bytes(at);
    if (lo >= solver.maximum) {
        out["next_device_total_bytes"] = nullptr;
        out["limited_by"] = "field_maximum";
    } else {
        double next = device_at(lo + 1, fits);
        out["next_device_total_bytes"] = round_bytes(next);
        out["limited_by"] = "memory";
    }
    detail::apply_layout(s, base);
    return out;
}

//-----------------------------------------------------------------------------
// Step-time constants
//-----------------------------------------------------------------------------

struct Constant {
    const char* name;
    double value;
    const char* unit;
    std::string about;
};

struct Constants {
    std::vector<Constant> list;
    double get(const char* name) const {
        for (const Constant& c : list)
            if (std::strcmp(c.name, name) == 0) return c.value;
        return 0;
    }
};

// The GPU's speed figures come from its catalogue record (presets/gpus.json, "step_time": dense
// BF16 peak, memory and link bandwidths per direction, with the datasheets they come from). A
// figure no datasheet gives is listed under "unsourced" and named in a warning.
Constants default_constants(const std::string& gpu, std::vector<std::string>& warnings) {
    static const char* const kFigures[] = {"peak_tflops", "hbm_gbps", "intra_node_gbps", "inter_node_gbps",
                                           "pcie_gbps"};
    auto record = detail::find_gpu(gpu);
    auto has_figures = [](const std::optional<json>& g) {
        return g && g->contains("step_time") &&
               std::all_of(std::begin(kFigures), std::end(kFigures), [&](const char* k) {
                   return (*g)["step_time"].contains(k) && (*g)["step_time"][k].is_number();
               });
    };
    if (!has_figures(record)) {
        warnings.push_back(
            "no performance figures for GPU " + gpu +
            ": step times use H100-80GB's (override plan.step_time.peak_tflops, hbm_gbps, intra_node_gbps, "
            "inter_node_gbps, pcie_gbps)");
        record = detail::find_gpu("H100-80GB");
    }
    const json& perf = (*record)["step_time"];
    std::string src = (*record)["id"].get<std::string>() + ": " + perf.value("source", "");
    if (perf.contains("unsourced") && !perf["unsourced"].empty()) {
        std::string names;
        for (const json& n : perf["unsourced"]) names += (names.empty() ? "" : ", ") + n.get<std::string>();
        warnings.push_back("GPU " + (*record)["id"].get<std::string>() + ": no datasheet gives " + names + " (" +
                           perf.value("source", "") + "); override it under plan.step_time");
    }
    auto figure = [&](const char* name) { return perf[name].get<double>(); };
    return {{
        {"mfu", 0.45, "fraction of peak",
         "share of the peak the compute kernels reach, communication modelled apart: Llama 3 (Dubey et al. 2024, "
         "table 4) reports 38-43% BF16 MFU on H100 with communication included; Megatron-LM (Narayanan et al. 2021) "
         "52% on A100"},
        {"peak_tflops", figure("peak_tflops"), "TFLOPS (dense BF16)", src},
        {"hbm_gbps", figure("hbm_gbps"), "GB/s", src},
        {"intra_node_gbps", figure("intra_node_gbps"), "GB/s per direction", src},
        {"inter_node_gbps", figure("inter_node_gbps"), "GB/s per GPU per direction", src},
        {"pcie_gbps", figure("pcie_gbps"), "GB/s per direction", src},
        {"host_memory_gbps", 300, "GB/s per node",
         "two sockets x 8 channels of DDR5-4800 = 614 GB/s peak, about half of it sustained by a CPU optimizer"},
        {"cpu_optimizer_bytes_per_param", 28, "bytes",
         "CPU AdamW in fp32: reads parameter, gradient, m and v (16 B) and writes parameter, m and v (12 B)"},
        {"collective_latency_us", 10, "microseconds",
         "fixed cost of one NCCL collective: the order of nccl-tests' small-message all_reduce times on NVLink nodes"},
    }};
}

//-----------------------------------------------------------------------------
// The plan request
//-----------------------------------------------------------------------------

struct PlanRequest {
    std::uint64_t num_gpus = 0, gpus_per_node = 0, global_batch = 0, top = 10;
    double host_ram_bytes = 0;  // per node; 0: not limited
    std::string gpu;
    bool gpu_given = false;  // plan.gpu named (else the scenario's hardware, as read)
    Constants constants;
    std::vector<std::string> defaults_applied, warnings;
};

// Engines and sharding the training search tries: each read once.
struct EngineVariant {
    EngineType type;
    std::uint64_t zero;
    FsdpSharding fsdp;
    Offload offload_optimizer;
    Offload offload_param;
};
const EngineVariant kEngineVariants[] = {
    {EngineType::None, 0, FsdpSharding::FullShard, Offload::None, Offload::None},  // one GPU of data parallelism
    {EngineType::Ddp, 0, FsdpSharding::FullShard, Offload::None, Offload::None},
    {EngineType::DeepSpeed, 1, FsdpSharding::FullShard, Offload::None, Offload::None},
    {EngineType::DeepSpeed, 2, FsdpSharding::FullShard, Offload::None, Offload::None},
    {EngineType::DeepSpeed, 3, FsdpSharding::FullShard, Offload::None, Offload::None},
    {EngineType::DeepSpeed, 2, FsdpSharding::FullShard, Offload::Cpu, Offload::None},
    {EngineType::DeepSpeed, 3, FsdpSharding::FullShard, Offload::Cpu, Offload::None},
    {EngineType::DeepSpeed, 3, FsdpSharding::FullShard, Offload::Cpu, Offload::Cpu},
    {EngineType::Fsdp, 0, FsdpSharding::FullShard, Offload::None, Offload::None},
    {EngineType::Fsdp, 0, FsdpSharding::ShardGradOp, Offload::None, Offload::None},
    {EngineType::Fsdp, 0, FsdpSharding::HybridShard, Offload::None, Offload::None},
    {EngineType::Fsdp, 0, FsdpSharding::FullShard, Offload::Cpu,
     Offload::Cpu},  // CPUOffload(offload_params=True): both
    {EngineType::Megatron, 0, FsdpSharding::FullShard, Offload::None,
     Offload::None},  // distributed optimizer; the only one with TP/PP/CP/EP
};
const Checkpointing kCheckpointing[] = {Checkpointing::None, Checkpointing::Selective, Checkpointing::Full};

// The scenario's engine section of a variant.
json engine_json(const EngineVariant& v) {
    return {{"type", name(v.type)},
            {"zero_stage", v.zero},
            {"fsdp_sharding", name(v.fsdp)},
            {"offload_optimizer", name(v.offload_optimizer)},
            {"offload_param", name(v.offload_param)}};
}

// The divisors of n up to cap, ascending: pairs (d, n / d) for d up to sqrt(n), so a global batch
// of 2^40 sequences costs 2^20 steps, not 2^40.
std::vector<std::uint64_t> divisors(std::uint64_t n, std::uint64_t cap) {
    std::vector<std::uint64_t> low, high;
    for (std::uint64_t d = 1; d <= n / d && d <= cap; ++d) {
        if (n % d) continue;
        low.push_back(d);
        if (d != n / d && n / d <= cap) high.push_back(n / d);
    }
    low.insert(low.end(), high.rbegin(), high.rend());
    return low;
}

// The model's figures the step-time model needs.
struct ModelFigures {
    double n_compute = 0;  // parameters a token's matmuls use (active, less the input embedding)
    double attn = 0;       // L x H x Q
    double layers = 0, hidden = 0, kv_dim = 0, moe_layers = 0, top_k = 0;
};

ModelFigures model_figures(const Scenario& s) {
    const ModelSpec& m = s.model;
    ModelFigures f;
    double active = static_cast<double>(s.params.active);
    double embedding = static_cast<double>(s.params.embedding);
    f.n_compute = m.tie_word_embeddings ? active : std::max(0.0, active - embedding);
    double q =
        m.kv_lora_rank ? static_cast<double>(m.qk_nope_head_dim + m.qk_rope_head_dim) : static_cast<double>(m.head_dim);
    f.layers = static_cast<double>(m.num_layers);
    f.attn = f.layers * static_cast<double>(m.num_attention_heads) * q;
    f.hidden = static_cast<double>(m.hidden_size);
    f.kv_dim = m.kv_lora_rank ? static_cast<double>(m.num_attention_heads) * (q + static_cast<double>(m.v_head_dim)) / 2
                              : static_cast<double>(m.num_key_value_heads * m.head_dim);
    f.moe_layers = m.num_experts ? static_cast<double>(detail::layer_count(m, detail::Layers::Moe)) : 0;
    f.top_k = static_cast<double>(m.num_experts_per_tok);
    return f;
}

struct StepTime {
    double compute = 0, recompute = 0, tp_comm = 0, pp_bubble = 0, pp_p2p = 0, dp_comm = 0, zero3_gather = 0,
           cp_comm = 0, ep_comm = 0, offload = 0, memory_bound = 0, total = 0;
    double model_flops = 0;  // per step, whole cluster (for the reported MFU)
};

struct Cluster {
    double gpus = 1, per_node = 8;
    double peak = 0, mfu = 0, hbm = 0, intra = 0, inter = 0, pcie = 0, host_mem = 0, cpu_opt_bytes = 0, latency = 0;
};

Cluster cluster_of(const PlanRequest& r) {
    const Constants& c = r.constants;
    Cluster k;
    k.gpus = static_cast<double>(r.num_gpus);
    k.per_node = static_cast<double>(r.gpus_per_node);
    k.peak = c.get("peak_tflops") * 1e12;
    k.mfu = c.get("mfu");
    k.hbm = c.get("hbm_gbps") * 1e9;
    k.intra = c.get("intra_node_gbps") * 1e9;
    k.inter = c.get("inter_node_gbps") * 1e9;
    k.pcie = c.get("pcie_gbps") * 1e9;
    k.host_mem = c.get("host_memory_gbps") * 1e9;
    k.cpu_opt_bytes = c.get("cpu_optimizer_bytes_per_param");
    k.latency = c.get("collective_latency_us") * 1e-6;
    return k;
}

// A group of n ranks `stride` apart: inside one node, or across nodes.
double bandwidth(const Cluster& k, double n, double stride) { return n * stride <= k.per_node ? k.intra : k.inter; }
double all_reduce(const Cluster& k, double bytes, double n, double bw) {
    return n > 1 ? k.latency + 2 * (n - 1) / n * bytes / bw : 0;
}
double gather_or_scatter(const Cluster& k, double bytes, double n, double bw) {
    return n > 1 ? k.latency + (n - 1) / n * bytes / bw : 0;
}

StepTime training_step(const Scenario& s, const detail::Figures& f, const Layout& l, const EngineVariant& v,
                       const ModelFigures& mf, const Cluster& k, double global_batch) {
    StepTime t;
    const double a = detail::compute_bytes(s.training.dtype);
    const double seq = static_cast<double>(s.training.seq_len);
    const double tokens = global_batch * seq;
    const double tp = static_cast<double>(l.tp), pp = static_cast<double>(l.pp), cp = static_cast<double>(l.cp),
                 dp = static_cast<double>(l.dp), ep = static_cast<double>(l.ep);
    const double mb = static_cast<double>(l.batch_size), ga = static_cast<double>(l.grad_accum);
    const double rate = k.gpus * k.peak * k.mfu;

    // LoRA / QLoRA: the frozen base needs no weight gradients, so the backward is one matmul per
    // weight instead of two: 4N (Hu et al. 2021 §4.2 measure the resulting speed-up on GPT-3).
    // Frozen (partial) training: forward 2N everywhere; the backward runs only from the loss down to
    // the lowest trainable layer (weight and activation gradients, 4 per trainable parameter), and
    // on down through the frozen layers (activation gradients only, 2) when a module below them trains.
    double per_param = s.training.method == Method::Full ? 6 : 4;
    if (s.training.method == Method::Frozen) {
        const double slice = detail::shard_of(s, l.tp, l.pp, l.ep).total();
        const double trained = slice > 0 ? std::min(1.0, f.breakdown.trainable_params / slice) : 0;
        per_param = 2 + 4 * trained + (s.training.trainable_input_parameters ? 2 * (1 - trained) : 0);
    }
    t.model_flops = tokens * (per_param * mf.n_compute + 12 * mf.attn * seq);
    t.compute = t.model_flops / rate;
    const Checkpointing ckpt = s.training.activation_checkpointing;
    if (ckpt == Checkpointing::Full) t.recompute = tokens * (2 * mf.n_compute + 4 * mf.attn * seq) / rate;
    else if (ckpt == Checkpointing::Selective) t.recompute = tokens * 4 * mf.attn * seq / rate;

    const double layers_here = mf.layers / pp;
    const double act_bytes = mb * seq / cp * mf.hidden * a;  // one micro-batch's b x s x h
    if (l.tp > 1) {
        double per_layer = (ckpt == Checkpointing::Full ? 6 : 4) * all_reduce(k, act_bytes, tp, k.intra);
        t.tp_comm = ga * layers_here * per_layer;
    }
    if (l.pp > 1) {
        double bw = bandwidth(k, 2, tp * cp * dp);
        t.pp_p2p = 2 * ga * (k.latency + act_bytes / tp / bw);
    }
    // Data parallelism: the gradient reduction and (ZeRO-3 / FSDP) the parameter gathers.
    const double group = dp * cp;
    const double g_bw = bandwidth(k, group, tp);
    const Precision precision = s.training.precision;
    const bool adapters = s.training.method == Method::Lora || s.training.method == Method::Qlora;
    const double grad_bytes_per_param =
        adapters                                                                             ? 4
        : (precision == Precision::AmpFp32Weights || precision == Precision::MixedFp32Grads) ? 4
                                                                                             : a;
    const double grads = f.breakdown.trainable_params * grad_bytes_per_param;
    // ZeRO-3 gathers (and parameter offload streams) every parameter of this GPU's slice, frozen ones too.
    const double params_bytes = detail::shard_of(s, l.tp, l.pp, l.ep).total() * a;
    const bool zero3 = (v.zero == 3) || (v.type == EngineType::Fsdp && v.fsdp != FsdpSharding::ShardGradOp);
    const bool hybrid = v.type == EngineType::Fsdp && v.fsdp == FsdpSharding::HybridShard;
    double reduce = 0, gather = 0;
    if (group > 1 && v.type != EngineType::None) {
        if (!zero3) {
            reduce = all_reduce(k, grads, group, g_bw);
        } else if (hybrid) {
            double shard = std::min(group, k.per_node), replicas = group / shard;
            double bw_in = bandwidth(k, shard, tp);
            gather = 2 * ga * gather_or_scatter(k, params_bytes, shard, bw_in);
            reduce = ga * gather_or_scatter(k, grads, shard, bw_in) +
                     all_reduce(k, grads / shard, replicas, bandwidth(k, replicas, tp * shard));
        } else {
            gather = 2 * ga * gather_or_scatter(k, params_bytes, group, g_bw);
            reduce = ga * gather_or_scatter(k, grads, group, g_bw);
        }
    }
    const double busy = t.compute + t.recompute;
    double window = gather > 0 ? busy : busy * 2.0 / 3.0;
    double exposed = std::max(0.0, reduce + gather - window);
    if (reduce + gather > 0) {
        t.dp_comm = exposed * reduce / (reduce + gather);
        t.zero3_gather = exposed * gather / (reduce + gather);
    }
    if (l.cp > 1) {
        double ring = 3 * (cp - 1) * (mb * seq / cp * mf.kv_dim / tp * a) / bandwidth(k, cp, tp);
        // the attention core's compute for one layer and micro-batch on this GPU, which the ring hides behind
        double attn_compute = mb * seq * 12 * (mf.attn / mf.layers) * seq / (cp * tp) / (k.peak * k.mfu);
        t.cp_comm = ga * layers_here * std::max(0.0, ring - attn_compute);
    }
    if (l.ep > 1 && mf.moe_layers > 0) {
        double bytes = 4 * mb * seq / cp * mf.top_k * mf.hidden * a * (ep - 1) / ep;
        t.ep_comm = ga * (mf.moe_layers / pp) * (4 * k.latency + bytes / bandwidth(k, ep, tp * cp));
    }
    if (v.offload_optimizer != Offload::None) {
        double shard = f.breakdown.trainable_params / group;
        double host_bw_per_gpu = k.host_mem / std::min(k.per_node, k.gpus);
        t.offload += shard * (2 + 2) / k.pcie + shard * k.cpu_opt_bytes / host_bw_per_gpu;
    }
    if (v.offload_param != Offload::None) t.offload += 2 * ga * params_bytes / group / k.pcie;
    // The pipeline's bubble stretches everything a micro-batch does on a stage.
    if (l.pp > 1) t.pp_bubble = (pp - 1) / ga * (busy + t.tp_comm + t.cp_comm + t.ep_comm);
    t.total =
        busy + t.tp_comm + t.pp_bubble + t.pp_p2p + t.dp_comm + t.zero3_gather + t.cp_comm + t.ep_comm + t.offload;
    return t;
}

StepTime inference_step(const Scenario& s, const detail::Figures& f, const Layout& l, const ModelFigures& mf,
                        const Cluster& k, double max_sequences) {
    StepTime t;
    const double a = 2;
    const double b = static_cast<double>(l.batch_size), ctx = static_cast<double>(s.inference.context_len);
    const double tp = static_cast<double>(l.tp), pp = static_cast<double>(l.pp);
    const auto& peak = f.breakdown.timeline[f.peak].bytes;
    double weights = peak[detail::Component::Weights], kv = peak[detail::Component::KvCache];
    if (f.breakdown.claimed > 0 && max_sequences > 0)
        kv *= std::min(1.0, b / max_sequences);                 // vLLM: the pool is larger than the batch's
    double flops = b * (2 * mf.n_compute + 4 * mf.attn * ctx);  // one decoded token per sequence
    t.model_flops = flops;
    double stage_compute = flops / (tp * pp) / (k.peak * k.mfu);
    double stage_memory = (weights + kv) / k.hbm;
    t.compute = pp * stage_compute;
    t.memory_bound = pp * std::max(0.0, stage_memory - stage_compute);
    if (l.tp > 1) t.tp_comm = mf.layers * 2 * all_reduce(k, b * mf.hidden * a, tp, k.intra);
    if (l.pp > 1) t.pp_p2p = (pp - 1) * (k.latency + b * mf.hidden * a / bandwidth(k, 2, tp));
    t.total = t.compute + t.memory_bound + t.tp_comm + t.pp_p2p;
    return t;
}

json step_json(const StepTime& t, bool training) {
    json j = {{"compute_s", t.compute}, {"tp_comm_s", t.tp_comm}, {"pp_p2p_s", t.pp_p2p}};
    if (training) {
        j["recompute_s"] = t.recompute;
        j["pp_bubble_s"] = t.pp_bubble;
        j["dp_comm_s"] = t.dp_comm;
        j["zero3_gather_s"] = t.zero3_gather;
        j["cp_comm_s"] = t.cp_comm;
        j["ep_comm_s"] = t.ep_comm;
        j["offload_s"] = t.offload;
    } else {
        j["memory_bound_s"] = t.memory_bound;
    }
    return j;
}

// One fitting candidate, small and without pointers into temporaries.
struct Candidate {
    double time = 0;
    Layout layout;
    std::size_t variant = 0;  // index into the prepared engines
    std::size_t checkpointing = 0;
    double device = 0, host_per_node = 0, max_sequences = 0;
    StepTime step;
};

// Deterministic order: step time, then the layout's fields (smaller first).
bool before(const Candidate& x, const Candidate& y) {
    if (x.time != y.time) return x.time < y.time;
    // Equal step times (communication hidden behind compute): the layout that splits the model
    // least first (plain data parallelism is the simplest to run), then the one with more memory left.
    auto key = [](const Candidate& c) {
        return std::make_tuple(c.layout.tp * c.layout.pp * c.layout.cp * c.layout.ep, c.device, c.layout.dp,
                               c.layout.tp, c.layout.pp, c.layout.cp, c.layout.ep, c.variant, c.checkpointing,
                               c.layout.batch_size, c.layout.grad_accum);
    };
    return key(x) < key(y);
}

PlanRequest read_plan(const json& doc, const Scenario& s, std::vector<Issue>& issues) {
    PlanRequest r;
    static const json empty = json::object();
    const json* p = &empty;
    if (doc.contains("plan") && !doc["plan"].is_null()) {
        if (!doc["plan"].is_object()) issues.push_back({"plan", "must be an object", detail::show(doc["plan"])});
        else p = &doc["plan"];
    }
    detail::FieldReader pr(*p, "plan", issues);
    auto gpus = pr.uint("num_gpus", 1, 1 << 20);
    if (!gpus && !pr.has("num_gpus"))
        issues.push_back({"plan.num_gpus", "is required: the GPUs in the cluster (a positive integer)", ""});
    r.num_gpus = gpus.value_or(1);
    auto per_node = pr.uint("gpus_per_node", 1, 1024);
    r.gpus_per_node = per_node.value_or(std::min<std::uint64_t>(r.num_gpus, 8));
    if (!per_node) r.defaults_applied.push_back("plan.gpus_per_node = " + std::to_string(r.gpus_per_node));
    if (auto ram = pr.number("host_ram_gb", 0, 1e9)) r.host_ram_bytes = *ram * kGB;
    auto top = pr.uint("top", 1, 1000);
    r.top = top.value_or(10);
    if (auto g = pr.string("gpu")) {
        auto found = detail::find_gpu(*g);
        if (!found) {
            std::string ids;
            for (const json& c : list_gpus()) ids += (ids.empty() ? "" : ", ") + c["id"].get<std::string>();
            pr.fail("gpu", "is not in the GPU catalogue (" + ids + ")", pr.get("gpu"));
        } else {
            r.gpu = (*found)["id"].get<std::string>();
            r.gpu_given = true;
        }
    } else {
        r.gpu = s.hardware.gpu;
        r.defaults_applied.push_back("plan.gpu = \"" + r.gpu + "\" (the scenario's)");
    }
    if (s.mode == Mode::Training) {
        auto gb = pr.uint("global_batch_size", 1, 1ull << 40);
        std::uint64_t fallback = r.num_gpus * s.training.batch_size * s.training.gradient_accumulation_steps;
        r.global_batch = gb.value_or(fallback);
        if (!gb)
            r.defaults_applied.push_back("plan.global_batch_size = " + std::to_string(r.global_batch) +
                                         " (num_gpus x training.batch_size x gradient_accumulation_steps)");
    }
    r.constants = default_constants(r.gpu, r.warnings);
    if (const json* st = pr.get("step_time")) {
        if (!st->is_object()) {
            pr.fail("step_time", "must be an object of step-time constant to number", st);
        } else {
            detail::FieldReader sr(*st, "plan.step_time", issues);
            for (auto it = st->begin(); it != st->end(); ++it) {
                Constant* c = nullptr;
                for (Constant& x : r.constants.list)
                    if (it.key() == x.name) c = &x;
                if (!c) {
                    std::string names;
                    for (const Constant& x : r.constants.list)
                        names += (names.empty() ? "" : ", ") + std::string(x.name);
                    sr.fail(it.key(), "is not a step-time constant (known: " + names + ")", &*it);
                } else if (auto v = sr.number(it.key(), std::strcmp(c->name, "collective_latency_us") == 0 ? 0 : 1e-9,
                                              std::strcmp(c->name, "mfu") == 0 ? 1 : 1e9)) {
                    c->value = *v;
                    c->about = "given in plan.step_time";
                }
            }
        }
    }
    static const char* const known[] = {"num_gpus", "gpus_per_node",     "host_ram_gb", "top",
                                        "gpu",      "global_batch_size", "step_time"};
    for (auto it = p->begin(); it != p->end(); ++it)
        if (std::none_of(std::begin(known), std::end(known), [&](const char* k) { return it.key() == k; }))
            issues.push_back({"plan." + it.key(),
                              "is not a plan field (num_gpus, gpu, gpus_per_node, host_ram_gb, "
                              "global_batch_size, top, step_time)",
                              detail::show(it.value())});
    return r;
}

// The scenario document of one plan row: the user's, with the row's layout written in.
json row_scenario(const json& doc, const Scenario& s, const Candidate& c, const EngineVariant* v,
                  const PlanRequest& r) {
    json out = doc;
    out.erase("plan");
    const Layout& l = c.layout;
    out["parallelism"] = {{"data_parallel_size", l.dp},     {"tensor_parallel_size", l.tp},
                          {"pipeline_parallel_size", l.pp}, {"context_parallel_size", l.cp},
                          {"expert_parallel_size", l.ep},   {"sequence_parallel", l.sequence_parallel}};
    // The plan's GPU; or, when the plan names none, the scenario's own hardware section (its gpu_memory_gb too).
    json hw =
        r.gpu_given || !doc.contains("hardware") || !doc["hardware"].is_object() ? json::object() : doc["hardware"];
    if (r.gpu_given) hw["gpu"] = r.gpu;
    hw["num_gpus"] = l.dp * l.tp * l.pp * l.cp;
    out["hardware"] = hw;
    if (s.mode == Mode::Training) {
        out["engine"] = engine_json(*v);
        if (!out.contains("training") || !out["training"].is_object()) out["training"] = json::object();
        out["training"]["batch_size"] = l.batch_size;
        out["training"]["gradient_accumulation_steps"] = l.grad_accum;
        out["training"]["activation_checkpointing"] = name(kCheckpointing[c.checkpointing]);
    } else {
        if (!out.contains("inference") || !out["inference"].is_object()) out["inference"] = json::object();
        out["inference"]["batch_size"] = l.batch_size;
    }
    return out;
}

json layout_json(const Candidate& c, const EngineVariant* v, bool training) {
    const Layout& l = c.layout;
    json j = {{"data_parallel_size", l.dp},     {"tensor_parallel_size", l.tp},
              {"pipeline_parallel_size", l.pp}, {"context_parallel_size", l.cp},
              {"expert_parallel_size", l.ep},   {"sequence_parallel", l.sequence_parallel}};
    if (training) {
        j["engine"] = name(v->type);
        j["zero_stage"] = v->zero;
        j["fsdp_sharding"] = name(v->fsdp);
        j["offload_optimizer"] = name(v->offload_optimizer);
        j["offload_param"] = name(v->offload_param);
        j["activation_checkpointing"] = name(kCheckpointing[c.checkpointing]);
        j["micro_batch_size"] = l.batch_size;
        j["gradient_accumulation_steps"] = l.grad_accum;
    } else {
        j["batch_size"] = l.batch_size;
        j["max_concurrent_sequences"] = static_cast<std::uint64_t>(c.max_sequences);
    }
    return j;
}

// Reads the scenario with a changed engine section (the reader resolves the precision from it).
std::optional<Scenario> read_variant(const json& doc, const EngineVariant& v, const Scenario& base) {
    json d = doc;
    d.erase("plan");
    d.erase("parallelism");
    if (d.contains("hardware") && d["hardware"].is_object()) d["hardware"].erase("num_gpus");
    d["engine"] = engine_json(v);
    detail::ScenarioRead read = detail::read_scenario(d);
    if (!read.issues.empty()) return std::nullopt;
    read.scenario.details = false;
    read.scenario.cache = base.cache;
    read.scenario.hardware = base.hardware;
    return std::move(read.scenario);
}

// ---- plan()'s phases: read the engines once, search every layout, then write the rows.

// One plan's search: what it reads and what it counts.
struct Search {
    const PlanRequest& req;
    const Scenario& base;
    const Cluster k;
    const ModelFigures mf;
    const bool training;
    const std::uint64_t N, G, seq;
    // The engines to try, each read once (inference: the scenario's own).
    std::vector<std::pair<const EngineVariant*, Scenario>> engines;
    std::vector<Candidate> fitting;
    std::uint64_t candidates = 0, evaluations = 0, host_limited = 0, batch_indivisible = 0, batch_unsplittable = 0;
    std::map<std::uint64_t, std::vector<std::uint64_t>> micro_cache;  // per share of the global batch

    Search(const PlanRequest& r, const Scenario& s)
        : req(r),
          base(s),
          k(cluster_of(r)),
          mf(model_figures(s)),
          training(s.mode == Mode::Training),
          N(r.num_gpus),
          G(r.gpus_per_node),
          seq(training ? s.training.seq_len : s.inference.context_len) {}

    // Micro-batches dividing a rank's share of the global batch, up to the reader's limits
    // (batch_size and gradient_accumulation_steps up to 10^6 each).
    const std::vector<std::uint64_t>& micro_batches(std::uint64_t share) {
        auto it = micro_cache.find(share);
        if (it == micro_cache.end()) {
            std::vector<std::uint64_t> mbs = divisors(share, 1000000);
            mbs.erase(
                std::remove_if(mbs.begin(), mbs.end(), [share](std::uint64_t mb) { return share / mb > 1000000; }),
                mbs.end());
            it = micro_cache.emplace(share, std::move(mbs)).first;
        }
        return it->second;
    }
};

// The engines to try: every training variant the reader accepts, or the inference scenario as read.
void read_engines(const json& doc, Search& search) {
    if (search.training) {
        for (const EngineVariant& v : kEngineVariants) {
            if (auto s = read_variant(doc, v, search.base)) search.engines.emplace_back(&v, std::move(*s));
        }
    } else {
        Scenario s = search.base;
        s.details = false;
        search.engines.emplace_back(nullptr, std::move(s));
    }
}

// An inference layout: fits or not, and the most sequences it holds (for the row, and vLLM's share of its pool).
void try_inference_layout(Search& search, Layout l) {
    Scenario& s = search.engines[0].second;
    // llama.cpp splits a model its own way (layers to devices), not Megatron's: replicas only.
    if (s.inference.engine == InferenceEngine::LlamaCpp && l.tp * l.pp > 1) return;
    l.sequence_parallel = false;
    l.batch_size = search.base.inference.batch_size;
    ++search.candidates;
    detail::apply_layout(s, l);
    detail::Figures f = detail::evaluate(s);
    ++search.evaluations;
    if (!f.fits) return;
    int n = 0;
    Layout probe = l;
    json solved = solve(s, probe, Solver{"inference.batch_size", 1000000, false}, n);
    search.evaluations += static_cast<std::uint64_t>(n);
    detail::apply_layout(s, l);
    f = detail::evaluate(s);
    Candidate c;
    c.layout = l;
    c.max_sequences = solved["value"].get<double>();
    c.step = inference_step(s, f, l, search.mf, search.k, c.max_sequences);
    c.time = c.step.total;
    c.device = f.device;
    search.fitting.push_back(c);
}

// One engine on a training layout: every checkpointing and micro-batch, each search stopping at the
// first micro-batch that does not fit (memory grows with it).
void try_training_engine(Search& search, Layout l, std::size_t vi, const std::vector<std::uint64_t>& micro) {
    const EngineVariant& v = *search.engines[vi].first;
    Scenario& s = search.engines[vi].second;
    const PlanRequest& req = search.req;
    for (std::size_t ci = 0; ci < 3; ++ci) {
        l.checkpointing = kCheckpointing[ci];
        for (std::uint64_t mb : micro) {
            l.batch_size = mb;
            l.grad_accum = req.global_batch / (l.dp * mb);
            ++search.candidates;
            detail::apply_layout(s, l);
            detail::Figures f = detail::evaluate(s);
            ++search.evaluations;
            if (!f.fits) break;
            double host_node = f.breakdown.host_bytes * static_cast<double>(std::min(search.G, search.N));
            if (req.host_ram_bytes > 0 && host_node > req.host_ram_bytes) {
                ++search.host_limited;
                continue;
            }
            Candidate c;
            c.layout = l;
            c.variant = vi;
            c.checkpointing = ci;
            c.device = f.device;
            c.host_per_node = host_node;
            c.step = training_step(s, f, l, v, search.mf, search.k, static_cast<double>(req.global_batch));
            c.time = c.step.total;
            search.fitting.push_back(c);
        }
    }
}

// A training layout: the global batch split over its data-parallel ranks, then every engine that applies.
void try_training_layout(Search& search, const Layout& l) {
    if (search.req.global_batch % l.dp) {
        ++search.batch_indivisible;
        return;
    }
    const bool model_parallel = l.tp * l.pp * l.cp > 1 || l.ep > 1;
    const std::vector<std::uint64_t>& micro = search.micro_batches(search.req.global_batch / l.dp);
    if (micro.empty()) {
        ++search.batch_unsplittable;
        return;
    }
    for (std::size_t vi = 0; vi < search.engines.size(); ++vi) {
        const EngineVariant& v = *search.engines[vi].first;
        bool megatron = v.type == EngineType::Megatron;
        if (model_parallel && !megatron) continue;
        // One data-parallel rank: no engine, or one that offloads (ZeRO-Offload on one GPU);
        // sharding over one rank changes nothing.
        bool offloads = v.offload_optimizer != Offload::None || v.offload_param != Offload::None;
        if (l.dp * l.cp == 1 ? !(v.type == EngineType::None || offloads) : v.type == EngineType::None) continue;
        try_training_engine(search, l, vi, micro);
    }
}

// Every layout of N GPUs the divisibility rules allow: TP within a node, then PP, CP (training) and EP (MoE training).
void search_layouts(Search& search) {
    const ModelSpec& m = search.base.model;
    const std::uint64_t N = search.N;
    std::vector<std::uint64_t> ep_options{1};
    if (m.num_experts) ep_options = divisors(m.num_experts, N);
    for (std::uint64_t tp : divisors(N, search.G)) {
        for (std::uint64_t pp : divisors(N / tp, m.num_layers ? m.num_layers : 1)) {
            for (std::uint64_t cp : search.training ? divisors(N / (tp * pp), 16) : std::vector<std::uint64_t>{1}) {
                if ((N / (tp * pp)) % cp) continue;
                std::uint64_t dp = N / (tp * pp * cp);
                for (std::uint64_t ep : search.training ? ep_options : std::vector<std::uint64_t>{1}) {
                    Layout l;
                    l.dp = dp, l.tp = tp, l.pp = pp, l.cp = cp, l.ep = ep;
                    l.sequence_parallel = tp > 1;
                    if (!detail::layout_problem(m, l, search.seq).empty()) continue;
                    if (search.training) try_training_layout(search, l);
                    else try_inference_layout(search, l);
                }
            }
        }
    }
}

// The best `top` candidates as rows, each with its scenario and full estimate.
json plan_rows(const json& doc, Search& search, std::size_t top) {
    const bool training = search.training;
    const Cluster& k = search.k;
    json plans = json::array();
    for (std::size_t i = 0; i < top; ++i) {
        const Candidate& c = search.fitting[i];
        const EngineVariant* v = training ? search.engines[c.variant].first : nullptr;
        const Scenario& s = search.engines[c.variant].second;
        json row_doc = row_scenario(doc, s, c, v, search.req);
        double tokens = training ? static_cast<double>(search.req.global_batch * search.seq)
                                 : static_cast<double>(c.layout.dp * c.layout.batch_size);
        json row = {
            {"rank", i + 1},
            {"layout", layout_json(c, v, training)},
            {"step_time_s", c.time},
            {"step_time", step_json(c.step, training)},
            {"tokens_per_s", c.time > 0 ? tokens / c.time : 0.0},
            {"mfu", c.time > 0 ? c.step.model_flops / c.time /
                                     (k.peak * (training ? k.gpus : static_cast<double>(c.layout.tp * c.layout.pp)))
                               : 0.0},
            {"device_total_bytes", round_bytes(c.device)},
            {"host_bytes_per_node", round_bytes(c.host_per_node)},
            {"scenario", row_doc},
            {"estimate", estimate(row_doc)}};
        plans.push_back(row);
    }
    return plans;
}

// Why layouts were skipped or none fits.
void search_warnings(const Search& search, std::vector<std::string>& warnings) {
    const PlanRequest& req = search.req;
    const std::string N = std::to_string(search.N);
    if (search.candidates == 0 && search.batch_indivisible == 0 && search.batch_unsplittable == 0)
        warnings.push_back("no layout of " + N +
                           " GPUs meets the divisibility rules (attention and kv heads "
                           "by TP within a node, layers by PP, sequence by CP, experts by EP, global batch by DP)");
    else if (search.candidates > 0 && search.fitting.empty())
        warnings.push_back("no layout of " + N + " x " + req.gpu + " fits this scenario" +
                           (search.host_limited
                                ? " (" + std::to_string(search.host_limited) + " fit the GPUs but not plan.host_ram_gb)"
                                : ""));
    if (search.batch_indivisible)
        warnings.push_back(std::to_string(search.batch_indivisible) +
                           " layouts skipped: their data-parallel size does not divide "
                           "plan.global_batch_size (" +
                           std::to_string(req.global_batch) + ")");
    if (search.batch_unsplittable)
        warnings.push_back(std::to_string(search.batch_unsplittable) +
                           " layouts skipped: no micro-batch of at most 1000000 sequences "
                           "with at most 1000000 accumulation steps makes up their share of plan.global_batch_size (" +
                           std::to_string(req.global_batch) + ")");
}

}  // namespace

detail::StepFigures detail::scenario_step(const Scenario& s, const Figures& f, double max_sequences,
                                          double hbm_efficiency) {
    StepFigures out;
    PlanRequest r;
    r.num_gpus = s.parallel.world();
    r.gpus_per_node = std::min<std::uint64_t>(r.num_gpus, 8);
    r.constants = default_constants(s.hardware.gpu, out.warnings);
    for (Constant& c : r.constants.list)
        if (std::strcmp(c.name, "hbm_gbps") == 0) c.value *= hbm_efficiency;
    const Cluster k = cluster_of(r);
    Layout l;
    l.dp = s.parallel.dp;
    l.tp = s.parallel.tp;
    l.pp = s.parallel.pp;
    l.cp = s.parallel.cp;
    l.ep = s.parallel.ep;
    l.sequence_parallel = s.parallel.sequence_parallel;
    const ModelFigures mf = model_figures(s);
    StepTime t;
    if (s.mode == Mode::Training) {
        l.batch_size = s.training.batch_size;
        l.grad_accum = s.training.gradient_accumulation_steps;
        const EngineVariant v{s.engine.type, s.engine.zero_stage, s.engine.fsdp_sharding, s.engine.offload_optimizer,
                              s.engine.offload_param};
        const double global_batch = static_cast<double>(l.dp * l.batch_size * l.grad_accum);
        t = training_step(s, f, l, v, mf, k, global_batch);
        out.tokens = global_batch * static_cast<double>(s.training.seq_len);
    } else {
        l.batch_size = s.inference.batch_size;
        t = inference_step(s, f, l, mf, k, max_sequences);
        out.tokens = static_cast<double>(l.dp * l.batch_size);
    }
    out.step_s = t.total;
    out.model_flops = t.model_flops;
    out.gpus = k.gpus;
    out.peak_flops = k.peak;
    out.hbm_bytes_per_s = k.hbm;
    out.mfu = k.mfu;
    out.n_compute = mf.n_compute;
    out.attn = mf.attn;
    for (const Constant& c : r.constants.list)
        if (std::strcmp(c.name, "peak_tflops") == 0) out.gpu_source = c.about;
    return out;
}

json maxfit(const json& scenario) {
    detail::ScenarioRead read = detail::read_scenario(scenario);
    if (!read.issues.empty()) return detail::error_document(read.issues);
    Scenario s = read.scenario;
    s.details = false;
    Layout base = layout_of(s);
    int evaluations = 0;
    const bool training = s.mode == Mode::Training;
    // The reader's limits (scenario.cpp): batch sizes up to 10^6, lengths up to 10^8.
    const Solver solvers[] = {
        {training ? "training.batch_size" : "inference.batch_size", 1000000, false},
        {training ? "training.seq_len" : "inference.context_len", 100000000, true},
    };
    json list = json::array();
    for (const Solver& solver : solvers) {
        json r = solve(s, base, solver, evaluations);
        std::uint64_t max_pos = s.model.max_position_embeddings;
        if (solver.is_length && max_pos && r["value"].get<std::uint64_t>() > max_pos)
            r["note"] = "longer than the model's max_position_embeddings (" + std::to_string(max_pos) + ")";
        if (solver.is_length && training && base.cp > 1)
            r["note"] = "memory only: context_parallel_size must also divide the sequence length";
        list.push_back(r);
    }
    return {{"ok", true},
            {"mode", training ? "training" : "inference"},
            {"capacity_bytes", s.hardware.gpu_memory_bytes},
            {"solvers", list},
            {"evaluations", evaluations}};
}

// Reads the scenario and the plan, tries every layout of the cluster with every engine that
// applies, and returns the fastest that fit.
json plan(const json& doc) {
    auto started = std::chrono::steady_clock::now();
    json scenario_doc = doc;
    if (scenario_doc.is_object()) scenario_doc.erase("plan");
    detail::ScenarioRead read = detail::read_scenario(scenario_doc);
    if (!read.issues.empty()) return detail::error_document(read.issues);
    Scenario base = read.scenario;
    std::vector<Issue> issues;
    PlanRequest req = read_plan(doc, base, issues);
    if (!issues.empty()) return detail::error_document(issues);
    if (req.gpu_given) {
        base.hardware.gpu_memory_bytes = (*detail::find_gpu(req.gpu))["memory_bytes"].get<std::uint64_t>();
        base.hardware.gpu = req.gpu;
    }
    base.hardware.gpus_per_node = req.gpus_per_node;  // the cluster's nodes (hybrid_shard's shard group)
    detail::cache_of(base);
    Search search(req, base);
    read_engines(doc, search);

    auto searching = std::chrono::steady_clock::now();
    double setup_ms = std::chrono::duration<double, std::milli>(searching - started).count();
    search_layouts(search);
    std::size_t top = std::min<std::size_t>(req.top, search.fitting.size());
    std::partial_sort(search.fitting.begin(), search.fitting.begin() + static_cast<std::ptrdiff_t>(top),
                      search.fitting.end(), before);
    double search_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - searching).count();

    const bool training = search.training;
    json plans = plan_rows(doc, search, top);
    std::vector<std::string> warnings = req.warnings;
    search_warnings(search, warnings);
    json constants = json::object();
    for (const Constant& c : req.constants.list)
        constants[c.name] = {{"value", c.value}, {"unit", c.unit}, {"about", c.about}};
    json cluster = {{"gpu", req.gpu},
                    {"num_gpus", search.N},
                    {"gpus_per_node", search.G},
                    {"gpu_memory_bytes", base.hardware.gpu_memory_bytes},
                    {"host_ram_bytes_per_node", round_bytes(req.host_ram_bytes)}};
    if (training) cluster["global_batch_size"] = req.global_batch;
    double total_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
    return {{"ok", true},
            {"mode", training ? "training" : "inference"},
            {"cluster", cluster},
            {"constants", constants},
            {"search",
             {{"candidates", search.candidates},
              {"evaluations", search.evaluations},
              {"fitting", search.fitting.size()},
              {"host_ram_limited", search.host_limited},
              {"global_batch_indivisible", search.batch_indivisible},
              {"setup_ms", setup_ms},
              {"search_ms", search_ms},
              {"evaluations_per_s", search_ms > 0 ? static_cast<double>(search.evaluations) / search_ms * 1000 : 0.0},
              {"elapsed_ms", total_ms}}},
            {"plans", plans},
            {"warnings", warnings},
            {"defaults_applied", req.defaults_applied}};
}

}  // namespace gpumem
