// Reading a Hugging Face config.json into a ModelSpec, and counting its parameters exactly.
//
// Each family below is a set of switches on one decoder shape, checked against the module code in
// transformers (modeling_<family>.py) and against the published totals in presets/models/.

#include <algorithm>
#include <cmath>
#include <map>

#include "model/model.h"

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

// A non-negative integer field, or `fallback` when absent, null or of another type.
std::uint64_t uint_or(const json& c, const char* key, std::uint64_t fallback) {
    if (!c.contains(key) || !c[key].is_number_integer() || c[key].get<std::int64_t>() < 0) return fallback;
    return c[key].get<std::uint64_t>();
}

struct Family {
    bool known = true;
    bool qkv_bias = false, o_bias = false, mlp_bias = false, lm_head_bias = false;
    bool tie_default = false;
    bool gated = true;
    ModelSpec::Norm norm = ModelSpec::Norm::RMS;  // RMS: weight only (also LayerNorm without bias: mpt, dbrx, cohere)
    std::uint64_t norms_per_layer = 2;
    ModelSpec::QKNorm qk_norm = ModelSpec::QKNorm::None;
    bool parallel = false;
    bool learned_positions = false;
    std::uint64_t position_offset = 0;  // opt: 2 extra rows in the learned position table
    bool embedding_norm = false, final_norm = true;
    ModelSpec::Structure structure = ModelSpec::Structure::Decoder;
    bool moe = false, expert_bias = false, router_bias = false, sinks = false, shared_expert = false;
    bool mla = false;  // deepseek_v2/v3 multi-head latent attention, dense first layers, shared experts
    enum class Window { None, AllLayers, EvenLayers, QwenUpper, EveryNth } window = Window::None;
};

