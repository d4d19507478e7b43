// Throughput from the step-time model: decode bound by memory bandwidth, prefill by FLOPs, training
// by the step-time model for the scenario's own layout (step_time.h, scenario_step()).

#include "throughput/throughput.h"

#include <algorithm>
#include <string>

#include "throughput/step_time.h"

namespace gpumem::detail {

const char* const kThroughputModel =
    "decode: one step of the batch reads this GPU's weights and the batch's KV cache at context_len from HBM at "
    "decode_bandwidth_efficiency of its peak, or "
    "computes 2 N + 4 L H Q c FLOPs per sequence, whichever is slower (roofline; plus TP all-reduces); "
    "decode_tokens_per_s = replicas x batch / step. prefill: 2 N + 2 L H Q c FLOPs per prompt token (causal "
    "attention over c/2 keys on average) at the card's dense peak for the compute dtype x prefill_efficiency. "
    "training: the planner's step time for this layout (compute at mfu of the dense BF16 peak, recompute, TP/PP/DP/"
    "CP/EP communication, bubble, offload); mfu = model FLOPs / (step x GPUs x peak). N: active parameters less the "
    "input embedding; L H Q: layers x heads x head dim; c: context. GPU figures: presets/gpus.json step_time.";

namespace {

// GPUs with FP8 tensor cores run FP8 matmuls at twice their dense BF16 rate (Hopper, Ada, Blackwell,
// CDNA 3 and Gaudi 2/3 datasheets); TF32 runs at half of it (Ampere and Hopper datasheets).
bool has_fp8(const std::string& gpu) {
    static const char* const kFp8[] = {"H100",     "H200",     "GH200",    "B100",     "B200",
                                       "L4-",      "L40",      "RTX-4090", "RTX-4080", "RTX-4070",
                                       "RTX-5090", "6000-Ada", "MI300",    "MI325",    "Gaudi"};
    return std::any_of(std::begin(kFp8), std::end(kFp8),
                       [&](const char* id) { return gpu.find(id) != std::string::npos; });
}

// The factor on the dense BF16 peak for the compute dtype: weights stored in fp8 run W8A8 matmuls;
// fp32 runs TF32; everything else (bf16, fp16 and the quantized formats, which dequantize) bf16.
double dtype_factor(const Scenario& s, std::string& dtype) {
    if (s.mode == Mode::Training) {
        dtype = name(s.training.dtype);
        if (s.training.dtype == Dtype::Fp8 && has_fp8(s.hardware.gpu)) return 2;
        return s.training.dtype == Dtype::Fp32 ? 0.5 : 1;
    }
    const Format& w = s.weight_format();
    dtype = w.builtin == WeightFormat::Fp8 && has_fp8(s.hardware.gpu) ? "fp8"
            : w.builtin == WeightFormat::Fp32                         ? "fp32"
                                                                      : "bf16";
    return dtype == "fp8" ? 2 : dtype == "fp32" ? 0.5 : 1;
}

}  // namespace

json throughput_json(const Scenario& s, const Figures& f) {
    double max_sequences = 0;
    const json& serving = f.breakdown.serving.doc();
    if (serving.is_object()) max_sequences = serving.value("max_concurrent_sequences", 0.0);
    const bool inference = s.mode == Mode::Inference;
    const double bandwidth = inference ? s.tunable(Tunable::DecodeBandwidthEfficiency) : 1.0;
    StepFigures st = scenario_step(s, f, max_sequences, bandwidth);
    std::string dtype;
    const double peak = st.peak_flops * dtype_factor(s, dtype);
    json out = {{"model", kThroughputModel},
                {"gpu", s.hardware.gpu},
                {"gpu_figures", st.gpu_source},
                {"peak_tflops_bf16", st.peak_flops / 1e12},
                {"compute_dtype", dtype},
                {"peak_tflops_compute_dtype", peak / 1e12},
                {"hbm_gbps", st.hbm_bytes_per_s / bandwidth / 1e9},
                {"gpus", st.gpus}};
    if (s.mode == Mode::Training) {
        const double mfu = st.step_s > 0 ? st.model_flops / (st.step_s * st.gpus * peak) : 0;
        out["training_tokens_per_s"] = st.step_s > 0 ? st.tokens / st.step_s : 0.0;
        out["training_tokens_per_s_per_gpu"] = st.step_s > 0 ? st.tokens / st.step_s / st.gpus : 0.0;
        out["step_time_s"] = st.step_s;
        out["tokens_per_step"] = st.tokens;
        out["mfu"] = mfu;
        out["kernel_mfu_assumed"] = st.mfu;
    } else {
        const double ctx = static_cast<double>(s.inference.context_len);
        const double replicas = static_cast<double>(s.parallel.dp);
        const double per_replica = st.gpus / std::max(1.0, replicas);
        const double efficiency = s.tunable(Tunable::PrefillEfficiency);
        const double flops_per_token = 2 * st.n_compute + 2 * st.attn * ctx;
        const double rate = per_replica * peak * efficiency;  // one replica's FLOP/s in the prefill
        out["decode_tokens_per_s"] = st.step_s > 0 ? st.tokens / st.step_s : 0.0;
        out["decode_tokens_per_s_per_sequence"] = st.step_s > 0 ? 1 / st.step_s : 0.0;
        out["decode_step_s"] = st.step_s;
        out["prefill_tokens_per_s"] = flops_per_token > 0 ? replicas * rate / flops_per_token : 0.0;
        out["prefill_s_per_sequence"] = rate > 0 ? ctx * flops_per_token / rate : 0.0;
        out["prefill_flops_per_token"] = flops_per_token;
        out["prefill_efficiency"] = efficiency;
        out["decode_bandwidth_efficiency"] = bandwidth;
    }
    out["warnings"] = st.warnings;
    return out;
}

}  // namespace gpumem::detail
