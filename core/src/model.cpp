// Reading a Hugging Face config.json into a ModelSpec, and counting its parameters exactly.
//
// Each family below is a set of switches on one decoder shape, checked against the module code in
// transformers (modeling_<family>.py) and against the published totals in presets/models/.

#include <algorithm>
#include <cmath>
#include <map>

#include "model.h"

namespace gpumem::detail {

namespace {

constexpr std::uint64_t kMaxDim = 1ull << 24;    // 16.7M: above any real hidden/vocab size
constexpr std::uint64_t kMaxLayers = 100000;

// The first present key among `keys` (configs of different families name the same thing differently).
std::string first_key(const json& config, std::initializer_list<const char*> keys) {
    for (const char* k : keys)
        if (config.contains(k) && !config[k].is_null()) return k;
    return "";
}

struct Family {
    bool known = true;
    bool qkv_bias = false, o_bias = false, mlp_bias = false, lm_head_bias = false;
    bool tie_default = false;
    bool gated = true;
    ModelSpec::Norm norm = ModelSpec::Norm::RMS;
    std::uint64_t norms_per_layer = 2;
    ModelSpec::QKNorm qk_norm = ModelSpec::QKNorm::None;
    bool parallel = false;
    bool learned_positions = false;
    bool moe = false, expert_bias = false, router_bias = false, sinks = false, shared_expert = false;
    enum class Window { None, AllLayers, EvenLayers, QwenUpper } window = Window::None;
};

Family family_of(const std::string& type, const json& c) {
    auto flag = [&](const char* key, bool fallback) {
        return c.contains(key) && c[key].is_boolean() ? c[key].get<bool>() : fallback;
    };
    Family f;
    if (type == "llama" || type == "granite") {
        f.qkv_bias = f.o_bias = flag("attention_bias", false);
        f.mlp_bias = flag("mlp_bias", false);
    } else if (type == "mistral") {
        f.window = Family::Window::AllLayers;
    } else if (type == "qwen2") {
        f.qkv_bias = true;  // Qwen2Attention: q/k/v with bias, o_proj without
        f.window = Family::Window::QwenUpper;
    } else if (type == "qwen3") {
        f.qkv_bias = f.o_bias = flag("attention_bias", false);
        f.qk_norm = ModelSpec::QKNorm::PerHead;
        f.window = Family::Window::QwenUpper;
    } else if (type == "gemma") {
        f.tie_default = true;
    } else if (type == "gemma2") {
        f.tie_default = true;
        f.norms_per_layer = 4;  // pre/post attention and pre/post feed-forward
        f.qkv_bias = f.o_bias = flag("attention_bias", false);
        f.window = Family::Window::EvenLayers;
    } else if (type == "phi3") {
        f.qkv_bias = f.o_bias = flag("attention_bias", false);
        f.window = Family::Window::AllLayers;
    } else if (type == "olmo2") {
        f.qkv_bias = f.o_bias = flag("attention_bias", false);
        f.qk_norm = ModelSpec::QKNorm::Full;  // q_norm over heads × head_dim, k_norm over kv heads × head_dim
    } else if (type == "stablelm") {
        f.norm = ModelSpec::Norm::Layer;
        f.qkv_bias = flag("use_qkv_bias", false);
        f.parallel = flag("use_parallel_residual", false);
        if (f.parallel) f.norms_per_layer = 1;
    } else if (type == "mixtral") {
        f.moe = true;
        f.window = Family::Window::AllLayers;
    } else if (type == "qwen2_moe") {
        f.moe = f.shared_expert = true;
        f.qkv_bias = true;
        f.window = Family::Window::QwenUpper;
    } else if (type == "qwen3_moe") {
        f.moe = true;
        f.qkv_bias = f.o_bias = flag("attention_bias", false);
        f.qk_norm = ModelSpec::QKNorm::PerHead;
        f.window = Family::Window::QwenUpper;
    } else if (type == "gpt_oss") {
        f.moe = f.expert_bias = f.router_bias = f.sinks = true;
        f.qkv_bias = f.o_bias = flag("attention_bias", true);
    } else if (type == "gpt2") {
        f.tie_default = true;
        f.norm = ModelSpec::Norm::Layer;
        f.qkv_bias = f.o_bias = f.mlp_bias = true;
        f.gated = false;
        f.learned_positions = true;
    } else if (type == "phi") {
        f.norm = ModelSpec::Norm::Layer;
        f.qkv_bias = f.o_bias = f.mlp_bias = f.lm_head_bias = true;
        f.gated = false;
        f.norms_per_layer = 1;
        f.parallel = true;
    } else if (type == "gpt_neox") {
        f.norm = ModelSpec::Norm::Layer;
        f.qkv_bias = f.o_bias = f.mlp_bias = true;
        f.gated = false;
        f.parallel = flag("use_parallel_residual", true);  // both layer norms exist either way
    } else {
        f.known = false;  // generic decoder reading: llama-like, biases only where the config says
        f.qkv_bias = f.o_bias = flag("attention_bias", false);
        f.mlp_bias = flag("mlp_bias", false);
        f.window = Family::Window::AllLayers;
    }
    return f;
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
    // Multimodal wrappers keep the language model in text_config; read that (the tower is issue 3's).
    const json& c = config.contains("text_config") && config["text_config"].is_object() ? config["text_config"] : config;
    const std::string cp = &c == &config ? prefix : (prefix.empty() ? "text_config" : prefix + ".text_config");
    FieldReader r(c, cp, out.issues);

    ModelSpec m;
    std::string type = c.contains("model_type") && c["model_type"].is_string() ? c["model_type"].get<std::string>() : "";
    if (type.empty() && config.contains("model_type") && config["model_type"].is_string())
        type = config["model_type"].get<std::string>();
    m.model_type = type.empty() ? "unknown" : type;
    Family f = family_of(type, c);
    m.known_family = f.known;
    if (!f.known)
        out.warnings.push_back("model_type '" + m.model_type +
                               "' is not a known family: read as a generic llama-style decoder (gated MLP, "
                               "RMSNorm, rotary positions); the parameter count may be off");

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
    m.hidden_size = need({"hidden_size", "n_embd", "d_model"}, kMaxDim);
    m.num_layers = need({"num_hidden_layers", "n_layer", "num_layers"}, kMaxLayers);
    m.num_attention_heads = need({"num_attention_heads", "n_head"}, kMaxDim);
    m.vocab_size = need({"vocab_size"}, kMaxDim * 4);
    if (!out.issues.empty()) return out;

    std::string kv_key = first_key(c, {"num_key_value_heads", "n_head_kv"});
    m.num_key_value_heads = kv_key.empty() ? m.num_attention_heads : r.uint(kv_key, 1, kMaxDim).value_or(0);
    std::string hd_key = first_key(c, {"head_dim"});
    m.head_dim = hd_key.empty() ? m.hidden_size / m.num_attention_heads : r.uint(hd_key, 1, kMaxDim).value_or(0);
    if (hd_key.empty() && m.hidden_size % m.num_attention_heads != 0)
        out.issues.push_back({r.path("num_attention_heads"), "must divide hidden_size (" +
                              std::to_string(m.hidden_size) + ") when head_dim is not given",
                              std::to_string(m.num_attention_heads)});
    if (m.num_key_value_heads && m.num_attention_heads % m.num_key_value_heads != 0)
        out.issues.push_back({r.path(kv_key), "must divide num_attention_heads (" +
                              std::to_string(m.num_attention_heads) + ")", std::to_string(m.num_key_value_heads)});
    std::string inter_key = first_key(c, {"intermediate_size", "n_inner", "ffn_hidden_size"});
    m.intermediate_size = inter_key.empty() ? 4 * m.hidden_size : r.uint(inter_key, 1, kMaxDim * 4).value_or(0);
    std::string pos_key = first_key(c, {"max_position_embeddings", "n_positions", "n_ctx", "seq_length"});
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
    if (f.learned_positions) m.learned_positions = m.max_position_embeddings;
    m.tie_word_embeddings = r.boolean("tie_word_embeddings").value_or(f.tie_default);
    m.attention_sinks = f.sinks;

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
        // qwen2/3_moe: every decoder_sparse_step-th layer routes, except those in mlp_only_layers.
        std::uint64_t step = c.contains("decoder_sparse_step") && c["decoder_sparse_step"].is_number_unsigned()
                                 ? std::max<std::uint64_t>(1, c["decoder_sparse_step"].get<std::uint64_t>()) : 1;
        for (std::uint64_t i = 0; i < m.num_layers; ++i) m.moe_layer[i] = (i + 1) % step == 0;
        if (c.contains("mlp_only_layers") && c["mlp_only_layers"].is_array())
            for (const json& i : c["mlp_only_layers"])
                if (i.is_number_unsigned() && i.get<std::uint64_t>() < m.num_layers) m.moe_layer[i.get<std::uint64_t>()] = false;
    }

