// A scenario document read, checked and resolved: every default filled in and recorded.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "scenario/fields.h"
#include "scenario/tunables.h"
#include "gpumem/gpumem.h"
#include "catalogue/presets.h"

namespace gpumem::detail {

struct TrainingSettings {
    Method method = Method::Full;
    std::uint64_t batch_size = 1;  // micro-batch per data-parallel rank
    std::uint64_t gradient_accumulation_steps = 1;
    std::uint64_t seq_len = 2048;
    Dtype dtype = Dtype::Bf16;              // compute dtype
    Precision precision = Precision::Auto;  // resolved: never Auto
    Optimizer optimizer = Optimizer::Adamw;
    StateDtype optimizer_state_dtype = StateDtype::Auto;  // resolved: never Auto
    Checkpointing activation_checkpointing = Checkpointing::None;
    Attention attention = Attention::Sdpa;
    Loss loss = Loss::Standard;
    std::uint64_t lora_rank = 8;
    double lora_alpha = 16;
    double lora_dropout = 0;  // lora.dropout: PEFT's and torchtune's default 0, litgpt's and torchtune 0.1's 0.05
    std::vector<LoraTarget> lora_targets{LoraTarget::QProj, LoraTarget::VProj};  // all_linear is expanded
    Quantization quantization = Quantization::Nf4;                               // base weights for qlora
    std::uint64_t images = 0;        // images per sample (multimodal): their tokens join seq_len
    std::uint64_t image_tokens = 0;  // tokens per image (resolved from the config unless given)
    // "frozen" (partial) training: the top `trainable_layers` decoder layers train, plus
    // `trainable_input_parameters` in a module that feeds the first layer (a projector); everything else is frozen.
    std::uint64_t trainable_layers = 0;
    std::uint64_t trainable_input_parameters = 0;
    bool train_lm_head = false;  // frozen: the output head trains too
    // The optimizer steps each parameter from a gradient hook as soon as its gradient is complete and
    // frees it (torchtune optimizer_in_bwd, torch "post-accumulate-grad hooks"): no full set of gradients.
    bool optimizer_in_backward = false;
    // Saved activations moved to host memory as the forward goes (torchtune OffloadActivations).
    bool activation_offloading = false;
    // The framework keeps its own lm_head copy of tied input embeddings (litgpt's checkpoint conversion).
    bool untie_embeddings = false;
    // The training loop: "transformers" (HF Trainer / PEFT, the default), "litgpt", "torchtune",
    // "torchtitan". Sets the defaults of the framework-specific facts above and below.
    Framework framework = Framework::Transformers;
    // The framework's release family where one allocated differently (settings.h FrameworkVersion).
    FrameworkVersion framework_version = FrameworkVersion::Current;
    // The loop keeps the previous step's loss (and so its autograd graph) and logits referenced while the
    // next forward runs (litgpt's fit loop rebinds `loss` and `logits` only after the next forward).
    bool retains_previous_step = false;
    bool double_quant = false;  // qlora: bitsandbytes double quantization of the absmax
    // torch.compile (settings.h). Inductor fuses the norms and the cross-entropy's fp32 upcast, which
    // changes what they keep (training.cpp).
    Compile compile = Compile::None;
};

// vLLM's release families whose budgets differ (memory/inference.cpp vllm()): the V0 engine of 0.8 and 0.9
// (VLLM_USE_V1=0: its own profile run, sampler and scheduler defaults), then V1's by how its profile run samples.
enum class VllmSampler { V0, FlashInfer, Native };
inline constexpr const char* kVllmDefaultVersion = "0.12";
// The family of a vLLM release "0.MINOR[.PATCH]" (0.10 on), or "0.8[.PATCH]-v0" / "0.9[.PATCH]-v0" (the V0
// engine of those releases); nullopt for anything else.
std::optional<VllmSampler> vllm_family(const std::string& version);
// SGLang's release families whose default mem_fraction_static differs (scenario.cpp sglang_mem_fraction_static):
// a reserve by card size and TP x PP (sglang PR #7054), then one from chunked_prefill_size and the largest CUDA
// graph batch (PRs #10975 and #11076).
enum class SglangReserve { ByCard, ByChunkAndGraphs };
inline constexpr const char* kSglangDefaultVersion = "0.5.3";
// The family of an SGLang release "0.4.MINOR[.PATCH]" from 0.4.7, or "0.5[.PATCH]"; nullopt for anything else.
std::optional<SglangReserve> sglang_family(const std::string& version);

struct InferenceSettings {
    std::uint64_t batch_size = 1;
    std::uint64_t context_len = 4096;
    std::size_t weight_format = 0;  // resolved: an index into Scenario::formats (Scenario::weight_format())
    bool weight_format_from_checkpoint = false;  // resolved from the config's quantization_config
    std::uint64_t group_size = 128;              // int4 scale group (GPTQ/AWQ)
    bool kv_cache = true;
    KvCacheDtype kv_cache_dtype = KvCacheDtype::Auto;  // resolved: never Auto
    InferenceEngine engine = InferenceEngine::Transformers;
    Attention attention = Attention::Sdpa;
    double gpu_memory_utilization = 0.9;            // vllm: share of the card it claims up front
    std::uint64_t max_num_batched_tokens = 8192;    // vllm: tokens of one scheduler step (chunked prefill)
    std::uint64_t max_num_seqs = 1024;              // vllm: sequences of one scheduler step
    std::string engine_version = "0.12";            // vllm, sglang: the release whose budget rules apply
    std::uint64_t block_size = 16;                  // vllm: tokens per KV-cache block
    std::int64_t gpu_layers = -1;                   // llama.cpp: layers offloaded to the GPU (-1: all)
    std::uint64_t ubatch = 512;                     // llama.cpp: physical batch of one graph evaluation
    double mem_fraction_static = 0.88;              // sglang: share of the free memory for weights and KV pool
    std::uint64_t chunked_prefill_size = 8192;      // sglang: tokens of one prefill chunk (by GPU memory)
    std::uint64_t max_total_tokens = 4096;          // tgi: prompt + generated tokens of one request
    std::uint64_t max_batch_prefill_tokens = 4146;  // tgi: tokens of the warm-up prefill
    double cuda_memory_fraction = 1.0;              // tgi: share of the card the server may use
    double free_gpu_memory_fraction = 0.9;          // tensorrt_llm: share of the free memory for the KV cache
    std::uint64_t max_num_tokens = 8192;            // tensorrt_llm: tokens of one engine step
    std::uint64_t images = 0;                       // images per sequence (multimodal): their tokens join the context
    std::uint64_t image_tokens = 0;                 // tokens per image (resolved from the config unless given)
    // vllm: engine_version's family (vllm_family), resolved by the reader once rather than by every evaluation
    VllmSampler vllm_sampler = VllmSampler::Native;
};

struct Parallelism {
    std::uint64_t dp = 1, tp = 1, pp = 1, ep = 1, cp = 1;
    bool sequence_parallel = false;
    std::uint64_t pipeline_microbatches = 1;   // micro-batches per step through the pipeline (resolved)
    bool pipeline_microbatches_given = false;  // the scenario set it (else max(grad accumulation, pp))
    std::uint64_t world() const { return dp * tp * pp * cp; }
};

struct EngineSettings {
    EngineType type = EngineType::None;
    std::uint64_t zero_stage = 0;
    FsdpSharding fsdp_sharding = FsdpSharding::FullShard;
    Offload offload_optimizer = Offload::None;
    Offload offload_param = Offload::None;
    bool distributed_optimizer = true;  // megatron: --use-distributed-optimizer (states sharded over DP x CP)
    std::uint64_t micro_batches = 0;    // engine.num_micro_batches as given (Megatron's name), 0 when absent
};

struct Hardware {
    std::string gpu = "H100-80GB";
    std::uint64_t num_gpus = 1;
    std::uint64_t gpu_memory_bytes = 0;  // what the driver reports for one card (nvidia-smi's total)
    std::uint64_t cuda_total_bytes = 0;  // what CUDA's cudaMemGetInfo reports as the total: what the
                                         // engines' fractions of the card multiply (<= gpu_memory_bytes)
    std::uint64_t gpus_per_node = 8;     // FSDP's hybrid_shard shards within a node
};

struct ModelCache;

// One measured run behind the error band (core/src/band/): its class, and measured / estimated for the
// figure its source measured. The bundled ones come from presets/error_bands.json (the validation set);
// a calibration's from gpumem calibrate (the user's own records, each estimated by a fit on the others).
struct BandRun {
    std::string id;
    std::string mode, stack, method, gpus;  // the class: mode, framework or engine, method, "single" | "multi"
    double ratio = 1;                       // measured / estimated
    std::string key;  // the resolved scenario's key (band.h scenario_key): never vouches for itself
};
// A calibration's runs as the scenario carries them ("calibration": {"name", "hash", "residuals"}).
struct CalibrationRuns {
    std::string name, hash;
    std::vector<BandRun> runs;
};

// Reads runs in the shape error_bands.json and a calibration's "residuals" share:
// [{"id", "mode", "stack", "method", "gpus", "ratio", "key"}]; issues name `prefix`[i].field.
std::vector<BandRun> read_band_runs(const json& list, const std::string& prefix, std::vector<Issue>& issues);
json band_runs_json(const std::vector<BandRun>& runs);

struct Scenario {
    ModelSpec model;
    ParamCount params;
    std::string model_source;  // "preset meta-llama/Llama-3.1-8B", "hf_config", "manual"
    json model_input;          // the scenario's "model" as given: to_json() returns it, so the
                               // resolved scenario runs again as it stands
    Mode mode = Mode::Training;
    TrainingSettings training;
    InferenceSettings inference;
    Parallelism parallel;
    EngineSettings engine;
    Hardware hardware;
    TunableValues overheads;      // the tunables (scenario/tunables.h), overridden by "overheads"
    std::vector<Format> formats;  // the catalogue's weight formats and the scenario's own
    std::vector<std::string> defaults_applied;
    std::vector<std::string> warnings;
    // "calibration" (apply_calibration puts it there): the user's residuals the error band is drawn
    // from instead of the bundled ones; null without one. Shared: copies of the scenario are cheap.
    std::shared_ptr<const CalibrationRuns> calibration;

    double tunable(Tunable t) const { return overheads[t]; }  // by name: find_tunable (scenario/tunables.h)
    // false: leave out what is only for people (assumptions, warnings), as the planner's fast path
    // does; every figure is computed the same way either way.
    bool details = true;
    bool explain = false;  // the document's "explain": true: the result carries why each figure is what it is
    // Memo of the model's tensor list and per-layout aggregates (memory/model_cache.h), shared by copies.
    mutable std::shared_ptr<ModelCache> cache;
    const Format* format(const std::string& id) const {
        for (const Format& f : formats)
            if (f.id == id) return &f;
        return nullptr;
    }
    // The catalogue's format of a settings row (nullptr for Auto).
    const Format* format(WeightFormat builtin) const {
        for (const Format& f : formats)
            if (f.builtin == builtin) return &f;
        return nullptr;
    }
    // The resolved inference weight format.
    const Format& weight_format() const { return formats[inference.weight_format]; }
    json to_json() const;  // the scenario with every default filled in
};

struct ScenarioRead {
    Scenario scenario;
    std::vector<Issue> issues;  // non-empty: the scenario is invalid
};

ScenarioRead read_scenario(const json& document);

}  // namespace gpumem::detail
