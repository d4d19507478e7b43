// What the config readers of this directory share: field helpers, a family's facts, the vision tower.
// The public face of the directory is model.h; this header is for its .cpp files only.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "model/model.h"

namespace gpumem::detail {

constexpr std::uint64_t kMaxDim = 1ull << 24;  // 16.7M: above any real hidden/vocab size
constexpr std::uint64_t kMaxLayers = 100000;

// The first present key among `keys` (configs of different families name the same thing differently).
inline std::string first_key(const json& config, std::initializer_list<const char*> keys) {
    for (const char* k : keys)
        if (config.contains(k) && !config[k].is_null()) return k;
    return "";
}

// A non-negative integer field, or `fallback` when absent, null or of another type.
inline std::uint64_t uint_or(const json& c, const char* key, std::uint64_t fallback) {
    if (!c.contains(key) || !c[key].is_number_integer() || c[key].get<std::int64_t>() < 0) return fallback;
    return c[key].get<std::uint64_t>();
}

// A boolean field, or `fallback` when absent, null or of another type.
inline bool bool_or(const json& c, const char* key, bool fallback) {
    return c.contains(key) && c[key].is_boolean() ? c[key].get<bool>() : fallback;
}

// A string field, or `fallback` when absent, null or of another type.
inline std::string string_or(const json& c, const char* key, const std::string& fallback) {
    return c.contains(key) && c[key].is_string() ? c[key].get<std::string>() : fallback;
}

// The length of an array field, or `fallback` when absent or not an array.
inline std::uint64_t array_size_or(const json& c, const char* key, std::uint64_t fallback) {
    return c.contains(key) && c[key].is_array() ? c[key].size() : fallback;
}

// A family's facts: where its modules differ from llama's decoder, whose facts are the defaults
// here. read_hf_config copies most of them into the ModelSpec (apply_family).
struct Family {
    bool known = true;  // false: an unknown model_type, read as llama with its config's biases
    bool qkv_bias = false, o_bias = false, mlp_bias = false, lm_head_bias = false;
    bool tie_default = false;                     // tie_word_embeddings when the config does not say
    bool gated = true;                            // gate/up/down MLP; false: fc1/fc2
    ModelSpec::Norm norm = ModelSpec::Norm::RMS;  // RMS: weight only (also LayerNorm without bias: mpt, dbrx, cohere)
    std::uint64_t norms_per_layer = 2;
    ModelSpec::QKNorm qk_norm = ModelSpec::QKNorm::None;
    bool parallel = false;  // attention and MLP read the same normed input
    bool learned_positions = false;
    std::uint64_t position_offset = 0;  // opt: 2 extra rows in the learned position table
    bool embedding_norm = false, final_norm = true;
    ModelSpec::Structure structure = ModelSpec::Structure::Decoder;
    bool moe = false, expert_bias = false, router_bias = false, sinks = false, shared_expert = false;
    bool mla = false;  // deepseek_v2/v3 multi-head latent attention, dense first layers, shared experts
    // Which layers slide when the config sets sliding_window: all, the even ones (gemma2), those from
    // max_window_layers on with use_sliding_window (qwen), all but every sliding_window_pattern-th (gemma3).
    enum class Window { None, AllLayers, EvenLayers, QwenUpper, EveryNth } window = Window::None;
};

// The facts of the family `type` names, with the switches its config `c` sets.
Family family_of(const std::string& type, const json& c);

// Defaults of the transformers config class for a nested text_config: older multimodal configs
// store only the fields that differ from them (llava-1.5's text_config names no hidden_size).
json text_config_defaults(const std::string& type);

// The vision tower and projector of a multimodal wrapper from config.json's vision_config (an
// object), read after the language model: the projector's width is m.hidden_size. A warning where
// only the language model is counted. `wrapper` is config.json's own model_type.
void read_multimodal(const json& config, const std::string& wrapper, ModelSpec& m, std::vector<std::string>& warnings);

}  // namespace gpumem::detail