    for (const char* k : {"attention_dropout", "attn_pdrop", "attention_probs_dropout_prob"})
        if (c.contains(k) && c[k].is_number()) m.attention_dropout = c[k].get<double>();
    for (const char* k : {"resid_pdrop", "hidden_dropout", "hidden_dropout_prob"})
        if (c.contains(k) && c[k].is_number()) m.hidden_dropout = c[k].get<double>();

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
        for (std::size_t i = 0; i < m.num_layers; ++i) {
            bool sliding = false;
            switch (f.window) {
                case Family::Window::AllLayers: sliding = true; break;
                case Family::Window::EvenLayers: sliding = i % 2 == 0; break;
                case Family::Window::QwenUpper: sliding = qwen_sliding && i >= max_window_layers; break;
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
    std::string name_key = first_key(config, {"_name_or_path"});
    if (!name_key.empty() && config[name_key].is_string()) m.name = config[name_key].get<std::string>();
    if (!out.issues.empty()) return out;
    out.model = m;
    return out;
}

}  // namespace gpumem

namespace gpumem::detail {

std::vector<Tensor> list_tensors(const ModelSpec& m) {
    std::vector<Tensor> t;
    if (m.hidden_size == 0 || m.num_layers == 0) return t;
    const std::uint64_t h = m.hidden_size, q = m.num_attention_heads * m.head_dim,
                        kv = m.num_key_value_heads * m.head_dim, I = m.intermediate_size;
    auto add = [&](const char* name, Group g, std::uint64_t rows, std::uint64_t cols, bool layer, bool tp) {
        t.push_back({name, g, rows, cols, layer ? Layers::All : Layers::None, tp, false});
    };
    auto norm = [&](const char* name, Group g, std::uint64_t width, bool layer) {
        add(name, g, width, 1, layer, false);
        if (m.norm == ModelSpec::Norm::Layer) add((std::string(name) + ".bias").c_str(), g, width, 1, layer, false);
    };

    add("embed_tokens", Group::Embedding, m.vocab_size, h, false, true);  // vocab-parallel under Megatron
    if (m.learned_positions) add("embed_positions", Group::Embedding, m.learned_positions, h, false, false);

    // Attention: q, k, v, o (+ biases, + q/k norms).
    add("q_proj", Group::Attention, q, h, true, true);
    add("k_proj", Group::Attention, kv, h, true, true);
    add("v_proj", Group::Attention, kv, h, true, true);
    if (m.qkv_bias) {
        add("q_proj.bias", Group::Attention, q, 1, true, true);
        add("k_proj.bias", Group::Attention, kv, 1, true, true);
        add("v_proj.bias", Group::Attention, kv, 1, true, true);
    }
    add("o_proj", Group::Attention, h, q, true, true);
    if (m.o_bias) add("o_proj.bias", Group::Attention, h, 1, true, false);
    if (m.qk_norm == ModelSpec::QKNorm::PerHead) {
        add("q_norm", Group::Attention, m.head_dim, 1, true, false);
        add("k_norm", Group::Attention, m.head_dim, 1, true, false);
    } else if (m.qk_norm == ModelSpec::QKNorm::Full) {
        add("q_norm", Group::Attention, q, 1, true, true);
        add("k_norm", Group::Attention, kv, 1, true, true);
    }

    // MLP: a dense block in dense layers; in MoE layers a router, the routed experts (and a shared
    // expert with its gate for qwen2_moe).
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
            t.push_back({"shared_expert_gate", Group::Mlp, 1, h, Layers::Moe, false, false});
        }
    }
    if (m.attention_sinks) add("sinks", Group::Attention, m.num_attention_heads, 1, true, true);

