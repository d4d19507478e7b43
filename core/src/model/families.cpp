// The families read_hf_config knows, as a table: the model_type names that select each one and how
// its modules differ from llama's decoder. Each row is checked against the module code in
// transformers (modeling_<family>.py) and against the published totals in presets/models/.

#include "model/reading.h"

namespace gpumem::detail {

namespace {

using Window = Family::Window;
using Norm = ModelSpec::Norm;
using QKNorm = ModelSpec::QKNorm;

// q/k/v/o biases as the config's attention_bias says (LlamaConfig and most of its descendants).
void attention_bias(Family& f, const json& c, bool fallback = false) {
    f.qkv_bias = f.o_bias = bool_or(c, "attention_bias", fallback);
}

// llama's decoder: biases only where attention_bias / mlp_bias say so.
void llama_biases(Family& f, const json& c) {
    attention_bias(f, c);
    f.mlp_bias = bool_or(c, "mlp_bias", false);
}

// GPT-2's block, the shape of the older families: LayerNorm with bias, q/k/v/o and MLP with biases
// (some families' configs switch them off), an ungated fc/proj MLP.
void gpt2_block(Family& f, bool biases = true) {
    f.norm = Norm::Layer;
    f.qkv_bias = f.o_bias = f.mlp_bias = biases;
    f.gated = false;
}

struct FamilyRow {
    const char* model_types[5];                  // the names that select it (unused slots null)
    void (*set)(Family& f, const json& config);  // its facts, and the switches its config sets
};

const FamilyRow kFamilies[] = {
    // granite: llama's modules; its embedding/residual/attention/logits multipliers are scalars.
    // mllama_text_model: llama's layers; read_hf_config adds its cross-attention layers.
    {{"llama", "granite", "mllama_text_model"}, llama_biases},
    {{"mistral"}, [](Family& f, const json&) { f.window = Window::AllLayers; }},
    // Qwen2Attention: q/k/v with bias, o_proj without (also the VL language models).
    {{"qwen2", "qwen2_vl", "qwen2_5_vl", "qwen2_vl_text", "qwen2_5_vl_text"},
     [](Family& f, const json&) {
         f.qkv_bias = true;
         f.window = Window::QwenUpper;
     }},
    {{"qwen3"},
     [](Family& f, const json& c) {
         attention_bias(f, c);
         f.qk_norm = QKNorm::PerHead;
         f.window = Window::QwenUpper;
     }},
    {{"gemma"}, [](Family& f, const json&) { f.tie_default = true; }},
    {{"gemma2"},
     [](Family& f, const json& c) {
         f.tie_default = true;
         f.norms_per_layer = 4;  // pre/post attention and pre/post feed-forward
         attention_bias(f, c);
         f.window = Window::EvenLayers;
     }},
    // Gemma3DecoderLayer: gemma2's four norms plus Gemma3RMSNorm(head_dim) q_norm / k_norm; every
    // sliding_window_pattern-th layer (default 6) is global. embed_scale is a buffer.
    {{"gemma3_text", "gemma3"},
     [](Family& f, const json& c) {
         f.tie_default = true;
         f.norms_per_layer = 4;
         f.qk_norm = QKNorm::PerHead;
         attention_bias(f, c);
         f.window = Window::EveryNth;
     }},
    {{"phi3"},
     [](Family& f, const json& c) {
         attention_bias(f, c);
         f.window = Window::AllLayers;
     }},
    {{"olmo2"},
     [](Family& f, const json& c) {
         attention_bias(f, c);
         f.qk_norm = QKNorm::Full;  // q_norm over heads × head_dim, k_norm over kv heads × head_dim
     }},
    {{"stablelm"},
     [](Family& f, const json& c) {
         f.norm = Norm::Layer;
         f.qkv_bias = bool_or(c, "use_qkv_bias", false);
         f.parallel = bool_or(c, "use_parallel_residual", false);
         if (f.parallel) f.norms_per_layer = 1;
     }},
    // CohereDecoderLayer: one CohereLayerNorm (weight, no bias) feeds attention and MLP in parallel;
    // use_qk_norm adds CohereLayerNorm((heads, head_dim)) and ((kv heads, head_dim)).
    {{"cohere"},
     [](Family& f, const json& c) {
         f.tie_default = true;
         f.norms_per_layer = 1;
         f.parallel = true;
         attention_bias(f, c);
         if (bool_or(c, "use_qk_norm", false)) f.qk_norm = QKNorm::Full;
     }},
    {{"mixtral"},
     [](Family& f, const json&) {
         f.moe = true;
         f.window = Window::AllLayers;
     }},
    {{"qwen2_moe"},
     [](Family& f, const json&) {
         f.moe = f.shared_expert = true;
         f.qkv_bias = true;
         f.window = Window::QwenUpper;
     }},
    {{"qwen3_moe"},
     [](Family& f, const json& c) {
         f.moe = true;
         attention_bias(f, c);
         f.qk_norm = QKNorm::PerHead;
         f.window = Window::QwenUpper;
     }},
    // PhimoeDecoderLayer: LayerNorm (weight + bias) around attention and the sparse block; the router
    // `gate` has no bias; lm_head has one when lm_head_bias.
    {{"phimoe"},
     [](Family& f, const json& c) {
         f.moe = true;
         f.norm = Norm::Layer;
         attention_bias(f, c);
         f.lm_head_bias = bool_or(c, "lm_head_bias", false);
         f.window = Window::AllLayers;
     }},
    // OlmoeAttention: q_norm RMSNorm(hidden), k_norm RMSNorm(kv heads × head_dim); experts of width
    // intermediate_size behind a bias-free gate.
    {{"olmoe"},
     [](Family& f, const json& c) {
         f.moe = true;
         attention_bias(f, c);
         f.qk_norm = QKNorm::Full;
     }},
    // GraniteMoeMoE: router.layer (experts × h), input_linear (experts × 2I × h: gate and up),
    // output_linear (experts × h × I); the same count as gate/up/down per expert.
    {{"granitemoe"},
     [](Family& f, const json& c) {
         f.moe = true;
         attention_bias(f, c);
     }},
    // DbrxBlock: norm_1 / norm_2 LayerNorm(bias=False), Wqkv, out_proj, router.layer, experts
    // w1 / v1 / w2 (each experts × ffn_hidden_size × d_model), no biases; final norm_f.
    {{"dbrx"}, [](Family& f, const json&) { f.moe = true; }},
    {{"deepseek_v2", "deepseek_v3"},
     [](Family& f, const json& c) {
         f.moe = f.mla = true;
         attention_bias(f, c);
     }},
    {{"gpt_oss"},
     [](Family& f, const json& c) {
         f.moe = f.expert_bias = f.router_bias = f.sinks = true;
         attention_bias(f, c, true);
     }},
    // GPTBigCodeBlock: GPT-2's block (ln_1, attn.c_attn / c_proj, ln_2, mlp.c_fc / c_proj, all biased;
    // learned positions; tied lm_head) with multi-query attention: c_attn is Linear(h, h + 2 x head_dim)
    // when multi_query (the default), so one k/v head (read_hf_config's read_kv_heads).
    {{"gpt2", "gpt_bigcode"},
     [](Family& f, const json&) {
         f.tie_default = true;
         gpt2_block(f);
         f.learned_positions = true;
     }},
    // GPTJBlock: ln_1 only, attention (q/k/v/out_proj, no bias) and MLP (fc_in/fc_out, biased) in
    // parallel; rotary; lm_head untied with a bias.
    {{"gptj"},
     [](Family& f, const json&) {
         gpt2_block(f, false);
         f.mlp_bias = f.lm_head_bias = true;
         f.norms_per_layer = 1;
         f.parallel = true;
     }},
    // OPTDecoderLayer: q/k/v/out_proj and fc1/fc2 with bias (enable_bias), self_attn_layer_norm and
    // final_layer_norm; OPTLearnedPositionalEmbedding keeps 2 offset rows.
    {{"opt"},
     [](Family& f, const json& c) {
         f.tie_default = true;
         gpt2_block(f, bool_or(c, "enable_bias", true));
         f.learned_positions = true;
         f.position_offset = 2;
         f.final_norm = bool_or(c, "do_layer_norm_before", true) && !bool_or(c, "_remove_final_layer_norm", false);
     }},
    // BloomBlock: fused query_key_value and dense with bias, MLP with bias, two LayerNorms; the
    // embeddings have their own word_embeddings_layernorm; ALiBi, so no position table.
    {{"bloom"},
     [](Family& f, const json&) {
         f.tie_default = true;
         gpt2_block(f);
         f.embedding_norm = true;
     }},
    // FalconDecoderLayer: query_key_value, dense, dense_h_to_4h and dense_4h_to_h all with
    // bias=config.bias; LayerNorms with bias; read_hf_config sets the k/v heads and the norms.
    {{"falcon"},
     [](Family& f, const json& c) {
         f.tie_default = true;
         gpt2_block(f, bool_or(c, "bias", false));
         f.parallel = bool_or(c, "parallel_attn", true);
     }},
    // MptBlock: norm_1 / norm_2 / norm_f are LayerNorms whose bias is set to None; Wqkv, out_proj,
    // up_proj, down_proj without bias; ALiBi; lm_head tied.
    {{"mpt"},
     [](Family& f, const json&) {
         f.tie_default = true;
         f.gated = false;
     }},
    {{"phi"},
     [](Family& f, const json&) {
         gpt2_block(f);
         f.lm_head_bias = true;
         f.norms_per_layer = 1;
         f.parallel = true;
     }},
    {{"gpt_neox"},
     [](Family& f, const json& c) {
         gpt2_block(f);
         f.parallel = bool_or(c, "use_parallel_residual", true);  // both layer norms exist either way
     }},
    // BertLayer: self query/key/value + output dense with bias and a LayerNorm, intermediate and output
    // dense with bias and a LayerNorm (post-norm: no final norm); the embeddings add position and
    // token_type tables and a LayerNorm. The head depends on the class (read_hf_config's read_bert_fields).
    {{"bert", "roberta"},
     [](Family& f, const json&) {
         f.tie_default = true;
         gpt2_block(f);
         f.learned_positions = true;
         f.embedding_norm = true;
         f.final_norm = false;
         f.structure = ModelSpec::Structure::Encoder;
     }},
    // T5Block: SelfAttention q/k/v/o without bias, T5LayerNorm (weight only), DenseReluDense wi/wo
    // (gated-*: wi_0, wi_1, wo); decoder blocks add EncDecAttention + its norm. MT5 is the same module;
    // only MT5Config's defaults differ (untied lm_head, gated-gelu).
    {{"t5"},
     [](Family& f, const json&) {
         f.tie_default = true;
         f.structure = ModelSpec::Structure::EncoderDecoder;
     }},
    {{"mt5"}, [](Family& f, const json&) { f.structure = ModelSpec::Structure::EncoderDecoder; }},
};

// An unknown model_type: the generic decoder reading, llama-like, biases only where the config says.
void generic_decoder(Family& f, const json& c) {
    f.known = false;
    llama_biases(f, c);
    f.window = Window::AllLayers;
}

}  // namespace

Family family_of(const std::string& type, const json& c) {
    Family f;
    for (const FamilyRow& row : kFamilies)
        for (const char* name : row.model_types)
            if (name && type == name) {
                row.set(f, c);
                return f;
            }
    generic_decoder(f, c);
    return f;
}

json text_config_defaults(const std::string& type) {
    if (type == "llama")  // LlamaConfig()
        return {{"vocab_size", 32000},         {"hidden_size", 4096},       {"intermediate_size", 11008},
                {"num_hidden_layers", 32},     {"num_attention_heads", 32}, {"max_position_embeddings", 2048},
                {"tie_word_embeddings", false}};
    if (type == "mistral")  // MistralConfig()
        return {{"vocab_size", 32000},
                {"hidden_size", 4096},
                {"intermediate_size", 14336},
                {"num_hidden_layers", 32},
                {"num_attention_heads", 32},
                {"num_key_value_heads", 8},
                {"max_position_embeddings", 131072},
                {"sliding_window", 4096},
                {"tie_word_embeddings", false}};
    if (type == "gemma3_text")  // Gemma3TextConfig()
        return {{"vocab_size", 262208},
                {"hidden_size", 2304},
                {"intermediate_size", 9216},
                {"num_hidden_layers", 26},
                {"num_attention_heads", 8},
                {"num_key_value_heads", 4},
                {"head_dim", 256},
                {"max_position_embeddings", 131072},
                {"sliding_window", 4096},
                {"sliding_window_pattern", 6},
                {"tie_word_embeddings", true}};
    return json::object();
}

}  // namespace gpumem::detail
