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

// A widget's rectangle in framebuffer pixels (main.cpp converts to CSS pixels for tests).
struct WidgetRect
{
    float x = 0.0f, y = 0.0f, w = 0.0f, h = 0.0f;
};

struct AppState
{
    // Catalogues, read once at start.
    std::vector<PresetEntry> presets;
    std::vector<GpuEntry>    gpus;
    std::string              version;           // gpumem::version()

    // The scenario being edited. Strings hold scenario values verbatim; "" means "leave the
    // field out", so the core applies its default and says so in defaults_applied.
    int             preset_index = 0;
    char            preset_filter[64] = "";
    bool            inference = false;      // mode: training (false) or inference (true)

    // training.*
    std::string     method = "full";        // full | lora | qlora
    int             lora_rank = 16;
    std::string     dtype;                  // "" | fp32 | fp16 | bf16 | fp8
    std::string     optimizer;              // "" | adamw | adamw_8bit | sgd | ...
    std::string     checkpointing;          // "" | none | selective | full
    std::string     attention;              // "" | eager | sdpa | flash
    std::string     loss;                   // "" | standard | chunked | fused
    int             batch_size = 1;         // micro-batch per GPU
    int             seq_len = 2048;         // tokens per sample

    // inference.*
    int             concurrent_sequences = 1;
    int             context_len = 4096;     // prompt + generated tokens per sequence
    std::string     weight_format;          // "" (auto) | bf16 | fp8 | int8 | int4 | nf4 | ...
    std::string     kv_cache_dtype;         // "" (auto) | bf16 | fp8 | int8
    std::string     serving_engine;         // "" | transformers | vllm | llama.cpp

    // engine.* and parallelism.*
    std::string     engine;                 // "" | none | ddp | deepspeed | fsdp
    int             zero_stage = 2;         // when engine is deepspeed
    std::string     fsdp_sharding;          // "" | full_shard | shard_grad_op | hybrid_shard | no_shard
    std::string     offload_optimizer;      // "" | none | cpu | nvme
    int             tensor_parallel = 1;
    int             pipeline_parallel = 1;

    // hardware.*
    int             gpu_index = 0;
    int             num_gpus = 1;

    // The estimate of the scenario above. It is recomputed only when the scenario text changes.
    std::string     scenario_text;          // what was last sent to the core
    nlohmann::json  result;                 // what came back (ok or errors)
    nlohmann::json  filled;                 // the last good result's scenario, defaults filled in
    int             estimate_count = 0;     // how many times the core ran (shown in the footer)

    // Set by main.cpp: the regular font is the default one; this one is for headline figures.
    ImFont*         font_large = nullptr;

    // For main.cpp and the browser tests: where named widgets are and what the headline says.
    std::map<std::string, WidgetRect> widget_rects;
    std::string     displayed_peak;         // the peak figure exactly as drawn, e.g. "17.51 GiB"
    std::uint64_t   displayed_peak_bytes = 0;
};

// Reads the catalogues, picks meta-llama/Llama-3.1-8B (or the first preset) and the core's
// default card, and runs the first estimate.
void AppInit(AppState& state);

// The scenario document (docs/SCENARIO.md) that the current state describes.
nlohmann::json BuildScenario(const AppState& state);

// Re-estimates when the scenario changed since the last call; returns true when it did.
bool UpdateEstimate(AppState& state);

// Remembers the last item's rectangle under `name` (for tests that drive the page).
void RecordItemRect(AppState& state, const char* name);

// The whole page: one window filling the display, controls beside (or above) the results.
void ShowApp(AppState& state);

}  // namespace gpumem::ui
