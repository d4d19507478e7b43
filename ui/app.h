// The page's application layer: one AppState holding everything the UI shows and edits, the
// estimate of its scenario, and the top-level window that lays the panels out.
//
// Pure Dear ImGui over the core's JSON API: no platform code (that is main.cpp) and no memory
// arithmetic (that is the core; the UI only formats and places the numbers it gets back).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "decisions.h"
#include "hub.h"
#include "planner.h"
#include "scenario_state.h"

struct ImFont;

namespace gpumem::ui {

// One bundled model, from gpumem::list_presets().
struct PresetEntry
{
    std::string id;          // Hub id, e.g. "meta-llama/Llama-3.1-8B"
    std::string model_type;  // "llama", "qwen2", ...
    std::uint64_t total_params = 0;
    bool gated = false;
};

// One card, from gpumem::list_gpus(), or the user's own from an imported gpu_types.json (or a
// scenario naming a card the catalogue lacks): the core takes any name with gpu_memory_gb.
struct GpuEntry
{
    std::string id;                  // "H100-80GB"; an imported card's name
    std::string name;                // "NVIDIA H100 80GB HBM3"
    std::uint64_t memory_bytes = 0;  // what the card has, per GPU
    bool imported = false;           // the user's: the scenario names it with its gpu_memory_gb
    double memory_gb = 0.0;          // an imported card's gpu_memory_gb (GiB-sized units, as the core reads it)
};

// A result kept for comparison with the current one.
struct PinnedResult
{
    std::string label;  // model and the settings that differ, for the header
    std::string scenario_text;
    ResultView view;
};

// Calls into the page (web/page.js), set by main.cpp; null in builds without a page. The token
// travels only as hub_fetch's second argument and set_token's first.
struct PageHooks
{
    void (*hub_fetch)(const std::string& request_json, const std::string& token) = nullptr;
    void (*set_token)(const std::string& token, bool remember) = nullptr;
    void (*trust_hub)(const std::string& base) = nullptr;         // the user's yes to the token going there
    void (*save_state)(const std::string& share_json) = nullptr;  // the URL and saved settings
    void (*copy_text)(const std::string& text) = nullptr;
    void (*download)(const std::string& file_name, const std::string& text) = nullptr;
    void (*open_file)() = nullptr;  // a file picker; see LoadText()
    // Keeps a loaded calibration file in the browser, by its hash, so a link naming it opens with it.
    void (*remember_calibration)(const std::string& hash, const std::string& text) = nullptr;
    // Deletes the browser's copy of that calibration file (Remove): a later link naming it is not applied.
    void (*forget_calibration)(const std::string& hash) = nullptr;
    void (*set_summary)(const std::string& text) = nullptr;  // the result for screen readers
};

// The values a link set that change the verdict or the figures without being the run's own
// settings: a card size, overhead factors, weight formats of its own, a card the catalogue lacks,
// a calibration applied because the link named it. Shown beside the headline while they are in
// effect, with a button that clears exactly these (share.h: LinkValuesInEffect, ClearLinkValues).
struct LinkValues
{
    float custom_gpu_gb = 0.0f;                           // hardware.gpu_memory_gb (0: not set by the link)
    nlohmann::json overheads = nlohmann::json::object();  // overhead factors, key -> value
    std::vector<std::string> formats;                     // ids of the link's own weight formats
    std::string imported_gpu;                             // a card the link named with its size
    double imported_gpu_gb = 0.0;
    std::string calibration_hash;  // this browser's copy, applied because the link named its hash
};

// One estimate reduced to what a table cell shows.
struct FitView
{
    bool ok = false;
    std::uint64_t device_total_bytes = 0;
    bool fits = false;
    double utilization = 0.0;
    std::string why;  // the first error, when not ok
};

// A row of "Which GPUs fit": one card, the current model alone on it for each task.
struct GpuFitRow
{
    std::string name;
    std::uint64_t memory_bytes = 0;
    FitView serving, full, lora;
};

// A row of "Parallel layouts": a tensor x pipeline x expert split of the GPUs.
struct LayoutRow
{
    int tp = 1, pp = 1, ep = 1, dp = 1;
    FitView fit;
};

struct AppState
{
    // Catalogues, read once at start.
    std::vector<PresetEntry> presets;
    std::vector<GpuEntry> gpus;
    std::string version;  // gpumem::version()
    PageHooks page;