    static const char* const kNormNames[] = {"input_layernorm", "post_attention_layernorm",
                                             "pre_feedforward_layernorm", "post_feedforward_layernorm"};
    for (std::uint64_t i = 0; i < m.norms_per_layer && i < 4; ++i) norm(kNormNames[i], Group::Norm, h, true);
    norm("final_norm", Group::Norm, h, false);

    if (!m.tie_word_embeddings) add("lm_head", Group::LmHead, m.vocab_size, h, false, true);
    if (m.lm_head_bias) add("lm_head.bias", Group::LmHead, m.vocab_size, 1, false, true);
    return t;
}

std::uint64_t layer_count(const ModelSpec& m, Layers layers) {
    if (layers == Layers::None) return 0;
    if (layers == Layers::All || m.moe_layer.size() != m.num_layers) return m.num_layers;
    auto moe = static_cast<std::uint64_t>(std::count(m.moe_layer.begin(), m.moe_layer.end(), true));
    return layers == Layers::Moe ? moe : m.num_layers - moe;
}

}  // namespace gpumem::detail

namespace gpumem {

using namespace detail;

ParamCount count_parameters(const ModelSpec& m) {
    ParamCount c;
    std::uint64_t routed = 0;  // routed-expert elements, all layers
    std::uint64_t in_layers = 0;
    for (const Tensor& t : list_tensors(m)) {
        std::uint64_t n = t.elements() * (t.in_layers() ? layer_count(m, t.layers) : 1);
        switch (t.group) {
            case Group::Embedding: c.embedding += n; break;
            case Group::Attention: c.attention += n; break;
            case Group::Mlp: c.mlp += n; break;
            case Group::Norm: c.norms += n; break;
            case Group::LmHead: c.lm_head += n; break;
        }
        if (t.in_layers() && t.layers != Layers::Dense && (t.expert || t.name.rfind("router", 0) == 0 ||
                                                           t.name.rfind("shared_expert", 0) == 0))
            c.experts += n;
        if (t.expert) routed += n;
        if (t.in_layers()) in_layers += n;
        c.total += n;
    }
    c.per_layer = m.num_layers ? in_layers / m.num_layers : 0;
    // A token visits top-k of the routed experts.
    c.active = c.total;
    if (m.num_experts) c.active -= routed - routed / m.num_experts * m.num_experts_per_tok;
    if (m.declared_parameters) {
        c.exact = false;
        c.total = c.active = *m.declared_parameters;
    }
    return c;
}

}  // namespace gpumem

