// The decision panels' state: what would make the scenario fit (gpumem::fit), the configs that run it
// (gpumem::export_config), peak memory against a size (gpumem::sweep) and a calibration file
// (gpumem::apply_calibration). Each answer is kept as JSON (for the test hooks) and read once into
// the views panel_decisions.cpp draws; each is asked for again only when the scenario changes.
//
//     UpdateFit(state);                       // gpumem::fit of state.scenario_json, cached
//     ApplySuggestion(state, 0);              // the first suggestion into the calculator...
//     UndoSuggestion(state);                  // ...and back
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scenario_state.h"

namespace gpumem::ui {

// What the KV pool of an engine that fills its budget holds (the result's "serving" with fills_budget): such an
// engine claims the same share of the card whatever it is asked, so its runs are told apart by this.
struct PoolView
{
    bool fills_budget = false;
    std::uint64_t sequences = 0;   // max_concurrent_sequences: of context_len tokens, that fit in the pool
    std::uint64_t requested = 0;   // requested_sequences: inference.batch_size
    std::uint64_t context = 0;     // at_context_len
    std::uint64_t tokens = 0;      // kv_cache_tokens
    std::uint64_t pool_bytes = 0;  // kv_cache_bytes, per GPU
};
PoolView ReadPool(const nlohmann::json& serving);
// "3 of 32 sequences of 8,192 tokens fit (KV pool 3.98 GiB per GPU)", the CLI's words
std::string PoolText(const PoolView& p);
std::string Grouped(std::uint64_t n);  // 8192 -> "8,192"

// One of gpumem::fit's suggestions.
struct SuggestionView
{
    PoolView pool;       // a budget-filling serving engine's pool (pool.fills_budget false otherwise)
    std::string change;  // "training method: LoRA"
    std::string cost;    // what the change costs the run
    std::string tier;    // same_math, slower, numerics, data, hardware, method
    std::string set;     // the fields it sets, "training.method = lora"
    bool fits = false;
    std::uint64_t device_total_bytes = 0;
    std::uint64_t band_high_bytes = 0;  // the top of the run's error band (0: none)
    std::uint64_t capacity_bytes = 0;   // of the suggestion's card (another card changes it)
    double saves_bytes = 0.0;
    std::uint64_t host_bytes = 0;
    double step_time_s = 0.0;   // the run's step (training) or decode step (inference)
    double tokens_per_s = 0.0;  // trained or generated
    double speed = 0.0;         // this run's tokens per second over the scenario's (above 1: faster)
    bool least_change = false;  // the least change that fits
    bool fastest = false;       // the fastest run that fits with changes up to its tier
    bool saving = false;        // (a scenario that fits) one change and what it saves
    nlohmann::json scenario;    // what Apply puts into the calculator
};

// A scenario the calculator had before Apply, and what Apply changed.
struct UndoEntry
{
    std::string change;
    ScenarioState scenario;
};

struct FitState
{
    std::string fit_for;  // the scenario_text the answer is for
    nlohmann::json fit;   // gpumem::fit's answer, less its scenarios and estimates (for tests)
    bool ok = false;
    std::string error;
    bool fits = false;
    std::uint64_t device_total_bytes = 0;
    std::uint64_t capacity_bytes = 0;
    double headroom_bytes = 0.0;
    PoolView pool;                            // the scenario's own KV pool, for a budget-filling engine
    double step_time_s = 0.0;                 // the scenario's own
    std::vector<SuggestionView> suggestions;  // the search's runs, then (when it fits) each change's saving
    int fit_count = 0;                        // how many times gpumem::fit ran (for tests)
    int fit_frame = 0;                        // the frame that ran the last (ScheduleState::frame; for tests)

