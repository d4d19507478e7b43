// gpumem: how much GPU memory will this run take, and what is taking it?
//
// The whole public surface of the estimation core: the CLI, the WebAssembly bindings and the page
// reach the core through this header alone. It includes only the standard library, nlohmann/json
// and its two companions: gpumem/settings.h (every enumerated setting's table, which the front ends
// build their menus and flags from) and gpumem/user_catalogue.h (a user's own GPU and data-type
// files, read as the CLI and the page read them). It knows nothing of the CLI, the browser or the GPU.
//
// [SECTION] Units and conventions
// [SECTION] Errors as values
// [SECTION] The model (ModelSpec, read from a config.json, a preset or by hand)
// [SECTION] Parameter counts
// [SECTION] The scenario (what to estimate)
// [SECTION] The estimate (what comes back)
// [SECTION] Max-fit, the planner and fit: one search (what fits, and the fastest way to run it)
// [SECTION] Exporters (the config files and command lines that run a scenario)
// [SECTION] JSON API (what the CLI, the WebAssembly module and the page call)
//
// Quick start:
//     nlohmann::json scenario = {{"model", {{"preset", "meta-llama/Llama-3.1-8B"}}}};
//     nlohmann::json result = gpumem::estimate(scenario);
//     if (result["ok"]) print(result["per_gpu"]["peak_allocated_bytes"]);
//     else              for (auto& e : result["errors"]) print(e["message"]);
//
// The scenario and result documents (v1) are described in README.md ("Scenario"); every field is
// optional except `model`, absent fields take the defaults that a Hugging Face Transformers user
// on one GPU would get, and the result lists each default it applied.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpumem/settings.h"
#include "gpumem/user_catalogue.h"

namespace gpumem {

//-----------------------------------------------------------------------------
// [SECTION] Units and conventions
//-----------------------------------------------------------------------------
// - Memory is counted in bytes (uint64_t). Printing uses GiB (2^30) unless GB (10^9) is asked for.
// - "per GPU" figures are for the heaviest rank of the layout (the pipeline stage or expert group
//   that holds the most); "total" figures are for the whole job.
// - Parameter counts are exact element counts (what sum(p.numel()) gives on the meta device),
//   tied embeddings counted once.

constexpr std::uint64_t kGiB = 1ull << 30;
constexpr double kGB = 1e9;

// Library version, "MAJOR.MINOR.PATCH".
const char* version();

//-----------------------------------------------------------------------------
// [SECTION] Errors as values
//-----------------------------------------------------------------------------
// Nothing in this header throws. Readers return a list of issues; an empty list means success.

struct Issue {
    std::string field;    // dotted path in the input document, e.g. "training.batch_size"
    std::string problem;  // what is allowed, e.g. "must be a positive integer"
    std::string value;    // the offending value as JSON text, e.g. "-4" ("" where absent)
    // "training.batch_size: must be a positive integer, got -4"
    std::string message() const;
};

//-----------------------------------------------------------------------------
// [SECTION] The model
//-----------------------------------------------------------------------------

// How a layer attends: every position (full) or a sliding window of `sliding_window` tokens.
enum class LayerAttention { Full, SlidingWindow };

// A decoder-only transformer as the estimator sees it. Filled from a Hugging Face config.json
// (read_hf_config), from a bundled preset, or by hand (gpu-mem-calculator's model fields).
struct ModelSpec {
    std::string name;          // Hub id or user-given name
    std::string model_type;    // config.json `model_type` ("llama", "qwen2", ...; "manual" by hand)
    bool known_family = true;  // false: read with the generic decoder rules (a warning says so)

    std::uint64_t vocab_size = 0;
    std::uint64_t hidden_size = 0;                    // h
    std::uint64_t num_layers = 0;                     // L
    std::uint64_t num_attention_heads = 0;            // a
    std::uint64_t num_key_value_heads = 0;            // kv heads (== a for MHA, 1 for MQA)
    std::uint64_t head_dim = 0;                       // may differ from h / a (gemma, qwen3)
    std::uint64_t intermediate_size = 0;              // MLP width
    std::uint64_t max_position_embeddings = 0;        // longest context the model was built for
    bool gated_mlp = true;                            // SwiGLU-style gate/up/down (3 matrices) or fc/proj (2)
    bool qkv_bias = false;                            // biases on q, k and v
    bool o_bias = false;                              // bias on the attention output projection
    bool mlp_bias = false;                            // biases on the MLP matrices
    bool lm_head_bias = false;                        // phi-2
    enum class Norm { RMS, Layer } norm = Norm::RMS;  // RMSNorm (weight) or LayerNorm (weight + bias)
    std::uint64_t norms_per_layer = 2;                // 1 (parallel block), 2 (pre-norm), 4 (gemma2 sandwich)
    enum class QKNorm { None, PerHead, Full } qk_norm = QKNorm::None;  // qwen3: per head; olmo2: full width
    bool parallel_block = false;          // attention and MLP read the same normed input (phi, neox)
    std::uint64_t learned_positions = 0;  // rows of a learned position table (gpt2), 0 for rotary
    bool tie_word_embeddings = false;
    std::uint64_t sliding_window = 0;             // 0: none
    std::vector<LayerAttention> layer_attention;  // one per layer
    bool attention_sinks = false;                 // one learned sink logit per head (gpt-oss)