namespace gpumem::detail {

ModelRead read_manual_model(const json& model, const std::string& prefix, std::vector<std::string>& defaults_applied) {
    ModelRead out;
    FieldReader r(model, prefix, out.issues);
    ModelSpec m;
    m.model_type = "manual";
    m.name = r.string("name").value_or("custom model");
    auto declared = r.count("num_parameters", 1000, static_cast<std::uint64_t>(1e15));
    m.hidden_size = r.uint("hidden_size", 1, kMaxDim).value_or(0);
    m.num_layers = r.uint("num_layers", 1, kMaxLayers).value_or(r.uint("num_hidden_layers", 1, kMaxLayers).value_or(0));
    m.num_attention_heads = r.uint("num_attention_heads", 1, kMaxDim).value_or(0);
    m.num_key_value_heads = r.uint("num_key_value_heads", 1, kMaxDim).value_or(0);
    m.intermediate_size = r.uint("intermediate_size", 1, kMaxDim * 4).value_or(0);
    m.vocab_size = r.uint("vocab_size", 1, kMaxDim * 4).value_or(0);
    m.max_position_embeddings = r.uint("max_seq_len", 1, 1ull << 32).value_or(r.uint("max_position_embeddings", 1, 1ull << 32).value_or(0));
    m.tie_word_embeddings = r.boolean("tie_word_embeddings").value_or(false);
    m.head_dim = r.uint("head_dim", 1, kMaxDim).value_or(0);
    if (auto d = r.string("dtype")) m.checkpoint_dtype = normalize_dtype(*d);
    if (!out.issues.empty()) return out;
    if (!declared && (m.hidden_size == 0 || m.num_layers == 0)) {
        out.issues.push_back({prefix, "needs a preset, an hf_config, or num_parameters (\"7B\") and/or hidden_size + "
                                      "num_layers", ""});
        return out;
    }

    // Shape guesses for a model known only by size: a Llama-shaped decoder, where one layer holds
    // 12·h² parameters (4h² attention + 8h² gated MLP with I = 8h/3) and depth follows h/128
    // (Llama 2: 7B 4096/32, 13B 5120/40). So P ≈ 12·L·h² with L = h/128 gives h = ∛(128·P/12).
    auto guessed = [&](const char* field, std::uint64_t value, const char* why) {
        defaults_applied.push_back(prefix + "." + field + " = " + std::to_string(value) + " (" + why + ")");
        return value;
    };
    if (m.vocab_size == 0) m.vocab_size = guessed("vocab_size", 32000, "assumed: Llama 2 tokenizer");
    if (m.hidden_size == 0) {
        double budget = static_cast<double>(*declared) - 2.0 * static_cast<double>(m.vocab_size) * 4096;
        double h = std::cbrt(std::max(budget, 1e6) * 128.0 / 12.0);
        std::uint64_t rounded = std::max<std::uint64_t>(256, static_cast<std::uint64_t>(std::llround(h / 256.0)) * 256);
        m.hidden_size = guessed("hidden_size", rounded, "guessed from num_parameters for a Llama-shaped decoder");
    }
    if (m.num_layers == 0) {
        double per_layer = 12.0 * static_cast<double>(m.hidden_size) * static_cast<double>(m.hidden_size);
        double rest = static_cast<double>(*declared) - 2.0 * static_cast<double>(m.vocab_size * m.hidden_size);
        m.num_layers = guessed("num_layers", std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::llround(rest / per_layer))),
                               "guessed from num_parameters and hidden_size");
    }
    if (m.num_attention_heads == 0)
        m.num_attention_heads = guessed("num_attention_heads", std::max<std::uint64_t>(1, m.hidden_size / 128),
                                        "assumed head_dim 128");
    if (m.num_key_value_heads == 0) m.num_key_value_heads = m.num_attention_heads;
    if (m.head_dim == 0) m.head_dim = m.hidden_size / m.num_attention_heads;
    if (m.intermediate_size == 0) {
        // Llama's rule: 2/3 of 4h, rounded up to a multiple of 256.
        std::uint64_t i = (8 * m.hidden_size / 3 + 255) / 256 * 256;
        m.intermediate_size = guessed("intermediate_size", i, "assumed a gated MLP with Llama's 8h/3 rounded to 256");
    }
    if (m.max_position_embeddings == 0) m.max_position_embeddings = 4096;
    m.layer_attention.assign(m.num_layers, LayerAttention::Full);
    m.moe_layer.assign(m.num_layers, false);
    if (declared) m.declared_parameters = declared;
    out.model = m;
    return out;
}

}  // namespace gpumem::detail
