// A model entered by hand (gpu-mem-calculator's model fields, its mixture of experts included) or only
// by its size: the fields it gives, then a Llama-shaped guess for each one it leaves out, reported in
// defaults_applied.

#include <algorithm>
#include <cmath>
#include <optional>

#include "model/reading.h"

namespace gpumem::detail {

namespace {

// The fields as given (0 where absent), and the declared size (num_parameters) when there is one.
std::optional<std::uint64_t> read_manual_fields(FieldReader& r, ModelSpec& m) {
    m.model_type = "manual";
    m.name = r.string("name").value_or("custom model");
    auto declared = r.count("num_parameters", 1000, static_cast<std::uint64_t>(1e15));
    m.hidden_size = r.uint("hidden_size", 1, kMaxDim).value_or(0);
    m.num_layers = r.uint("num_layers", 1, kMaxLayers).value_or(r.uint("num_hidden_layers", 1, kMaxLayers).value_or(0));
    m.num_attention_heads = r.uint("num_attention_heads", 1, kMaxDim).value_or(0);
    m.num_key_value_heads = r.uint("num_key_value_heads", 1, kMaxDim).value_or(0);
    m.intermediate_size = r.uint("intermediate_size", 1, kMaxDim * 4).value_or(0);
    m.vocab_size = r.uint("vocab_size", 1, kMaxDim * 4).value_or(0);
    m.max_position_embeddings =
        r.uint("max_seq_len", 1, 1ull << 32).value_or(r.uint("max_position_embeddings", 1, 1ull << 32).value_or(0));
    m.tie_word_embeddings = r.boolean("tie_word_embeddings").value_or(false);
    m.head_dim = r.uint("head_dim", 1, kMaxDim).value_or(0);
    if (auto d = r.string("dtype")) m.checkpoint_dtype = normalize_dtype(*d);
    return declared;
}

// Shape guesses for a model known only by size: a Llama-shaped decoder, where one layer holds
// 12·h² parameters (4h² attention + 8h² gated MLP with I = 8h/3) and depth follows h/128
// (Llama 2: 7B 4096/32, 13B 5120/40). So P ≈ 12·L·h² with L = h/128 gives h = ∛(128·P/12).
// `declared` is there whenever hidden_size or num_layers is missing. The fields guessed go to `guesses`.
void guess_missing_shape(const std::optional<std::uint64_t>& declared, const std::string& prefix, ModelSpec& m,
                         std::vector<std::string>& defaults_applied, std::vector<std::string>& guesses) {
    auto guessed = [&](const char* field, std::uint64_t value, const char* why) {
        defaults_applied.push_back(prefix + "." + field + " = " + std::to_string(value) + " (" + why + ")");
        guesses.emplace_back(field);
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
        // Within the reader's range: below 1 when the embeddings alone exceed the size (rest < 0),
        // and far above it for a tiny hidden_size.
        double layers = std::clamp(std::round(rest / per_layer), 1.0, static_cast<double>(kMaxLayers));
        m.num_layers =
            guessed("num_layers", static_cast<std::uint64_t>(layers), "guessed from num_parameters and hidden_size");
    }
    if (m.num_attention_heads == 0)
        m.num_attention_heads =
            guessed("num_attention_heads", std::max<std::uint64_t>(1, m.hidden_size / 128), "assumed head_dim 128");
    if (m.num_key_value_heads == 0) m.num_key_value_heads = m.num_attention_heads;
    if (m.head_dim == 0) m.head_dim = m.hidden_size / m.num_attention_heads;
    if (m.intermediate_size == 0 && m.num_experts == 0) {
        // Llama's rule: 2/3 of 4h, rounded up to a multiple of 256.
        std::uint64_t i = (8 * m.hidden_size / 3 + 255) / 256 * 256;
        m.intermediate_size = guessed("intermediate_size", i, "assumed a gated MLP with Llama's 8h/3 rounded to 256");
    }
    if (m.max_position_embeddings == 0) m.max_position_embeddings = 4096;
}

// gpu-mem-calculator's mixture of experts: moe_enabled with num_experts (default 8), top_k (2),
// expert_intermediate_size (its default 4 x hidden_size) and shared_expert_intermediate_size (GLM's and
// DeepSeek's ungated shared expert). Every layer is an MoE layer. A single expert is a dense MLP.
void read_manual_moe(FieldReader& r, const std::string& prefix, ModelSpec& m,
                     std::vector<std::string>& defaults_applied) {
    const std::uint64_t experts = r.uint("num_experts", 1, 1 << 16).value_or(8);
    const auto top_k = r.uint("top_k", 1, 1 << 16);
    const auto expert_size = r.uint("expert_intermediate_size", 1, kMaxDim * 4);
    const auto shared = r.uint("shared_expert_intermediate_size", 1, kMaxDim * 4);
    if (!r.boolean("moe_enabled").value_or(false) || experts < 2) return;
    if (top_k && *top_k > experts) {
        r.fail("top_k", "must be at most num_experts (" + std::to_string(experts) + ")", r.get("top_k"));
        return;
    }
    if (!r.get("num_experts")) defaults_applied.push_back(prefix + ".num_experts = 8 (gpu-mem-calculator's default)");
    if (!top_k) defaults_applied.push_back(prefix + ".top_k = 2 (gpu-mem-calculator's default)");
    m.num_experts = experts;
    m.num_experts_per_tok = top_k.value_or(2);
    m.moe_intermediate_size = expert_size.value_or(4 * m.hidden_size);
    if (!expert_size)
        defaults_applied.push_back(prefix + ".expert_intermediate_size = " + std::to_string(m.moe_intermediate_size) +
                                   " (gpu-mem-calculator's default, 4 x hidden_size)");
    if (m.intermediate_size == 0) m.intermediate_size = m.moe_intermediate_size;  // as Mixtral's config.json
    m.shared_expert_intermediate_size = shared.value_or(0);
    m.shared_expert_gate = false;
}

// "a, b and c".
std::string listed(const std::vector<std::string>& names) {
    std::string out;
    for (std::size_t i = 0; i < names.size(); ++i)
        out += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
    return out;
}

// What a declared size means for the figures: the weights take the declared count; the activations
// follow the shape, given or guessed, and the warning names only what was guessed.
std::string declared_size_warning(const ModelSpec& m, std::uint64_t declared, const std::vector<std::string>& guesses) {
    const std::string size = "model.num_parameters " + std::to_string(declared);
    std::vector<std::string> given;
    const char* mlp = m.num_experts ? "the experts" : "intermediate_size";
    for (const char* f : {"num_layers", "hidden_size", "num_attention_heads", "vocab_size", mlp})
        if (std::find(guesses.begin(), guesses.end(), f) == guesses.end()) given.emplace_back(f);
    if (std::find(guesses.begin(), guesses.end(), "hidden_size") != guesses.end() &&
        std::find(guesses.begin(), guesses.end(), "num_layers") != guesses.end())
        return "the model is known only by its declared size (" + std::to_string(declared) +
               " parameters): weights use that figure, activations a guessed Llama-like shape";
    std::string out = size + " sizes the weights (the shape counts " + std::to_string(count_parameters(m).total) +
                      "); activations use the shape given (" + listed(given) + ")";
    if (!guesses.empty()) out += " with a guessed Llama-like " + listed(guesses);
    return out;
}

}  // namespace

ModelRead read_manual_model(const json& model, const std::string& prefix, std::vector<std::string>& defaults_applied) {
    ModelRead out;
    FieldReader r(model, prefix, out.issues);
    ModelSpec m;
    const auto declared = read_manual_fields(r, m);
    if (!out.issues.empty()) return out;
    if (!declared && (m.hidden_size == 0 || m.num_layers == 0)) {
        out.issues.push_back({prefix,
                              "needs a preset, an hf_config, or num_parameters (\"7B\") and/or hidden_size + "
                              "num_layers",
                              ""});
        return out;
    }
    const bool moe = r.boolean("moe_enabled").value_or(false) && r.uint("num_experts", 1, 1 << 16).value_or(8) > 1;
    if (moe) m.num_experts = 1;  // known before the shape is guessed: no dense MLP to guess
    std::vector<std::string> guesses;
    guess_missing_shape(declared, prefix, m, defaults_applied, guesses);
    m.num_experts = 0;
    if (moe) read_manual_moe(r, prefix, m, defaults_applied);
    if (!out.issues.empty()) return out;
    m.layer_attention.assign(m.num_layers, LayerAttention::Full);
    m.moe_layer.assign(m.num_layers, m.num_experts > 0);
    if (declared) {
        out.warnings.push_back(declared_size_warning(m, *declared, guesses));
        m.declared_parameters = declared;
    }
    out.model = m;
    return out;
}

}  // namespace gpumem::detail