Family family_of(const std::string& type, const json& c) {
    auto flag = [&](const char* key, bool fallback) {
        return c.contains(key) && c[key].is_boolean() ? c[key].get<bool>() : fallback;
    };
    Family f;
    if (type == "llama" || type == "granite" || type == "mllama_text_model") {
        // granite: llama's modules; its embedding/residual/attention/logits multipliers are scalars.
        // mllama_text_model: llama's layers; its cross-attention layers are added below.
        f.qkv_bias = f.o_bias = flag("attention_bias", false);
        f.mlp_bias = flag("mlp_bias", false);
    } else if (type == "mistral") {
        f.window = Family::Window::AllLayers;
    } else if (type == "qwen2" || type == "qwen2_vl" || type == "qwen2_5_vl" || type == "qwen2_vl_text" ||
               type == "qwen2_5_vl_text") {
        f.qkv_bias = true;  // Qwen2Attention: q/k/v with bias, o_proj without (also the VL language models)
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
    } else if (type == "gemma3_text" || type == "gemma3") {
        // Gemma3DecoderLayer: gemma2's four norms plus Gemma3RMSNorm(head_dim) q_norm / k_norm; every
        // sliding_window_pattern-th layer (default 6) is global. embed_scale is a buffer.
        f.tie_default = true;
        f.norms_per_layer = 4;
        f.qk_norm = ModelSpec::QKNorm::PerHead;
        f.qkv_bias = f.o_bias = flag("attention_bias", false);
        f.window = Family::Window::EveryNth;
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
    } else if (type == "cohere") {
        // CohereDecoderLayer: one CohereLayerNorm (weight, no bias) feeds attention and MLP in
        // parallel; use_qk_norm adds CohereLayerNorm((heads, head_dim)) and ((kv heads, head_dim)).
        f.tie_default = true;
        f.norms_per_layer = 1;
        f.parallel = true;
        f.qkv_bias = f.o_bias = flag("attention_bias", false);
        if (flag("use_qk_norm", false)) f.qk_norm = ModelSpec::QKNorm::Full;
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
    } else if (type == "phimoe") {
        // PhimoeDecoderLayer: LayerNorm (weight + bias) around attention and the sparse block; the
        // router `gate` has no bias; lm_head has one when lm_head_bias.
        f.moe = true;
        f.norm = ModelSpec::Norm::Layer;
        f.qkv_bias = f.o_bias = flag("attention_bias", false);
        f.lm_head_bias = flag("lm_head_bias", false);
        f.window = Family::Window::AllLayers;
    } else if (type == "olmoe") {
        // OlmoeAttention: q_norm RMSNorm(hidden), k_norm RMSNorm(kv heads × head_dim); experts of width
        // intermediate_size behind a bias-free gate.
        f.moe = true;
        f.qkv_bias = f.o_bias = flag("attention_bias", false);
        f.qk_norm = ModelSpec::QKNorm::Full;
    } else if (type == "granitemoe") {
        // GraniteMoeMoE: router.layer (experts × h), input_linear (experts × 2I × h: gate and up),
        // output_linear (experts × h × I); the same count as gate/up/down per expert.
        f.moe = true;
        f.qkv_bias = f.o_bias = flag("attention_bias", false);
    } else if (type == "dbrx") {
        // DbrxBlock: norm_1 / norm_2 LayerNorm(bias=False), Wqkv, out_proj, router.layer, experts
        // w1 / v1 / w2 (each experts × ffn_hidden_size × d_model), no biases; final norm_f.
        f.moe = true;
    } else if (type == "deepseek_v2" || type == "deepseek_v3") {
        f.moe = f.mla = true;
        f.qkv_bias = f.o_bias = flag("attention_bias", false);
    } else if (type == "gpt_oss") {
        f.moe = f.expert_bias = f.router_bias = f.sinks = true;
        f.qkv_bias = f.o_bias = flag("attention_bias", true);
    } else if (type == "gpt2") {
        f.tie_default = true;
        f.norm = ModelSpec::Norm::Layer;
        f.qkv_bias = f.o_bias = f.mlp_bias = true;
        f.gated = false;
        f.learned_positions = true;
    } else if (type == "gpt_bigcode") {
        // GPTBigCodeBlock: GPT-2's block (ln_1, attn.c_attn / c_proj, ln_2, mlp.c_fc / c_proj, all
        // biased; learned positions; tied lm_head) with multi-query attention: c_attn is
        // Linear(h, h + 2 x head_dim) when multi_query (the default), so one k/v head (set below).
        f.tie_default = true;
        f.norm = ModelSpec::Norm::Layer;
        f.qkv_bias = f.o_bias = f.mlp_bias = true;
        f.gated = false;
        f.learned_positions = true;
    } else if (type == "gptj") {
        // GPTJBlock: ln_1 only, attention (q/k/v/out_proj, no bias) and MLP (fc_in/fc_out, biased) in
        // parallel; rotary; lm_head untied with a bias.
        f.norm = ModelSpec::Norm::Layer;
        f.mlp_bias = f.lm_head_bias = true;
        f.gated = false;
        f.norms_per_layer = 1;
        f.parallel = true;
    } else if (type == "opt") {
        // OPTDecoderLayer: q/k/v/out_proj and fc1/fc2 with bias (enable_bias), self_attn_layer_norm and
        // final_layer_norm; OPTLearnedPositionalEmbedding keeps 2 offset rows.
        f.tie_default = true;
        f.norm = ModelSpec::Norm::Layer;
        f.qkv_bias = f.o_bias = f.mlp_bias = flag("enable_bias", true);
        f.gated = false;
        f.learned_positions = true;
        f.position_offset = 2;
        f.final_norm = flag("do_layer_norm_before", true) && !flag("_remove_final_layer_norm", false);
    } else if (type == "bloom") {
        // BloomBlock: fused query_key_value and dense with bias, MLP with bias, two LayerNorms; the
        // embeddings have their own word_embeddings_layernorm; ALiBi, so no position table.
        f.tie_default = true;
        f.norm = ModelSpec::Norm::Layer;
        f.qkv_bias = f.o_bias = f.mlp_bias = true;
        f.gated = false;
        f.embedding_norm = true;
    } else if (type == "falcon") {
        // FalconDecoderLayer: query_key_value, dense, dense_h_to_4h and dense_4h_to_h all with
        // bias=config.bias; LayerNorms with bias; the head count of k/v and the norms are set below.
        f.tie_default = true;
        f.norm = ModelSpec::Norm::Layer;
        f.qkv_bias = f.o_bias = f.mlp_bias = flag("bias", false);
        f.gated = false;
        f.parallel = flag("parallel_attn", true);
    } else if (type == "mpt") {
        // MptBlock: norm_1 / norm_2 / norm_f are LayerNorms whose bias is set to None; Wqkv, out_proj,
        // up_proj, down_proj without bias; ALiBi; lm_head tied.
        f.tie_default = true;
        f.gated = false;
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
    } else if (type == "bert" || type == "roberta") {
        // BertLayer: self query/key/value + output dense with bias and a LayerNorm, intermediate and
        // output dense with bias and a LayerNorm (post-norm: no final norm); the embeddings add
        // position and token_type tables and a LayerNorm. The head depends on the class (below).
        f.tie_default = true;
        f.norm = ModelSpec::Norm::Layer;
        f.qkv_bias = f.o_bias = f.mlp_bias = true;
        f.gated = false;
        f.learned_positions = true;
        f.embedding_norm = true;
        f.final_norm = false;
        f.structure = ModelSpec::Structure::Encoder;
    } else if (type == "t5" || type == "mt5") {
        // T5Block: SelfAttention q/k/v/o without bias, T5LayerNorm (weight only), DenseReluDense wi/wo
        // (gated-*: wi_0, wi_1, wo); decoder blocks add EncDecAttention + its norm. MT5 is the same
        // module; only MT5Config's defaults differ (untied lm_head, gated-gelu).
        f.tie_default = type == "t5";
        f.structure = ModelSpec::Structure::EncoderDecoder;
    } else {
        f.known = false;  // generic decoder reading: llama-like, biases only where the config says
        f.qkv_bias = f.o_bias = flag("attention_bias", false);
        f.mlp_bias = flag("mlp_bias", false);
        f.window = Family::Window::AllLayers;
    }
    return f;
}

