// The step-time model: how long a training step or a decode step takes on a layout (step_time.h).
//
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

#include "throughput/step_time.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "catalogue/presets.h"
#include "memory/model_cache.h"

namespace gpumem::detail {

double Constants::get(const char* name) const {
    for (const Constant& c : list)
        if (std::strcmp(c.name, name) == 0) return c.value;
    return 0;
}

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

Cluster cluster_of(std::uint64_t num_gpus, std::uint64_t gpus_per_node, const Constants& c) {
    Cluster k;
    k.gpus = static_cast<double>(num_gpus);
    k.per_node = static_cast<double>(gpus_per_node);
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

namespace {

// A group of n ranks `stride` apart: inside one node, or across nodes.
double bandwidth(const Cluster& k, double n, double stride) { return n * stride <= k.per_node ? k.intra : k.inter; }
double all_reduce(const Cluster& k, double bytes, double n, double bw) {
    return n > 1 ? k.latency + 2 * (n - 1) / n * bytes / bw : 0;
}
double gather_or_scatter(const Cluster& k, double bytes, double n, double bw) {
    return n > 1 ? k.latency + (n - 1) / n * bytes / bw : 0;
}

}  // namespace

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

StepFigures scenario_step(const Scenario& s, const Figures& f, double max_sequences, double hbm_efficiency) {
    StepFigures out;
    const std::uint64_t gpus = s.parallel.world();
    Constants constants = default_constants(s.hardware.gpu, out.warnings);
    for (Constant& c : constants.list)
        if (std::strcmp(c.name, "hbm_gbps") == 0) c.value *= hbm_efficiency;
    const Cluster k = cluster_of(gpus, std::min<std::uint64_t>(gpus, 8), constants);
    Layout l = layout_of(s);
    const ModelFigures mf = model_figures(s);
    StepTime t;
    if (s.mode == Mode::Training) {
        const EngineVariant v{s.engine.type, s.engine.zero_stage, s.engine.fsdp_sharding, s.engine.offload_optimizer,
                              s.engine.offload_param};
        const double global_batch = static_cast<double>(l.dp * l.batch_size * l.grad_accum);
        t = training_step(s, f, l, v, mf, k, global_batch);
        out.tokens = global_batch * static_cast<double>(s.training.seq_len);
    } else {
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
    for (const Constant& c : constants.list)
        if (std::strcmp(c.name, "peak_tflops") == 0) out.gpu_source = c.about;
    return out;
}

}  // namespace gpumem::detail
