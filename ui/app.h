// The page's application layer: one AppState holding everything the UI shows and edits, the
// scenario it builds from that state, and the top-level window that lays the panels out.
//
// Pure Dear ImGui over the core's JSON API: no platform code (that is main.cpp) and no memory
// arithmetic (that is the core; the UI only formats and places the numbers it gets back).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

struct ImFont;

namespace gpumem::ui {

// One bundled model, from gpumem::list_presets().
struct PresetEntry
{
    std::string     id;                 // Hub id, e.g. "meta-llama/Llama-3.1-8B"
    std::string     model_type;         // "llama", "qwen2", ...
    std::uint64_t   total_params = 0;
    bool            gated = false;
};

// One card, from gpumem::list_gpus().
struct GpuEntry
{
    std::string     id;                 // "H100-80GB"
    std::string     name;               // "NVIDIA H100 80GB HBM3"
    std::uint64_t   memory_bytes = 0;   // what the card has, per GPU
};

// Where the model comes from. Presets and pasted configs need no network; a Hub model is fetched
// by web/hub.js and arrives through ReceiveHubResponse().
enum class ModelSource { Preset, Hub, Config, Manual };

// The Hugging Face Hub side of the model panel.
struct HubState
{
    enum class Status { Idle, Loading, Ready, Failed };

    char            input[256] = "";            // what the user typed: an id or a Hub URL
    char            revision[64] = "main";      // branch, tag or commit
    char            base[256] = "https://huggingface.co";   // the Hub's address (hub= in links)
    bool            base_from_link = false;     // base came from this visit's link, not the user
    // The access token for gated models. It stays in this buffer (and in localStorage only when
    // remember_token is set); it is never part of the scenario, the share link, the exported JSON
    // or the saved settings. page.js hands it to hub.js with each fetch, which attaches it only
    // for https://huggingface.co and the https origins the user confirmed (ShowLinkNotices).
    char            token[256] = "";
    bool            remember_token = false;
    bool            token_withheld = false;     // the last fetch from base had a token, not sent there

    Status          status = Status::Idle;
    int             serial = 0;                 // of the request in flight: stale answers are dropped
    std::string     id;                         // the model loaded (or being loaded)
    std::string     loaded_revision;
    nlohmann::json  config;                     // its config.json, as fetched
    std::uint64_t   api_total = 0;              // the Hub's safetensors parameter count (0: unknown)
    std::string     error_kind;                 // "unauthorized", "not_found", "timeout", ...
    std::string     message;                    // what the page shows for the last failure
    bool            retryable = false;
    std::string     bundled_twin;               // a bundled preset with this id's architecture, if any
    nlohmann::json  pending_scenario;           // a share link's scenario, applied once the model arrives
};

// A model entered by hand: gpu-mem-calculator's model fields ("7B" sizes allowed).
struct ManualModel
{
    char            num_parameters[32] = "7B";
    int             num_layers = 32;
    int             hidden_size = 4096;
    int             num_attention_heads = 32;
    int             num_key_value_heads = 32;
    int             intermediate_size = 11008;
    int             vocab_size = 32000;
    bool            tie_word_embeddings = false;
};

// A result kept for comparison with the current one.
struct PinnedResult
{
    std::string     label;                      // model and the settings that differ, for the header
    std::string     scenario_text;
    nlohmann::json  result;
};

// Calls into the page (web/page.js), set by main.cpp; null in builds without a page. The token
// travels only as hub_fetch's second argument and set_token's first.
struct PageHooks
{
    void (*hub_fetch)(const std::string& request_json, const std::string& token) = nullptr;
    void (*set_token)(const std::string& token, bool remember) = nullptr;
    void (*trust_hub)(const std::string& base) = nullptr;         // the user's yes to the token going there
    void (*save_state)(const std::string& share_json) = nullptr;   // the URL and saved settings
    void (*copy_text)(const std::string& text) = nullptr;
    void (*download)(const std::string& file_name, const std::string& text) = nullptr;
    void (*open_file)() = nullptr;                                // a file picker; see LoadText()
    void (*set_summary)(const std::string& text) = nullptr;      // the result for screen readers
};

struct AppState
{
    // Catalogues, read once at start.
    std::vector<PresetEntry> presets;
    std::vector<GpuEntry>    gpus;
    std::string              version;           // gpumem::version()
    nlohmann::json           settings;          // gpumem::settings(): each enumerated field's values, for the combos
    PageHooks                page;

