// Each family below is a set of switches on one decoder shape, checked against the module code in
// transformers (modeling_<family>.py) and against the published totals in presets/models/.

#include "model/reading.h"

namespace gpumem::detail {

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

}  // namespace gpumem::detail
