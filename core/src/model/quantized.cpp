// A checkpoint's bytes as its safetensors files store them: every tensor of list_tensors in the
// checkpoint's dtype, except the Linear layers its quantization_config quantizes, which are stored
// packed with their scales and zero points. Each layout follows the writer's own code:
//
// - compressed-tensors (neuralmagic/compressed-tensors, compressors/quantized_compressors/):
//   "float-quantized" and "naive-quantized"/"int-quantized" keep `weight` at num_bits per value;
//   "pack-quantized" packs int values into int32 `weight_packed` along the input dimension and adds
//   `weight_shape` (int64[2]); "nvfp4-pack-quantized" / "mxfp4-pack-quantized" pack two fp4 values
//   per byte. `weight_scale` has one value per tensor / output channel / group / block
//   (quantization/utils/helpers.py, the strategy's shape) in the model's dtype, except nvfp4's
//   fp8-e4m3 scales with an fp32 `weight_global_scale`, and mxfp4's e8m0 (uint8) scales; an
//   asymmetric scheme stores `weight_zero_point`, packed into int32 rows for pack-quantized;
//   a static input scheme stores `input_scale` (shape [1]); nvfp4 W4A4 `input_global_scale` (fp32).
// - GPTQ (AutoGPTQ / GPTQModel QuantLinear.pack): qweight int32 [in x bits / 32, out], qzeros int32
//   [groups, out x bits / 32], scales fp16 [groups, out], g_idx int32 [in]; groups = in / group_size
//   (one group when group_size is -1). qzeros and g_idx are stored whatever sym and desc_act say.
// - AWQ GEMM (AutoAWQ WQLinear_GEMM): qweight int32 [in, out x bits / 32], qzeros int32
//   [groups, out x bits / 32], scales fp16 [groups, out].
// - quant_method fp8 (transformers' FineGrainedFP8 / DeepSeek-V3): weight e4m3 and
//   `weight_scale_inv` fp32 per weight_block_size block; without blocks (AutoFP8) one fp32
//   `weight_scale` per tensor and, for activation_scheme static, one fp32 `input_scale`.
// - mxfp4 (gpt-oss, transformers' Mxfp4HfQuantizer): the experts only, `*_blocks` (two e2m1 values
//   per byte) and `*_scales` (one e8m0 byte per 32 values).
// - NVIDIA ModelOpt (quant_method modelopt; vLLM modelopt.py ModelOptFp8LinearMethod /
//   ModelOptNvFp4LinearMethod.create_weights): FP8 keeps e4m3 `weight` with fp32 `weight_scale` and
//   `input_scale` per Linear; NVFP4 packs two e2m1 per byte with an e4m3 `weight_scale` per group_size
//   (16), fp32 `weight_scale_2` and `input_scale`; a kv_cache_quant_algo adds fp32 k_scale / v_scale.
// - bitsandbytes (bitsandbytes/nn/modules.py Params4bit / Int8Params): 4-bit packs two values per
//   byte with an absmax per 64 (fp32, or uint8 under double quantization with an fp32 absmax per 256
//   of them and a 256-entry fp32 code), a 16-entry fp32 quant map, and a JSON quant_state whose
//   length varies (not counted: the only bytes not exact); 8-bit stores int8 and an fp32 SCB per row.

#include <algorithm>
#include <cmath>
#include <optional>

#include "model/model.h"