// Defaults of the transformers config class for a nested text_config: older multimodal configs
// store only the fields that differ from them (llava-1.5's text_config names no hidden_size).
json text_config_defaults(const std::string& type) {
    if (type == "llama")  // LlamaConfig()
        return {{"vocab_size", 32000}, {"hidden_size", 4096}, {"intermediate_size", 11008}, {"num_hidden_layers", 32},
                {"num_attention_heads", 32}, {"max_position_embeddings", 2048}, {"tie_word_embeddings", false}};
    if (type == "mistral")  // MistralConfig()
        return {{"vocab_size", 32000}, {"hidden_size", 4096}, {"intermediate_size", 14336}, {"num_hidden_layers", 32},
                {"num_attention_heads", 32}, {"num_key_value_heads", 8}, {"max_position_embeddings", 131072},
                {"sliding_window", 4096}, {"tie_word_embeddings", false}};
    if (type == "gemma3_text")  // Gemma3TextConfig()
        return {{"vocab_size", 262208}, {"hidden_size", 2304}, {"intermediate_size", 9216}, {"num_hidden_layers", 26},
                {"num_attention_heads", 8}, {"num_key_value_heads", 4}, {"head_dim", 256},
                {"max_position_embeddings", 131072}, {"sliding_window", 4096}, {"sliding_window_pattern", 6},
                {"tie_word_embeddings", true}};
    return json::object();
}

using Weight = ModelSpec::Weight;

// A linear layer (out × in) and its bias, `copies` times (one per tower layer).
void linear(std::vector<Weight>& w, const std::string& name, std::uint64_t out, std::uint64_t in, bool bias,
            std::uint64_t copies = 1) {
    w.push_back({name, out, in, copies});
    if (bias) w.push_back({name + ".bias", out, 1, copies});
}

// One ViT encoder layer as CLIP and SigLIP build it: layer_norm1/2 (weight + bias), q/k/v/out_proj
// with bias, mlp fc1/fc2 with bias.
void vit_layers(std::vector<Weight>& w, std::uint64_t h, std::uint64_t I, std::uint64_t L) {
    w.push_back({"layers.layer_norm1", h, 1, L});
    w.push_back({"layers.layer_norm1.bias", h, 1, L});
    for (const char* n : {"layers.self_attn.q_proj", "layers.self_attn.k_proj", "layers.self_attn.v_proj",
                          "layers.self_attn.out_proj"})
        linear(w, n, h, h, true, L);
    w.push_back({"layers.layer_norm2", h, 1, L});
    w.push_back({"layers.layer_norm2.bias", h, 1, L});
    linear(w, "layers.mlp.fc1", I, h, true, L);
    linear(w, "layers.mlp.fc2", h, I, true, L);
}