    // Mixture of experts (num_experts == 0: a dense model).
    std::uint64_t num_experts = 0;                      // routed experts in each MoE layer
    std::uint64_t num_experts_per_tok = 0;              // top-k experts a token visits
    std::uint64_t moe_intermediate_size = 0;            // width of one routed expert
    std::uint64_t shared_expert_intermediate_size = 0;  // qwen2_moe's always-on expert (+ its sigmoid gate)
    bool expert_bias = false;                           // biases inside each expert (gpt-oss)
    bool router_bias = false;                           // bias on the router (gpt-oss)
    std::vector<bool> moe_layer;                        // one per layer: MoE block (true) or dense MLP

    double attention_dropout = 0;       // dropout on attention probabilities (saves a mask)
    double hidden_dropout = 0;          // dropout on residual branches (saves masks)
    double attn_logit_softcapping = 0;  // gemma2: tanh cap on attention scores (0: none)

    std::string checkpoint_dtype = "bf16";  // torch_dtype / dtype of the stored weights

    // What the family adds to the plain decoder (all absent for llama-style models).
    std::string architecture;  // config.json architectures[0]: the class that is counted
    // Encoder-only (bert, roberta) and encoder-decoder (t5) stacks are still read as num_layers
    // layers of the same shape; for t5 the first encoder_layers are the encoder and the rest the
    // decoder, which adds cross-attention (q, k, v, o and a norm) to each of its layers.
    enum class Structure { Decoder, Encoder, EncoderDecoder } structure = Structure::Decoder;
    std::uint64_t encoder_layers = 0;              // t5: num_layers of the encoder (decoder: num_layers - this)
    std::uint64_t relative_attention_buckets = 0;  // t5: one relative_attention_bias (buckets x heads) per stack
    std::uint64_t token_types = 0;                 // bert/roberta: rows of token_type_embeddings
    bool embedding_norm = false;                   // LayerNorm right after the embeddings (bloom, bert)
    std::uint64_t embedding_dim = 0;               // opt word_embed_proj_dim when != hidden_size (project_in/out); 0: h
    bool final_norm = true;                        // a norm after the last layer (not bert, not opt-350m)
    bool pooler = false;                           // bert/roberta base model: pooler dense h x h + bias
    bool mlm_head = false;           // *ForMaskedLM: transform dense + LayerNorm + vocab bias (decoder tied)
    bool nsp_head = false;           // BertForPreTraining: next-sentence classifier 2 x h + 2
    bool shared_expert_gate = true;  // qwen2_moe's sigmoid gate on its shared expert (deepseek has none)
    // Multi-head latent attention (deepseek_v2/v3; kv_lora_rank == 0: ordinary q/k/v/o).
    std::uint64_t q_lora_rank = 0;   // 0: q_proj straight from h (q_lora_rank null)
    std::uint64_t kv_lora_rank = 0;  // width of the cached latent
    std::uint64_t qk_nope_head_dim = 0, qk_rope_head_dim = 0, v_head_dim = 0;
    std::uint64_t mtp_layers = 0;  // num_nextn_predict_layers: in the checkpoint, not in transformers
    // mllama: decoder layers whose attention reads the image features (cross_attention_layers), and the
    // rows embed_tokens holds beyond vocab_size (8 image/special tokens; lm_head stays vocab_size).
    std::vector<std::uint64_t> cross_attention_layers;
    std::uint64_t extra_embedding_rows = 0;