namespace gpumem::detail {

namespace {

using Quant = ModelSpec::Quantization;
using Scheme = ModelSpec::QuantScheme;

std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return b ? (a + b - 1) / b : a; }

// The names a tensor of one layer may have in a checkpoint, for the ignore lists and targets: the
// transformers module path, with the aliases families use for the same module (Mixtral's
// block_sparse_moe.gate is Qwen's mlp.gate; a tower is vision_tower, visual or vision_model).
std::vector<std::string> module_names(const Tensor& t, std::uint64_t layer) {
    const std::string& n = t.name;
    if (t.group == Group::LmHead) return {n};
    if (t.group == Group::Vision || t.group == Group::Projector) {
        const std::string tail = n.substr(n.find('.') + 1);
        if (t.group == Group::Vision)
            return {"vision_tower." + tail, "model.vision_tower." + tail, "visual." + tail, "model.visual." + tail,
                    "vision_model." + tail};
        return {"multi_modal_projector." + tail, "model.multi_modal_projector." + tail, "visual." + tail,
                "model.visual." + tail};
    }
    const std::string layer_prefix = "model.layers." + std::to_string(layer) + ".";
    if (t.group == Group::Attention) {
        if (n.rfind("cross_attn", 0) == 0) return {layer_prefix + n};
        return {layer_prefix + "self_attn." + n};
    }
    if (n.rfind("router", 0) == 0) {
        return {layer_prefix + "mlp.gate", layer_prefix + "block_sparse_moe.gate", layer_prefix + "mlp.router"};
    }
    if (n.rfind("experts.", 0) == 0) {
        const std::string tail = n.substr(8);
        return {layer_prefix + "mlp.experts.0." + tail, layer_prefix + "block_sparse_moe.experts.0." + tail,
                layer_prefix + "mlp.experts." + tail};
    }
    return {layer_prefix + "mlp." + n};
}

// Whether a tensor is a Linear layer's weight (what the quantizers replace): the layers' matrices
// (most routers and gates included), the LM head, and the tower's and projector's projections; not the
// embeddings, norms, convolutions, learned gates or biases.
bool is_linear(const ModelSpec& m, const Tensor& t) {
    if (!t.is_matrix() || t.name.find(".bias") != std::string::npos) return false;
    // DeepSeek's and gpt-oss's routers are modules holding a weight, not nn.Linear
    // (transformers DeepseekV3TopkRouter, GptOssTopKRouter): no quantizer replaces them.
    if (t.name.rfind("router", 0) == 0 && (m.kv_lora_rank > 0 || m.attention_sinks)) return false;
    switch (t.group) {
        case Group::Attention:
        case Group::Mlp:
            return t.in_layers();
        case Group::LmHead:
            return t.name == "lm_head";
        case Group::Vision:
        case Group::Projector:
            for (const char* not_linear :
                 {"embed", "norm", "ln_", "gate_attn", "gate_ffn", "probe", "class", "position", "conv"})
                if (t.name.find(not_linear) != std::string::npos) return false;
            return true;
        default:
            return false;
    }
}

// One pattern of an ignore list or of a scheme's targets: "re:" a regular expression matched from
// the start (compressed-tensors utils/match.py, re.match), a "*" glob (transformers' module
// patterns, gpt-oss), else a name matched as a substring (transformers' modules_to_not_convert) or
// exactly (compressed-tensors). Both kinds of pattern run on module_pattern.cpp's linear-time NFA.
struct Pattern {
    std::string text;
    bool exact = false;
    std::optional<ModulePattern> re;
};

std::vector<Pattern> compile(const std::vector<std::string>& names, bool exact_names) {
    std::vector<Pattern> out;
    for (const std::string& name : names) {
        Pattern p;
        p.text = name;
        p.exact = exact_names;
        if (name.rfind("re:", 0) == 0 || name.find('*') != std::string::npos) {
            std::string re = name.rfind("re:", 0) == 0 ? name.substr(3) : std::string();
            if (re.empty() && name.rfind("re:", 0) != 0)
                for (char ch : name)
                    re += ch == '*' ? std::string(".*") : ch == '.' ? std::string("\\.") : std::string(1, ch);
            p.re = compile_module_pattern(re);
            if (!p.re) continue;  // outside the subset: matches nothing (noted in quantization_exact)
        }
        out.push_back(std::move(p));
    }
    return out;
}

bool matches(const Pattern& p, const std::string& name) {
    if (p.re) return p.re->matches(name);
    return p.exact ? name == p.text : name.find(p.text) != std::string::npos;
}

bool any_match(const std::vector<Pattern>& patterns, const std::vector<std::string>& names) {
    for (const Pattern& p : patterns)
        for (const std::string& n : names)
            if (matches(p, n)) return true;
    return false;
}

// Which quantized layout a method's Linear layers have; None: stored unquantized.
enum class Layout { None, Float8, Int8, PackedInt, NvFp4, MxFp4, Gptq, Awq, Bnb4, Bnb8, Unknown };

Layout layout_of(const Quant& q, const Scheme& s) {
    // 1 to 8 bits per value: what every writer here supports (and what keeps the packing arithmetic sound).
    if (s.bits == 0 || s.bits > 8) return Layout::Unknown;
    if (q.method == "gptq") return Layout::Gptq;
    if (q.method == "awq") return Layout::Awq;
    if (q.method == "fp8") return Layout::Float8;
    if (q.method == "mxfp4") return Layout::MxFp4;
    if (q.method == "bitsandbytes") return q.bits == 4 ? Layout::Bnb4 : Layout::Bnb8;
    if (q.method == "modelopt") return s.bits == 4 ? Layout::NvFp4 : s.bits == 8 ? Layout::Float8 : Layout::Unknown;
    if (q.method != "compressed-tensors") return Layout::Unknown;
    if (q.format == "dense") return Layout::None;
    if (q.format == "float-quantized") return s.is_float && s.bits == 8 ? Layout::Float8 : Layout::Unknown;
    if (q.format == "naive-quantized" || q.format == "int-quantized")
        return s.bits == 8 ? Layout::Int8 : Layout::Unknown;
    if (q.format == "pack-quantized") return !s.is_float && 32 % s.bits == 0 ? Layout::PackedInt : Layout::Unknown;
    if (q.format == "nvfp4-pack-quantized") return Layout::NvFp4;
    if (q.format == "mxfp4-pack-quantized") return Layout::MxFp4;
    return Layout::Unknown;
}

// Scales one Linear of `out` x `in` has under a scheme's strategy.
std::uint64_t scale_count(const Scheme& s, std::uint64_t out, std::uint64_t in) {
    if (s.strategy == "channel") return out;
    if (s.strategy == "group" || s.strategy == "tensor_group")
        return out * ceil_div(in, s.group_size ? s.group_size : in);
    if (s.strategy == "block" && s.block.size() == 2) return ceil_div(out, s.block[0]) * ceil_div(in, s.block[1]);
    return 1;  // "tensor"
}

// What vLLM's loading changes in a quantized Linear's bytes (`stored` of them in the checkpoint).
// GPTQ through gptq_marlin (4 or 8 bits, symmetric, group -1/32/64/128: gptq_marlin.py
// GPTQMarlinConfig.is_gptq_marlin_compatible) and MarlinLinearKernel.process_weights_after_loading
// (kernels/mixed_precision/marlin.py): qweight and scales are repacked in place at the same size;
// without act-order g_idx is replaced by an empty tensor, with it an int32 g_idx_sort_indices per
// input column is added; symmetric qzeros are replaced by an empty tensor. compressed-tensors' fp8
// and int8 channel scales load as fp32 (create_fp8_scale_parameter / CompressedTensorsW8A8Int8:
// ChannelQuantScaleParameter of torch.float32). Everything else keeps its stored size.
//
// gpt-oss's mxfp4 experts under the Triton backend (Mxfp4MoEMethod on Hopper with triton_kernels,
// mxfp4.py process_weights_after_loading): the values are swizzled in place (no padding at these
// widths), the scales are swizzled into a second tensor while the loaded ones stay on the layer
// (only the weights are deleted), the swizzled scales padded to 256 rows (swizzle_mxfp4_scale_hopper,
// 2 x num_warps 8 x 2 x 8) and to an even count along the input; gate and up are one fused w13
// tensor of 2 x intermediate rows, so each holds half the padded rows. Expert biases become fp32.
std::uint64_t round_up(std::uint64_t a, std::uint64_t b) { return ceil_div(a, b) * b; }

// GPTQ through Marlin, the part of the above that SGLang and TGI share with vLLM: a symmetric 4- or 8-bit
// checkpoint with group -1/32/64/128 converts (SGLang GPTQMarlinConfig.override_quantization_method and
// is_gptq_marlin_compatible, python/sglang/srt/layers/quantization/gptq/gptq.py @0cdfa2f8; TGI
// can_use_gptq_marlin, server/text_generation_server/layers/marlin/gptq.py @1629d0bb); qweight and scales are
// repacked at the same size, the symmetric qzeros become an empty tensor (TGI does not load them), and g_idx
// becomes an empty tensor without act-order, or stays sorted with an int32 sort index per input column beside
// it (SGLang GPTQMarlinLinearKernel.process_weights_after_loading, hardware_backend/gpu/quantization/
// gptq_kernels.py @11dc314b; TGI repack_gptq_for_marlin's perm). Act-order with one group is taken as none
// (GPTQMarlinConfig; TGI: desc_act and groupsize != -1). Both need sm80; the card is not checked, as for vLLM.
std::uint64_t marlin_resident(Layout layout, const Quant& q, const Scheme& s, std::uint64_t stored, std::uint64_t out,
                              std::uint64_t in) {
    if (layout != Layout::Gptq) return stored;
    const std::uint64_t g = q.group_size;
    const bool marlin = s.symmetric && (s.bits == 4 || s.bits == 8) && (g == 0 || g == 32 || g == 64 || g == 128);
    if (!marlin) return stored;
    const std::uint64_t groups = ceil_div(in, g ? g : in);
    const std::uint64_t qzeros = groups * ceil_div(out * s.bits, 32) * 4;
    return stored - qzeros - (q.desc_act ? 0 : in * 4) + (q.desc_act ? in * 4 : 0);
}

std::uint64_t vllm_resident(Layout layout, const Quant& q, const Scheme& s, std::uint64_t stored, std::uint64_t out,
                            std::uint64_t in, std::uint64_t d, const Tensor& t) {
    if (layout == Layout::MxFp4 && q.method == "mxfp4" && t.expert) {
        const bool fused = t.name.find("gate_proj") != std::string::npos || t.name.find("up_proj") != std::string::npos;
        const std::uint64_t rows = fused ? round_up(2 * out, 256) / 2 : round_up(out, 256);
        return stored + rows * round_up(ceil_div(in, 32), 2);
    }
    if (layout == Layout::Gptq) return marlin_resident(layout, q, s, stored, out, in);
    // compressed-tensors' group act-order through Marlin: g_idx stays, g_idx_sort_indices joins it.
    if (layout == Layout::PackedInt && s.g_idx) return stored + in * 4;
    if ((layout == Layout::Float8 || layout == Layout::Int8) && q.method == "compressed-tensors" &&
        s.strategy == "channel" && d < 4)
        return stored + out * (4 - d);
    return stored;
}

// The bytes one quantized Linear of `out` x `in` stores; `d` is the checkpoint dtype's bytes.
std::uint64_t quantized_bytes(Layout layout, const Quant& q, const Scheme& s, std::uint64_t out, std::uint64_t in,
                              std::uint64_t d) {
    const std::uint64_t n = out * in;
    const std::uint64_t bits = s.bits ? s.bits : 4;
    switch (layout) {
        case Layout::Float8:
        case Layout::Int8: {
            if (q.method == "fp8" || q.method == "modelopt") {
                // weight_scale_inv fp32 per block, or AutoFP8's / ModelOpt's per-tensor fp32 weight_scale
                // (+ input_scale).
                return n + 4 * scale_count(s, out, in) + (s.input_scale ? 4 : 0);
            }
            std::uint64_t scales = scale_count(s, out, in);
            return n + scales * d + (s.symmetric ? 0 : scales) + (s.input_scale ? d : 0);
        }
        case Layout::PackedInt: {
            std::uint64_t scales = scale_count(s, out, in);
            std::uint64_t groups = scales / std::max<std::uint64_t>(1, out);
            std::uint64_t bytes = out * ceil_div(in * bits, 32) * 4 + 16 + scales * d;  // + weight_shape int64[2]
            if (!s.symmetric) bytes += ceil_div(out * bits, 32) * 4 * std::max<std::uint64_t>(1, groups);
            if (s.g_idx) bytes += in * 4;
            return bytes + (s.input_scale ? d : 0);
        }
        case Layout::NvFp4:
            // two e2m1 per byte, an e4m3 scale per 16, an fp32 global scale (compressed-tensors'
            // weight_global_scale, ModelOpt's weight_scale_2) and, for W4A4, an fp32 input scale.
            return out * ceil_div(in, 2) + out * ceil_div(in, s.group_size ? s.group_size : 16) + 4 +
                   (s.input_global_scale || s.input_scale ? 4 : 0);
        case Layout::MxFp4:
            return out * ceil_div(in, 2) + out * ceil_div(in, 32);
        case Layout::Gptq: {
            std::uint64_t groups = ceil_div(in, q.group_size ? q.group_size : in);
            return ceil_div(in * bits, 32) * out * 4 + groups * ceil_div(out * bits, 32) * 4 + groups * out * 2 +
                   in * 4;
        }
        case Layout::Awq: {
            std::uint64_t groups = ceil_div(in, q.group_size ? q.group_size : in);
            return in * ceil_div(out * bits, 32) * 4 + groups * ceil_div(out * bits, 32) * 4 + groups * out * 2;
        }
        case Layout::Bnb4: {
            std::uint64_t blocks = ceil_div(n, 64);
            std::uint64_t absmax = q.double_quant ? blocks + ceil_div(blocks, 256) * 4 + 256 * 4 : blocks * 4;
            return ceil_div(n, 2) + absmax + 16 * 4;
        }
        case Layout::Bnb8:
            return n + out * 4;
        default:
            return n * d;
    }
}

// Whether a method quantizes this Linear by default, before its ignore list: gptq and awq quantize
// the layers' attention and MLP (not routers, gates, head or tower: AutoGPTQ's inside_layer_modules,
// AutoAWQ's get_layers_for_scaling); fp8 every Linear but the head (transformers adds lm_head to
// modules_to_not_convert); mxfp4 only the experts; bitsandbytes every Linear but the head
// (get_keys_to_not_convert); compressed-tensors what its schemes' targets name.
bool quantized_by_default(const Quant& q, const Tensor& t) {
    const bool gate = t.name.rfind("router", 0) == 0 || t.name == "shared_expert_gate";
    if (q.method == "gptq" || q.method == "awq") return t.in_layers() && !gate;
    if (q.method == "mxfp4") return t.expert;
    if (q.method == "fp8" || q.method == "bitsandbytes") return t.group != Group::LmHead;
    return true;
}

}  // namespace

