// Reading a Hugging Face config.json into a ModelSpec.

#include <algorithm>

#include "model/reading.h"

namespace gpumem::detail {

namespace {

void read_quantization(const json& q, ModelSpec& m) {
    if (!q.is_object()) return;
    ModelSpec::Quantization x;
    x.method = q.contains("quant_method") && q["quant_method"].is_string() ? q["quant_method"].get<std::string>() : "";
    auto flag = [&](const char* k) { return q.contains(k) && q[k].is_boolean() && q[k].get<bool>(); };
    auto str = [&](const char* k) { return q.contains(k) && q[k].is_string() ? q[k].get<std::string>() : std::string(); };
    if (x.method.empty() && (flag("load_in_4bit") || flag("load_in_8bit"))) x.method = "bitsandbytes";
    if (x.method == "bitsandbytes") {
        x.bits = flag("load_in_4bit") ? 4 : 8;
        if (x.bits == 4) x.quant_type = str("bnb_4bit_quant_type").empty() ? "fp4" : str("bnb_4bit_quant_type");
        x.double_quant = flag("bnb_4bit_use_double_quant");
    } else if (x.method == "gptq" || x.method == "awq") {
        x.bits = uint_or(q, "bits", uint_or(q, "w_bit", 4));
        // group_size -1 means one scale per output channel (0 here).
        for (const char* k : {"group_size", "q_group_size"})
            if (q.contains(k) && q[k].is_number_integer()) x.group_size = q[k].get<std::int64_t>() > 0 ? q[k].get<std::uint64_t>() : 0;
    } else if (x.method == "fp8") {
        x.bits = 8;
        x.quant_type = str("fmt").empty() ? "e4m3" : str("fmt");
        if (q.contains("weight_block_size") && q["weight_block_size"].is_array())
            for (const json& b : q["weight_block_size"])
                if (b.is_number_unsigned()) x.weight_block_size.push_back(b.get<std::uint64_t>());
    } else if (x.method == "mxfp4") {
        x.bits = 4;  // e2m1 values, one e8m0 scale per 32
        x.group_size = 32;
    }
    for (const char* k : {"modules_to_not_convert", "llm_int8_skip_modules"})
        if (q.contains(k) && q[k].is_array())
            for (const json& s : q[k])
                if (s.is_string()) x.modules_not_converted.push_back(s.get<std::string>());
    m.quantization = x;
}

}  // namespace

}  // namespace gpumem::detail