    // Weights outside the language model: a vision tower and the projector into the LM (multimodal
    // wrappers). Each entry is one tensor shape; `copies` counts identical tensors (one per tower layer).
    struct Weight {
        std::string name;
        std::uint64_t rows = 0, cols = 1, copies = 1;
    };
    std::string vision_model_type;  // vision_config.model_type ("clip_vision_model", ...)
    std::vector<Weight> vision_tower;
    std::vector<Weight> projector;
    // The tower's shape, for the activations of encoding an image (zeros without a tower).
    struct VisionShape {
        std::uint64_t hidden = 0, intermediate = 0, layers = 0, heads = 0;
        std::uint64_t patches = 0;           // positions the tower sees per image
        std::uint64_t tokens_per_image = 0;  // tokens an image adds to the language model's context (0: varies)
    } vision_shape;

    // quantization_config, as facts about the stored checkpoint (the memory model decides what to do).
    // One scheme says how the Linear layers it targets are stored (compressed-tensors' config_groups
    // have one each; the other methods one for every Linear they quantize).
    struct QuantScheme {
        std::vector<std::string> targets;  // "Linear" or module names / "re:" patterns (compressed-tensors)
        std::uint64_t bits = 0;            // weight bits: 4 or 8 (2, 3 for gptq)
        bool is_float = false;             // fp8 / fp4 values rather than integers
        std::string strategy;              // "tensor", "channel", "group", "block", "tensor_group"
        std::uint64_t group_size = 0;      // values per scale along the input dimension (group strategies)
        std::vector<std::uint64_t> block;  // block strategy: [rows, cols] per scale
        bool symmetric = true;             // false: a zero point per scale is stored
        bool input_scale = false;          // a static input scale per layer is stored
        bool input_global_scale = false;   // nvfp4 W4A4: a global input scale per layer
        bool g_idx = false;                // compressed-tensors actorder "group": an int32 weight_g_idx per input
    };
    struct Quantization {
        std::string method;            // quant_method: "bitsandbytes", "gptq", "awq", "fp8", "mxfp4",
                                       // "compressed-tensors", ...
        std::string format;            // compressed-tensors "format": "float-quantized", "pack-quantized", ...
        std::uint64_t bits = 0;        // 4 or 8 (bitsandbytes, gptq, awq); 8 for fp8, 4 for mxfp4
        std::uint64_t group_size = 0;  // gptq/awq scale group (-1 in the config: 0 = per channel)
        std::string quant_type;        // bitsandbytes 4-bit "nf4" / "fp4"; fp8 "e4m3" / "e5m2"
        bool double_quant = false;     // bitsandbytes bnb_4bit_use_double_quant
        bool desc_act = false;         // gptq act-order (g_idx then permutes the groups)
        std::vector<std::uint64_t> weight_block_size;    // fp8 block scales, e.g. [128, 128]
        std::vector<std::string> modules_not_converted;  // modules_to_not_convert / llm_int8_skip_modules /
                                                         // compressed-tensors ignore
        std::vector<QuantScheme> schemes;                // empty: a method whose storage is not modelled
        bool kv_scales = false;  // compressed-tensors kv_cache_scheme: a k_scale and a v_scale per attention
        bool exact = false;      // every stored tensor's bytes follow from the config (bitsandbytes: not its
                                 // per-tensor quant_state JSON)
    };
    std::optional<Quantization> quantization;

