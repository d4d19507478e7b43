// The page's panels, one function each, all over the one AppState (app.h), one file per group.
// Controls edit the typed scenario (AppState::scenario); results read AppState::view, the core's
// answer read once per estimate. Neither knows about tests (test_hooks.h finds their widgets).
#pragma once

#include "app.h"

namespace gpumem::ui {

// Above both columns (panel_model.cpp)
void ShowLinkNotices(AppState& state);  // where models come from, and a link that was ignored

// Controls (left column): panel_model.cpp, panel_training.cpp, panel_parallelism.cpp
void ShowModelPanel(AppState& state);        // preset / Hub / config.json / by hand, mode
void ShowTrainingPanel(AppState& state);     // method, precision, optimizer, batch, sequence
void ShowInferencePanel(AppState& state);    // weights, KV cache, engine, sequences, context
void ShowParallelismPanel(AppState& state);  // engine / ZeRO / FSDP, tensor and pipeline parallel
void ShowHardwarePanel(AppState& state);     // GPU model and count
void ShowGpuMemoryPanel(AppState& state);    // a custom card size (under "More")
void ShowImagesRow(AppState& state);         // images per sequence (multimodal models only)
void ShowAdvancedPanel(AppState& state);     // every tunable factor, with its default

// Results (right column): panel_results.cpp, panel_tables.cpp, panel_planner.cpp, panel_share.cpp,
// panel_decisions.cpp
void ShowSummaryPanel(AppState& state);      // the three figures, fits, GPUs needed
void ShowBreakdownPanel(AppState& state);    // stacked bars per GPU against the card, legend
void ShowAssumptionsPanel(AppState& state);  // warnings and the defaults the core applied
void ShowTimelinePanel(AppState& state);     // allocated memory per phase of the step
void ShowGpuTablePanel(AppState& state);     // which cards fit serving / training / LoRA
void ShowLayoutTablePanel(AppState& state);  // TP x PP x EP splits of the GPUs
void ShowFitPanel(AppState& state);          // what would make it fit, or what each change saves
void ShowSweepPanel(AppState& state);        // peak memory against the sequence and batch sizes
void ShowExportPanel(AppState& state);       // the config file or command line that runs it
void ShowCalibrationPanel(AppState& state);  // the calibration file in use, and loading one
void ShowPlannerPanel(AppState& state);      // max fit, and the layouts of a cluster that fit
void ShowComparePanel(AppState& state);      // pinned results beside the current one
void ShowSharePanel(AppState& state);        // copy as Markdown, export, import, paste
void ShowScenarioPanel(AppState& state);     // the scenario JSON, for the CLI and for sharing
void ShowErrorsPanel(AppState& state);       // what is wrong with the scenario, by field

}  // namespace gpumem::ui
