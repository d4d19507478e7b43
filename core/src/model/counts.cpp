// Parameter counts: the tensors of the model summed by group.

#include "model/model.h"

namespace gpumem::detail {

double declared_scale(const ModelSpec& m) {
    if (!m.declared_parameters) return 1;
    ModelSpec shape = m;
    shape.declared_parameters.reset();
    double shape_total = static_cast<double>(count_parameters(shape).total);
    return shape_total > 0 ? static_cast<double>(*m.declared_parameters) / shape_total : 1;
}

}  // namespace gpumem::detail

namespace gpumem {

using namespace detail;

ParamCount count_parameters(const ModelSpec& m) {
    ParamCount c;
    std::uint64_t routed = 0;  // routed-expert elements, all layers
    std::uint64_t in_layers = 0;
    std::uint64_t moe_layer = 0;  // one MoE layer (for the MTP layers)
    const std::vector<Tensor> tensors = list_tensors(m);
    for (const std::uint64_t b : checkpoint_tensor_bytes(m, tensors)) c.checkpoint_bytes += b;
    // Exact when the dtype is known and every quantized tensor's layout is; deepseek's MTP layers are
    // in the checkpoint but not in the tensor list.
    c.checkpoint_bytes_exact = dtype_bytes(m.checkpoint_dtype).has_value() && !m.declared_parameters &&
                               (!m.quantization || m.quantization->exact) && m.mtp_layers == 0;
    for (const Tensor& t : tensors) {
        std::uint64_t n = t.elements() * (t.in_layers() ? layer_count(m, t.layers) : 1);
        switch (t.group) {
            case Group::Embedding:
                c.embedding += n;
                break;
            case Group::Attention:
                c.attention += n;
                break;
            case Group::Mlp:
                c.mlp += n;
                break;
            case Group::Norm:
                c.norms += n;
                break;
            case Group::LmHead:
                c.lm_head += n;
                break;
            case Group::Vision:
                c.vision += n;
                break;
            case Group::Projector:
                c.projector += n;
                break;
        }
        if (t.in_layers() && t.layers != Layers::Dense &&
            (t.expert || t.name.rfind("router", 0) == 0 || t.name.rfind("shared_expert", 0) == 0))
            c.experts += n;
        if (t.expert) routed += n;
        if (t.in_layers()) in_layers += n;
        if (t.in_layers() && t.layers != Layers::Dense && t.layers != Layers::Decoder) moe_layer += t.elements();
        c.total += n;
    }
    c.per_layer = m.num_layers ? in_layers / m.num_layers : 0;
    c.language_model = c.total - c.vision - c.projector;
    // DeepSeek-V3's multi-token-prediction module (DeepseekV3 checkpoint layer 61, not built by
    // transformers): one MoE decoder layer + enorm, hnorm (h each), eh_proj (h × 2h) and
    // shared_head.norm (h); its embed_tokens and shared_head.head repeat the model's and are not counted.
    if (m.mtp_layers) {
        const std::uint64_t h = m.hidden_size;
        c.mtp = m.mtp_layers * (moe_layer + 3 * h + 2 * h * h);
    }
    // A token visits top-k of the routed experts.
    c.active = c.total;
    if (m.num_experts) c.active -= routed - routed / m.num_experts * m.num_experts_per_tok;
    if (m.declared_parameters) {
        c.exact = false;
        c.total = c.active = *m.declared_parameters;
        c.language_model = c.total;
    }
    return c;
}

}  // namespace gpumem
