// The model as a list of weight tensors, the one place parameter counts come from: list_tensors
// and its phases, one for each part of the model in module order.

#include <algorithm>

#include "model/model.h"

namespace gpumem::detail {

namespace {

// The list being built, and the model it lists.
struct Tensors {
    const ModelSpec& m;
    std::vector<Tensor> list;

    // One tensor in the `where` layers (Layers::None: one model-level tensor); `tp`: split across
    // tensor-parallel ranks.
    void put(const std::string& name, Group g, std::uint64_t rows, std::uint64_t cols, Layers where, bool tp) {
        list.push_back({name, g, rows, cols, where, tp, false});
    }
    // A norm's weight, and its bias for LayerNorm.
    void norm(const std::string& name, Group g, std::uint64_t width, Layers where) {
        put(name, g, width, 1, where, false);
        if (m.norm == ModelSpec::Norm::Layer) put(name + ".bias", g, width, 1, where, false);
    }
    bool has_decoder_stack() const {  // t5's decoder half
        return m.structure == ModelSpec::Structure::EncoderDecoder && m.num_layers > m.encoder_layers;
    }
    // Width of the token embedding: opt-350m's word_embed_proj_dim (512) when set, else h.
    std::uint64_t embedding_width() const { return m.embedding_dim ? m.embedding_dim : m.hidden_size; }
    bool projects_embeddings() const { return m.embedding_dim && m.embedding_dim != m.hidden_size; }
};

// Token embeddings (vocab-parallel under Megatron), opt's projection into h, learned position and
// token-type tables, and the norm right after the embeddings.
void embeddings(Tensors& t) {
    const ModelSpec& m = t.m;
    const std::uint64_t h = m.hidden_size, e = t.embedding_width();
    t.put("embed_tokens", Group::Embedding, m.vocab_size + m.extra_embedding_rows, e, Layers::None, true);
    if (t.projects_embeddings()) t.put("project_in", Group::Embedding, h, e, Layers::None, false);
    if (m.learned_positions) t.put("embed_positions", Group::Embedding, m.learned_positions, h, Layers::None, false);
    if (m.token_types) t.put("token_type_embeddings", Group::Embedding, m.token_types, h, Layers::None, false);
    if (m.embedding_norm) t.norm("embed_norm", Group::Norm, h, Layers::None);
}

// q, k, v, o and their biases.
void attention(Tensors& t, const std::string& prefix, Layers where) {
    const ModelSpec& m = t.m;
    const std::uint64_t h = m.hidden_size, q = m.num_attention_heads * m.head_dim,
                        kv = m.num_key_value_heads * m.head_dim;
    t.put(prefix + "q_proj", Group::Attention, q, h, where, true);
    t.put(prefix + "k_proj", Group::Attention, kv, h, where, true);
    t.put(prefix + "v_proj", Group::Attention, kv, h, where, true);
    if (m.qkv_bias) {
        t.put(prefix + "q_proj.bias", Group::Attention, q, 1, where, true);
        t.put(prefix + "k_proj.bias", Group::Attention, kv, 1, where, true);
        t.put(prefix + "v_proj.bias", Group::Attention, kv, 1, where, true);
    }
    t.put(prefix + "o_proj", Group::Attention, h, q, where, true);
    if (m.o_bias) t.put(prefix + "o_proj.bias", Group::Attention, h, 1, where, false);
}

// Multi-head latent attention (deepseek): queries through a q_lora_rank bottleneck (or straight),
// keys and values from a kv_lora_rank latent plus a shared rotary key.
void latent_attention(Tensors& t) {
    const ModelSpec& m = t.m;
    const std::uint64_t h = m.hidden_size, heads = m.num_attention_heads, qk = m.qk_nope_head_dim + m.qk_rope_head_dim;
    const Layers all = Layers::All;
    if (m.q_lora_rank) {
        t.put("q_a_proj", Group::Attention, m.q_lora_rank, h, all, false);
        if (m.qkv_bias) t.put("q_a_proj.bias", Group::Attention, m.q_lora_rank, 1, all, false);
        t.put("q_a_layernorm", Group::Attention, m.q_lora_rank, 1, all, false);
        t.put("q_b_proj", Group::Attention, heads * qk, m.q_lora_rank, all, true);
    } else {
        t.put("q_proj", Group::Attention, heads * qk, h, all, true);
    }
    t.put("kv_a_proj_with_mqa", Group::Attention, m.kv_lora_rank + m.qk_rope_head_dim, h, all, false);
    if (m.qkv_bias)
        t.put("kv_a_proj_with_mqa.bias", Group::Attention, m.kv_lora_rank + m.qk_rope_head_dim, 1, all, false);
    t.put("kv_a_layernorm", Group::Attention, m.kv_lora_rank, 1, all, false);
    t.put("kv_b_proj", Group::Attention, heads * (m.qk_nope_head_dim + m.v_head_dim), m.kv_lora_rank, all, true);
    t.put("o_proj", Group::Attention, h, heads * m.v_head_dim, all, true);
    if (m.o_bias) t.put("o_proj.bias", Group::Attention, h, 1, all, false);
}

// q_norm / k_norm: over one head (qwen3, gemma3) or over all heads (olmo2, cohere).
void qk_norms(Tensors& t) {
    const ModelSpec& m = t.m;
    if (m.qk_norm == ModelSpec::QKNorm::PerHead) {
        t.put("q_norm", Group::Attention, m.head_dim, 1, Layers::All, false);
        t.put("k_norm", Group::Attention, m.head_dim, 1, Layers::All, false);
    } else if (m.qk_norm == ModelSpec::QKNorm::Full) {
        t.put("q_norm", Group::Attention, m.num_attention_heads * m.head_dim, 1, Layers::All, true);
        t.put("k_norm", Group::Attention, m.num_key_value_heads * m.head_dim, 1, Layers::All, true);
    }
}

// t5 decoder blocks: EncDecAttention q/k/v/o and its layer norm; relative_attention_bias
// (buckets × heads) in the first block of each stack.
void encoder_decoder_attention(Tensors& t) {
    const ModelSpec& m = t.m;
    if (t.has_decoder_stack()) {
        attention(t, "cross_attn.", Layers::Decoder);
        t.norm("cross_attn_layernorm", Group::Norm, m.hidden_size, Layers::Decoder);
    }
    if (m.relative_attention_buckets) {
        t.put("encoder.relative_attention_bias", Group::Attention, m.relative_attention_buckets, m.num_attention_heads,
              Layers::None, true);
        if (m.num_layers > m.encoder_layers)
            t.put("decoder.relative_attention_bias", Group::Attention, m.relative_attention_buckets,
                  m.num_attention_heads, Layers::None, true);
    }
}

// One MLP of `width`, `copies` times (one per routed expert): gate/up/down or fc1/fc2, with biases
// when `bias`. The output projection is row-parallel, so its bias is whole on every rank.
void mlp(Tensors& t, const std::string& prefix, std::uint64_t width, Layers where, bool expert, std::uint64_t copies,
         bool bias) {
    const std::uint64_t h = t.m.hidden_size;
    auto put = [&](const char* name, std::uint64_t rows, std::uint64_t cols, bool tp) {
        Tensor x{prefix + name, Group::Mlp, rows, cols, where, tp, expert};
        for (std::uint64_t i = 0; i < copies; ++i) t.list.push_back(x);
    };
    if (t.m.gated_mlp) {
        put("gate_proj", width, h, true);
        put("up_proj", width, h, true);
        put("down_proj", h, width, true);
        if (bias) {
            put("gate_proj.bias", width, 1, true);
            put("up_proj.bias", width, 1, true);
            put("down_proj.bias", h, 1, false);
        }
    } else {
        put("fc1", width, h, true);
        put("fc2", h, width, true);
        if (bias) {
            put("fc1.bias", width, 1, true);
            put("fc2.bias", h, 1, false);
        }
    }
}

// The feed-forward part: a dense MLP in dense layers; in MoE layers a router, the routed experts
// (and a shared expert, with its gate for qwen2_moe).
void feed_forward(Tensors& t) {
    const ModelSpec& m = t.m;
    const std::uint64_t h = m.hidden_size;
    bool any_moe = std::find(m.moe_layer.begin(), m.moe_layer.end(), true) != m.moe_layer.end();
    bool any_dense =
        std::find(m.moe_layer.begin(), m.moe_layer.end(), false) != m.moe_layer.end() || m.moe_layer.empty();
    if (any_dense && m.intermediate_size > 0)
        mlp(t, "", m.intermediate_size, m.num_experts ? Layers::Dense : Layers::All, false, 1, m.mlp_bias);
    if (!any_moe) return;
    t.put("router", Group::Mlp, m.num_experts, h, Layers::Moe, false);
    if (m.router_bias) t.put("router.bias", Group::Mlp, m.num_experts, 1, Layers::Moe, false);
    mlp(t, "experts.", m.moe_intermediate_size, Layers::Moe, true, m.num_experts, m.expert_bias);
    if (m.shared_expert_intermediate_size) {
        mlp(t, "shared_expert.", m.shared_expert_intermediate_size, Layers::Moe, false, 1, false);
        if (m.shared_expert_gate) t.put("shared_expert_gate", Group::Mlp, 1, h, Layers::Moe, false);
    }
}

// MllamaCrossAttentionDecoderLayer: its cross_attn has llama's q/k/v/o (k/v read the projected image
// features, h wide) plus q_norm / k_norm RMSNorm(head_dim), and the layer gates attention and MLP
// with cross_attn_attn_gate / cross_attn_mlp_gate (one scalar each).
void mllama_cross_attention(Tensors& t) {
    if (t.m.cross_attention_layers.empty()) return;
    t.put("cross_attn.q_norm", Group::Attention, t.m.head_dim, 1, Layers::CrossAttention, false);
    t.put("cross_attn.k_norm", Group::Attention, t.m.head_dim, 1, Layers::CrossAttention, false);
    t.put("cross_attn_attn_gate", Group::Attention, 1, 1, Layers::CrossAttention, false);
    t.put("cross_attn_mlp_gate", Group::Mlp, 1, 1, Layers::CrossAttention, false);
}

// The norms of each layer (1 to 4, in this order), and the final norm of each stack (t5 has two).
void layer_norms(Tensors& t) {
    const ModelSpec& m = t.m;
    static const char* const kNormNames[] = {"input_layernorm", "post_attention_layernorm", "pre_feedforward_layernorm",
                                             "post_feedforward_layernorm"};
    for (std::uint64_t i = 0; i < m.norms_per_layer && i < 4; ++i)
        t.norm(kNormNames[i], Group::Norm, m.hidden_size, Layers::All);
    if (m.final_norm) t.norm("final_norm", Group::Norm, m.hidden_size, Layers::None);
    if (m.final_norm && t.has_decoder_stack()) t.norm("decoder.final_norm", Group::Norm, m.hidden_size, Layers::None);
}

// Heads: bert's pooler, the masked-LM transform (its decoder weight is the tied embedding), the
// next-sentence classifier; opt's projection out of h; the LM head of decoders.
void heads(Tensors& t) {
    const ModelSpec& m = t.m;
    const std::uint64_t h = m.hidden_size, e = t.embedding_width();
    const Layers none = Layers::None;
    if (m.pooler) {
        t.put("pooler.dense", Group::LmHead, h, h, none, false);
        t.put("pooler.dense.bias", Group::LmHead, h, 1, none, false);
    }
    if (m.mlm_head) {
        t.put("lm_head.transform.dense", Group::LmHead, h, h, none, false);
        t.put("lm_head.transform.dense.bias", Group::LmHead, h, 1, none, false);
        t.norm("lm_head.transform.layer_norm", Group::LmHead, h, none);
        t.put("lm_head.bias", Group::LmHead, m.vocab_size, 1, none, true);
    }
    if (m.nsp_head) {
        t.put("seq_relationship", Group::LmHead, 2, h, none, false);
        t.put("seq_relationship.bias", Group::LmHead, 2, 1, none, false);
    }
    if (t.projects_embeddings()) t.put("project_out", Group::LmHead, e, h, none, false);
    if (!m.tie_word_embeddings) t.put("lm_head", Group::LmHead, m.vocab_size, e, none, true);
    if (m.lm_head_bias) t.put("lm_head.bias", Group::LmHead, m.vocab_size, 1, none, true);
}

// Multimodal: the vision tower and projector, one tensor per copy.
void multimodal(Tensors& t) {
    for (const auto& [group, weights] :
         {std::pair<Group, const std::vector<ModelSpec::Weight>*>{Group::Vision, &t.m.vision_tower},
          {Group::Projector, &t.m.projector}})
        for (const ModelSpec::Weight& w : *weights)
            for (std::uint64_t i = 0; i < w.copies; ++i)
                t.put((group == Group::Vision ? "vision_tower." : "projector.") + w.name, group, w.rows, w.cols,
                      Layers::None, false);
}

}  // namespace

std::vector<Tensor> list_tensors(const ModelSpec& m) {
    if (m.hidden_size == 0 || m.num_layers == 0) return {};
    Tensors t{m, {}};
    embeddings(t);
    if (m.kv_lora_rank) latent_attention(t);
    else attention(t, "", Layers::All);
    qk_norms(t);
    encoder_decoder_attention(t);
    feed_forward(t);
    // gpt-oss: one learned sink logit per head.
    if (m.attention_sinks) t.put("sinks", Group::Attention, m.num_attention_heads, 1, Layers::All, true);
    mllama_cross_attention(t);
    layer_norms(t);
    heads(t);
    multimodal(t);
    return t.list;
}

std::uint64_t layer_count(const ModelSpec& m, Layers layers) {
    if (layers == Layers::None) return 0;
    if (layers == Layers::Decoder) return m.num_layers > m.encoder_layers ? m.num_layers - m.encoder_layers : 0;
    if (layers == Layers::CrossAttention) return m.cross_attention_layers.size();
    if (layers == Layers::All || m.moe_layer.size() != m.num_layers) return m.num_layers;
    auto moe = static_cast<std::uint64_t>(std::count(m.moe_layer.begin(), m.moe_layer.end(), true));
    return layers == Layers::Moe ? moe : m.num_layers - moe;
}

}  // namespace gpumem::detail