namespace gpumem {

using namespace detail;

ModelRead read_hf_config(const json& config, const std::string& prefix) {
    ModelRead out;
    if (!config.is_object()) {
        out.issues.push_back({prefix, "must be a config.json object", show(config)});
        return out;
    }
    std::string outer = config.contains("model_type") && config["model_type"].is_string()
                            ? config["model_type"].get<std::string>() : "";
    // Multimodal wrappers keep the language model in text_config (qwen2_vl: at the top level) and the
    // tower in vision_config. A nested text_config is completed with its config class's defaults.
    bool nested = config.contains("text_config") && config["text_config"].is_object();
    json lm = nested ? config["text_config"] : config;
    if (nested) {
        std::string t = lm.contains("model_type") && lm["model_type"].is_string() ? lm["model_type"].get<std::string>()
                        : outer == "llava" ? "llama" : outer == "gemma3" ? "gemma3_text" : "";
        json full = text_config_defaults(t);
        for (auto it = lm.begin(); it != lm.end(); ++it) full[it.key()] = it.value();
        if (!t.empty()) full["model_type"] = t;
        lm = full;
    }
    const std::string cp = !nested ? prefix : (prefix.empty() ? "text_config" : prefix + ".text_config");

    std::string type = lm.contains("model_type") && lm["model_type"].is_string() ? lm["model_type"].get<std::string>() : "";
    if (type.empty()) type = outer;
    // dbrx nests its attention and expert fields; read them under the standard names.
    if (type == "dbrx") {
        const json none = json::object();
        const json& a = lm.contains("attn_config") && lm["attn_config"].is_object() ? lm["attn_config"] : none;
        const json& f = lm.contains("ffn_config") && lm["ffn_config"].is_object() ? lm["ffn_config"] : none;
        // DbrxAttentionConfig() kv_n_heads 1; DbrxFFNConfig() ffn_hidden_size 3584, 4 experts, top 1.
        lm["num_key_value_heads"] = uint_or(a, "kv_n_heads", 1);
        lm["intermediate_size"] = uint_or(f, "ffn_hidden_size", 3584);
        lm["num_local_experts"] = uint_or(f, "moe_num_experts", 4);
        lm["num_experts_per_tok"] = uint_or(f, "moe_top_k", 1);
    }
    FieldReader r(lm, cp, out.issues);
    const json& c = lm;

    ModelSpec m;
    m.model_type = outer.empty() ? (type.empty() ? "unknown" : type) : outer;
    Family f = family_of(type, c);
    m.known_family = f.known;
    if (!f.known)
        out.warnings.push_back("model_type '" + (type.empty() ? std::string("unknown") : type) +
                               "' is not a known family: read as a generic llama-style decoder (gated MLP, "
                               "RMSNorm, rotary positions); the parameter count may be off");
    if (config.contains("architectures") && config["architectures"].is_array() && !config["architectures"].empty() &&
        config["architectures"][0].is_string())
        m.architecture = config["architectures"][0].get<std::string>();

    auto need = [&](std::initializer_list<const char*> keys, std::uint64_t max) -> std::uint64_t {
        std::string key = first_key(c, keys);
        if (key.empty()) {
            std::string names;
            for (const char* k : keys) names += std::string(names.empty() ? "" : " or ") + k;
            out.issues.push_back({r.path(*keys.begin()), "is required (" + names + ")", ""});
            return 0;
        }
        return r.uint(key, 1, max).value_or(0);
    };
    // BloomConfig takes the hand-written n_embed of the BigScience files over hidden_size.
    m.hidden_size = type == "bloom" && c.contains("n_embed") ? r.uint("n_embed", 1, kMaxDim).value_or(0)
                                                              : need({"hidden_size", "n_embd", "d_model"}, kMaxDim);
    m.num_layers = need({"num_hidden_layers", "n_layer", "num_layers", "n_layers"}, kMaxLayers);
    m.num_attention_heads = need({"num_attention_heads", "n_head", "num_heads", "n_heads"}, kMaxDim);
    m.vocab_size = need({"vocab_size"}, kMaxDim * 4);
    if (!out.issues.empty()) return out;

    std::string kv_key = first_key(c, {"num_key_value_heads", "n_head_kv", "num_kv_heads"});
    m.num_key_value_heads = kv_key.empty() ? m.num_attention_heads : r.uint(kv_key, 1, kMaxDim).value_or(0);
    if (type == "falcon") {
        // FalconAttention: fused query_key_value of (heads + 2 × kv heads) × head_dim rows, where kv heads
        // is num_kv_heads with new_decoder_architecture, 1 with multi_query (the default), else heads.
        bool new_arch = r.boolean("new_decoder_architecture").value_or(false);
        bool multi_query = r.boolean("multi_query").value_or(true);
        m.num_key_value_heads = new_arch ? (kv_key.empty() ? m.num_attention_heads : m.num_key_value_heads)
                                         : multi_query ? 1 : m.num_attention_heads;
        // Parallel blocks have ln_attn + ln_mlp when num_ln_in_parallel_attn is 2 (the default with the
        // new architecture), else one input_layernorm; sequential blocks have input + post-attention.
        std::uint64_t ln = uint_or(c, "num_ln_in_parallel_attn", new_arch ? 2 : 1);
        f.norms_per_layer = !f.parallel || ln == 2 ? 2 : 1;
    }
    if (type == "gpt_bigcode" && r.boolean("multi_query").value_or(true)) m.num_key_value_heads = 1;
    std::string hd_key = first_key(c, {"head_dim", "d_kv"});
    m.head_dim = hd_key.empty() ? m.hidden_size / m.num_attention_heads : r.uint(hd_key, 1, kMaxDim).value_or(0);
    if (hd_key.empty() && m.hidden_size % m.num_attention_heads != 0)
        out.issues.push_back({r.path("num_attention_heads"), "must divide hidden_size (" +
                              std::to_string(m.hidden_size) + ") when head_dim is not given",
                              std::to_string(m.num_attention_heads)});
    if (m.num_key_value_heads && m.num_attention_heads % m.num_key_value_heads != 0)
        out.issues.push_back({r.path(kv_key), "must divide num_attention_heads (" +
                              std::to_string(m.num_attention_heads) + ")", std::to_string(m.num_key_value_heads)});
    std::string inter_key = first_key(c, {"intermediate_size", "n_inner", "ffn_hidden_size", "ffn_dim", "d_ff"});
    m.intermediate_size = inter_key.empty() ? 4 * m.hidden_size : r.uint(inter_key, 1, kMaxDim * 4).value_or(0);
    if (type == "mpt") m.intermediate_size = 4 * m.hidden_size;  // MptMLP: up_proj is 4 × hidden (expansion_ratio unused)
    std::string pos_key = first_key(c, {"max_position_embeddings", "n_positions", "n_ctx", "seq_length", "max_seq_len"});
    m.max_position_embeddings = pos_key.empty() ? 0 : r.uint(pos_key, 1, 1ull << 32).value_or(0);

    m.gated_mlp = f.gated;
    m.qkv_bias = f.qkv_bias;
    m.o_bias = f.o_bias;
    m.mlp_bias = f.mlp_bias;
    m.lm_head_bias = f.lm_head_bias;
    m.norm = f.norm;
    m.norms_per_layer = f.norms_per_layer;
    m.qk_norm = f.qk_norm;
    m.parallel_block = f.parallel;
    if (f.learned_positions) m.learned_positions = m.max_position_embeddings + f.position_offset;
    m.tie_word_embeddings = r.boolean("tie_word_embeddings").value_or(f.tie_default);
    m.attention_sinks = f.sinks;
    m.embedding_norm = f.embedding_norm;
    m.final_norm = f.final_norm;
    m.structure = f.structure;

    if (type == "opt") {
        // OPTDecoder: embed_tokens is vocab × word_embed_proj_dim, with project_in / project_out
        // (no bias) when that differs from hidden_size (opt-350m); the tied lm_head has its width.
        std::uint64_t wep = uint_or(c, "word_embed_proj_dim", m.hidden_size);
        if (wep != m.hidden_size) m.embedding_dim = wep;
        if (!r.boolean("layer_norm_elementwise_affine").value_or(true)) m.norms_per_layer = 0;
    } else if (type == "bert" || type == "roberta") {
        // BertEmbeddings: position table of max_position_embeddings rows (roberta's 514 already holds its
        // padding offset) and type_vocab_size token types (BertConfig() 2, roberta-base 1).
        m.token_types = uint_or(c, "type_vocab_size", 2);
        // The head is the class's: *Model has the pooler, *ForMaskedLM / *ForCausalLM the LM head
        // transform (dense + LayerNorm + a vocab bias; the decoder weight is tied), BertForPreTraining both
        // plus the next-sentence classifier.
        const std::string& a = m.architecture;
        auto ends = [&](const char* suffix) {
            std::string s = suffix;
            return a.size() >= s.size() && a.compare(a.size() - s.size(), s.size(), s) == 0;
        };
        if (ends("ForMaskedLM") || ends("ForCausalLM") || ends("LMHeadModel")) {
            m.mlm_head = true;
        } else if (ends("ForPreTraining")) {
            m.pooler = m.mlm_head = m.nsp_head = true;
        } else {
            m.pooler = true;
            if (!a.empty() && !ends("Model"))
                out.warnings.push_back("architecture '" + a + "': counted as the base model with its pooler; the "
                                       "task head is not counted");
        }
    } else if (type == "t5" || type == "mt5") {
        // T5Config: num_layers encoder blocks, num_decoder_layers (default num_layers) decoder blocks;
        // relative_attention_bias (buckets × heads) in the first block of each stack; the shared
        // embedding is counted once; feed_forward_proj "gated-gelu" (t5 v1.1, flan-t5) has wi_0 and wi_1.
        std::uint64_t enc = m.num_layers;
        std::uint64_t dec = r.uint("num_decoder_layers", 1, kMaxLayers).value_or(enc);
        const bool encoder_only = m.architecture == "T5EncoderModel" || m.architecture == "MT5EncoderModel";
        if (encoder_only) dec = 0;
        m.encoder_layers = enc;
        m.num_layers = enc + dec;
        m.relative_attention_buckets = uint_or(c, "relative_attention_num_buckets", 32);
        std::string ff = c.contains("feed_forward_proj") && c["feed_forward_proj"].is_string()
                             ? c["feed_forward_proj"].get<std::string>() : type == "mt5" ? "gated-gelu" : "relu";
        m.gated_mlp = ff.rfind("gated-", 0) == 0;
        if (encoder_only || m.architecture == "T5Model" || m.architecture == "MT5Model") m.tie_word_embeddings = true;  // no lm_head
        if (dec == 0) m.structure = ModelSpec::Structure::Encoder;
    }

    // Multi-head latent attention (DeepseekV2/V3Attention): q_a_proj (bias = attention_bias),
    // q_a_layernorm, q_b_proj (or q_proj when q_lora_rank is null); kv_a_proj_with_mqa (bias =
    // attention_bias), kv_a_layernorm, kv_b_proj; o_proj (bias = attention_bias).
    if (f.mla) {
        m.q_lora_rank = uint_or(c, "q_lora_rank", 0);
        m.kv_lora_rank = need({"kv_lora_rank"}, kMaxDim);
        m.qk_nope_head_dim = need({"qk_nope_head_dim"}, kMaxDim);
        m.qk_rope_head_dim = need({"qk_rope_head_dim"}, kMaxDim);
        m.v_head_dim = need({"v_head_dim"}, kMaxDim);
        m.head_dim = m.qk_nope_head_dim + m.qk_rope_head_dim;  // the width of a query / key head
        m.num_key_value_heads = m.num_attention_heads;          // kv_b_proj expands the latent per head
        m.mtp_layers = uint_or(c, "num_nextn_predict_layers", 0);
        if (!out.issues.empty()) return out;
    }

    // mllama's text model: cross_attention_layers lists the layers that attend to the image; its
    // embed_tokens has vocab_size + 8 rows (MllamaTextModel), its lm_head vocab_size.
    if (type == "mllama_text_model") {
        if (c.contains("cross_attention_layers") && c["cross_attention_layers"].is_array())
            for (const json& i : c["cross_attention_layers"])
                if (i.is_number_integer() && i.get<std::int64_t>() >= 0 && i.get<std::uint64_t>() < m.num_layers)
                    m.cross_attention_layers.push_back(i.get<std::uint64_t>());
        m.extra_embedding_rows = 8;
    }

    // Experts: which layers route, how many experts, how wide, how many per token.
    m.moe_layer.assign(m.num_layers, false);
    if (f.moe) {
        std::string ek = first_key(c, {"num_local_experts", "num_experts", "n_routed_experts"});
        std::string kk = first_key(c, {"num_experts_per_tok", "experts_per_token", "num_experts_per_token"});
        if (ek.empty()) out.issues.push_back({r.path("num_local_experts"), "is required for a mixture-of-experts model (or num_experts)", ""});
        if (kk.empty()) out.issues.push_back({r.path("num_experts_per_tok"), "is required for a mixture-of-experts model", ""});
        if (!out.issues.empty()) return out;
        m.num_experts = r.uint(ek, 1, 1 << 16).value_or(0);
        m.num_experts_per_tok = r.uint(kk, 1, 1 << 16).value_or(0);
        if (m.num_experts && m.num_experts_per_tok > m.num_experts)
            out.issues.push_back({r.path(kk), "must be at most the number of experts (" + std::to_string(m.num_experts) + ")",
                                  std::to_string(m.num_experts_per_tok)});
        std::string wk = first_key(c, {"moe_intermediate_size"});
        m.moe_intermediate_size = wk.empty() ? m.intermediate_size : r.uint(wk, 1, kMaxDim * 4).value_or(0);
        if (f.shared_expert)
            m.shared_expert_intermediate_size = r.uint("shared_expert_intermediate_size", 1, kMaxDim * 4).value_or(0);
        m.expert_bias = f.expert_bias;
        m.router_bias = f.router_bias;
        if (f.mla) {
            // DeepseekV2/V3MoE: n_shared_experts always-on experts as one MLP of that many times the
            // expert width (no gate); the first first_k_dense_replace layers (and those off
            // moe_layer_freq) are dense with intermediate_size. V3's router (topk_method noaux_tc) keeps
            // e_score_correction_bias, one per routed expert, stored in the checkpoint.
            m.shared_expert_intermediate_size = uint_or(c, "n_shared_experts", 0) * m.moe_intermediate_size;
            m.shared_expert_gate = false;
            std::string topk = c.contains("topk_method") && c["topk_method"].is_string() ? c["topk_method"].get<std::string>() : "";
            m.router_bias = type == "deepseek_v3" || topk == "noaux_tc";
            std::uint64_t first_dense = uint_or(c, "first_k_dense_replace", 0);
            std::uint64_t freq = std::max<std::uint64_t>(1, uint_or(c, "moe_layer_freq", 1));
            for (std::uint64_t i = 0; i < m.num_layers; ++i) m.moe_layer[i] = i >= first_dense && i % freq == 0;
        } else {
            // qwen2/3_moe: every decoder_sparse_step-th layer routes, except those in mlp_only_layers.
            std::uint64_t step = c.contains("decoder_sparse_step") && c["decoder_sparse_step"].is_number_unsigned()
                                     ? std::max<std::uint64_t>(1, c["decoder_sparse_step"].get<std::uint64_t>()) : 1;
            for (std::uint64_t i = 0; i < m.num_layers; ++i) m.moe_layer[i] = (i + 1) % step == 0;
            if (c.contains("mlp_only_layers") && c["mlp_only_layers"].is_array())
                for (const json& i : c["mlp_only_layers"])
                    if (i.is_number_unsigned() && i.get<std::uint64_t>() < m.num_layers) m.moe_layer[i.get<std::uint64_t>()] = false;
        }
    }

    for (const char* k : {"attention_dropout", "attn_pdrop", "attention_probs_dropout_prob"})
        if (c.contains(k) && c[k].is_number()) m.attention_dropout = c[k].get<double>();
    for (const char* k : {"resid_pdrop", "hidden_dropout", "hidden_dropout_prob", "dropout_rate", "dropout"})
        if (c.contains(k) && c[k].is_number()) m.hidden_dropout = c[k].get<double>();
    if (c.contains("attn_logit_softcapping") && c["attn_logit_softcapping"].is_number())
        m.attn_logit_softcapping = c["attn_logit_softcapping"].get<double>();

    // Per-layer attention: explicit layer_types wins, else the family's sliding-window pattern.
    m.layer_attention.assign(m.num_layers, LayerAttention::Full);
    std::uint64_t window = 0;
    if (std::string wk = first_key(c, {"sliding_window"}); !wk.empty() && c[wk].is_number_unsigned())
        window = c[wk].get<std::uint64_t>();
    bool qwen_sliding = c.contains("use_sliding_window") && c["use_sliding_window"].is_boolean() &&
                        c["use_sliding_window"].get<bool>();
    if (c.contains("layer_types") && c["layer_types"].is_array() && c["layer_types"].size() == m.num_layers) {
        for (std::size_t i = 0; i < m.num_layers; ++i)
            if (c["layer_types"][i] == "sliding_attention") m.layer_attention[i] = LayerAttention::SlidingWindow;
    } else if (window > 0) {
        std::uint64_t max_window_layers = c.contains("max_window_layers") && c["max_window_layers"].is_number_unsigned()
                                              ? c["max_window_layers"].get<std::uint64_t>() : m.num_layers;
        std::uint64_t pattern = std::max<std::uint64_t>(1, uint_or(c, "sliding_window_pattern", 6));
        for (std::size_t i = 0; i < m.num_layers; ++i) {
            bool sliding = false;
            switch (f.window) {
                case Family::Window::AllLayers: sliding = true; break;
                case Family::Window::EvenLayers: sliding = i % 2 == 0; break;
                case Family::Window::QwenUpper: sliding = qwen_sliding && i >= max_window_layers; break;
                case Family::Window::EveryNth: sliding = (i + 1) % pattern != 0; break;
                case Family::Window::None: break;
            }
            if (sliding) m.layer_attention[i] = LayerAttention::SlidingWindow;
        }
    }
    if (std::any_of(m.layer_attention.begin(), m.layer_attention.end(),
                    [](LayerAttention a) { return a == LayerAttention::SlidingWindow; }))
        m.sliding_window = window;

    std::string dtype_key = first_key(c, {"torch_dtype", "dtype"});
    if (dtype_key.empty()) dtype_key = first_key(config, {"torch_dtype", "dtype"});
    const json& dtype_src = c.contains(dtype_key) ? c : config;
    if (!dtype_key.empty() && dtype_src[dtype_key].is_string()) {
        std::string d = normalize_dtype(dtype_src[dtype_key].get<std::string>());
        if (dtype_bytes(d)) m.checkpoint_dtype = d;
    } else {
        m.checkpoint_dtype = "fp32";  // transformers' default when the config names none
    }
    if (config.contains("quantization_config")) read_quantization(config["quantization_config"], m);
    else if (c.contains("quantization_config")) read_quantization(c["quantization_config"], m);
    // A quantized checkpoint that names no dtype (gpt-oss) stores its unquantized tensors in bf16.
    if (dtype_key.empty() && m.quantization) m.checkpoint_dtype = "bf16";

    // The vision tower and projector of a multimodal wrapper.
    if (config.contains("vision_config") && config["vision_config"].is_object()) {
        const json& v = config["vision_config"];
        bool known_tower = read_vision_tower(outer, v, m, m.hidden_size);
        // Gemma 3 pools each image to mm_tokens_per_image soft tokens (256 in Gemma3Config()).
        if (known_tower && outer == "gemma3")
            m.vision_shape.tokens_per_image = config.contains("mm_tokens_per_image") && config["mm_tokens_per_image"].is_number_unsigned()
                                                  ? config["mm_tokens_per_image"].get<std::uint64_t>() : 256;
        if (!known_tower) {
            out.warnings.push_back("vision tower '" + m.vision_model_type + "' of '" + outer +
                                   "' is not known: only the language model is counted");
        } else if (outer == "llava" && m.vision_model_type != "qwen2_vl") {
            if (config.contains("image_seq_length") && config["image_seq_length"].is_number_unsigned())
                m.vision_shape.tokens_per_image = config["image_seq_length"].get<std::uint64_t>();
            // LlavaMultiModalProjector: linear_1 (vision h × number of feature layers → text h) and
            // linear_2 (text h → text h), with bias unless multimodal_projector_bias is false.
            std::uint64_t vh = uint_or(v, "hidden_size", 768);
            std::uint64_t feats = config.contains("vision_feature_layer") && config["vision_feature_layer"].is_array()
                                      ? config["vision_feature_layer"].size() : 1;
            bool bias = !config.contains("multimodal_projector_bias") || !config["multimodal_projector_bias"].is_boolean() ||
                        config["multimodal_projector_bias"].get<bool>();
            linear(m.projector, "linear_1", m.hidden_size, vh * feats, bias);
            linear(m.projector, "linear_2", m.hidden_size, m.hidden_size, bias);
        } else if (outer != "llava" && outer != "gemma3" && outer != "qwen2_vl" && outer != "qwen2_5_vl" &&
                   outer != "mllama") {
            m.vision_tower.clear();
            m.projector.clear();
            out.warnings.push_back("multimodal model_type '" + outer + "': only the language model is counted");
        }
    }

    std::string name_key = first_key(config, {"_name_or_path"});
    if (!name_key.empty() && config[name_key].is_string()) m.name = config[name_key].get<std::string>();
    if (!out.issues.empty()) return out;
    out.model = m;
    return out;
}

}  // namespace gpumem