    // The scenario being edited. Strings hold scenario values verbatim; "" means "leave the
    // field out", so the core applies its default and says so in defaults_applied.
    ModelSource     source = ModelSource::Preset;
    int             preset_index = 0;
    char            preset_filter[64] = "";
    HubState        hub;
    nlohmann::json  config;                     // a pasted or dropped config.json
    std::string     config_name;                // its file name or "pasted config.json"
    ManualModel     manual;
    bool            inference = false;      // mode: training (false) or inference (true)

    // training.*
    std::string     method = "full";        // full | lora | qlora
    int             lora_rank = 16;
    float           lora_alpha = 0.0f;      // 0: the core's default (2 x rank)
    std::string     lora_dropout;           // "" (the core's default) | "0" | "0.05" | "0.1" | any in [0, 1)
    std::string     lora_targets;           // "" (default) | "all_linear" | comma-separated modules
    std::string     quantization;           // "" | nf4 | fp4 | int8 (QLoRA's base)
    std::string     dtype;                  // "" | fp32 | fp16 | bf16 | fp8
    std::string     precision;              // "" | amp_fp32_weights | pure | mixed_master_fp32
    std::string     optimizer;              // "" | adamw | adamw_8bit | sgd | ...
    std::string     optimizer_state_dtype;  // "" | fp32 | bf16
    std::string     checkpointing;          // "" | none | selective | full
    std::string     attention;              // "" | eager | sdpa | flash
    std::string     loss;                   // "" | standard | chunked | fused
    int             batch_size = 1;         // micro-batch per GPU
    int             seq_len = 2048;         // tokens per sample
    int             grad_accum = 1;         // gradient_accumulation_steps
    std::string     framework;              // "" | transformers | litgpt | torchtune | torchtitan
    int             trainable_layers = 0;   // method "frozen": the top N layers train
    bool            train_lm_head = false;  // method "frozen": the head trains too
    int             pipeline_microbatches = 0;  // 0: the core's default
    // Switches whose default depends on the framework: "" (default) | "true" | "false".
    std::string     optimizer_in_backward;
    std::string     activation_offloading;
    std::string     compile;                // "" | none | layers | layers_and_loss (torch.compile)
    std::string     double_quant;           // QLoRA
    std::string     untie_embeddings;
    std::string     retains_previous_step;

    // inference.*
    int             concurrent_sequences = 1;
    int             context_len = 4096;     // prompt + generated tokens per sequence
    std::string     weight_format;          // "" (auto) | bf16 | fp8 | int8 | int4 | nf4 | ...
    std::string     kv_cache_dtype;         // "" (auto) | bf16 | fp8 | int8
    std::string     serving_engine;         // "" | transformers | vllm | llama.cpp
    bool            kv_cache = true;
    float           gpu_memory_utilization = 0.0f;  // vLLM; 0: the core's default
    int             gpu_layers = -1;        // llama.cpp; -1: the core's default (all)
    int             max_num_batched_tokens = 0;  // vLLM's profiling step; 0: the core's default
    int             images = 0;             // images per sequence (multimodal models), both modes

    // engine.* and parallelism.*
    std::string     engine;                 // "" | none | ddp | deepspeed | fsdp | megatron | megatron_deepspeed
    int             zero_stage = 2;         // when engine is deepspeed
    std::string     fsdp_sharding;          // "" | full_shard | shard_grad_op | hybrid_shard | no_shard
    std::string     offload_optimizer;      // "" | none | cpu | nvme
    std::string     offload_param;          // "" | none | cpu | nvme
    int             tensor_parallel = 1;
    int             pipeline_parallel = 1;
    int             expert_parallel = 1;
    int             context_parallel = 1;
    bool            sequence_parallel = false;

    // hardware.*
    int             gpu_index = 0;
    int             num_gpus = 1;
    float           custom_gpu_gb = 0.0f;   // > 0: a card of this many GB instead of the catalogue's

    // overheads.*: the tunable factors the user changed (name -> number); the rest are defaults.
    nlohmann::json  overheads = nlohmann::json::object();

    // Fields of an imported scenario that no control owns, kept so an import round-trips exactly.
    nlohmann::json  extra = nlohmann::json::object();
    std::string     import_message;         // why the last import or drop was refused ("" if none)
    std::string     link_message;           // why the link's settings were ignored ("" if none)
    std::vector<char> paste_buffer = std::vector<char>(1 << 16, '\0');  // the paste box

