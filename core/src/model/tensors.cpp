// The model as a list of weight tensors, the one place parameter counts come from.

#include <algorithm>

#include "model/model.h"

namespace gpumem::detail {

std::vector<Tensor> list_tensors(const ModelSpec& m) {
    std::vector<Tensor> t;
    if (m.hidden_size == 0 || m.num_layers == 0) return t;
    const std::uint64_t h = m.hidden_size, q = m.num_attention_heads * m.head_dim,
                        kv = m.num_key_value_heads * m.head_dim, I = m.intermediate_size;
    const std::uint64_t e = m.embedding_dim ? m.embedding_dim : h;  // width of the token embedding (opt-350m: 512)
    auto put = [&](const std::string& name, Group g, std::uint64_t rows, std::uint64_t cols, Layers where, bool tp) {
        t.push_back({name, g, rows, cols, where, tp, false});
    };
    auto add = [&](const char* name, Group g, std::uint64_t rows, std::uint64_t cols, bool layer, bool tp) {
        put(name, g, rows, cols, layer ? Layers::All : Layers::None, tp);
    };
    auto norm_in = [&](const std::string& name, Group g, std::uint64_t width, Layers where) {
        put(name, g, width, 1, where, false);
        if (m.norm == ModelSpec::Norm::Layer) put(name + ".bias", g, width, 1, where, false);
    };
    auto norm = [&](const char* name, Group g, std::uint64_t width, bool layer) {
        norm_in(name, g, width, layer ? Layers::All : Layers::None);
    };

    add("embed_tokens", Group::Embedding, m.vocab_size + m.extra_embedding_rows, e, false, true);  // vocab-parallel under Megatron
    if (m.embedding_dim && m.embedding_dim != h) add("project_in", Group::Embedding, h, e, false, false);
    if (m.learned_positions) add("embed_positions", Group::Embedding, m.learned_positions, h, false, false);
    if (m.token_types) add("token_type_embeddings", Group::Embedding, m.token_types, h, false, false);
    if (m.embedding_norm) norm("embed_norm", Group::Norm, h, false);

    // Attention: q, k, v, o (+ biases, + q/k norms), or multi-head latent attention.
    auto attention = [&](const std::string& prefix, Layers where) {
        put(prefix + "q_proj", Group::Attention, q, h, where, true);
        put(prefix + "k_proj", Group::Attention, kv, h, where, true);
        put(prefix + "v_proj", Group::Attention, kv, h, where, true);
        if (m.qkv_bias) {
            put(prefix + "q_proj.bias", Group::Attention, q, 1, where, true);
            put(prefix + "k_proj.bias", Group::Attention, kv, 1, where, true);
            put(prefix + "v_proj.bias", Group::Attention, kv, 1, where, true);
        }
        put(prefix + "o_proj", Group::Attention, h, q, where, true);
        if (m.o_bias) put(prefix + "o_proj.bias", Group::Attention, h, 1, where, false);
    };
    if (m.kv_lora_rank) {
        const std::uint64_t heads = m.num_attention_heads, qk = m.qk_nope_head_dim + m.qk_rope_head_dim;
        if (m.q_lora_rank) {
            add("q_a_proj", Group::Attention, m.q_lora_rank, h, true, false);
            if (m.qkv_bias) add("q_a_proj.bias", Group::Attention, m.q_lora_rank, 1, true, false);
            add("q_a_layernorm", Group::Attention, m.q_lora_rank, 1, true, false);
            add("q_b_proj", Group::Attention, heads * qk, m.q_lora_rank, true, true);
        } else {
            add("q_proj", Group::Attention, heads * qk, h, true, true);
        }
        add("kv_a_proj_with_mqa", Group::Attention, m.kv_lora_rank + m.qk_rope_head_dim, h, true, false);
        if (m.qkv_bias) add("kv_a_proj_with_mqa.bias", Group::Attention, m.kv_lora_rank + m.qk_rope_head_dim, 1, true, false);
        add("kv_a_layernorm", Group::Attention, m.kv_lora_rank, 1, true, false);
        add("kv_b_proj", Group::Attention, heads * (m.qk_nope_head_dim + m.v_head_dim), m.kv_lora_rank, true, true);
        add("o_proj", Group::Attention, h, heads * m.v_head_dim, true, true);
        if (m.o_bias) add("o_proj.bias", Group::Attention, h, 1, true, false);
    } else {
        attention("", Layers::All);
    }
    if (m.qk_norm == ModelSpec::QKNorm::PerHead) {
        add("q_norm", Group::Attention, m.head_dim, 1, true, false);
        add("k_norm", Group::Attention, m.head_dim, 1, true, false);
    } else if (m.qk_norm == ModelSpec::QKNorm::Full) {
        add("q_norm", Group::Attention, q, 1, true, true);
        add("k_norm", Group::Attention, kv, 1, true, true);
    }
    // t5 decoder blocks: EncDecAttention q/k/v/o and its layer norm; relative_attention_bias
    // (buckets × heads) in the first block of each stack.
    if (m.structure == ModelSpec::Structure::EncoderDecoder && m.num_layers > m.encoder_layers) {
        attention("cross_attn.", Layers::Decoder);
        norm_in("cross_attn_layernorm", Group::Norm, h, Layers::Decoder);
    }
    if (m.relative_attention_buckets) {
        add("encoder.relative_attention_bias", Group::Attention, m.relative_attention_buckets, m.num_attention_heads, false, true);
        if (m.num_layers > m.encoder_layers)
            add("decoder.relative_attention_bias", Group::Attention, m.relative_attention_buckets, m.num_attention_heads, false, true);
    }

    // MLP: a dense block in dense layers; in MoE layers a router, the routed experts (and a shared
    // expert, with its gate for qwen2_moe).
    bool any_moe = std::find(m.moe_layer.begin(), m.moe_layer.end(), true) != m.moe_layer.end();
    bool any_dense = std::find(m.moe_layer.begin(), m.moe_layer.end(), false) != m.moe_layer.end() || m.moe_layer.empty();
    auto mlp = [&](const char* prefix, std::uint64_t width, Layers where, bool expert, std::uint64_t copies, bool bias) {
        auto put = [&](const char* name, std::uint64_t rows, std::uint64_t cols, bool tp) {
            Tensor x{std::string(prefix) + name, Group::Mlp, rows, cols, where, tp, expert};
            for (std::uint64_t i = 0; i < copies; ++i) t.push_back(x);
        };
        if (m.gated_mlp) {
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
    };
    if (any_dense && I > 0) mlp("", I, m.num_experts ? Layers::Dense : Layers::All, false, 1, m.mlp_bias);
    if (any_moe) {
        t.push_back({"router", Group::Mlp, m.num_experts, h, Layers::Moe, false, false});
        if (m.router_bias) t.push_back({"router.bias", Group::Mlp, m.num_experts, 1, Layers::Moe, false, false});
        mlp("experts.", m.moe_intermediate_size, Layers::Moe, true, m.num_experts, m.expert_bias);
        if (m.shared_expert_intermediate_size) {
            mlp("shared_expert.", m.shared_expert_intermediate_size, Layers::Moe, false, 1, false);
            if (m.shared_expert_gate) t.push_back({"shared_expert_gate", Group::Mlp, 1, h, Layers::Moe, false, false});
        }
    }
    if (m.attention_sinks) add("sinks", Group::Attention, m.num_attention_heads, 1, true, true);
    // MllamaCrossAttentionDecoderLayer: its cross_attn has llama's q/k/v/o (k/v read the projected image
    // features, h wide) plus q_norm / k_norm RMSNorm(head_dim), and the layer gates attention and MLP
    // with cross_attn_attn_gate / cross_attn_mlp_gate (one scalar each).
    if (!m.cross_attention_layers.empty()) {
        put("cross_attn.q_norm", Group::Attention, m.head_dim, 1, Layers::CrossAttention, false);
        put("cross_attn.k_norm", Group::Attention, m.head_dim, 1, Layers::CrossAttention, false);
        put("cross_attn_attn_gate", Group::Attention, 1, 1, Layers::CrossAttention, false);
        put("cross_attn_mlp_gate", Group::Mlp, 1, 1, Layers::CrossAttention, false);
    }

    static const char* const kNormNames[] = {"input_layernorm", "post_attention_layernorm",
                                             "pre_feedforward_layernorm", "post_feedforward_layernorm"};
    for (std::uint64_t i = 0; i < m.norms_per_layer && i < 4; ++i) norm(kNormNames[i], Group::Norm, h, true);
    if (m.final_norm) norm("final_norm", Group::Norm, h, false);
    if (m.final_norm && m.structure == ModelSpec::Structure::EncoderDecoder && m.num_layers > m.encoder_layers)
        norm("decoder.final_norm", Group::Norm, h, false);  // t5: one final_layer_norm per stack

    // Heads: bert's pooler, the masked-LM transform (its decoder weight is the tied embedding), the
    // next-sentence classifier; the LM head of decoders.
    if (m.pooler) {
        add("pooler.dense", Group::LmHead, h, h, false, false);
        add("pooler.dense.bias", Group::LmHead, h, 1, false, false);
    }
    if (m.mlm_head) {
        add("lm_head.transform.dense", Group::LmHead, h, h, false, false);
        add("lm_head.transform.dense.bias", Group::LmHead, h, 1, false, false);
        norm("lm_head.transform.layer_norm", Group::LmHead, h, false);
        add("lm_head.bias", Group::LmHead, m.vocab_size, 1, false, true);
    }
    if (m.nsp_head) {
        add("seq_relationship", Group::LmHead, 2, h, false, false);
        add("seq_relationship.bias", Group::LmHead, 2, 1, false, false);
    }
    if (m.embedding_dim && m.embedding_dim != h) add("project_out", Group::LmHead, e, h, false, false);
    if (!m.tie_word_embeddings) add("lm_head", Group::LmHead, m.vocab_size, e, false, true);
    if (m.lm_head_bias) add("lm_head.bias", Group::LmHead, m.vocab_size, 1, false, true);

    // Multimodal: the vision tower and projector, one tensor per copy.
    for (const auto& [group, weights] : {std::pair<Group, const std::vector<ModelSpec::Weight>*>{Group::Vision, &m.vision_tower},
                                         {Group::Projector, &m.projector}})
        for (const ModelSpec::Weight& w : *weights)
            for (std::uint64_t i = 0; i < w.copies; ++i) put((group == Group::Vision ? "vision_tower." : "projector.") + w.name, group, w.rows, w.cols, Layers::None, false);
    return t;
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
