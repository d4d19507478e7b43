// Vision towers and projectors of multimodal wrappers (llava, gemma3, mllama, qwen2-vl, mistral3), as lists
// of weight shapes: read_multimodal and, for each tower it knows, the phases that build it. A field
// the vision_config leaves out takes the default of the tower's config class in transformers.

#include <algorithm>

#include "model/reading.h"

namespace gpumem::detail {

namespace {

using Weight = ModelSpec::Weight;

// A linear layer (out × in) and its bias, `copies` times (one per tower layer).
void linear(std::vector<Weight>& w, const std::string& name, std::uint64_t out, std::uint64_t in, bool bias,
            std::uint64_t copies = 1) {
    w.push_back({name, out, in, copies});
    if (bias) w.push_back({name + ".bias", out, 1, copies});
}

// A LayerNorm: weight and bias.
void layer_norm(std::vector<Weight>& w, const std::string& name, std::uint64_t width, std::uint64_t copies = 1) {
    w.push_back({name, width, 1, copies});
    w.push_back({name + ".bias", width, 1, copies});
}

// One ViT encoder layer as CLIP and SigLIP build it: layer_norm1/2 (weight + bias), q/k/v/out_proj
// with bias, mlp fc1/fc2 with bias.
void vit_layers(std::vector<Weight>& w, std::uint64_t h, std::uint64_t I, std::uint64_t L) {
    layer_norm(w, "layers.layer_norm1", h, L);
    for (const char* n :
         {"layers.self_attn.q_proj", "layers.self_attn.k_proj", "layers.self_attn.v_proj", "layers.self_attn.out_proj"})
        linear(w, n, h, h, true, L);
    layer_norm(w, "layers.layer_norm2", h, L);
    linear(w, "layers.mlp.fc1", I, h, true, L);
    linear(w, "layers.mlp.fc2", h, I, true, L);
}

// SiglipMultiheadAttentionPoolingHead: probe, nn.MultiheadAttention (in_proj 3h × h + 3h, out_proj
// h × h + h), layernorm, mlp fc1/fc2.
void siglip_pooling_head(std::vector<Weight>& w, std::uint64_t h, std::uint64_t I) {
    w.push_back({"head.probe", h, 1, 1});
    linear(w, "head.attention.in_proj", 3 * h, h, true);
    linear(w, "head.attention.out_proj", h, h, true);
    layer_norm(w, "head.layernorm", h);
    linear(w, "head.mlp.fc1", I, h, true);
    linear(w, "head.mlp.fc2", h, I, true);
}

// CLIP's (llava) or SigLIP's (gemma3) vision transformer, with CLIPVisionConfig() /
// SiglipVisionConfig() defaults: patch 32 (CLIP) or 16 (SigLIP). LLaVA's projector needs the
// wrapper's fields: read_multimodal adds it.
bool clip_or_siglip_tower(const std::string& wrapper, const json& v, ModelSpec& m) {
    const bool clip = m.vision_model_type == "clip_vision_model";
    std::uint64_t h = uint_or(v, "hidden_size", 768), I = uint_or(v, "intermediate_size", 3072),
                  L = uint_or(v, "num_hidden_layers", 12), ch = uint_or(v, "num_channels", 3),
                  image = uint_or(v, "image_size", 224), patch = uint_or(v, "patch_size", clip ? 32 : 16);
    if (patch == 0 || h == 0) return false;
    std::uint64_t patches = (image / patch) * (image / patch);
    // LLaVA's "default" feature strategy drops CLIP's class token: one LM token per patch.
    m.vision_shape = {h, I, L, uint_or(v, "num_attention_heads", 12), patches + (clip ? 1 : 0), patches};
    auto& w = m.vision_tower;
    if (clip) {
        // CLIPVisionEmbeddings: class_embedding, patch_embedding Conv2d(bias=False), positions for
        // patches + 1; CLIPVisionTransformer: pre_layrnorm, encoder, post_layernorm.
        w.push_back({"embeddings.class_embedding", h, 1, 1});
        w.push_back({"embeddings.patch_embedding", h, ch * patch * patch, 1});
        w.push_back({"embeddings.position_embedding", patches + 1, h, 1});
        layer_norm(w, "pre_layrnorm", h);
    } else {
        // SiglipVisionEmbeddings: patch_embedding Conv2d with bias, positions for the patches.
        linear(w, "embeddings.patch_embedding", h, ch * patch * patch, true);
        w.push_back({"embeddings.position_embedding", patches, h, 1});
    }
    vit_layers(w, h, I, L);
    layer_norm(w, "post_layernorm", h);
    if (!clip && bool_or(v, "vision_use_head", true)) siglip_pooling_head(w, h, I);
    if (wrapper == "gemma3") {
        // Gemma3MultiModalProjector: mm_input_projection_weight (vision h × text h), mm_soft_emb_norm.
        m.projector.push_back({"mm_input_projection_weight", h, m.hidden_size, 1});
        m.projector.push_back({"mm_soft_emb_norm", h, 1, 1});
    }
    return true;
}

// MllamaVisionModel's embeddings: patch_embedding Conv2d(bias=False); class_embedding;
// gated_positional_embedding = gate + embedding (patches + 1) x h + tile_embedding
// Embedding(max_aspect_ratio_id + 1, max_num_tiles x (patches + 1) x h); pre/post_tile_positional_
// embedding = Embedding(max_aspect_ratio_id + 1, max_num_tiles x h) + gate. max_aspect_ratio_id is
// len(supported_aspect_ratios), 8 by default.
void mllama_embeddings(std::vector<Weight>& w, const json& v, std::uint64_t h, std::uint64_t positions,
                       std::uint64_t tiles) {
    std::uint64_t ch = uint_or(v, "num_channels", 3), patch = uint_or(v, "patch_size", 14);
    std::uint64_t ratios = array_size_or(v, "supported_aspect_ratios", 8);
    w.push_back({"patch_embedding", h, ch * patch * patch, 1});
    w.push_back({"class_embedding", h, 1, 1});
    w.push_back({"gated_positional_embedding.gate", 1, 1, 1});
    w.push_back({"gated_positional_embedding.embedding", positions, h, 1});
    w.push_back({"gated_positional_embedding.tile_embedding", ratios + 1, tiles * positions * h, 1});
    for (const char* n : {"pre_tile_positional_embedding", "post_tile_positional_embedding"}) {
        w.push_back({std::string(n) + ".embedding", ratios + 1, tiles * h, 1});
        w.push_back({std::string(n) + ".gate", 1, 1, 1});
    }
}

// MllamaVisionModel's two encoders: transformer (L layers) and global_transformer (G layers, with
// gate_attn and gate_ffn) of MllamaVisionEncoderLayer: q/k/v/o without bias, fc1/fc2 with bias, two
// LayerNorms.
void mllama_encoders(std::vector<Weight>& w, std::uint64_t h, std::uint64_t I, std::uint64_t L, std::uint64_t G) {
    for (const auto& [prefix, n] :
         {std::pair<std::string, std::uint64_t>{"transformer.", L}, {"global_transformer.", G}}) {
        for (const char* proj : {"self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj"})
            w.push_back({prefix + proj, h, h, n});
        linear(w, prefix + "mlp.fc1", I, h, true, n);
        linear(w, prefix + "mlp.fc2", h, I, true, n);
        for (const char* norm : {"input_layernorm", "post_attention_layernorm"}) layer_norm(w, prefix + norm, h, n);
    }
    w.push_back({"global_transformer.gate_attn", 1, 1, G});
    w.push_back({"global_transformer.gate_ffn", 1, 1, G});
}

// MllamaVisionModel (MllamaVisionConfig() defaults): embeddings, layernorm_pre / layernorm_post,
// the two encoders; the projector into the text model.
bool mllama_tower(const json& v, ModelSpec& m) {
    std::uint64_t h = uint_or(v, "hidden_size", 1280), I = uint_or(v, "intermediate_size", 5120),
                  L = uint_or(v, "num_hidden_layers", 32), G = uint_or(v, "num_global_layers", 8),
                  image = uint_or(v, "image_size", 448), patch = uint_or(v, "patch_size", 14),
                  tiles = uint_or(v, "max_num_tiles", 4);
    if (patch == 0 || h == 0) return false;
    std::uint64_t positions = (image / patch) * (image / patch) + 1;  // patches + the class token
    std::uint64_t layers_out = array_size_or(v, "intermediate_layers_indices", 5);
    std::uint64_t out = uint_or(v, "vision_output_dim", h * (layers_out + 1));
    // The heads field is attention_heads in MllamaVisionConfig; an image reaches the text model
    // through cross-attention, not as context tokens (tokens_per_image 0).
    m.vision_shape = {
        h, I, L + G, uint_or(v, "attention_heads", uint_or(v, "num_attention_heads", 16)), tiles * positions, 0};
    auto& w = m.vision_tower;
    mllama_embeddings(w, v, h, positions, tiles);
    for (const char* n : {"layernorm_pre", "layernorm_post"}) layer_norm(w, n, h);
    mllama_encoders(w, h, I, L, G);
    // MllamaForConditionalGeneration.multi_modal_projector: Linear(vision_output_dim, text h) with bias.
    linear(m.projector, "multi_modal_projector", m.hidden_size, out, true);
    return true;
}

// Qwen2-VL's and Qwen2.5-VL's vision transformer and its PatchMerger (the projector).
// Qwen2VLVisionConfig(): embed_dim 1280, depth 32, mlp_ratio 4, hidden_size 3584 (the LM width).
// Qwen2_5_VLVisionConfig(): hidden_size 3584 is the tower width, intermediate_size 3420,
// out_hidden_size 3584 the LM width.
bool qwen2_vl_tower(const json& v, ModelSpec& m) {
    const bool v25 = m.vision_model_type == "qwen2_5_vl";
    std::uint64_t e = v25 ? uint_or(v, "hidden_size", 3584) : uint_or(v, "embed_dim", 1280);
    std::uint64_t depth = uint_or(v, "depth", 32);
    std::uint64_t I = v25 ? uint_or(v, "intermediate_size", 3420) : e * uint_or(v, "mlp_ratio", 4);
    std::uint64_t out = v25 ? uint_or(v, "out_hidden_size", 3584) : uint_or(v, "hidden_size", 3584);
    std::uint64_t ch = v.contains("in_channels") ? uint_or(v, "in_channels", 3) : uint_or(v, "in_chans", 3);
    std::uint64_t patch = uint_or(v, "patch_size", 14), temporal = uint_or(v, "temporal_patch_size", 2),
                  merge = uint_or(v, "spatial_merge_size", 2);
    auto& w = m.vision_tower;
    auto& p = m.projector;
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

// Pixtral's vision transformer (PixtralVisionModel, transformers models/pixtral/modeling_pixtral.py)
// with PixtralVisionConfig() defaults (hidden 1024, intermediate 4096, 24 layers, 16 heads, image
// 1024, patch 16): patch_conv Conv2d(bias=False), ln_pre RMSNorm, then per layer attention_norm,
// attention q/k/v/o (no bias), ffn_norm and a gated feed_forward (gate/up/down, no bias); its 2-D
// rotary positions are a buffer. Mistral3MultiModalProjector (models/mistral3/modeling_mistral3.py):
// norm RMSNorm(vision h), patch_merger.merging_layer Linear(h x merge^2 -> h, no bias), linear_1
// (h x feature layers -> text h) and linear_2 (text h -> text h), biased when
// multimodal_projector_bias. An image of the largest size adds a token per merged patch and one
// [IMG_BREAK] / [IMG_END] per row.
bool pixtral_tower(const std::string& wrapper, const json& config, const json& v, ModelSpec& m) {
    std::uint64_t h = uint_or(v, "hidden_size", 1024), I = uint_or(v, "intermediate_size", 4096),
                  L = uint_or(v, "num_hidden_layers", 24), ch = uint_or(v, "num_channels", 3),
                  image = uint_or(v, "image_size", 1024), patch = uint_or(v, "patch_size", 16);
    if (patch == 0 || h == 0) return false;
    const std::uint64_t side = image / patch,
                        merge = std::max<std::uint64_t>(1, uint_or(config, "spatial_merge_size", 2));
    const std::uint64_t rows = side / merge;
    m.vision_shape = {h, I, L, uint_or(v, "num_attention_heads", 16), side * side, rows * (rows + 1)};
    auto& w = m.vision_tower;
    w.push_back({"patch_conv", h, ch * patch * patch, 1});
    w.push_back({"ln_pre", h, 1, 1});
    w.push_back({"transformer.layers.attention_norm", h, 1, L});
    for (const char* n : {"transformer.layers.attention.q_proj", "transformer.layers.attention.k_proj",
                          "transformer.layers.attention.v_proj", "transformer.layers.attention.o_proj"})
        linear(w, n, h, h, false, L);
    w.push_back({"transformer.layers.ffn_norm", h, 1, L});
    linear(w, "transformer.layers.feed_forward.gate_proj", I, h, false, L);
    linear(w, "transformer.layers.feed_forward.up_proj", I, h, false, L);
    linear(w, "transformer.layers.feed_forward.down_proj", h, I, false, L);
    if (wrapper == "mistral3") {
        const bool bias = bool_or(config, "multimodal_projector_bias", false);
        const std::uint64_t feats = array_size_or(config, "vision_feature_layer", 1);
        m.projector.push_back({"norm", h, 1, 1});
        linear(m.projector, "patch_merger.merging_layer", h, h * merge * merge, false);
        linear(m.projector, "linear_1", m.hidden_size, h * feats, bias);
        linear(m.projector, "linear_2", m.hidden_size, m.hidden_size, bias);
    }
    return true;
}

// The tower's model_type: vision_config's, else the one the wrapper implies (older configs name none).
std::string tower_type(const std::string& wrapper, const json& v) {
    std::string vt = string_or(v, "model_type", "");
    if (vt.empty() && wrapper == "llava") vt = "clip_vision_model";
    if (vt.empty() && (wrapper == "qwen2_vl" || wrapper == "qwen2_5_vl")) vt = wrapper;
    if (vt.empty() && wrapper == "mllama") vt = "mllama_vision_model";
    if (vt.empty() && wrapper == "mistral3") vt = "pixtral";
    return vt;
}

// The vision tower (and, but for llava's, the projector) of a multimodal wrapper from its
// vision_config. Returns false for a tower it does not know or cannot read.
bool read_vision_tower(const std::string& wrapper, const json& config, const json& v, ModelSpec& m) {
    m.vision_model_type = tower_type(wrapper, v);
    const std::string& vt = m.vision_model_type;
    if (vt == "clip_vision_model" || vt == "siglip_vision_model") return clip_or_siglip_tower(wrapper, v, m);
    if (vt == "mllama_vision_model") return mllama_tower(v, m);
    if (vt == "qwen2_vl" || vt == "qwen2_5_vl") return qwen2_vl_tower(v, m);
    if (vt == "pixtral") return pixtral_tower(wrapper, config, v, m);
    return false;
}

// LlavaMultiModalProjector: linear_1 (vision h × number of feature layers → text h) and linear_2
// (text h → text h), with bias unless multimodal_projector_bias is false.
void llava_projector(const json& config, const json& v, ModelSpec& m) {
    if (config.contains("image_seq_length") && config["image_seq_length"].is_number_unsigned())
        m.vision_shape.tokens_per_image = config["image_seq_length"].get<std::uint64_t>();
    std::uint64_t vh = uint_or(v, "hidden_size", 768);
    std::uint64_t feats = array_size_or(config, "vision_feature_layer", 1);
    bool bias = bool_or(config, "multimodal_projector_bias", true);
    linear(m.projector, "linear_1", m.hidden_size, vh * feats, bias);
    linear(m.projector, "linear_2", m.hidden_size, m.hidden_size, bias);
}

// The wrappers whose towers are counted; another wrapper's tower, even one read, is left out.
bool counts_tower(const std::string& wrapper) {
    for (const char* w : {"llava", "gemma3", "qwen2_vl", "qwen2_5_vl", "mllama", "mistral3"})
        if (wrapper == w) return true;
    return false;
}

}  // namespace

void read_multimodal(const json& config, const std::string& wrapper, ModelSpec& m, std::vector<std::string>& warnings) {
    const json& v = config["vision_config"];
    if (!read_vision_tower(wrapper, config, v, m)) {
        warnings.push_back("vision tower '" + display_text(m.vision_model_type) + "' of '" + display_text(wrapper) +
                           "' is not known: only the language model is counted");
        return;
    }
    // Gemma 3 pools each image to mm_tokens_per_image soft tokens (256 in Gemma3Config()).
    if (wrapper == "gemma3")
        m.vision_shape.tokens_per_image =
            config.contains("mm_tokens_per_image") && config["mm_tokens_per_image"].is_number_unsigned()
                ? config["mm_tokens_per_image"].get<std::uint64_t>()
                : 256;
    if (wrapper == "llava" && m.vision_model_type != "qwen2_vl") {
        llava_projector(config, v, m);
    } else if (!counts_tower(wrapper)) {
        m.vision_tower.clear();
        m.projector.clear();
        warnings.push_back("multimodal model_type '" + display_text(wrapper) + "': only the language model is counted");
    }
}

}  // namespace gpumem::detail