    // A model entered only by its size ("num_parameters": "7B", as gpu-mem-calculator's config format has it) has no
    // exact count; the declared figure is used and the result says so.
    std::optional<std::uint64_t> declared_parameters;
};

// Reads a Hugging Face config.json. Unknown `model_type` falls back to the generic decoder
// reading and adds a warning; a missing or invalid needed field is an issue naming it.
// `field_prefix` is prepended to issue fields ("model.hf_config").
struct ModelRead {
    std::optional<ModelSpec> model;
    std::vector<Issue> issues;
    std::vector<std::string> warnings;
};
ModelRead read_hf_config(const nlohmann::json& config, const std::string& field_prefix = "");

//-----------------------------------------------------------------------------
// [SECTION] Parameter counts
//-----------------------------------------------------------------------------

struct ParamCount {
    std::uint64_t total = 0;
    std::uint64_t embedding = 0;       // input token embeddings
    std::uint64_t attention = 0;       // q, k, v, o (+ biases, q/k norms), all layers
    std::uint64_t mlp = 0;             // MLP matrices (+ biases), all layers
    std::uint64_t norms = 0;           // layer norms, all layers, plus the final norm
    std::uint64_t lm_head = 0;         // 0 when tied to the embeddings
    std::uint64_t experts = 0;         // routed and shared experts with their router, all layers (in mlp too)
    std::uint64_t active = 0;          // parameters one token uses: total less the experts it skips
    std::uint64_t per_layer = 0;       // one decoder layer (attention + mlp + its norms); the mean for MoE models
    std::uint64_t vision = 0;          // multimodal: the vision tower (in total)
    std::uint64_t projector = 0;       // multimodal: the projector from the tower into the LM (in total)
    std::uint64_t language_model = 0;  // total less vision and projector
    std::uint64_t mtp = 0;             // deepseek_v3 multi-token-prediction layers: in the checkpoint, NOT in total
                                       // (their copies of the embedding and head are not counted again)
    bool exact = true;                 // false for a model given only by its declared size
    // The checkpoint's bytes as its safetensors store them: every tensor in the checkpoint's dtype, the
    // quantized Linear layers packed with their scales and zero points (ModelSpec::Quantization);
    // checkpoint_bytes_exact says whether every byte follows from the config.
    std::uint64_t checkpoint_bytes = 0;
    bool checkpoint_bytes_exact = false;
};
ParamCount count_parameters(const ModelSpec& model);

//-----------------------------------------------------------------------------
// [SECTION] Bundled presets
//-----------------------------------------------------------------------------
// The presets/ folder is compiled in: the page works offline and the CLI needs no data files.

// [{"id", "aliases", "model_type", "total_params", "params_source", "gated"}, ...]
nlohmann::json list_presets();
// The same without "params_source" (a model list, as the page shows it): a module that calls only this
// links none of the records' notes (where each count and config comes from).
nlohmann::json list_presets_brief();
// The preset's full record ({"model_id", "config", "total_params", ...}), found by Hub id, a
// listed twin or a short alias ("llama3-8b"), case-insensitively; nullopt when none matches.
std::optional<nlohmann::json> find_preset(const std::string& id_or_alias);
// The Hub id of the preset that find_preset would return ("llama3-8b" -> "meta-llama/Meta-Llama-3-8B");
// nullopt when none matches. Cheaper than find_preset: no record is copied, and a module that calls
// only this links none of the records' notes (where each count and config comes from).
std::optional<std::string> preset_id(const std::string& id_or_alias);
// Up to `n` bundled preset ids whose id or an alias is closest to `id` (case-insensitive edit
// distance; a wrong organisation or a variant suffix such as "-Instruct" counts as near), nearest
// first, none farther than a third of the id's length (at least 3 edits): for "did you mean".
// An id longer than 256 characters gets none (the work stays bounded whatever is typed).
std::vector<std::string> nearest_presets(const std::string& id, std::size_t n = 3);
// GPU catalogue: [{"id", "name", "memory_gb", "memory_bytes", ...}, ...]
nlohmann::json list_gpus();
// Weight-format catalogue (presets/dtypes.json): [{"id", "bits", "group_size", "scale_bytes", "scope",
// "about", "bytes_per_param"}, ...]. A scenario adds its own under "formats" in the same shape.
nlohmann::json list_formats();

// Every enumerated setting of the scenario, from the core's own tables (core/include/gpumem/settings.h), so
// front ends need no copies: {"training.optimizer": {"default": "adamw", "help": "...",
// "values": [{"name": "adamw", "aliases": ["adamw_torch"], "label": "AdamW (foreach)",
// "help": "..."}, ...]}, ...}, keyed by the field's dotted path. "name" is what a resolved
// scenario holds; "aliases" are also accepted on input (case and '-' / '_' are ignored);
// "label" is short, for a combo box; "help" is one line. "default" is what an absent field
// takes before it is resolved ("auto" values are resolved from the rest of the scenario).
// docs/scenario.md is generated from this (gpumem settings --markdown).
nlohmann::json settings();

//-----------------------------------------------------------------------------
// [SECTION] The estimate
//-----------------------------------------------------------------------------
// estimate() is total and deterministic: any JSON value in, a result object out.
//   ok:     {"ok": true, "parameters": {...}, "per_gpu": {...}, "host_bytes", "fits", "verdict",
//            "utilization", "gpus_needed", "warnings": [...], "defaults_applied": [...],
//            "serving": <an engine's KV pool: kv_cache_tokens, max_concurrent_sequences, ...> | null,
//            "layout": {"replicas", "gpus_per_replica", "text": <how the GPUs run the model, in words>},
//            "throughput": {"model": <its model in words>, inference: "decode_tokens_per_s",
//            "prefill_tokens_per_s", ...; training: "training_tokens_per_s", "mfu", ...},
//            "assumptions": {...}, "scenario": <the scenario with every default filled in>}
//   not ok: {"ok": false, "errors": [{"field", "problem", "value", "message"}, ...]}
// "fits": the point estimate (device_total_bytes) fits the card and the engine's own budget. "verdict":
// "fits" (the error band's top fits too), "borderline" (the point fits, the band's top does not) or
// "does_not_fit". "per_gpu.band": the interval that held 80 % of the measured runs of this class (mode,
// framework or engine, method, single or multi-GPU; the most specific level with 9 runs, then mode x method,
// mode, all), scaled onto device_total_bytes and widened to contain it:
//   {"figure": "device_total_bytes", "point_bytes", "low_bytes", "high_bytes", "ratio_low", "ratio_high"
//    (measured / estimated at its ends), "coverage": 0.8, "expected_coverage", "runs", "class": {"mode",
//    "stack", "method", "gpus"}, "class_label", "class_runs", "level": "class" | "mode_method" | "mode" |
//    "all" | "none", "too_few_runs", "excluded_self" (runs that are this very scenario: left out),
//    "origin": "validation" | "calibration", "oom_share" (of those runs, the share that would not have fit
//    this card), "engine_claim" (an engine that claims its share of the card at start-up, as vLLM: nvidia-smi shows the
//    claim, so the band is the point), "note"}. "scenario_key": 16 hex digits naming the resolved scenario (without its
//    calibration);
// a run with the same key is this very scenario and is left out of its band.
// "serving" (vLLM, SGLang, TGI, TensorRT-LLM): {"engine", "kv_cache_bytes" (per GPU), "kv_cache_blocks",
// "kv_cache_tokens", "max_concurrent_sequences" (of at_context_len tokens that fit the pool), "at_context_len",
// "requested_sequences" (inference.batch_size), "fills_budget": true}. An engine that fills its budget claims its
// share of the card at start-up whatever it serves, so device_total_bytes is that claim; what "fits" asks of it is
// max_concurrent_sequences >= requested_sequences (and the claim within the card). Front ends say the verdict
// as "N of M sequences of L tokens fit (KV pool X per GPU)", and fit() compares its runs by the pool.
// "layout": a serving scenario that gives num_gpus and no parallel sizes runs one server over them by tensor
// parallelism (transformers, llama.cpp: whole layers per GPU, pipeline); the text says replicas and split.
// The runs are the bundled validation set's (presets/error_bands.json), or a calibration's "residuals" when
// the scenario carries one ("calibration": {"name", "hash", "residuals": [{"id", "mode", "stack", "method",
// "gpus", "ratio", "key"}]}, as apply_calibration puts it).
nlohmann::json estimate(const nlohmann::json& scenario);

// {"ok": true, "total", "trainable", "components": {...}, "model": {...}} for a config.json.
nlohmann::json params(const nlohmann::json& hf_config);

//-----------------------------------------------------------------------------
// [SECTION] Max-fit solvers and the planner
//-----------------------------------------------------------------------------
// Both read the same scenario document as estimate() and evaluate it many times through the same
// memory model (one implementation: the scenario is read once, then each candidate is the normal
// evaluation of a changed layout, with the notes for people left out).

// The largest value of each size field that still fits the scenario's GPU, the others held as given.
// Exact at the boundary: `value` fits and `value + 1` does not (or `value` is the field's maximum).
//   {"ok": true, "mode": "training" | "inference", "capacity_bytes",
//    "solvers": [{"field": "training.batch_size",     // training: batch_size (micro-batch per GPU),
//                                                      //   seq_len; inference: batch_size (concurrent
//                                                      //   sequences), context_len
//                 "value": 12,                         // 0: not even 1 fits
//                 "field_maximum": 1000000,            // the reader's limit for the field
//                 "device_total_bytes": ...,           // at value (per GPU)
//                 "next_device_total_bytes": ...,      // at value + 1 (null when value is the maximum)
//                 "limited_by": "memory" | "field_maximum" | "does_not_fit",
//                 "note": "..."},                      // e.g. beyond max_position_embeddings
//                ...],
//    "evaluations": 85}
//   not ok: {"ok": false, "errors": [...]} as estimate().
nlohmann::json maxfit(const nlohmann::json& scenario);

// The layouts of a cluster that fit the scenario, fastest first. The request is a scenario document
// with a "plan" section (all optional but num_gpus):
//   "plan": {"num_gpus": 64,                 // GPUs in the cluster (total)
//            "gpu": "H100-80GB",              // catalogue id (default: the scenario's hardware.gpu)
//            "gpus_per_node": 8,              // default min(num_gpus, 8)
//            "host_ram_gb": 2048,             // CPU RAM per node in GB (10^9); 0/absent: offload not limited
//            "global_batch_size": 512,        // sequences per optimizer step (training; default:
//                                             //   num_gpus x the scenario's batch_size x gradient_accumulation_steps)
//            "top": 10,                       // rows returned (1-1000)
//            "step_time": {"mfu": 0.45, ...}} // overrides of the step-time constants (README "Planner")
// The result:
//   {"ok": true, "mode", "cluster": {...}, "constants": {name: {"value", "unit", "about"}},
//    "search": {"candidates", "evaluations", "fitting", "host_ram_limited", "global_batch_indivisible",
//               "setup_ms", "search_ms", "evaluations_per_s", "elapsed_ms"},   // timings vary run to run
//    "plans": [{"rank": 1, "layout": {"data_parallel_size", "tensor_parallel_size", "pipeline_parallel_size",
//               "context_parallel_size", "expert_parallel_size", "sequence_parallel", "engine",
//               "zero_stage", "fsdp_sharding", "offload_optimizer", "offload_param",
//               "activation_checkpointing", "micro_batch_size", "gradient_accumulation_steps"} (training)
//               or {"data_parallel_size" (replicas), "tensor_parallel_size", "pipeline_parallel_size", ...,
//               "batch_size", "max_concurrent_sequences"} (inference),
//               "step_time_s",                // seconds per optimizer step (training) or decode step (inference)
//               "step_time": {"compute_s", "tp_comm_s", "pp_p2p_s", and for training "recompute_s",
//               "pp_bubble_s", "dp_comm_s", "zero3_gather_s", "cp_comm_s", "ep_comm_s", "offload_s", for
//               inference "memory_bound_s"},
//               "tokens_per_s",               // whole cluster: trained tokens, or generated tokens of all replicas
//               "mfu",                        // model FLOPs / (step time x peak of the GPUs involved)
//               "device_total_bytes",         // per GPU, as estimate() gives it
//               "host_bytes_per_node",        // offloaded state of the node's GPUs (bytes)
//               "scenario": {...},            // the scenario to reproduce this row with estimate()
//               "estimate": {...}}, ...],     // estimate() of that scenario: the memory breakdown
//    "warnings": [...], "defaults_applied": [...]}
// Ranked by step_time_s; equal times by the model-parallel degree (TP x PP x CP x EP, smaller first),
// then device_total_bytes (smaller first), then the layout's fields in the order listed (smaller first).
nlohmann::json plan(const nlohmann::json& request);

// What would make the scenario fit, and the fastest run that does: one search (the planner's) on
// the scenario's own cluster and global batch over every layout, engine and sharding, offload,
// activation checkpointing and micro-batch x accumulation, with the scenario's other knobs in levels
// (same math: chunked loss, SDPA; numerics: 8-bit AdamW, pure bf16 weights; method: LoRA, QLoRA;
// serving: an fp8 KV cache, smaller weight formats). Each candidate is evaluated by the estimate's
// memory model and timed by the step-time model. A run counts as fitting when the top of its error
// band fits (per_gpu.band), unless the request says "fit": {"include_borderline": true}.
//   {"ok": true, "fits" (the point), "verdict" (fits | borderline | does_not_fit), "include_borderline",
//    "device_total_bytes", "capacity_bytes", "headroom_bytes", "step_time_s", "tokens_per_s",
//    "suggestions": [{"change": "engine: DeepSpeed ZeRO-2, optimizer states offloaded to CPU", "cost": "...",
//                     "tier": "slower",          // same_math < slower < numerics < data < hardware < method
//                     "least_change", "fastest", // the least change that fits; the fastest run up to its tier
//                     "changes": [...],          // the change in words, one entry per field group
//                     "set": {"engine.type": "deepspeed", ...},  // dotted fields changed
//                     "fits", "verdict", "device_total_bytes", "saves_bytes", "host_bytes",
//                     "serving",                 // its estimate's "serving" (null without a KV pool)
//                     "step_time_s", "tokens_per_s", "speed_vs_scenario",  // its own estimate's throughput
//                     "scenario": {...},         // the run: runs as it stands
//                     "estimate": {...}}, ...],  // least change first, then by tier, the fastest first
//    "savings": [...],   // a scenario that fits: each single change that lowers its peak, as suggestions
//                        // (an engine that fills its budget: each that enlarges its KV pool, largest first)
//    "serving": <the scenario's own estimate's "serving">,
//    "search": {"candidates", "evaluations", "fitting", "variants", "elapsed_ms"},
//    "estimate": <estimate() of the scenario as given>}
// Not fitting, "suggestions" also holds the data tier (the longest sequence or context, the most
// concurrent sequences: the max-fit solver under the band's top), more GPUs of the card and the
// smallest bigger card; fitting, the runs faster than the scenario's.
nlohmann::json fit(const nlohmann::json& scenario);

// Calibration: the runtime overheads (cuda_context_gib, allocator_fragmentation, nccl_buffers_gib,
// vllm_cuda_graph_gib) fitted to measured peaks, the memory model's physics left alone.
//   request: {"records": [{"id", "source", "scenario": {...},
//                          "measured": {"metric": "allocated" | "reserved" | "device_total" | "unknown",
//                                       "gib": 18.9}}, ...],
//             "name": "my-cluster"}
//   result:  {"ok": true,
//             "calibration": {"gpumem_calibration": 1, "gpumem_version", "name",
//                             "overheads": {name: value}, "records": [{"id", "source", "class"}],
//                             "residuals": [{"id", "mode", "stack", "method", "gpus", "ratio", "key"}]},
//             "report": {"before" | "after" | "leave_one_out":
//                        {class: {"n", "median_pct", "p90_pct", "within_10"}, "all": {...}}}}
// The fit minimises the sum of absolute relative errors (robust to a few odd records). "after" is
// in-sample; "leave_one_out" predicts each record from a fit on the others. A record's scenario that
// gives an overhead itself keeps it. With "calibration": {a calibration file} in the request, nothing
// is fitted: the records are scored with its overheads, {"ok", "calibration": {"name", "hash"},
// "report": {"before", "with_calibration"}}. A record that cannot be used (not an object, no
// measured.gib, a scenario that cannot be estimated, e.g. a model that is not bundled) is left out
// and listed in the result's "skipped": [{"index", "id" (when it has one), "field", "problem",
// "message"}]; the request fails only when no record is left, or with "strict": true when any is bad.
nlohmann::json calibrate(const nlohmann::json& request);

// "residuals": each record's measured / its leave-one-out estimate, with its class: the runs the error band of
// an estimate with this calibration is drawn from (estimate(), "per_gpu.band").
// The scenario with a calibration's overheads (where the scenario gives none) and its residuals as "calibration":
//   {"ok": true, "scenario": {...}, "calibration": {"name", "hash"}}, or an error when the file is
// not a calibration or was fitted by another gpumem version (its overheads belong to that model).
nlohmann::json apply_calibration(const nlohmann::json& scenario, const nlohmann::json& calibration);

// Peak memory against one size: {"scenario": {...}, "field": "training.seq_len" | "training.batch_size"
// | "inference.context_len" | "inference.batch_size", "max": N (default twice the larger of the
// scenario's value and the max-fit value)} ->
//   {"ok": true, "field", "label", "capacity_bytes", "current": {"value", "device_total_bytes"},
//    "max_fit", "points": [{"value", "device_total_bytes", "fits"}], "model", "gpu"}
// at powers of two from 1 up to "max" (and "max" itself), each an estimate().
nlohmann::json sweep(const nlohmann::json& request);
// A sweep drawn as a 640 x 360 SVG: the peak, the card's capacity and the max-fit point.
std::string sweep_svg(const nlohmann::json& sweep_result);

// A calibration's identity: 16 hex digits of FNV-1a over its compact JSON (links carry name + hash).
std::string calibration_hash(const nlohmann::json& calibration);

//-----------------------------------------------------------------------------
// [SECTION] Exporters
//-----------------------------------------------------------------------------
// A scenario written as what runs it: {"format": "deepspeed" | "accelerate" | "torchrun" |
// "torchtune" | "axolotl" | "litgpt" | "vllm" | "llama.cpp", "scenario": {...},
// "gpus_per_node": 8 (default min(GPUs, 8)), "script": "train.py" (torchrun)} ->
//   {"ok": true, "format", "kind": "json" | "yaml" | "command", "file_name", "text",
//    "notes": [what the user still sets in code or data], "scenario": <resolved>,
//    "verdict": <the estimate's>, "fit_note": <"this run does not fit: ..."> | null (null when it fits),
//    "fit_note_in_file": <whether "text" starts with it as a '#' comment: YAML and command lines; JSON cannot>,
//    "estimate": <estimate() of that scenario>}
// A field the format needs and the scenario leaves out takes the format's value (vllm sets
// inference.engine, torchtune training.framework, deepspeed engine.type); a field the format cannot
// express is an error naming the field and what the format takes.
nlohmann::json export_config(const nlohmann::json& request);

// A DeepSpeed ds_config.json read as the scenario fields it decides (micro-batch, accumulation,
// data-parallel size from train_batch_size, dtype, ZeRO stage, offload devices, bucket sizes):
//   {"ok": true, "scenario": {"mode", "training", "engine", "parallelism", "overheads"}, "notes": [...]}
// "auto" values are left out (the training script decides them) and noted.
nlohmann::json import_deepspeed(const nlohmann::json& ds_config);

// The configs and command lines people launch with, read as one scenario (gpumem check): a
// DeepSpeed JSON, an accelerate, axolotl, torchtune or litgpt YAML, or a shell text holding a
// torchrun / accelerate launch / deepspeed / python / tune run / litgpt / axolotl / vllm serve /
// sglang / llama-server / text-generation-launcher / trtllm-serve command. The format is
// recognised from the content.
//   {"files": [{"name": "qlora.yml", "text": "..."}, ...], "command": "vllm serve ..."}  ->
//   {"ok": true, "scenario": {the fields the files set}, "model": "the model they name" ("" if none),
//    "check": {"format", "formats": [...], "files": [...], "read": {key: value}, "ignored": [...],
//              "warnings": [...], "assumptions": [...]}}
// "read" lists every key that set a field (keys of a second file as "FILE: key"); "ignored" the keys
// that do not change memory; "warnings" keys that would but are not modelled. A file a config names
// (axolotl's `deepspeed: deepspeed_configs/zero3.json`, a `--config` of tune run, litgpt or
// accelerate launch) comes from `find_file(name, from)`, `from` being the naming file's name; with
// no find_file, from the request's own files (by path, else by base name). A file that cannot be
// found is an error naming it, except a torchtune built-in config name, whose keys then take
// gpumem's defaults (said in assumptions). Texts over kMaxJsonBytes are refused.
using FindFile = std::function<std::optional<std::string>(const std::string& name, const std::string& from)>;
nlohmann::json read_configs(const nlohmann::json& request, const FindFile& find_file = {});

//-----------------------------------------------------------------------------
// [SECTION] JSON API (strings in, strings out)
//-----------------------------------------------------------------------------
// What the WebAssembly module exports one-to-one. Malformed JSON text is an error object, not an
// exception: {"ok": false, "errors": [{"field": "", "problem": "malformed JSON: ...", ...}]}.

// Documents nest at most this deep (containers open at once); deeper input is refused before
// anything recurses over it.
constexpr int kMaxJsonDepth = 64;
// JSON text at most this long (16 MiB; a config.json is well under 1 MiB): a document of that many
// tiny values takes a few hundred MiB as a DOM, which the page's WebAssembly heap still holds.
constexpr std::size_t kMaxJsonBytes = std::size_t{16} << 20;
// Parses JSON text the way the API does, in time linear in its length (a first SAX pass checks
// syntax and depth, then the document is built). On failure returns nullopt and sets `error` to
// "malformed JSON: <position and reason>", "JSON nested deeper than 64 levels" or
// "JSON text of N bytes is larger than the limit of 16777216 bytes (16 MiB)".
std::optional<nlohmann::json> parse_json(const std::string& text, std::string& error);

// Text that came from outside (a config.json's value, a link's parameter, a server's header) made
// fit to show on one line of a terminal, a banner or a table: control characters (C0, DEL, C1) and
// the Unicode format characters that reorder or hide text (bidi embeddings, overrides and isolates,
// zero-width joiners, line/paragraph separators) written as escapes (\n, \t, \x1b, \u202e), bytes
// that are not UTF-8 as \xNN, and at most `max_chars` characters kept ("..." then marks the cut).
// Printable text, non-ASCII letters included, is kept as it is.
std::string display_text(const std::string& text, std::size_t max_chars = 120);

std::string estimate_json(const std::string& scenario_text);
std::string params_json(const std::string& hf_config_text);
std::string presets_json();  // {"models": list_presets(), "gpus": list_gpus(), "formats": list_formats()}
std::string maxfit_json(const std::string& scenario_text);
std::string settings_json();  // settings()
std::string plan_json(const std::string& request_text);
std::string fit_json(const std::string& scenario_text);                // fit()
std::string calibrate_json(const std::string& request_text);           // calibrate()
std::string sweep_json(const std::string& request_text);               // sweep()
std::string sweep_svg_text(const std::string& sweep_text);             // sweep_svg(); "" for anything else
std::string export_json(const std::string& request_text);              // export_config()
std::string import_deepspeed_json(const std::string& ds_config_text);  // import_deepspeed()
std::string read_configs_json(const std::string& request_text);        // read_configs(), files in the request

}  // namespace gpumem
