// Reading a Hugging Face config.json into a ModelSpec: read_hf_config and its phases, in the order
// it runs them. The family facts come from families.cpp, the vision tower from vision.cpp.

#include <algorithm>

#include "model/reading.h"

namespace gpumem::detail {

namespace {

// The language model's part of a config.json.
struct LanguageModel {
    json fields;         // its fields: config.json itself, or a wrapper's completed text_config
    std::string prefix;  // where they stand in config.json, for issues
    std::string type;    // its model_type; the wrapper's when it names none
};

// What the phases read: the whole config.json, the language model's fields and a reader that puts
// issues under their path, and the model_types. Phases write to `out` (issues, warnings).
struct Source {
    const json& config;
    const json& c;
    FieldReader& r;
    ModelRead& out;
    const std::string& type;   // the language model's model_type
    const std::string& outer;  // config.json's own model_type (a multimodal wrapper's)
};

// dbrx nests its attention and expert fields; they are copied under the standard names.
void flatten_dbrx_fields(json& lm) {
    const json none = json::object();
    const json& a = lm.contains("attn_config") && lm["attn_config"].is_object() ? lm["attn_config"] : none;
    const json& f = lm.contains("ffn_config") && lm["ffn_config"].is_object() ? lm["ffn_config"] : none;
    // DbrxAttentionConfig() kv_n_heads 1; DbrxFFNConfig() ffn_hidden_size 3584, 4 experts, top 1.
    lm["num_key_value_heads"] = uint_or(a, "kv_n_heads", 1);
    lm["intermediate_size"] = uint_or(f, "ffn_hidden_size", 3584);
    lm["num_local_experts"] = uint_or(f, "moe_num_experts", 4);
    lm["num_experts_per_tok"] = uint_or(f, "moe_top_k", 1);
}

// Multimodal wrappers keep the language model in text_config (qwen2_vl: at the top level) and the
// tower in vision_config. A nested text_config is completed with its config class's defaults.
LanguageModel language_model_of(const json& config, const std::string& outer, const std::string& prefix) {
    const bool nested = config.contains("text_config") && config["text_config"].is_object();
    LanguageModel lm{nested ? config["text_config"] : config, prefix, ""};
    if (nested) {
        std::string t = string_or(lm.fields, "model_type",
                                  outer == "llava"    ? "llama"
                                  : outer == "gemma3" ? "gemma3_text"
                                                      : "");
        json full = text_config_defaults(t);
        for (auto it = lm.fields.begin(); it != lm.fields.end(); ++it) full[it.key()] = it.value();
        if (!t.empty()) full["model_type"] = t;
        lm.fields = full;
        lm.prefix = prefix.empty() ? "text_config" : prefix + ".text_config";
    }
    lm.type = string_or(lm.fields, "model_type", "");
    if (lm.type.empty()) lm.type = outer;
    if (lm.type == "dbrx") flatten_dbrx_fields(lm.fields);
    return lm;
}

// Which model this is: its model_type, whether its family is known (a warning when not), the class
// that is counted (architectures[0]).
void read_identity(const Source& s, const Family& f, ModelSpec& m) {
    m.model_type = s.outer.empty() ? (s.type.empty() ? "unknown" : s.type) : s.outer;
    m.known_family = f.known;
    if (!f.known)
        s.out.warnings.push_back("model_type '" + (s.type.empty() ? std::string("unknown") : display_text(s.type)) +
                                 "' is not a known family: read as a generic llama-style decoder (gated MLP, "
                                 "RMSNorm, rotary positions); the parameter count may be off");
    const json& config = s.config;
    if (config.contains("architectures") && config["architectures"].is_array() && !config["architectures"].empty() &&
        config["architectures"][0].is_string())
        m.architecture = config["architectures"][0].get<std::string>();
}

// A size the model cannot be read without, under the first of its names the config uses; an issue
// naming them all when none is there.
std::uint64_t required_uint(const Source& s, std::initializer_list<const char*> keys, std::uint64_t max) {
    std::string key = first_key(s.c, keys);
    if (key.empty()) {
        std::string names;
        for (const char* k : keys) names += std::string(names.empty() ? "" : " or ") + k;
        s.out.issues.push_back({s.r.path(*keys.begin()), "is required (" + names + ")", ""});
        return 0;
    }
    return s.r.uint(key, 1, max).value_or(0);
}

// The four sizes every model has.
void read_sizes(const Source& s, ModelSpec& m) {
    // BloomConfig takes the hand-written n_embed of the BigScience files over hidden_size.
    m.hidden_size = s.type == "bloom" && s.c.contains("n_embed")
                        ? s.r.uint("n_embed", 1, kMaxDim).value_or(0)
                        : required_uint(s, {"hidden_size", "n_embd", "d_model"}, kMaxDim);
    m.num_layers = required_uint(s, {"num_hidden_layers", "n_layer", "num_layers", "n_layers"}, kMaxLayers);
    m.num_attention_heads = required_uint(s, {"num_attention_heads", "n_head", "num_heads", "n_heads"}, kMaxDim);
    m.vocab_size = required_uint(s, {"vocab_size"}, kMaxDim * 4);
}

// FalconAttention: fused query_key_value of (heads + 2 × kv heads) × head_dim rows, where kv heads
// is num_kv_heads with new_decoder_architecture, 1 with multi_query (the default), else heads.
void read_falcon_layout(const Source& s, bool kv_given, Family& f, ModelSpec& m) {
    bool new_arch = s.r.boolean("new_decoder_architecture").value_or(false);
    bool multi_query = s.r.boolean("multi_query").value_or(true);
    m.num_key_value_heads = new_arch      ? (kv_given ? m.num_key_value_heads : m.num_attention_heads)
                            : multi_query ? 1
                                          : m.num_attention_heads;
    // Parallel blocks have ln_attn + ln_mlp when num_ln_in_parallel_attn is 2 (the default with the
    // new architecture), else one input_layernorm; sequential blocks have input + post-attention.
    std::uint64_t ln = uint_or(s.c, "num_ln_in_parallel_attn", new_arch ? 2 : 1);
    f.norms_per_layer = !f.parallel || ln == 2 ? 2 : 1;
}

// Key/value heads: as many as the query heads unless the config says; falcon's and gpt_bigcode's
// multi-query switches. Returns the key they were read from ("" when none), for issues.
std::string read_kv_heads(const Source& s, Family& f, ModelSpec& m) {
    std::string kv_key = first_key(s.c, {"num_key_value_heads", "n_head_kv", "num_kv_heads"});
    m.num_key_value_heads = kv_key.empty() ? m.num_attention_heads : s.r.uint(kv_key, 1, kMaxDim).value_or(0);
    if (s.type == "falcon") read_falcon_layout(s, !kv_key.empty(), f, m);
    if (s.type == "gpt_bigcode" && s.r.boolean("multi_query").value_or(true)) m.num_key_value_heads = 1;
    return kv_key;
}

// head_dim (else hidden_size over the heads, which must divide it), the MLP width and the context.
void read_widths(const Source& s, const std::string& kv_key, ModelSpec& m) {
    std::string hd_key = first_key(s.c, {"head_dim", "d_kv"});
    m.head_dim = hd_key.empty() ? m.hidden_size / m.num_attention_heads : s.r.uint(hd_key, 1, kMaxDim).value_or(0);
    if (hd_key.empty() && m.hidden_size % m.num_attention_heads != 0)
        s.out.issues.push_back(
            {s.r.path("num_attention_heads"),
             "must divide hidden_size (" + std::to_string(m.hidden_size) + ") when head_dim is not given",
             std::to_string(m.num_attention_heads)});
    if (m.num_key_value_heads && m.num_attention_heads % m.num_key_value_heads != 0)
        s.out.issues.push_back({s.r.path(kv_key),
                                "must divide num_attention_heads (" + std::to_string(m.num_attention_heads) + ")",
                                std::to_string(m.num_key_value_heads)});
    std::string inter_key = first_key(s.c, {"intermediate_size", "n_inner", "ffn_hidden_size", "ffn_dim", "d_ff"});
    m.intermediate_size = inter_key.empty() ? 4 * m.hidden_size : s.r.uint(inter_key, 1, kMaxDim * 4).value_or(0);
    if (s.type == "mpt")
        m.intermediate_size = 4 * m.hidden_size;  // MptMLP: up_proj is 4 × hidden (expansion_ratio unused)
    std::string pos_key =
        first_key(s.c, {"max_position_embeddings", "n_positions", "n_ctx", "seq_length", "max_seq_len"});
    m.max_position_embeddings = pos_key.empty() ? 0 : s.r.uint(pos_key, 1, 1ull << 32).value_or(0);
}

// The family's switches on the decoder shape; tie_word_embeddings overrides the family's default.
void apply_family(const Source& s, const Family& f, ModelSpec& m) {
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
    m.tie_word_embeddings = s.r.boolean("tie_word_embeddings").value_or(f.tie_default);
    m.attention_sinks = f.sinks;
    m.embedding_norm = f.embedding_norm;
    m.final_norm = f.final_norm;
    m.structure = f.structure;
}

// OPTDecoder: embed_tokens is vocab × word_embed_proj_dim, with project_in / project_out (no bias)
// when that differs from hidden_size (opt-350m); the tied lm_head has its width.
void read_opt_fields(const Source& s, ModelSpec& m) {
    std::uint64_t wep = uint_or(s.c, "word_embed_proj_dim", m.hidden_size);
    if (wep != m.hidden_size) m.embedding_dim = wep;
    if (!s.r.boolean("layer_norm_elementwise_affine").value_or(true)) m.norms_per_layer = 0;
}

bool ends_with(const std::string& text, const std::string& suffix) {
    return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

void read_bert_fields(const Source& s, ModelSpec& m) {
    // BertEmbeddings: position table of max_position_embeddings rows (roberta's 514 already holds its
    // padding offset) and type_vocab_size token types (BertConfig() 2, roberta-base 1).
    m.token_types = uint_or(s.c, "type_vocab_size", 2);
    // The head is the class's: *Model has the pooler, *ForMaskedLM / *ForCausalLM the LM head
    // transform (dense + LayerNorm + a vocab bias; the decoder weight is tied), BertForPreTraining both
    // plus the next-sentence classifier.
    const std::string& a = m.architecture;
    if (ends_with(a, "ForMaskedLM") || ends_with(a, "ForCausalLM") || ends_with(a, "LMHeadModel")) {
        m.mlm_head = true;
    } else if (ends_with(a, "ForPreTraining")) {
        m.pooler = m.mlm_head = m.nsp_head = true;
    } else {
        m.pooler = true;
        if (!a.empty() && !ends_with(a, "Model"))
            s.out.warnings.push_back("architecture '" + display_text(a) +
                                     "': counted as the base model with its pooler; the "
                                     "task head is not counted");
    }
}

// T5Config: num_layers encoder blocks, num_decoder_layers (default num_layers) decoder blocks;
// relative_attention_bias (buckets × heads) in the first block of each stack; the shared embedding
// is counted once; feed_forward_proj "gated-gelu" (t5 v1.1, flan-t5) has wi_0 and wi_1.
void read_t5_fields(const Source& s, ModelSpec& m) {
    std::uint64_t enc = m.num_layers;
    std::uint64_t dec = s.r.uint("num_decoder_layers", 1, kMaxLayers).value_or(enc);
    const bool encoder_only = m.architecture == "T5EncoderModel" || m.architecture == "MT5EncoderModel";
    if (encoder_only) dec = 0;
    m.encoder_layers = enc;
    m.num_layers = enc + dec;
    m.relative_attention_buckets = uint_or(s.c, "relative_attention_num_buckets", 32);
    std::string ff = string_or(s.c, "feed_forward_proj", s.type == "mt5" ? "gated-gelu" : "relu");
    m.gated_mlp = ff.rfind("gated-", 0) == 0;
    if (encoder_only || m.architecture == "T5Model" || m.architecture == "MT5Model")
        m.tie_word_embeddings = true;  // no lm_head
    if (dec == 0) m.structure = ModelSpec::Structure::Encoder;
}

// Multi-head latent attention (DeepseekV2/V3Attention): q_a_proj (bias = attention_bias),
// q_a_layernorm, q_b_proj (or q_proj when q_lora_rank is null); kv_a_proj_with_mqa (bias =
// attention_bias), kv_a_layernorm, kv_b_proj; o_proj (bias = attention_bias).
void read_latent_attention(const Source& s, ModelSpec& m) {
    m.q_lora_rank = uint_or(s.c, "q_lora_rank", 0);
    m.kv_lora_rank = required_uint(s, {"kv_lora_rank"}, kMaxDim);
    m.qk_nope_head_dim = required_uint(s, {"qk_nope_head_dim"}, kMaxDim);
    m.qk_rope_head_dim = required_uint(s, {"qk_rope_head_dim"}, kMaxDim);
    m.v_head_dim = required_uint(s, {"v_head_dim"}, kMaxDim);
    m.head_dim = m.qk_nope_head_dim + m.qk_rope_head_dim;  // the width of a query / key head
    m.num_key_value_heads = m.num_attention_heads;         // kv_b_proj expands the latent per head
    m.mtp_layers = uint_or(s.c, "num_nextn_predict_layers", 0);
}

// mllama's text model: cross_attention_layers lists the layers that attend to the image; its
// embed_tokens has vocab_size + 8 rows (MllamaTextModel), its lm_head vocab_size.
void read_cross_attention_layers(const json& c, ModelSpec& m) {
    if (c.contains("cross_attention_layers") && c["cross_attention_layers"].is_array())
        for (const json& i : c["cross_attention_layers"])
            if (i.is_number_integer() && i.get<std::int64_t>() >= 0 && i.get<std::uint64_t>() < m.num_layers)
                m.cross_attention_layers.push_back(i.get<std::uint64_t>());
    m.extra_embedding_rows = 8;
}

// DeepseekV2/V3MoE: n_shared_experts always-on experts as one MLP of that many times the expert
// width (no gate); the first first_k_dense_replace layers (and those off moe_layer_freq) are dense
// with intermediate_size. V3's router (topk_method noaux_tc) keeps e_score_correction_bias, one per
// routed expert, stored in the checkpoint.
void read_deepseek_experts(const Source& s, ModelSpec& m) {
    const json& c = s.c;
    m.shared_expert_intermediate_size = uint_or(c, "n_shared_experts", 0) * m.moe_intermediate_size;
    m.shared_expert_gate = false;
    m.router_bias = s.type == "deepseek_v3" || string_or(c, "topk_method", "") == "noaux_tc";
    std::uint64_t first_dense = uint_or(c, "first_k_dense_replace", 0);
    std::uint64_t freq = std::max<std::uint64_t>(1, uint_or(c, "moe_layer_freq", 1));
    for (std::uint64_t i = 0; i < m.num_layers; ++i) m.moe_layer[i] = i >= first_dense && i % freq == 0;
}

// qwen2/3_moe: every decoder_sparse_step-th layer routes, except those in mlp_only_layers.
void read_sparse_steps(const json& c, ModelSpec& m) {
    std::uint64_t step = c.contains("decoder_sparse_step") && c["decoder_sparse_step"].is_number_unsigned()
                             ? std::max<std::uint64_t>(1, c["decoder_sparse_step"].get<std::uint64_t>())
                             : 1;
    for (std::uint64_t i = 0; i < m.num_layers; ++i) m.moe_layer[i] = (i + 1) % step == 0;
    if (c.contains("mlp_only_layers") && c["mlp_only_layers"].is_array())
        for (const json& i : c["mlp_only_layers"])
            if (i.is_number_unsigned() && i.get<std::uint64_t>() < m.num_layers)
                m.moe_layer[i.get<std::uint64_t>()] = false;
}

// Experts: which layers route, how many experts, how wide, how many per token. False when the
// counts are missing (issues say which).
bool read_experts(const Source& s, const Family& f, ModelSpec& m) {
    std::string ek = first_key(s.c, {"num_local_experts", "num_experts", "n_routed_experts"});
    std::string kk = first_key(s.c, {"num_experts_per_tok", "experts_per_token", "num_experts_per_token"});
    if (ek.empty())
        s.out.issues.push_back(
            {s.r.path("num_local_experts"), "is required for a mixture-of-experts model (or num_experts)", ""});
    if (kk.empty())
        s.out.issues.push_back({s.r.path("num_experts_per_tok"), "is required for a mixture-of-experts model", ""});
    if (!s.out.issues.empty()) return false;
    m.num_experts = s.r.uint(ek, 1, 1 << 16).value_or(0);
    m.num_experts_per_tok = s.r.uint(kk, 1, 1 << 16).value_or(0);
    if (m.num_experts && m.num_experts_per_tok > m.num_experts)
        s.out.issues.push_back({s.r.path(kk),
                                "must be at most the number of experts (" + std::to_string(m.num_experts) + ")",
                                std::to_string(m.num_experts_per_tok)});
    std::string wk = first_key(s.c, {"moe_intermediate_size"});
    m.moe_intermediate_size = wk.empty() ? m.intermediate_size : s.r.uint(wk, 1, kMaxDim * 4).value_or(0);
    if (f.shared_expert)
        m.shared_expert_intermediate_size = s.r.uint("shared_expert_intermediate_size", 1, kMaxDim * 4).value_or(0);
    m.expert_bias = f.expert_bias;
    m.router_bias = f.router_bias;
    if (f.mla) read_deepseek_experts(s, m);
    else read_sparse_steps(s.c, m);
    return true;
}

// Dropout rates (they save masks for the backward pass) and gemma2's attention logit cap.
void read_dropout(const json& c, ModelSpec& m) {
    for (const char* k : {"attention_dropout", "attn_pdrop", "attention_probs_dropout_prob"})
        if (c.contains(k) && c[k].is_number()) m.attention_dropout = c[k].get<double>();
    for (const char* k : {"resid_pdrop", "hidden_dropout", "hidden_dropout_prob", "dropout_rate", "dropout"})
        if (c.contains(k) && c[k].is_number()) m.hidden_dropout = c[k].get<double>();
    if (c.contains("attn_logit_softcapping") && c["attn_logit_softcapping"].is_number())
        m.attn_logit_softcapping = c["attn_logit_softcapping"].get<double>();
}

// Whether layer i of the family's sliding-window pattern slides.
bool slides(Family::Window pattern, const json& c, std::uint64_t i, const ModelSpec& m) {
    std::uint64_t max_window_layers = c.contains("max_window_layers") && c["max_window_layers"].is_number_unsigned()
                                          ? c["max_window_layers"].get<std::uint64_t>()
                                          : m.num_layers;
    std::uint64_t every = std::max<std::uint64_t>(1, uint_or(c, "sliding_window_pattern", 6));
    switch (pattern) {
        case Family::Window::AllLayers:
            return true;
        case Family::Window::EvenLayers:
            return i % 2 == 0;
        case Family::Window::QwenUpper:
            return bool_or(c, "use_sliding_window", false) && i >= max_window_layers;
        case Family::Window::EveryNth:
            return (i + 1) % every != 0;
        case Family::Window::None:
            break;
    }
    return false;
}

// Per-layer attention: explicit layer_types wins, else the family's sliding-window pattern.
void read_attention_pattern(const json& c, Family::Window pattern, ModelSpec& m) {
    m.layer_attention.assign(m.num_layers, LayerAttention::Full);
    std::uint64_t window = 0;
    if (std::string wk = first_key(c, {"sliding_window"}); !wk.empty() && c[wk].is_number_unsigned())
        window = c[wk].get<std::uint64_t>();
    if (c.contains("layer_types") && c["layer_types"].is_array() && c["layer_types"].size() == m.num_layers) {
        for (std::size_t i = 0; i < m.num_layers; ++i)
            if (c["layer_types"][i] == "sliding_attention") m.layer_attention[i] = LayerAttention::SlidingWindow;
    } else if (window > 0) {
        for (std::size_t i = 0; i < m.num_layers; ++i)
            if (slides(pattern, c, i, m)) m.layer_attention[i] = LayerAttention::SlidingWindow;
    }
    if (std::any_of(m.layer_attention.begin(), m.layer_attention.end(),
                    [](LayerAttention a) { return a == LayerAttention::SlidingWindow; }))
        m.sliding_window = window;
}

// One compressed-tensors quantization scheme (compressed_tensors/quantization/quant_scheme.py,
// QuantizationScheme: targets, weights and input_activations as QuantizationArgs).
ModelSpec::QuantScheme read_compressed_scheme(const json& g) {
    ModelSpec::QuantScheme x;
    if (g.contains("targets") && g["targets"].is_array())
        for (const json& t : g["targets"])
            if (t.is_string()) x.targets.push_back(t.get<std::string>());
    const json w = g.contains("weights") && g["weights"].is_object() ? g["weights"] : json::object();
    x.bits = uint_or(w, "num_bits", 8);
    x.is_float = string_or(w, "type", "int") == "float";
    x.strategy = string_or(w, "strategy", "tensor");
    x.group_size = uint_or(w, "group_size", 0);
    if (w.contains("block_structure") && w["block_structure"].is_array())
        for (const json& b : w["block_structure"])
            if (b.is_number_integer() && b.get<std::int64_t>() > 0) x.block.push_back(b.get<std::uint64_t>());
    x.symmetric = bool_or(w, "symmetric", true);
    // ActivationOrdering.GROUP keeps a weight_g_idx (compressed_tensors/quantization/lifecycle/
    // initialize.py); WEIGHT ordering is folded into the weights and stores none.
    x.g_idx = string_or(w, "actorder", "") == "group";
    if (g.contains("input_activations") && g["input_activations"].is_object()) {
        const json& a = g["input_activations"];
        // QuantizationArgs.dynamic: false (a calibrated scale stored per layer), true, or "local"
        // (nvfp4's per-group scales computed at run time under a stored global scale).
        const bool is_static = a.contains("dynamic") && a["dynamic"].is_boolean() && !a["dynamic"].get<bool>();
        const std::string strategy = string_or(a, "strategy", "tensor");
        x.input_scale = is_static && strategy == "tensor";
        x.input_global_scale = strategy == "tensor_group";
    }
    return x;
}

// A scheme for every Linear a method quantizes.
ModelSpec::QuantScheme linear_scheme(std::uint64_t bits, bool is_float, const std::string& strategy,
                                     std::uint64_t group_size) {
    ModelSpec::QuantScheme x;
    x.targets = {"Linear"};
    x.bits = bits;
    x.is_float = is_float;
    x.strategy = strategy;
    x.group_size = group_size;
    return x;
}

// quantization_config as facts about the stored checkpoint. Each method's keys as its quantizer
// reads them: transformers/quantizers (bitsandbytes, gptq, awq, fp8, mxfp4) and
// compressed_tensors/quantization/quant_config.py (QuantizationConfig: format, config_groups, ignore).
void read_quantization(const json& q, ModelSpec& m) {
    if (!q.is_object()) return;
    ModelSpec::Quantization x;
    x.method = string_or(q, "quant_method", "");
    if (x.method.empty() && (bool_or(q, "load_in_4bit", false) || bool_or(q, "load_in_8bit", false)))
        x.method = "bitsandbytes";
    if (x.method == "bitsandbytes") {
        x.bits = bool_or(q, "load_in_4bit", false) ? 4 : 8;
        if (x.bits == 4)
            x.quant_type =
                string_or(q, "bnb_4bit_quant_type", "").empty() ? "fp4" : string_or(q, "bnb_4bit_quant_type", "");
        x.double_quant = bool_or(q, "bnb_4bit_use_double_quant", false);
        x.schemes.push_back(
            linear_scheme(x.bits, x.bits == 4, x.bits == 4 ? "group" : "channel", x.bits == 4 ? 64 : 0));
    } else if (x.method == "gptq" || x.method == "awq") {
        x.bits = uint_or(q, "bits", uint_or(q, "w_bit", 4));
        // group_size -1 means one scale per output channel (0 here).
        for (const char* k : {"group_size", "q_group_size"})
            if (q.contains(k) && q[k].is_number_integer())
                x.group_size = q[k].get<std::int64_t>() > 0 ? q[k].get<std::uint64_t>() : 0;
        x.desc_act = bool_or(q, "desc_act", false);
        ModelSpec::QuantScheme s = linear_scheme(x.bits, false, x.group_size ? "group" : "channel", x.group_size);
        s.symmetric = x.method == "gptq" ? bool_or(q, "sym", true) : !bool_or(q, "zero_point", true);
        // AutoAWQ's GEMM/GEMV/Marlin layouts differ; GEMM (the default "version") is the one modelled.
        const std::string version = string_or(q, "version", "gemm");
        if (x.method == "gptq" || version == "gemm" || version == "GEMM") x.schemes.push_back(s);
    } else if (x.method == "fp8") {
        x.bits = 8;
        x.quant_type = string_or(q, "fmt", "").empty() ? "e4m3" : string_or(q, "fmt", "");
        if (q.contains("weight_block_size") && q["weight_block_size"].is_array())
            for (const json& b : q["weight_block_size"])
                if (b.is_number_integer() && b.get<std::int64_t>() > 0)
                    x.weight_block_size.push_back(b.get<std::uint64_t>());
        ModelSpec::QuantScheme s = linear_scheme(8, true, x.weight_block_size.size() == 2 ? "block" : "tensor", 0);
        s.block = x.weight_block_size;
        s.input_scale = string_or(q, "activation_scheme", "dynamic") == "static";
        x.schemes.push_back(s);
    } else if (x.method == "mxfp4") {
        x.bits = 4;  // e2m1 values, one e8m0 scale per 32
        x.group_size = 32;
        x.schemes.push_back(linear_scheme(4, true, "group", 32));
    } else if (x.method == "modelopt") {
        // NVIDIA ModelOpt (vLLM modelopt.py ModelOptFp8Config / ModelOptNvFp4Config.from_config): the
        // fields flat or under "quantization" (hf_quant_config.json's shape); quant_algo FP8 or NVFP4.
        const json& f = q.contains("quantization") && q["quantization"].is_object() ? q["quantization"] : q;
        x.quant_type = string_or(f, "quant_algo", "");
        const bool nvfp4 = x.quant_type == "NVFP4";
        x.bits = nvfp4 ? 4 : 8;
        x.group_size = nvfp4 ? uint_or(f, "group_size", 16) : 0;
        if (nvfp4 || x.quant_type == "FP8") {
            ModelSpec::QuantScheme s = linear_scheme(x.bits, true, nvfp4 ? "tensor_group" : "tensor", x.group_size);
            s.input_scale = true;  // ModelOpt stores a calibrated fp32 input_scale per Linear
            x.schemes.push_back(s);
        }
        x.kv_scales = string_or(f, "kv_cache_quant_algo", "").size() > 0;
        for (const char* k : {"exclude_modules", "ignore"})
            if (f.contains(k) && f[k].is_array())
                for (const json& name : f[k])
                    if (name.is_string()) x.modules_not_converted.push_back(name.get<std::string>());
    } else if (x.method == "compressed-tensors") {
        x.format = string_or(q, "format", "dense");
        if (q.contains("config_groups") && q["config_groups"].is_object())
            for (const auto& [name, group] : q["config_groups"].items())
                if (group.is_object()) x.schemes.push_back(read_compressed_scheme(group));
        if (!x.schemes.empty()) {
            x.bits = x.schemes.front().bits;
            x.group_size = x.schemes.front().group_size;
        }
        x.kv_scales = q.contains("kv_cache_scheme") && q["kv_cache_scheme"].is_object();
        if (q.contains("ignore") && q["ignore"].is_array())
            for (const json& name : q["ignore"])
                if (name.is_string()) x.modules_not_converted.push_back(name.get<std::string>());
    }
    // AutoFP8 (neuralmagic/AutoFP8 auto_fp8/quantize.py) writes its skipped modules as ignored_layers.
    for (const char* k : {"modules_to_not_convert", "llm_int8_skip_modules", "ignored_layers"})
        if (q.contains(k) && q[k].is_array())
            for (const json& name : q[k])
                if (name.is_string()) x.modules_not_converted.push_back(name.get<std::string>());
    // Bounded: a config's ignore list and groups are short; thousands are a malformed file.
    if (x.modules_not_converted.size() > 4096) x.modules_not_converted.resize(4096);
    if (x.schemes.size() > 64) x.schemes.resize(64);
    x.exact = quantization_exact(x);
    m.quantization = x;
}

// The stored dtype (the language model's, else the wrapper's) and the quantization of the checkpoint.
void read_storage(const Source& s, ModelSpec& m) {
    const json& c = s.c;
    const json& config = s.config;
    std::string dtype_key = first_key(c, {"torch_dtype", "dtype"});
    if (dtype_key.empty()) dtype_key = first_key(config, {"torch_dtype", "dtype"});
    const json& dtype_src = c.contains(dtype_key) ? c : config;
    if (!dtype_key.empty() && dtype_src[dtype_key].is_string()) {
        std::string d = normalize_dtype(dtype_src[dtype_key].get<std::string>());
        if (dtype_bytes(d)) m.checkpoint_dtype = d;
    } else {
        m.checkpoint_dtype = "fp32";  // transformers' default when the config names none
    }
    // compressed-tensors' first releases wrote "compression_config" for the same object.
    for (const char* key : {"quantization_config", "compression_config"}) {
        if (m.quantization) break;
        if (config.contains(key)) read_quantization(config[key], m);
        else if (c.contains(key)) read_quantization(c[key], m);
    }
    // A quantized checkpoint that names no dtype (gpt-oss) stores its unquantized tensors in bf16.
    if (dtype_key.empty() && m.quantization) m.checkpoint_dtype = "bf16";
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
    const std::string outer = string_or(config, "model_type", "");
    const LanguageModel lm = language_model_of(config, outer, prefix);
    FieldReader r(lm.fields, lm.prefix, out.issues);
    const Source s{config, lm.fields, r, out, lm.type, outer};
    Family f = family_of(lm.type, lm.fields);
    ModelSpec m;

    read_identity(s, f, m);
    read_sizes(s, m);
    if (!out.issues.empty()) return out;  // nothing below can be read without the four sizes
    const std::string kv_key = read_kv_heads(s, f, m);
    read_widths(s, kv_key, m);
    apply_family(s, f, m);
    // Fields only some families have. After reading latent attention's or the experts' required
    // sizes, any issue so far (theirs or an earlier one) ends the reading.
    if (lm.type == "opt") read_opt_fields(s, m);
    else if (lm.type == "bert" || lm.type == "roberta") read_bert_fields(s, m);
    else if (lm.type == "t5" || lm.type == "mt5") read_t5_fields(s, m);
    if (f.mla) {
        read_latent_attention(s, m);
        if (!out.issues.empty()) return out;
    }
    if (lm.type == "mllama_text_model") read_cross_attention_layers(lm.fields, m);
    m.moe_layer.assign(m.num_layers, false);
    if (f.moe && !read_experts(s, f, m)) return out;
    // What every model has again: dropout, which layers slide, how the checkpoint is stored, a tower.
    read_dropout(lm.fields, m);
    read_attention_pattern(lm.fields, f.window, m);
    read_storage(s, m);
    if (config.contains("vision_config") && config["vision_config"].is_object()) {
        // The tower's sizes within the language model's bounds: a tower of 10^9 layers is a typo, not a model.
        FieldReader vr(config["vision_config"], prefix.empty() ? "vision_config" : prefix + ".vision_config",
                       out.issues);
        for (const char* key : {"depth", "num_hidden_layers", "num_global_layers"}) vr.uint(key, 0, kMaxLayers);
        for (const char* key : {"hidden_size", "embed_dim", "num_attention_heads", "num_heads", "patch_size",
                                "spatial_merge_size", "num_channels", "image_size", "out_hidden_size"})
            vr.uint(key, 0, kMaxDim);
        vr.uint("intermediate_size", 0, kMaxDim * 4);
        if (out.issues.empty()) read_multimodal(config, outer, m, out.warnings);
    }
    m.name = string_or(config, "_name_or_path", m.name);

    if (!out.issues.empty()) return out;
    out.model = m;
    return out;
}

}  // namespace gpumem
