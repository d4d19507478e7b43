// Every enumerated setting of the scenario, declared once: one table per setting, one row per
// value (the enum, its JSON name, the spellings also accepted on input, a short label for combo
// boxes and one line of help for tooltips and docs). The scenario reader parses with these tables,
// settings() lists them for the JSON API, the page builds its combos from them and
// docs/scenario.md is generated from them. (The shape of Dear ImGui's enum + name tables and of
// zxing-cpp's BarcodeFormat.)
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace gpumem::detail {

// One value of a setting. A table's order is the order its values are listed in (error messages,
// combos, docs).
template <typename E>
struct Setting {
    E value;
    const char* name;     // the JSON spelling, what a resolved scenario holds
    const char* aliases;  // other spellings accepted on input, comma-separated ("" when none)
    const char* label;    // short, for a combo box
    const char* help;     // one line, for a tooltip and docs/scenario.md
};

// A setting's rows; a view over one of the constexpr arrays below.
template <typename E>
struct SettingRows {
    const Setting<E>* rows;
    std::size_t size;
    constexpr const Setting<E>* begin() const { return rows; }
    constexpr const Setting<E>* end() const { return rows + size; }
};

template <typename E, std::size_t N>
constexpr SettingRows<E> rows_of(const Setting<E> (&rows)[N]) {
    return {rows, N};
}

//-----------------------------------------------------------------------------
// The enums and their tables
//-----------------------------------------------------------------------------

enum class Mode { Training, Inference };
inline constexpr Setting<Mode> kModes[] = {
    {Mode::Training, "training", "", "Training",
     "one optimizer step: weights, gradients, optimizer states, activations"},
    {Mode::Inference, "inference", "", "Inference", "generation: weights, KV cache and the forward's working set"},
};

enum class Method { Full, Lora, Qlora, Frozen };
inline constexpr Setting<Method> kMethods[] = {
    {Method::Full, "full", "", "Full fine-tuning", "every weight trains"},
    {Method::Lora, "lora", "", "LoRA", "the base is frozen; low-rank adapters train (training.lora)"},
    {Method::Qlora, "qlora", "", "QLoRA (4-bit base)", "LoRA over a base quantized to training.quantization"},
    {Method::Frozen, "frozen", "", "Partial (top layers train)",
     "the top training.trainable_layers layers (and what train_lm_head / trainable_input_parameters name) train"},
};

enum class Dtype { Fp32, Fp16, Bf16, Fp8 };
inline constexpr Setting<Dtype> kDtypes[] = {
    {Dtype::Fp32, "fp32", "float32,float", "fp32", "IEEE float32, 4 bytes"},
    {Dtype::Fp16, "fp16", "float16,half", "fp16", "IEEE float16, 2 bytes"},
    {Dtype::Bf16, "bf16", "bfloat16", "bf16", "bfloat16, 2 bytes"},
    {Dtype::Fp8, "fp8", "float8", "fp8", "8-bit float (e4m3) compute, 1 byte"},
};

enum class Precision { Auto, AmpFp32Weights, Pure, MixedMasterFp32, MixedFp32Grads };
inline constexpr Setting<Precision> kPrecisions[] = {
    {Precision::Auto, "auto", "", "Auto (from the engine)",
     "pure for fp32 and adapters, mixed_master_fp32 for DeepSpeed, mixed_fp32_grads for Megatron, else "
     "amp_fp32_weights"},
    {Precision::AmpFp32Weights, "amp_fp32_weights", "amp", "AMP (fp32 weights, bf16/fp16 compute)",
     "fp32 weights, gradients and optimizer states; autocast computes in the compute dtype (HF Trainer bf16=True)"},
    {Precision::Pure, "pure", "", "Pure (weights in the compute dtype)",
     "weights, gradients and optimizer states all in the compute dtype; no fp32 copy"},
    {Precision::MixedMasterFp32, "mixed_master_fp32", "", "Mixed (half weights + fp32 master copy)",
     "half-precision weights and gradients plus an fp32 master copy in the optimizer (DeepSpeed)"},
    {Precision::MixedFp32Grads, "mixed_fp32_grads", "", "Mixed (fp32 master and gradients)",
     "half-precision weights, fp32 master copy and fp32 main gradients (Megatron's distributed optimizer)"},
};

enum class Optimizer {
    Sgd,
    SgdMomentum,
    Nesterov,
    Adagrad,
    Rmsprop,
    Adam,
    Adamw,
    AdamwFused,
    Adafactor,
    Lamb,
    Lion,
    Nadam,
    Radam,
    Amsgrad,
    SparseAdam,
    Shampoo,
    Adabelief,
    Adamw8bit,
    PagedAdamw8bit,
    PagedAdamw32bit,
    Muon
};
inline constexpr Setting<Optimizer> kOptimizers[] = {
    {Optimizer::Sgd, "sgd", "", "SGD", "no optimizer state"},
    {Optimizer::SgdMomentum, "sgd_momentum", "", "SGD with momentum", "one momentum buffer per parameter"},
    {Optimizer::Nesterov, "nesterov", "", "SGD with Nesterov momentum", "one momentum buffer per parameter"},
    {Optimizer::Adagrad, "adagrad", "", "Adagrad", "one accumulator per parameter"},
    {Optimizer::Rmsprop, "rmsprop", "", "RMSprop", "one square average per parameter"},
    {Optimizer::Adam, "adam", "", "Adam", "two moments per parameter"},
    {Optimizer::Adamw, "adamw", "adamw_torch", "AdamW (foreach)",
     "two moments per parameter; the multi-tensor step allocates one more temporary"},
    {Optimizer::AdamwFused, "adamw_fused", "adamw_torch_fused", "AdamW (fused)",
     "two moments per parameter; a fused kernel, no step temporary"},
    {Optimizer::Adafactor, "adafactor", "", "Adafactor (factored)",
     "factored second moment: a row and a column vector per matrix, a full one per vector"},
    {Optimizer::Lamb, "lamb", "", "LAMB", "two moments per parameter, layer-wise trust ratio"},
    {Optimizer::Lion, "lion", "", "Lion", "one moment per parameter"},
    {Optimizer::Nadam, "nadam", "", "NAdam", "two moments per parameter (Nesterov Adam)"},
    {Optimizer::Radam, "radam", "", "RAdam", "two moments per parameter (rectified Adam)"},
    {Optimizer::Amsgrad, "amsgrad", "", "AMSGrad", "three moments per parameter (Adam + the running maximum)"},
    {Optimizer::SparseAdam, "sparse_adam", "", "SparseAdam", "two moments per parameter, updated sparsely"},
    {Optimizer::Shampoo, "shampoo", "", "Shampoo",
     "Distributed Shampoo: four preconditioner matrices per 1024x1024 block plus an Adagrad grafting state"},
    {Optimizer::Adabelief, "adabelief", "", "AdaBelief", "two moments per parameter"},
    {Optimizer::Adamw8bit, "adamw_8bit", "adam_8bit,adamw_bnb_8bit", "AdamW 8-bit (bitsandbytes)",
     "two 8-bit moments per parameter plus an fp32 absmax per 2048 (tensors under 4096 elements stay 32-bit)"},
    {Optimizer::PagedAdamw8bit, "paged_adamw_8bit", "", "Paged AdamW 8-bit",
     "as adamw_8bit, in paged (host-evictable) memory"},
    {Optimizer::PagedAdamw32bit, "paged_adamw_32bit", "paged_adamw", "Paged AdamW 32-bit",
     "two 32-bit moments per parameter in paged (host-evictable) memory"},
    {Optimizer::Muon, "muon", "", "Muon", "momentum for hidden matrices, AdamW's two moments for the rest"},
};

enum class StateDtype { Auto, Fp32, Bf16, Fp16, Int8 };
inline constexpr Setting<StateDtype> kStateDtypes[] = {
    {StateDtype::Auto, "auto", "", "Auto (from the precision recipe)",
     "the compute dtype under a pure recipe, int8 for 8-bit optimizers, else fp32"},
    {StateDtype::Fp32, "fp32", "float32", "fp32", "4 bytes per moment"},
    {StateDtype::Bf16, "bf16", "bfloat16", "bf16", "2 bytes per moment"},
    {StateDtype::Fp16, "fp16", "float16", "fp16", "2 bytes per moment"},
    {StateDtype::Int8, "int8", "", "int8", "1 byte per moment (block-quantized)"},
};

enum class Checkpointing { None, Full, Selective };
inline constexpr Setting<Checkpointing> kCheckpointings[] = {
    {Checkpointing::None, "none", "", "Off", "every layer keeps what its backward needs; also false or level 0"},
    {Checkpointing::Full, "full", "", "Full (every layer)",
     "each layer keeps only its input and recomputes the rest in the backward; also true, level 3 or level 4"},
    {Checkpointing::Selective, "selective", "", "Selective (per-op; Megatron: attention)",
     "the attention's large intermediates are recomputed, the rest kept; also level 1 or level 2"},
};

enum class Attention { Eager, Sdpa, Flash };
inline constexpr Setting<Attention> kAttentions[] = {
    {Attention::Eager, "eager", "", "Eager (keeps s x s scores)",
     "keeps the batch x heads x seq x seq scores and probabilities"},
    {Attention::Sdpa, "sdpa", "", "SDPA", "torch scaled_dot_product_attention: per-row statistics only"},
    {Attention::Flash, "flash", "flash_attention_2,flash_attn", "FlashAttention",
     "FlashAttention: per-row statistics only"},
};

enum class Loss { Standard, Chunked, Fused };
inline constexpr Setting<Loss> kLosses[] = {
    {Loss::Standard, "standard", "", "Standard (fp32 logits)",
     "the logits upcast to fp32 for the cross-entropy (overheads.loss_fp32_copies)"},
    {Loss::Chunked, "chunked", "", "Chunked", "the cross-entropy one chunk of the logits at a time (torchtune)"},
    {Loss::Fused, "fused", "", "Fused (Liger, CCE)", "the head and the loss fused: the full logits never exist"},
};

enum class Quantization { Nf4, Fp4, Int8 };
inline constexpr Setting<Quantization> kQuantizations[] = {
    {Quantization::Nf4, "nf4", "", "NF4 (bitsandbytes)", "4-bit NormalFloat with an absmax per 64 weights"},
    {Quantization::Fp4, "fp4", "", "FP4 (bitsandbytes)", "4-bit float with an absmax per 64 weights"},
    {Quantization::Int8, "int8", "", "int8 (LLM.int8)", "8-bit weights with a scale per row"},
};

enum class Framework { Transformers, Litgpt, Torchtune, Torchtitan };
inline constexpr Setting<Framework> kFrameworks[] = {
    {Framework::Transformers, "transformers", "", "Transformers / PEFT", "Hugging Face Trainer and PEFT"},
    {Framework::Litgpt, "litgpt", "", "LitGPT",
     "untied copy of tied embeddings, previous step kept, LoRA dropout 0.05"},
    {Framework::Torchtune, "torchtune", "", "torchtune", "torchtune's recipes"},
    {Framework::Torchtitan, "torchtitan", "", "torchtitan", "torchtitan's trainer"},
};

// The release family of the training loop, where one changed what it allocates. "current" is the behaviour
// the rest of the model follows (each framework as of its newest release gpumem tracks).
enum class FrameworkVersion { Current, Transformers2022, Torchtune01 };
inline constexpr Setting<FrameworkVersion> kFrameworkVersions[] = {
    {FrameworkVersion::Current, "current", "latest", "current release", "the framework as gpumem models it today"},
    {FrameworkVersion::Transformers2022, "transformers_2022", "transformers_torch1",
     "Transformers on PyTorch 1.x (2022)",
     "PyTorch 1.x: zero_grad keeps the gradients, adamw_hf steps one tensor at a time, every CUDA kernel module "
     "loaded at start (a 1.3 GiB context)"},
    {FrameworkVersion::Torchtune01, "torchtune_0.1", "torchtune_0.1.0,torchtune_0.1.1", "torchtune 0.1 (spring 2024)",
     "torchtune v0.1.x (Apr-May 2024): FSDP1, foreach AdamW, fp32 logits from the model, torchao NF4 quantized "
     "at load, LoRA dropout 0.05"},
};

enum class Compile { None, Layers, LayersAndLoss };
inline constexpr Setting<Compile> kCompiles[] = {
    {Compile::None, "none", "", "off (eager)", "no torch.compile; also false"},
    {Compile::Layers, "layers", "", "the layers", "each decoder layer compiled: Inductor fuses the norms (torchtitan)"},
    {Compile::LayersAndLoss, "layers_and_loss", "", "the layers and the loss",
     "the loss too: the cross-entropy's fp32 upcast fused (torchtune's compile: True); also true"},
};

enum class InferenceEngine { Transformers, Vllm, LlamaCpp, Sglang, Tgi, TensorrtLlm };
inline constexpr Setting<InferenceEngine> kInferenceEngines[] = {
    {InferenceEngine::Transformers, "transformers", "", "Transformers",
     "weights, the cache as it grows and the prefill's working set"},
    {InferenceEngine::Vllm, "vllm", "", "vLLM",
     "claims gpu_memory_utilization of the card and fills it with KV blocks"},
    {InferenceEngine::LlamaCpp, "llama.cpp", "llamacpp", "llama.cpp",
     "a whole-context cache and one ubatch's compute buffer"},
    {InferenceEngine::Sglang, "sglang", "", "SGLang",
     "mem_fraction_static of the free memory holds the weights and a token KV pool; CUDA graphs outside it"},
    {InferenceEngine::Tgi, "tgi", "text_generation_inference", "TGI",
     "warms up with one max-size prefill, then fills 90% of what is free (cuda_memory_fraction) with KV blocks"},
    {InferenceEngine::TensorrtLlm, "tensorrt_llm", "trtllm,tensorrt", "TensorRT-LLM",
     "free_gpu_memory_fraction of the memory left after weights and activations becomes KV blocks"},
};

enum class KvCacheDtype { Auto, Fp32, Fp16, Bf16, Fp8, Int8, Int4 };
inline constexpr Setting<KvCacheDtype> kKvCacheDtypes[] = {
    {KvCacheDtype::Auto, "auto", "", "Auto (the activation dtype)",
     "the weights' dtype, or the checkpoint's (fp16 for llama.cpp)"},
    {KvCacheDtype::Fp32, "fp32", "float32", "fp32", "4 bytes per element"},
    {KvCacheDtype::Fp16, "fp16", "float16", "fp16", "2 bytes per element"},
    {KvCacheDtype::Bf16, "bf16", "bfloat16", "bf16", "2 bytes per element"},
    {KvCacheDtype::Fp8, "fp8", "fp8_e4m3,fp8_e5m2", "fp8", "1 byte per element (vLLM kv_cache_dtype=fp8)"},
    {KvCacheDtype::Int8, "int8", "", "int8", "1 byte per element"},
    {KvCacheDtype::Int4, "int4", "", "int4", "half a byte per element"},
};

// Weight formats: "auto" and the catalogue's (presets/dtypes.json, the same ids in the same order:
// settings_test checks it); a scenario may add its own under "formats".
enum class WeightFormat {
    Auto,
    Fp32,
    Fp16,
    Bf16,
    Fp8,
    Int8,
    Int4,
    Nf4,
    Fp4,
    Mxfp4,
    Nvfp4,
    Q8_0,
    Q6_K,
    Q5_K_M,
    Q4_K_M,
    Q4_0
};
inline constexpr Setting<WeightFormat> kWeightFormats[] = {
    {WeightFormat::Auto, "auto", "", "Auto (the checkpoint's)", "the checkpoint's quantization_config, else its dtype"},
    {WeightFormat::Fp32, "fp32", "", "fp32", "IEEE float32, 4 bytes per weight"},
    {WeightFormat::Fp16, "fp16", "", "fp16", "IEEE float16, 2 bytes per weight"},
    {WeightFormat::Bf16, "bf16", "", "bf16", "bfloat16, 2 bytes per weight"},
    {WeightFormat::Fp8, "fp8", "", "fp8 (128x128 block scales)", "e4m3 with an fp32 scale per 128x128 block"},
    {WeightFormat::Int8, "int8", "", "int8 (LLM.int8)", "bitsandbytes LLM.int8: an fp32 scale per row"},
    {WeightFormat::Int4, "int4", "", "int4 (GPTQ/AWQ, group 128)",
     "GPTQ/AWQ: a scale and a zero point per inference.group_size weights"},
    {WeightFormat::Nf4, "nf4", "", "NF4 (bitsandbytes)", "bitsandbytes 4-bit NormalFloat, an absmax per 64 weights"},
    {WeightFormat::Fp4, "fp4", "", "FP4 (bitsandbytes)", "bitsandbytes 4-bit float, an absmax per 64 weights"},
    {WeightFormat::Mxfp4, "mxfp4", "", "MXFP4", "OCP microscaling fp4: an 8-bit scale per 32 weights"},
    {WeightFormat::Nvfp4, "nvfp4", "", "NVFP4", "NVIDIA fp4: an fp8 scale per 16 weights"},
    {WeightFormat::Q8_0, "q8_0", "", "GGUF Q8_0", "llama.cpp 8-bit, an fp16 scale per 32"},
    {WeightFormat::Q6_K, "q6_k", "", "GGUF Q6_K", "llama.cpp 6.5625 bits per weight"},
    {WeightFormat::Q5_K_M, "q5_k_m", "", "GGUF Q5_K_M", "llama.cpp 5-bit k-quant mix"},
    {WeightFormat::Q4_K_M, "q4_k_m", "", "GGUF Q4_K_M", "llama.cpp 4-bit k-quant mix"},
    {WeightFormat::Q4_0, "q4_0", "", "GGUF Q4_0", "llama.cpp 4-bit, an fp16 scale per 32"},
};

enum class EngineType { None, Ddp, DeepSpeed, Fsdp, Megatron, MegatronDeepSpeed };
inline constexpr Setting<EngineType> kEngineTypes[] = {
    {EngineType::None, "none", "", "None (one process)", "plain PyTorch; becomes ddp when data_parallel_size > 1"},
    {EngineType::Ddp, "ddp", "pytorch_ddp,pytorch", "DDP",
     "DistributedDataParallel: every GPU holds everything, plus gradient buckets"},
    {EngineType::DeepSpeed, "deepspeed", "", "DeepSpeed ZeRO",
     "DeepSpeed: engine.zero_stage shards states over data-parallel GPUs"},
    {EngineType::Fsdp, "fsdp", "", "FSDP", "PyTorch FSDP: engine.fsdp_sharding decides what is sharded"},
    {EngineType::Megatron, "megatron", "megatron_lm", "Megatron-LM",
     "Megatron-LM: tensor, pipeline, context and expert parallelism, distributed optimizer"},
    {EngineType::MegatronDeepSpeed, "megatron_deepspeed", "", "Megatron-DeepSpeed",
     "Megatron's model parallelism with DeepSpeed ZeRO"},
};

enum class FsdpSharding { FullShard, ShardGradOp, HybridShard, NoShard };
inline constexpr Setting<FsdpSharding> kFsdpShardings[] = {
    {FsdpSharding::FullShard, "full_shard", "", "FULL_SHARD",
     "weights, gradients and optimizer states sharded (like ZeRO-3)"},
    {FsdpSharding::ShardGradOp, "shard_grad_op", "", "SHARD_GRAD_OP",
     "gradients and optimizer states sharded (like ZeRO-2)"},
    {FsdpSharding::HybridShard, "hybrid_shard", "", "HYBRID_SHARD",
     "full shard within a node, replicated across nodes"},
    {FsdpSharding::NoShard, "no_shard", "", "NO_SHARD", "nothing sharded (like DDP)"},
};

enum class Offload { None, Cpu, Nvme };
inline constexpr Setting<Offload> kOffloads[] = {
    {Offload::None, "none", "", "None", "kept on the GPU"},
    {Offload::Cpu, "cpu", "", "CPU", "moved to host RAM (ZeRO-Offload, FSDP CPUOffload)"},
    {Offload::Nvme, "nvme", "", "NVMe", "moved to NVMe storage (ZeRO-Infinity; DeepSpeed only)"},
};

// LoRA target modules: a list of these. "all_linear" stands for every linear layer of the decoder.
enum class LoraTarget { QProj, KProj, VProj, OProj, GateProj, UpProj, DownProj, LmHead, AllLinear };
inline constexpr Setting<LoraTarget> kLoraTargets[] = {
    {LoraTarget::QProj, "q_proj", "", "q", "attention query projection"},
    {LoraTarget::KProj, "k_proj", "", "k", "attention key projection"},
    {LoraTarget::VProj, "v_proj", "", "v", "attention value projection"},
    {LoraTarget::OProj, "o_proj", "", "o", "attention output projection"},
    {LoraTarget::GateProj, "gate_proj", "", "gate", "MLP gate projection"},
    {LoraTarget::UpProj, "up_proj", "", "up", "MLP up projection"},
    {LoraTarget::DownProj, "down_proj", "", "down", "MLP down projection"},
    {LoraTarget::LmHead, "lm_head", "", "LM head", "the output head"},
    {LoraTarget::AllLinear, "all_linear", "", "all linear layers", "q, k, v, o, gate, up and down projections"},
};

// The scope of a scenario's own weight format (formats[].scope).
enum class FormatScope { All, Layers, Matrices };
inline constexpr Setting<FormatScope> kFormatScopes[] = {
    {FormatScope::All, "all", "", "every tensor", "every tensor in this format (plain floats)"},
    {FormatScope::Layers, "layers", "", "the layers' linears",
     "the decoder layers' linear matrices; the rest in the checkpoint's dtype"},
    {FormatScope::Matrices, "matrices", "", "every matrix", "every matrix including embeddings and head (GGUF)"},
};

//-----------------------------------------------------------------------------
// The scenario's enumerated fields: where each sits, its default and what it means
//-----------------------------------------------------------------------------

template <typename E>
struct Field {
    const char* path;  // dotted, as in the scenario and its error messages
    E fallback;        // the value an absent field takes (some are resolved further: see help)
    const char* help;
};

inline constexpr Field<Mode> kModeField{"mode", Mode::Training, "what to estimate"};
inline constexpr Field<Method> kMethodField{"training.method", Method::Full, "which weights train"};
inline constexpr Field<Dtype> kDtypeField{"training.dtype", Dtype::Bf16, "the compute dtype"};
inline constexpr Field<Precision> kPrecisionField{"training.precision", Precision::Auto,
                                                  "where the weights live and whether an fp32 master copy is kept"};
inline constexpr Field<Optimizer> kOptimizerField{"training.optimizer", Optimizer::Adamw,
                                                  "the optimizer, which sets its state per parameter"};
inline constexpr Field<StateDtype> kStateDtypeField{
    "training.optimizer_state_dtype", StateDtype::Auto,
    "the dtype of the optimizer's moments (8-bit optimizers fix their own)"};
inline constexpr Field<Checkpointing> kCheckpointingField{
    "training.activation_checkpointing", Checkpointing::None,
    "activation (gradient) checkpointing; true/false (and gradient_checkpointing) read as full/none; an integer is "
    "gpu-mem-calculator's level: 0 none, 1 (attention output) and 2 (attention input) selective, 3 (layer and "
    "attention) and 4 (every layer) full"};
inline constexpr Field<Attention> kTrainingAttentionField{"training.attention", Attention::Sdpa,
                                                          "the attention kernel"};
inline constexpr Field<Loss> kLossField{"training.loss", Loss::Standard, "how the cross-entropy is computed"};
inline constexpr Field<Quantization> kQuantizationField{"training.quantization", Quantization::Nf4,
                                                        "for qlora: how the frozen base is stored"};
inline constexpr Field<Framework> kFrameworkField{"training.framework", Framework::Transformers,
                                                  "the training loop, which sets the defaults of its own habits"};
inline constexpr Field<FrameworkVersion> kFrameworkVersionField{
    "training.framework_version", FrameworkVersion::Current,
    "the release family of training.framework whose allocations apply (each value names its framework, which "
    "it sets where training.framework is left out)"};
inline constexpr Field<Compile> kCompileField{"training.compile", Compile::None,
                                              "torch.compile; true/false are read as layers_and_loss/none"};
inline constexpr Field<LoraTarget> kLoraTargetsField{
    "training.lora.target_modules", LoraTarget::QProj,
    "for lora and qlora: a list of the linear layers that get adapters"};
inline constexpr Field<WeightFormat> kWeightFormatField{
    "inference.weight_format", WeightFormat::Auto,
    "how the weights are stored; a scenario's own \"formats\" add to these"};
inline constexpr Field<KvCacheDtype> kKvCacheDtypeField{"inference.kv_cache_dtype", KvCacheDtype::Auto,
                                                        "the KV cache's element type"};
inline constexpr Field<InferenceEngine> kInferenceEngineField{"inference.engine", InferenceEngine::Transformers,
                                                              "the serving engine"};
inline constexpr Field<Attention> kInferenceAttentionField{"inference.attention", Attention::Sdpa,
                                                           "the attention kernel (default flash for vllm)"};
inline constexpr Field<EngineType> kEngineTypeField{
    "engine.type", EngineType::None, "the distributed training engine (deepspeed when only zero_stage is given)"};
inline constexpr Field<FsdpSharding> kFsdpShardingField{
    "engine.fsdp_sharding", FsdpSharding::FullShard,
    "for fsdp: what is sharded; also read from engine.sharding_strategy (gpu-mem-calculator's config format)"};
inline constexpr Field<Offload> kOffloadOptimizerField{"engine.offload_optimizer", Offload::None,
                                                       "where the optimizer states live (DeepSpeed ZeRO 1-3 or FSDP)"};
inline constexpr Field<Offload> kOffloadParamField{
    "engine.offload_param", Offload::None,
    "where the weights live (DeepSpeed ZeRO 3 or FSDP, which offloads to cpu only)"};
inline constexpr Field<FormatScope> kFormatScopeField{"formats[].scope", FormatScope::Layers,
                                                      "a scenario's own weight format: which tensors it applies to"};

// The key of a field inside its section ("method" for "training.method").
std::string field_key(const char* path);

//-----------------------------------------------------------------------------
// Lookups
//-----------------------------------------------------------------------------

constexpr SettingRows<Mode> rows(Mode) { return rows_of(kModes); }
constexpr SettingRows<Method> rows(Method) { return rows_of(kMethods); }
constexpr SettingRows<Dtype> rows(Dtype) { return rows_of(kDtypes); }
constexpr SettingRows<Precision> rows(Precision) { return rows_of(kPrecisions); }
constexpr SettingRows<Optimizer> rows(Optimizer) { return rows_of(kOptimizers); }
constexpr SettingRows<StateDtype> rows(StateDtype) { return rows_of(kStateDtypes); }
constexpr SettingRows<Checkpointing> rows(Checkpointing) { return rows_of(kCheckpointings); }
constexpr SettingRows<Attention> rows(Attention) { return rows_of(kAttentions); }
constexpr SettingRows<Loss> rows(Loss) { return rows_of(kLosses); }
constexpr SettingRows<Quantization> rows(Quantization) { return rows_of(kQuantizations); }
constexpr SettingRows<Framework> rows(Framework) { return rows_of(kFrameworks); }
constexpr SettingRows<FrameworkVersion> rows(FrameworkVersion) { return rows_of(kFrameworkVersions); }
constexpr SettingRows<Compile> rows(Compile) { return rows_of(kCompiles); }
constexpr SettingRows<InferenceEngine> rows(InferenceEngine) { return rows_of(kInferenceEngines); }
constexpr SettingRows<KvCacheDtype> rows(KvCacheDtype) { return rows_of(kKvCacheDtypes); }
constexpr SettingRows<WeightFormat> rows(WeightFormat) { return rows_of(kWeightFormats); }
constexpr SettingRows<EngineType> rows(EngineType) { return rows_of(kEngineTypes); }
constexpr SettingRows<FsdpSharding> rows(FsdpSharding) { return rows_of(kFsdpShardings); }
constexpr SettingRows<Offload> rows(Offload) { return rows_of(kOffloads); }
constexpr SettingRows<LoraTarget> rows(LoraTarget) { return rows_of(kLoraTargets); }
constexpr SettingRows<FormatScope> rows(FormatScope) { return rows_of(kFormatScopes); }

// The JSON name of a value ("deepspeed").
template <typename E>
constexpr const char* name(E value) {
    for (const Setting<E>& row : rows(E{}))
        if (row.value == value) return row.name;
    return "";
}

// Input as the tables compare it: lower case, '-' as '_' ("Paged-AdamW" -> "paged_adamw").
std::string normalize_setting(std::string_view text);

// Whether `key` (normalized) is `name` or one of the comma-separated `aliases`.
bool setting_matches(std::string_view key, const char* name, const char* aliases);

// The row whose name or alias is `text` (normalized first); nullopt when none.
template <typename E>
std::optional<E> parse_setting(std::string_view text) {
    const std::string key = normalize_setting(text);
    for (const Setting<E>& row : rows(E{}))
        if (setting_matches(key, row.name, row.aliases)) return row.value;
    return std::nullopt;
}

// "a, b, c": the rows' names in the table's order.
template <typename E>
std::string names_text() {
    std::string out;
    for (const Setting<E>& row : rows(E{})) out += (out.empty() ? "" : ", ") + std::string(row.name);
    return out;
}

// "must be one of a, b, c": the problem text of a value that is none of the rows.
template <typename E>
std::string allowed_text() {
    return "must be one of " + names_text<E>();
}

//-----------------------------------------------------------------------------
// Bytes per element
//-----------------------------------------------------------------------------

// Storage bytes of one element of each element type a setting or a checkpoint names: the one table
// of them. dtype_bytes() (scenario/fields.h) reads a checkpoint's dtype with it, and each setting's
// bytes below are its rows' names looked up here.
struct ElementSize {
    const char* name;
    double bytes;
};
inline constexpr ElementSize kElementSizes[] = {
    {"fp32", 4}, {"fp16", 2}, {"bf16", 2}, {"fp8", 1}, {"int8", 1}, {"int4", 0.5}, {"fp4", 0.5},
};

constexpr bool same_name(const char* a, const char* b) {
    while (*a != '\0' && *a == *b) ++a, ++b;
    return *a == *b;
}

// The bytes of the element type called `name`; 0 when the table has none ("auto").
constexpr double element_bytes(const char* name) {
    for (const ElementSize& e : kElementSizes)
        if (same_name(e.name, name)) return e.bytes;
    return 0;
}

// Whether a table's rows are in its enum's order, so that the enum indexes them.
template <typename E, std::size_t N>
constexpr bool in_enum_order(const Setting<E> (&rows)[N]) {
    for (std::size_t i = 0; i < N; ++i)
        if (static_cast<std::size_t>(rows[i].value) != i) return false;
    return true;
}

// Each row's element bytes, indexed by the enum.
template <typename E, std::size_t N>
constexpr std::array<double, N> bytes_by_row(const Setting<E> (&rows)[N]) {
    std::array<double, N> out{};
    for (std::size_t i = 0; i < N; ++i) out[i] = element_bytes(rows[i].name);
    return out;
}

static_assert(in_enum_order(kDtypes) && in_enum_order(kStateDtypes) && in_enum_order(kKvCacheDtypes) &&
              in_enum_order(kWeightFormats) && in_enum_order(kOptimizers) && in_enum_order(kLoraTargets));
inline constexpr auto kDtypeBytes = bytes_by_row(kDtypes);
inline constexpr auto kStateDtypeBytes = bytes_by_row(kStateDtypes);
inline constexpr auto kKvCacheDtypeBytes = bytes_by_row(kKvCacheDtypes);

// Storage bytes of a training dtype (fp8: 1).
constexpr double storage_bytes(Dtype d) { return kDtypeBytes[static_cast<std::size_t>(d)]; }
// Bytes per element in a compute dtype: what activations, gathered layers, dequantized copies and
// gradient traffic take. fp8 runs keep bf16 weights and activations (the fp8 copies are transient).
constexpr double compute_bytes(Dtype d) { return storage_bytes(d == Dtype::Fp8 ? Dtype::Bf16 : d); }
// Bytes of one optimizer moment (int8: the 8-bit optimizers' 1; Auto is resolved before use).
constexpr double storage_bytes(StateDtype d) { return kStateDtypeBytes[static_cast<std::size_t>(d)]; }
// Bytes of one KV-cache element. int4 is quanto's quantized cache: 4 bits plus an fp16 scale and
// zero point per group of 64.
constexpr double storage_bytes(KvCacheDtype d) {
    return d == KvCacheDtype::Int4 ? element_bytes("int4") + 4.0 / 64 : kKvCacheDtypeBytes[static_cast<std::size_t>(d)];
}

// The bitsandbytes 8-bit optimizers: int8 moments whatever the recipe.
constexpr bool is_8bit(Optimizer o) { return o == Optimizer::Adamw8bit || o == Optimizer::PagedAdamw8bit; }
// The paged optimizers: their state in CUDA unified memory, outside PyTorch's allocator.
constexpr bool is_paged(Optimizer o) { return o == Optimizer::PagedAdamw8bit || o == Optimizer::PagedAdamw32bit; }

// The weight format a QLoRA base is quantized to.
constexpr WeightFormat weight_format_of(Quantization q) {
    return q == Quantization::Nf4 ? WeightFormat::Nf4 : q == Quantization::Fp4 ? WeightFormat::Fp4 : WeightFormat::Int8;
}

// The configs and command lines of the tools gpumem reads and writes (gpumem check, export).
enum class ConfigFormat {
    Deepspeed,
    Accelerate,
    Torchrun,
    Torchtune,
    Axolotl,
    Litgpt,
    Vllm,
    LlamaCpp,
    Sglang,
    Tgi,
    TensorrtLlm
};
inline constexpr Setting<ConfigFormat> kFormats[] = {
    {ConfigFormat::Deepspeed, "deepspeed", "ds_config", "DeepSpeed ds_config.json",
     "the DeepSpeed JSON: micro-batch, accumulation, bf16/fp16, ZeRO stage, offload, bucket sizes, TP/SP/EP sizes"},
    {ConfigFormat::Accelerate, "accelerate", "", "accelerate config (YAML)",
     "an accelerate config file for `accelerate launch --config_file`: FSDP, DeepSpeed or DDP"},
    {ConfigFormat::Torchrun, "torchrun", "hf_trainer", "torchrun + HF Trainer",
     "a torchrun line with transformers TrainingArguments flags (FSDP, DeepSpeed, optimizer, precision)"},
    {ConfigFormat::Torchtune, "torchtune", "tune", "torchtune recipe",
     "a torchtune recipe config (YAML) or a `tune run` line: the recipe, its config and the overrides"},
    {ConfigFormat::Axolotl, "axolotl", "", "axolotl config (YAML)", "an axolotl config's training keys"},
    {ConfigFormat::Litgpt, "litgpt", "", "LitGPT config or command",
     "a litgpt config (YAML) or `litgpt finetune_*` line"},
    {ConfigFormat::Vllm, "vllm", "", "vllm serve", "a `vllm serve` line with the memory flags of the estimate"},
    {ConfigFormat::LlamaCpp, "llama.cpp", "llamacpp,llama_server,llama_cli", "llama-server (llama.cpp)",
     "a `llama-server` line: GPU layers, context, parallel sequences, KV cache type"},
    {ConfigFormat::Sglang, "sglang", "", "SGLang launch_server",
     "a `python -m sglang.launch_server` line: mem_fraction_static, context, running requests, TP/DP/EP"},
    {ConfigFormat::Tgi, "tgi", "text_generation_inference,text_generation_launcher", "text-generation-launcher (TGI)",
     "a `text-generation-launcher` line: max total and prefill tokens, memory fraction, shards"},
    {ConfigFormat::TensorrtLlm, "tensorrt_llm", "trtllm,trtllm_serve", "trtllm-serve (TensorRT-LLM)",
     "a `trtllm-serve` line: KV cache's free-memory fraction, batch, tokens per step, TP/PP/EP"},
};
constexpr SettingRows<ConfigFormat> rows(ConfigFormat) { return rows_of(kFormats); }
using ExportFormat = ConfigFormat;
inline constexpr const auto& kExportFormats = kFormats;

// The number of single-character edits that turn `a` into `b` (Levenshtein) when it is at most
// `limit`, else `limit + 1`: near misses of a preset id, an alias or a command-line option. Only
// the band of the table within `limit` of its diagonal is filled, and the work stops once a row
// is all past `limit`, so it costs O(limit x min(|a|, |b|)) at most, O(1) when the lengths
// already differ by more.
std::size_t edit_distance(const std::string& a, const std::string& b, std::size_t limit);

}  // namespace gpumem::detail