    std::vector<UndoEntry> undo;  // the newest last; kMaxUndo at most
    std::string message;          // "Applied: ..." / "Undone: ..."
};

struct ExportState
{
    int training_format = 0;   // index into kExportFormats: the format shown for training...
    int inference_format = 6;  // ...and for serving (vllm)
    std::string export_for;    // scenario_text + format of the answer
    nlohmann::json result;     // gpumem::export_config's answer, less its scenario and estimate
    std::string text;          // result.text ("" on an error)
    std::string errors;        // the core's messages, when not ok
};

// One sweep: peak memory per GPU against one size.
struct SweepView
{
    bool ok = false;
    std::string field;  // "training.seq_len", ...
    std::string label;  // "Sequence length"
    std::string error;
    std::vector<double> xs, ys;  // the size, the peak in GiB
    double capacity_gib = 0.0;
    std::uint64_t max_fit = 0;  // 0: not even 1 fits
    double max_fit_gib = 0.0;   // the peak at max_fit (its own estimate)
    double current = 0.0;       // the scenario's own value, and its peak
    double current_gib = 0.0;
    nlohmann::json result;  // gpumem::sweep's answer (for the SVG and the tests)
};

struct SweepState
{
    std::string sweep_for;  // the scenario_text the sweeps are for
    SweepView size;         // training.seq_len / inference.context_len
    SweepView batch;        // training.batch_size / inference.batch_size
    int sweep_count = 0;
};

struct CalibrationState
{
    nlohmann::json file;  // the loaded calibration (null when none)
    std::string name, hash;
    std::string message;  // why the last file was refused ("" if none)
    // A link's calibration that the page does not have: load that file to see the link's numbers.
    std::string wanted_name, wanted_hash;
};

// When the decision panels compute (fit, the sweeps, the export, max-fit, the plan, the GPU and
// layout tables): never in the first frame, which shows the estimate alone; then at most one
// panel's computation per frame, none in a frame that re-estimated, and none while a drag or
// typing is under way, so a drag costs one estimate per frame and the panels catch up once it
// settles. A panel whose answer is not for the current scenario says "computing..." until its
// turn. Only the moment changes: each answer is the one an immediate call gives (the tests
// compare them).
struct ScheduleState
{
    int frame = 0;            // frames begun (BeginDecisionFrame)
    bool turn_taken = false;  // this frame's one computation has run, or the estimate ran
    int waiting = 0;          // panels that wanted a turn this frame and did not get one
};

struct DecisionState
{
    ScheduleState schedule;
    FitState fit;
    ExportState export_;
    SweepState sweep;
    CalibrationState calibration;
};

struct AppState;

inline constexpr int kMaxUndo = 16;

// The schedule above: BeginDecisionFrame() at the start of each frame, EstimateRan() when the frame
// re-estimated; DecisionTurn() is true when a panel whose answer is stale may compute now (false
// counts it as waiting); DecisionsReady() when no open panel waited in the last frame.
void BeginDecisionFrame(AppState& state);
void EstimateRan(AppState& state);
bool DecisionTurn(AppState& state);
// DecisionTurn() for a panel whose answer comes from the tools the page fetches when first needed
// (tools.h: export, the planner, the sweeps): while they are on their way the panel waits without
// taking the frame's turn from the panels that need no fetch.
bool ToolDecisionTurn(AppState& state);
bool DecisionsReady(const AppState& state);
// "computing..." in place of (never_computed) or above (stale) a decision panel's answer.
void ShowComputing(bool never_computed);

// Asks gpumem::fit again when the scenario changed, on the panel's turn (the schedule above). True
// when the answer is for the current scenario; false while it waits for its turn.
bool UpdateFit(AppState& state);
// Puts suggestion `index` into the calculator, keeping the scenario before it for UndoSuggestion.
void ApplySuggestion(AppState& state, int index);
// Puts back the scenario the last Apply replaced.
void UndoSuggestion(AppState& state);

// The format shown for the current mode (an index into kExportFormats), and setting it.
int ExportFormatIndex(const AppState& state);
void SetExportFormat(AppState& state, int index);
// Asks gpumem::export_config again when the scenario or the format changed, on its turn; true when
// the answer is current.
bool UpdateExport(AppState& state);

// Asks gpumem::sweep again, for both sizes, when the scenario changed, on its turn; true when the
// answer is current.
bool UpdateSweeps(AppState& state);

// Reads a calibration file (gpumem calibrate's output). False, with calibration.message saying why,
// when the core refuses it (not a calibration, or fitted by another gpumem version).
bool LoadCalibration(AppState& state, const nlohmann::json& file);
void ClearCalibration(AppState& state);
// The scenario with the loaded calibration's overheads (as it is when none is loaded).
nlohmann::json Calibrated(AppState& state, const nlohmann::json& scenario);
// A scenario from the core (a suggestion, a plan row) without the overheads the calibration put
// in: they stay the calibration's, not the scenario's own.
nlohmann::json WithoutCalibration(const AppState& state, nlohmann::json scenario);

// The decisions as the test hooks report them.
nlohmann::json DecisionsJson(const AppState& state);

}  // namespace gpumem::ui
