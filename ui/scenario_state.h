// The scenario the page edits, typed: the core's own enums (gpumem/settings.h) for every
// enumerated setting, std::optional where the page may leave a field out so that the core applies
// its default and says so. One place turns it into the scenario document (docs/scenario.md) and
// back, and reads the core's answer once per estimate into a ResultView the panels read.
//
//     nlohmann::json doc = BuildScenario(state);              // state.scenario -> JSON
//     ResultView view = ReadResult(gpumem::estimate(doc));    // the answer, typed
//     ReadScenario(state.scenario, raw, view.resolved_json);  // an import or a link -> state
#pragma once

#include <array>

#include <gpumem/gpumem.h>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpumem::ui {

using gpumem::detail::Attention;
using gpumem::detail::Checkpointing;
using gpumem::detail::Compile;
using gpumem::detail::Dtype;
using gpumem::detail::EngineType;
using gpumem::detail::Framework;
using gpumem::detail::FrameworkVersion;
using gpumem::detail::FsdpSharding;
using gpumem::detail::InferenceEngine;
using gpumem::detail::KvCacheDtype;
using gpumem::detail::LoraTarget;
using gpumem::detail::Loss;
using gpumem::detail::Method;
using gpumem::detail::Mode;
using gpumem::detail::Offload;
using gpumem::detail::Optimizer;
using gpumem::detail::Precision;
using gpumem::detail::Quantization;
using gpumem::detail::StateDtype;
using gpumem::detail::WeightFormat;

struct AppState;

//-----------------------------------------------------------------------------
// [SECTION] The scenario being edited
//-----------------------------------------------------------------------------

// Where the model comes from. Presets and pasted configs need no network; a Hub model is fetched
// by web/hub.js (hub.h).
enum class ModelSource
{
    Preset,
    Hub,
    Config,
    Manual
};

// A model entered by hand: gpu-mem-calculator's model fields ("7B" sizes allowed).
struct ManualModel
{
    char num_parameters[32] = "7B";
    int num_layers = 32;
    int hidden_size = 4096;
    int num_attention_heads = 32;
    int num_key_value_heads = 32;
    int intermediate_size = 11008;
    int vocab_size = 32000;
    bool tie_word_embeddings = false;
};

struct ModelChoice
{
    ModelSource source = ModelSource::Preset;
    int preset_index = 0;     // into AppState::presets
    nlohmann::json config;    // a pasted or dropped config.json
    std::string config_name;  // its file name or "pasted config.json"
    ManualModel manual;
};

// training.*. Empty optionals are left out of the scenario: the core's default applies.
struct TrainingSettings
{
    // The page opens on a run people make and that fits one card: a LoRA fine-tune (its checkpointing the core's
    // default for adapters, full, as axolotl's and torchtune's example configs run it).
    Method method = Method::Lora;
    int lora_rank = 16;
    float lora_alpha = 0.0f;             // 0: the core's default (2 x rank)
    std::optional<double> lora_dropout;  // in [0, 1)
    std::optional<std::vector<LoraTarget>> lora_targets;
    std::optional<Quantization> quantization;  // QLoRA's base
    std::optional<Dtype> dtype;
    std::optional<Precision> precision;
    std::optional<Optimizer> optimizer;
    std::optional<StateDtype> optimizer_state_dtype;
    std::optional<Checkpointing> checkpointing;  // activation_checkpointing
    std::optional<Attention> attention;
    std::optional<Loss> loss;
    int batch_size = 1;  // micro-batch per GPU
    int seq_len = 2048;  // tokens per sample
    int grad_accum = 1;  // gradient_accumulation_steps
    std::optional<Framework> framework;
    std::optional<FrameworkVersion> framework_version;  // a release that allocated otherwise (torchtune 0.1, ...)
    std::optional<Compile> compile;                     // torch.compile
    int trainable_layers = 0;                           // method frozen: the top N layers train
    bool train_lm_head = false;                         // method frozen: the head trains too
    int pipeline_microbatches = 0;                      // 0: the core's default
    // Switches whose default depends on the framework.
    std::optional<bool> optimizer_in_backward;
    std::optional<bool> activation_offloading;
    std::optional<bool> double_quant;  // QLoRA
    std::optional<bool> untie_embeddings;
    std::optional<bool> retains_previous_step;
};

// inference.*
struct InferenceSettings
{
    int concurrent_sequences = 1;               // inference.batch_size
    int context_len = 4096;                     // prompt + generated tokens per sequence
    std::optional<WeightFormat> weight_format;  // one of the catalogue's...
    std::string own_weight_format;              // ...or one the scenario adds under "formats" ("" if not)
    std::optional<KvCacheDtype> kv_cache_dtype;
    std::optional<InferenceEngine> engine;
    bool kv_cache = true;
    float gpu_memory_utilization = 0.0f;  // vLLM; 0: the core's default
    int gpu_layers = -1;                  // llama.cpp; -1: the core's default (all)
    int max_num_batched_tokens = 0;       // vLLM; 0: the core's default
};

// engine.* and parallelism.* (the engine is a training setting)
struct ParallelSettings
{
    std::optional<EngineType> engine;
    int zero_stage = 2;  // when the engine is DeepSpeed
    std::optional<FsdpSharding> fsdp_sharding;
    std::optional<Offload> offload_optimizer;
    std::optional<Offload> offload_param;
    int tensor_parallel = 1;
    int pipeline_parallel = 1;
    int expert_parallel = 1;
    int context_parallel = 1;
    bool sequence_parallel = false;
};

// hardware.*
struct HardwareSettings
{
    int gpu_index = 0;  // into AppState::gpus
    int num_gpus = 1;
    float custom_gpu_gb = 0.0f;  // > 0: a card of this many GiB instead
};