    // The estimate of the scenario above. It is recomputed only when the scenario text changes.
    std::string     scenario_text;          // what was last sent to the core
    nlohmann::json  result;                 // what came back (ok or errors)
    nlohmann::json  filled;                 // the last good result's scenario, defaults filled in
    int             estimate_count = 0;     // how many times the core ran (shown in the footer)
    std::string     share_text;             // what was last handed to page.save_state
    bool            link_applied = false;   // OpenFromPage has run: until then the URL is the link's

    std::vector<PinnedResult> pinned;       // results kept for side-by-side comparison

    // The GPU and layout tables: recomputed when the scenario changes and the table is open.
    std::string     gpu_table_for;          // scenario_text they were computed for
    nlohmann::json  gpu_table;              // [{id, name, memory_bytes, inference, training, lora}]
    std::string     layout_table_for;
    nlohmann::json  layout_table;           // [{tp, pp, ep, device_total_bytes, fits, ...}]

    // The planner panel (planner.cpp): a cluster to plan for, and the last answers.
    int             plan_gpus = 8;
    int             plan_gpu_index = -1;    // into gpus; -1: the calculator's card
    int             plan_gpus_per_node = 8;
    float           plan_host_ram_gb = 0.0f;  // per node; 0: offload not limited
    int             plan_global_batch = 0;  // training, sequences per step; 0: the core's default
    int             plan_top = 10;          // rows
    std::string     plan_for;               // the plan request the answer is for
    nlohmann::json  plan;                   // gpumem::plan's answer
    double          plan_ms = 0.0;          // how long that call took in this page
    int             plan_count = 0;         // plans computed (for tests)
    std::string     plan_message;           // "Plan 3 is in the calculator."
    std::string     plan_message_for;       // the scenario the loaded row gave
    std::string     maxfit_for;
    nlohmann::json  maxfit;                 // gpumem::maxfit's answer for scenario_text

    // Set by main.cpp: the regular font is the default one; this one is for headline figures.
    ImFont*         font_large = nullptr;

    // For main.cpp and the browser tests: what the headline says.
    std::string     displayed_peak;         // the peak figure exactly as drawn, e.g. "17.51 GiB"
    std::uint64_t   displayed_peak_bytes = 0;
};

// Reads the catalogues, picks meta-llama/Llama-3.1-8B (or the first preset) and the core's
// default card, and runs the first estimate.
void AppInit(AppState& state);

// The scenario document (docs/scenario.md) that the current state describes.
nlohmann::json BuildScenario(const AppState& state);

// Re-estimates when the scenario changed since the last call; returns true when it did.
bool UpdateEstimate(AppState& state);

// What a link or saved settings asked for (page.js reads the URL and localStorage):
// {"hub": base, "model": id, "revision": rev, "scenario_text": "{...}", "link_problem": why,
//  "token": t, "remember_token": b}. A model that is a bundled preset loads at once; any other id
// is fetched from the Hub. "hub" comes only from a link and holds for this visit; settings that
// cannot be read (link_problem, or scenario_text the core refuses) leave the defaults and say so
// in state.link_message.
void OpenFromPage(AppState& state, const nlohmann::json& request);

// Loads a scenario document (v1 or gpu-mem-calculator's config format) into the controls. Fields no control owns
// are kept as they are. Returns false, with state.import_message saying why, when it is not a
// scenario the core accepts.
bool ImportScenario(AppState& state, const nlohmann::json& doc);

// Text from a file drop, the file picker or the paste box: a scenario or a model's config.json.
bool LoadText(AppState& state, const std::string& text, const std::string& name);

// Starts fetching state.hub.input from the Hub (page.hub_fetch); the answer comes back through
// ReceiveHubResponse: {"serial", "ok", "id", "revision", "config", "api", "origin",
// "token_withheld"} or {"serial", "ok": false, "kind", "message", "retryable", "origin",
// "token_withheld"}.
void RequestHubModel(AppState& state);
void ReceiveHubResponse(AppState& state, const nlohmann::json& response);

// The share state handed to the page for the URL and saved settings:
// {"model", "revision", "hub", "scenario"} (the scenario without its model for presets and Hub
// models, which the link names instead). Never holds the token.
nlohmann::json ShareState(const AppState& state);

// The result as a Markdown table (what "Copy as Markdown" puts on the clipboard).
std::string ResultMarkdown(const AppState& state);

// The result in a few sentences (the model and settings, the device total, fits, GPUs needed, the
// three largest components, the warnings), for screen readers: the page keeps it in an aria-live
// region, since the canvas itself says nothing to them.
std::string ResultSummary(const AppState& state);

// The whole page: one window filling the display, controls beside (or above) the results.
void ShowApp(AppState& state);

}  // namespace gpumem::ui