    // The scenario being edited (scenario_state.h) and the Hub it may take its model from (hub.h).
    ScenarioState scenario;
    HubState hub;
    char preset_filter[64] = "";
    std::string import_message;  // why the last import or drop was refused ("" if none)
    std::string import_note;     // import_message when it says what an import added (not shown as an error)
    std::string link_message;    // why the link's settings were ignored ("" if none)
    LinkValues link_values;      // what the link set that changes the verdict (cleared by "Back to defaults")
    int default_gpu_index = 0;   // the card a page opens with (the core's default)
    std::vector<char> paste_buffer = std::vector<char>(1 << 16, '\0');  // the paste box
    // The last tools' configs read (share.h, LoadFiles): the core's "check" object ({"format",
    // "formats", "files", "read", "ignored", "warnings", "assumptions"}) and the model they named;
    // null when none. And the files of a group refused only because a file they name was not given,
    // read again with the next files opened or dropped (at most kMaxHeldConfigFiles).
    nlohmann::json config_check;
    std::string config_model;
    nlohmann::json held_config_files = nlohmann::json::array();
    // Files opened or dropped while the tools' module (the config readers: tools.h) was still being
    // fetched: read when it arrives (null when none wait).
    nlohmann::json files_waiting_for_tools;

    // The estimate of the scenario above (with the loaded calibration's overheads, decisions.h). It
    // is recomputed only when the scenario or the calibration changes.
    std::string estimate_key;      // the scenario as built, and the calibration's hash
    std::string scenario_text;     // what was last sent to the core ("" asks for a new estimate)
    nlohmann::json scenario_json;  // the same, as JSON
    ResultView view;               // what came back (ok or errors), read once
    ResultView last_good;          // the last answer that was ok: its resolved defaults
    int estimate_count = 0;        // how many times the core ran (shown in the footer)
    std::string share_text;        // what was last handed to page.save_state
    bool link_applied = false;     // OpenFromPage has run: until then the URL is the link's

    std::vector<PinnedResult> pinned;  // results kept for side-by-side comparison

    // The GPU and layout tables: recomputed when the scenario changes and the table is open.
    std::string gpu_table_for;  // scenario_text they were computed for
    std::vector<GpuFitRow> gpu_table;
    std::string layout_table_for;
    std::vector<LayoutRow> layout_table;

    PlannerState planner;     // planner.h
    DecisionState decisions;  // decisions.h: fit, export, sweeps, calibration

    // Set by main.cpp: the regular font is the default one; this one is for headline figures.
    ImFont* font_large = nullptr;

    // For main.cpp and the browser tests: what the headline says.
    std::string displayed_peak;  // the peak figure exactly as drawn, e.g. "17.51 GiB"
    std::uint64_t displayed_peak_bytes = 0;
    // The lines of "Why these figures" drawn in the last frame, by open component (and "phases").
    nlohmann::json explain_shown = nlohmann::json::object();
    bool explain_wanted = false;  // that panel is open: estimates carry "explain" (the core records it only then)

    // "More" (app.cpp): the controls after the model, the mode and the GPUs, closed at first. The
    // scenario's fields there (MoreFields) at the page's defaults in each mode, and as last seen: when
    // they change while it is closed (a link, an import, Apply, Load) and differ from the defaults, it
    // opens; while closed, its title says they differ.
    bool more_open = false;
    bool more_open_request = false;
    bool more_changed = false;  // they differ from the defaults
    std::string more_seen;
    std::string more_default_training;
    std::string more_default_inference;
};

// Reads the catalogues, picks meta-llama/Llama-3.1-8B (or the first preset) and the core's
// default card, applies `open` (what the page's link or saved settings ask for: OpenFromPage;
// nullptr without a page) and runs the first estimate.
void AppInit(AppState& state, const nlohmann::json* open);

// Re-estimates when the scenario changed since the last call; returns true when it did.
bool UpdateEstimate(AppState& state);

// The scenario's fields under "More" (all but the model, the mode and the GPU and its count; a custom
// card size is under it), as JSON text.
std::string MoreFields(const AppState& state);

// The card the estimate is for (nullptr when the catalogue is empty).
const GpuEntry* CurrentGpu(const AppState& state);

// A scenario's "hardware" naming `gpu`: {"gpu": id}, with "gpu_memory_gb" for an imported card.
nlohmann::json GpuHardware(const GpuEntry& gpu);

// The whole page: one window filling the display, controls beside (or above) the results.
void ShowApp(AppState& state);

}  // namespace gpumem::ui