struct ScenarioState
{
    ModelChoice model;
    Mode mode = Mode::Training;
    TrainingSettings training;
    InferenceSettings inference;
    ParallelSettings parallel;
    HardwareSettings hardware;
    int images = 0;                                       // per sequence (multimodal models), both modes
    nlohmann::json overheads = nlohmann::json::object();  // factors the user changed
    // Fields of an imported scenario that no control owns, kept so an import round-trips exactly.
    nlohmann::json extra = nlohmann::json::object();

    bool IsInference() const { return mode == Mode::Inference; }
    bool IsLora() const { return training.method == Method::Lora || training.method == Method::Qlora; }
    bool IsDeepSpeed() const
    {
        return parallel.engine == EngineType::DeepSpeed || parallel.engine == EngineType::MegatronDeepSpeed;
    }
};

//-----------------------------------------------------------------------------
// [SECTION] The core's answer, read once per estimate
//-----------------------------------------------------------------------------

// The memory components, in stacking order, as the result names them (widgets.h: their labels
// and colours, in the same order).
inline constexpr const char* kComponentKeys[] = {"weights", "gradients", "optimizer_states", "activations",
                                                 "logits",  "kv_cache",  "temporaries",      "overheads"};
inline constexpr int kComponentCount = 8;
using ComponentBytes = std::array<std::uint64_t, kComponentCount>;

// One phase of the step, allocated memory at its high-water mark.
struct PhaseView
{
    std::string phase;  // "forward", "backward", ...
    std::uint64_t allocated_bytes = 0;
    ComponentBytes components{};
};

// A tunable factor (assumptions.overheads): its value, what it is, its unit.
struct FactorView
{
    std::string key;
    double value = 0.0;
    std::string about;
    std::string unit;
};

struct ResultView
{
    bool ok = false;
    std::vector<std::string> errors;  // messages, when not ok

    // per_gpu
    std::uint64_t peak_allocated_bytes = 0;
    std::uint64_t peak_reserved_bytes = 0;
    std::uint64_t device_total_bytes = 0;
    std::uint64_t capacity_bytes = 0;  // the memory fits and utilization were judged against (a custom size when set)
    std::string peak_phase;
    ComponentBytes components{};
    std::vector<PhaseView> timeline;

    // per_gpu.band: the interval that held 80 % of the measured runs like this one (device total), and the
    // three-state verdict it gives ("fits": its top fits; "borderline": only the point fits; "does_not_fit").
    std::uint64_t band_low_bytes = 0;
    std::uint64_t band_high_bytes = 0;
    std::uint64_t band_runs = 0;
    std::uint64_t band_class_runs = 0;
    std::string band_level;   // "class", "mode_method", "mode", "all", "none"
    std::string band_origin;  // "validation", "calibration"
    std::string band_note;
    double band_oom_share = 0.0;
    std::string verdict;

    double utilization = 0.0;
    bool fits = false;
    std::optional<std::uint64_t> gpus_needed;
    std::uint64_t host_bytes = 0;

    // parameters
    bool has_parameters = false;
    std::uint64_t params_total = 0;
    std::uint64_t params_trainable = 0;
    std::uint64_t params_vision = 0;   // 0: no vision tower
    std::uint64_t params_experts = 0;  // 0: not a mixture of experts

    // vLLM's KV-cache figures (serving), when it has them
    bool has_serving = false;
    std::uint64_t kv_cache_tokens = 0;
    std::uint64_t kv_cache_blocks = 0;
    std::uint64_t max_concurrent_sequences = 0;
    std::uint64_t at_context_len = 0;
    std::uint64_t requested_sequences = 0;  // inference.batch_size
    std::uint64_t kv_cache_bytes = 0;       // the pool, per GPU
    bool fills_budget = false;              // the engine claims its share whatever it serves: judge by sequences
    std::string layout_text;                // the result's layout.text: replicas and how each is split, in words

    std::vector<std::string> warnings;
    std::vector<std::string> defaults_applied;
    std::vector<std::pair<std::string, std::string>> factors;  // assumptions: key, value as JSON text
    std::vector<FactorView> overhead_factors;                  // assumptions.overheads
    nlohmann::json explain;                                    // why each figure is what it is (result "explain")
    std::string model_name;

    // The scenario with every default filled in, as the core resolved it, and typed.
    nlohmann::json resolved_json;
    ScenarioState resolved;
    std::string resolved_gpu;            // hardware.gpu ("" when none)
    std::string resolved_weight_format;  // inference.weight_format, a catalogue's or the scenario's own
};

// How much of a text from outside (a name, a message that may quote a config or a link) the page
// shows, in characters: gpumem::display_text's bound.
inline constexpr std::size_t kNameChars = 120;
inline constexpr std::size_t kMessageChars = 600;

// Reads gpumem::estimate()'s answer (ok or not). Its messages and the model's name are kept as
// display_text gives them: one line, controls escaped, bounded.
ResultView ReadResult(const nlohmann::json& result);

// The messages of a refused answer ({"ok": false, "errors": [...]}), joined with "; ".
std::string ErrorText(const nlohmann::json& result);

//-----------------------------------------------------------------------------
// [SECTION] State <-> scenario document
//-----------------------------------------------------------------------------

// The model part of the scenario the state describes (null when there is none yet).
nlohmann::json ModelJson(const AppState& state);

// The scenario document (docs/scenario.md) the state describes.
nlohmann::json BuildScenario(const AppState& state);

// Reads a scenario into the settings (not the model): `raw` is the document as given, `resolved`
// the core's reading of it with every default filled in. A field the raw document leaves out
// stays empty, so it keeps following its default.
void ReadScenario(ScenarioState& s, const nlohmann::json& raw, const nlohmann::json& resolved);

}  // namespace gpumem::ui