bool quantization_exact(const ModelSpec::Quantization& q) {
    if (q.schemes.empty() || q.method == "bitsandbytes") return false;
    for (const Scheme& s : q.schemes)
        if (layout_of(q, s) == Layout::Unknown) return false;
    // An ignore entry or target whose pattern cannot be read would leave modules in the wrong layout.
    std::vector<std::string> names = q.modules_not_converted;
    for (const Scheme& s : q.schemes) names.insert(names.end(), s.targets.begin(), s.targets.end());
    for (const std::string& n : names) {
        const bool re = n.rfind("re:", 0) == 0;
        if (re && !compile_module_pattern(n.substr(3))) return false;
    }
    return true;
}

std::vector<std::uint64_t> checkpoint_tensor_bytes(const ModelSpec& m, const std::vector<Tensor>& tensors,
                                                   Residency where) {
    const auto d = static_cast<std::uint64_t>(dtype_bytes(m.checkpoint_dtype).value_or(2));
    std::vector<std::uint64_t> out(tensors.size(), 0);
    const auto& q = m.quantization;
    const bool ct = q && q->method == "compressed-tensors";
    std::vector<Pattern> ignore, no_patterns;
    std::vector<std::vector<Pattern>> targets;
    bool per_layer = false;  // an ignore entry or target names single layers ("model.layers.3.mlp.gate")
    if (q) {
        ignore = compile(q->modules_not_converted, ct);
        for (const Scheme& s : q->schemes) targets.push_back(compile(s.targets, true));
        for (const std::string& name : q->modules_not_converted)
            per_layer = per_layer || std::any_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; });
    }
    // The layers holding each kind of tensor, by index.
    std::vector<std::uint64_t> all, moe, dense, decoder;
    for (std::uint64_t i = 0; i < m.num_layers; ++i) {
        all.push_back(i);
        bool is_moe = i < m.moe_layer.size() && m.moe_layer[i];
        (is_moe ? moe : dense).push_back(i);
        if (i >= m.encoder_layers) decoder.push_back(i);
    }
    auto layers_of = [&](Layers l) -> const std::vector<std::uint64_t>& {
        if (l == Layers::Moe) return m.moe_layer.size() == m.num_layers ? moe : all;
        if (l == Layers::Dense) return m.moe_layer.size() == m.num_layers ? dense : all;
        if (l == Layers::Decoder) return decoder;
        if (l == Layers::CrossAttention) return m.cross_attention_layers;
        return all;
    };
    const std::vector<std::uint64_t> model_level{0};
    for (std::size_t k = 0; k < tensors.size(); ++k) {
        const Tensor& t = tensors[k];
        const std::uint64_t plain = t.elements() * d;
        const std::vector<std::uint64_t>& at = t.in_layers() ? layers_of(t.layers) : model_level;
        const std::uint64_t holders = t.in_layers() ? layer_count(m, t.layers) : 1;
        // Expert copies repeat one name: the first copy's answer is every copy's.
        if (k > 0 && t.expert && tensors[k - 1].expert && tensors[k - 1].name == t.name) {
            out[k] = out[k - 1];
            continue;
        }
        if (!q || q->schemes.empty() || !is_linear(m, t) || !quantized_by_default(*q, t)) {
            // vLLM's Triton mxfp4 experts hold their biases in fp32 (mxfp4.py, see vllm_resident).
            const bool fp32_bias = where == Residency::Vllm && q && q->method == "mxfp4" && t.expert && !t.is_matrix();
            out[k] = (fp32_bias ? t.elements() * 4 : plain) * holders;
            continue;
        }
        // The bytes of the tensor in one layer: quantized by the first scheme that targets it, unless ignored.
        auto in_layer = [&](std::uint64_t layer) {
            const std::vector<std::string> names = module_names(t, layer);
            std::size_t scheme = ct ? q->schemes.size() : 0;
            for (std::size_t i = 0; ct && i < q->schemes.size() && scheme == q->schemes.size(); ++i) {
                const auto& ts = q->schemes[i].targets;
                if (std::find(ts.begin(), ts.end(), "Linear") != ts.end() || any_match(targets[i], names)) scheme = i;
            }
            if (scheme == q->schemes.size() || any_match(ignore, names)) return plain;
            const Scheme& s = q->schemes[scheme];
            const Layout layout = layout_of(*q, s);
            const std::uint64_t stored = quantized_bytes(layout, *q, s, t.rows, t.cols, d);
            if (where == Residency::Vllm) return vllm_resident(layout, *q, s, stored, t.rows, t.cols, d, t);
            return where == Residency::Marlin ? marlin_resident(layout, *q, s, stored, t.rows, t.cols) : stored;
        };
        std::uint64_t total = 0;
        if (!per_layer || at.empty()) {
            total = in_layer(at.empty() ? 0 : at.front()) * holders;  // every layer answers as the first
        } else {
            for (std::size_t i = 0; i < at.size() && i < holders; ++i) total += in_layer(at[i]);
        }
        out[k] = total;
    }
    // compressed-tensors kv_cache_scheme: k_scale and v_scale (one value each) on every attention
    // layer, counted with k_proj, the first tensor every layer has.
    if (q && q->kv_scales)
        for (std::size_t k = 0; k < tensors.size(); ++k)
            if (tensors[k].in_layers() && tensors[k].name == "k_proj") {
                out[k] += 2 * (q->method == "modelopt" ? 4 : d) * layer_count(m, tensors[k].layers);
                break;
            }
    return out;
}

}  // namespace gpumem::detail