// The vision tower of a multimodal wrapper from its vision_config (defaults of the tower's config
// class where a field is absent). Returns false for a tower it does not know.
bool read_vision_tower(const std::string& wrapper, const json& v, ModelSpec& m, std::uint64_t text_hidden) {
    std::string vt = v.contains("model_type") && v["model_type"].is_string() ? v["model_type"].get<std::string>() : "";
    if (vt.empty() && wrapper == "llava") vt = "clip_vision_model";
    if (vt.empty() && (wrapper == "qwen2_vl" || wrapper == "qwen2_5_vl")) vt = wrapper;
    if (vt.empty() && wrapper == "mllama") vt = "mllama_vision_model";
    m.vision_model_type = vt;
    auto& w = m.vision_tower;
    auto& p = m.projector;
    if (vt == "clip_vision_model" || vt == "siglip_vision_model") {
        bool clip = vt == "clip_vision_model";
        // CLIPVisionConfig() / SiglipVisionConfig() defaults; patch 32 (CLIP) or 16 (SigLIP).
        std::uint64_t h = uint_or(v, "hidden_size", 768), I = uint_or(v, "intermediate_size", 3072),
                      L = uint_or(v, "num_hidden_layers", 12), ch = uint_or(v, "num_channels", 3),
                      image = uint_or(v, "image_size", 224), patch = uint_or(v, "patch_size", clip ? 32 : 16);
        if (patch == 0 || h == 0) return false;
        std::uint64_t patches = (image / patch) * (image / patch);
        // LLaVA's "default" feature strategy drops CLIP's class token: one LM token per patch.
        m.vision_shape = {h, I, L, uint_or(v, "num_attention_heads", 12), patches + (clip ? 1 : 0), patches};
        if (clip) {
            // CLIPVisionEmbeddings: class_embedding, patch_embedding Conv2d(bias=False), positions for
            // patches + 1; CLIPVisionTransformer: pre_layrnorm, encoder, post_layernorm.
            w.push_back({"embeddings.class_embedding", h, 1, 1});
            w.push_back({"embeddings.patch_embedding", h, ch * patch * patch, 1});
            w.push_back({"embeddings.position_embedding", patches + 1, h, 1});
            w.push_back({"pre_layrnorm", h, 1, 1});
            w.push_back({"pre_layrnorm.bias", h, 1, 1});
        } else {
            // SiglipVisionEmbeddings: patch_embedding Conv2d with bias, positions for the patches.
            w.push_back({"embeddings.patch_embedding", h, ch * patch * patch, 1});
            w.push_back({"embeddings.patch_embedding.bias", h, 1, 1});
            w.push_back({"embeddings.position_embedding", patches, h, 1});
        }
        vit_layers(w, h, I, L);
        w.push_back({"post_layernorm", h, 1, 1});
        w.push_back({"post_layernorm.bias", h, 1, 1});
        bool head = !clip && (!v.contains("vision_use_head") || !v["vision_use_head"].is_boolean() ||
                              v["vision_use_head"].get<bool>());
        if (head) {
            // SiglipMultiheadAttentionPoolingHead: probe, nn.MultiheadAttention (in_proj 3h × h + 3h,
            // out_proj h × h + h), layernorm, mlp fc1/fc2.
            w.push_back({"head.probe", h, 1, 1});
            linear(w, "head.attention.in_proj", 3 * h, h, true);
            linear(w, "head.attention.out_proj", h, h, true);
            w.push_back({"head.layernorm", h, 1, 1});
            w.push_back({"head.layernorm.bias", h, 1, 1});
            linear(w, "head.mlp.fc1", I, h, true);
            linear(w, "head.mlp.fc2", h, I, true);
        }
        if (wrapper == "gemma3") {
            // Gemma3MultiModalProjector: mm_input_projection_weight (vision h × text h), mm_soft_emb_norm.
            p.push_back({"mm_input_projection_weight", h, text_hidden, 1});
            p.push_back({"mm_soft_emb_norm", h, 1, 1});
        } else {
            // LlavaMultiModalProjector: linear_1 (vision h × feature layers → text h), act, linear_2.
            return true;  // the caller adds it: it needs the wrapper's fields
        }
        return true;
    }
    if (vt == "mllama_vision_model") {
        // MllamaVisionModel (MllamaVisionConfig() defaults): patch_embedding Conv2d(bias=False);
        // class_embedding; gated_positional_embedding = gate + embedding (patches + 1) x h + tile_embedding
        // Embedding(max_aspect_ratio_id + 1, max_num_tiles x (patches + 1) x h); pre/post_tile_positional_
        // embedding = Embedding(max_aspect_ratio_id + 1, max_num_tiles x h) + gate; layernorm_pre/post;
        // transformer (num_hidden_layers) and global_transformer (num_global_layers, with gate_attn and
        // gate_ffn) of MllamaVisionEncoderLayer: q/k/v/o without bias, fc1/fc2 with bias, two LayerNorms.
        // max_aspect_ratio_id is len(supported_aspect_ratios), 8 by default.
        std::uint64_t h = uint_or(v, "hidden_size", 1280), I = uint_or(v, "intermediate_size", 5120),
                      L = uint_or(v, "num_hidden_layers", 32), G = uint_or(v, "num_global_layers", 8),
                      ch = uint_or(v, "num_channels", 3), image = uint_or(v, "image_size", 448),
                      patch = uint_or(v, "patch_size", 14), tiles = uint_or(v, "max_num_tiles", 4);
        if (patch == 0 || h == 0) return false;
        std::uint64_t ratios = v.contains("supported_aspect_ratios") && v["supported_aspect_ratios"].is_array()
                                   ? v["supported_aspect_ratios"].size() : 8;
        std::uint64_t positions = (image / patch) * (image / patch) + 1;  // patches + the class token
        std::uint64_t layers_out = v.contains("intermediate_layers_indices") && v["intermediate_layers_indices"].is_array()
                                       ? v["intermediate_layers_indices"].size() : 5;
        std::uint64_t out = uint_or(v, "vision_output_dim", h * (layers_out + 1));
        // The heads field is attention_heads in MllamaVisionConfig; an image reaches the text model
        // through cross-attention, not as context tokens (tokens_per_image 0).
        m.vision_shape = {h, I, L + G, uint_or(v, "attention_heads", uint_or(v, "num_attention_heads", 16)), tiles * positions, 0};
        w.push_back({"patch_embedding", h, ch * patch * patch, 1});
        w.push_back({"class_embedding", h, 1, 1});
        w.push_back({"gated_positional_embedding.gate", 1, 1, 1});
        w.push_back({"gated_positional_embedding.embedding", positions, h, 1});
        w.push_back({"gated_positional_embedding.tile_embedding", ratios + 1, tiles * positions * h, 1});
        for (const char* n : {"pre_tile_positional_embedding", "post_tile_positional_embedding"}) {
            w.push_back({std::string(n) + ".embedding", ratios + 1, tiles * h, 1});
            w.push_back({std::string(n) + ".gate", 1, 1, 1});
        }
        for (const char* n : {"layernorm_pre", "layernorm_post"}) {
            w.push_back({n, h, 1, 1});
            w.push_back({std::string(n) + ".bias", h, 1, 1});
        }
        for (const auto& [prefix, n] : {std::pair<std::string, std::uint64_t>{"transformer.", L}, {"global_transformer.", G}}) {
            for (const char* proj : {"self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj"})
                w.push_back({prefix + proj, h, h, n});
            linear(w, prefix + "mlp.fc1", I, h, true, n);
            linear(w, prefix + "mlp.fc2", h, I, true, n);
            for (const char* norm : {"input_layernorm", "post_attention_layernorm"}) {
                w.push_back({prefix + norm, h, 1, n});
                w.push_back({prefix + norm + ".bias", h, 1, n});
            }
        }
        w.push_back({"global_transformer.gate_attn", 1, 1, G});
        w.push_back({"global_transformer.gate_ffn", 1, 1, G});
        // MllamaForConditionalGeneration.multi_modal_projector: Linear(vision_output_dim, text h) with bias.
        linear(p, "multi_modal_projector", text_hidden, out, true);
        return true;
    }
    if (vt == "qwen2_vl" || vt == "qwen2_5_vl") {
        bool v25 = vt == "qwen2_5_vl";
        // Qwen2VLVisionConfig(): embed_dim 1280, depth 32, mlp_ratio 4, hidden_size 3584 (the LM width).
        // Qwen2_5_VLVisionConfig(): hidden_size 3584 is the tower width, intermediate_size 3420,
        // out_hidden_size 3584 the LM width.
        std::uint64_t e = v25 ? uint_or(v, "hidden_size", 3584) : uint_or(v, "embed_dim", 1280);
        std::uint64_t depth = uint_or(v, "depth", 32);
        std::uint64_t I = v25 ? uint_or(v, "intermediate_size", 3420) : e * uint_or(v, "mlp_ratio", 4);
        std::uint64_t out = v25 ? uint_or(v, "out_hidden_size", 3584) : uint_or(v, "hidden_size", 3584);
        std::uint64_t ch = v.contains("in_channels") ? uint_or(v, "in_channels", 3) : uint_or(v, "in_chans", 3);
        std::uint64_t patch = uint_or(v, "patch_size", 14), temporal = uint_or(v, "temporal_patch_size", 2),
                      merge = uint_or(v, "spatial_merge_size", 2);
        // PatchEmbed: Conv3d(bias=False) over temporal × patch × patch; rotary inv_freq is a buffer.
        w.push_back({"patch_embed.proj", e, ch * temporal * patch * patch, 1});
        // Blocks: norm1 / norm2 (LayerNorm with bias in 2-VL, RMSNorm in 2.5-VL), attn.qkv and
        // attn.proj with bias, then fc1/fc2 (2-VL) or gate/up/down_proj with bias (2.5-VL).
        for (const char* n : {"blocks.norm1", "blocks.norm2"}) {
            w.push_back({n, e, 1, depth});
            if (!v25) w.push_back({std::string(n) + ".bias", e, 1, depth});
        }
        linear(w, "blocks.attn.qkv", 3 * e, e, true, depth);
        linear(w, "blocks.attn.proj", e, e, true, depth);
        if (v25) {
            linear(w, "blocks.mlp.gate_proj", I, e, true, depth);
            linear(w, "blocks.mlp.up_proj", I, e, true, depth);
            linear(w, "blocks.mlp.down_proj", e, I, true, depth);
        } else {
            linear(w, "blocks.mlp.fc1", I, e, true, depth);
            linear(w, "blocks.mlp.fc2", e, I, true, depth);
        }
        // PatchMerger (the projector): ln_q, then Linear(e·merge², same) and Linear(e·merge², out), biased.
        std::uint64_t cat = e * merge * merge;
        p.push_back({"merger.ln_q", e, 1, 1});
        if (!v25) p.push_back({"merger.ln_q.bias", e, 1, 1});
        linear(p, "merger.mlp.0", cat, cat, true);
        linear(p, "merger.mlp.2", out, cat, true);
        return true;
    }
    m.vision_tower.clear();
    m.projector.clear();
    return false;
}

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
    for (const Tensor& t : list_tensors(m)) {
        std::uint64_t n = t.elements() * (t.in_layers() ? layer_count(m, t.layers) : 1);
        switch (t.group) {
            case Group::Embedding: c.embedding += n; break;
            case Group::Attention: c.attention += n; break;
            case Group::Mlp: c.mlp += n; break;
            case Group::Norm: c.norms += n; break;
            case Group::LmHead: c.lm_head += n; break;
            case Group::Vision: c.vision += n; break;
            case Group::Projector: c.projector += n; break;
        }
        if (t.in_layers() && t.layers != Layers::Dense && (t.expert || t.name.rfind("router", 0) == 0 ||
                                                           t.name.rfind("shared_expert", 0) == 0))
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
        // Within the reader's range: below 1 when the embeddings alone exceed the size (rest < 0),
        // and far above it for a tiny hidden_size.
        double layers = std::clamp(std::round(rest / per_layer), 1.0, static_cast<double>(kMaxLayers));
        m.num_layers = guessed("num_layers", static_cast<std::uint64_t>(layers), "guessed from num_parameters and hidden_size");
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
