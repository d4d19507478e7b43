// The page's panels, one function each, all over the one AppState (app.h).
// Controls edit the state; results only read AppState::result, the core's answer.
#pragma once

#include "app.h"

namespace gpumem::ui {

// Above both columns
void ShowLinkNotices(AppState& state);       // where models come from, and a link that was ignored

// Controls (left column)
void ShowModelPanel(AppState& state);        // preset / Hub / config.json / by hand, mode
void ShowTrainingPanel(AppState& state);     // method, precision, optimizer, batch, sequence
void ShowInferencePanel(AppState& state);    // weights, KV cache, engine, sequences, context
void ShowParallelismPanel(AppState& state);  // engine / ZeRO / FSDP, tensor and pipeline parallel
void ShowHardwarePanel(AppState& state);     // GPU model and count
void ShowImagesRow(AppState& state);         // images per sequence (multimodal models only)
void ShowAdvancedPanel(AppState& state);     // every tunable factor, with its default (tables.cpp)

// Results (right column)
void ShowSummaryPanel(AppState& state);      // the three figures, fits, GPUs needed
void ShowBreakdownPanel(AppState& state);    // stacked bars per GPU against the card, legend
void ShowAssumptionsPanel(AppState& state);  // warnings and the defaults the core applied
void ShowTimelinePanel(AppState& state);     // allocated memory per phase of the step (tables.cpp)
void ShowGpuTablePanel(AppState& state);     // which cards fit serving / training / LoRA (tables.cpp)
void ShowLayoutTablePanel(AppState& state);  // TP x PP x EP splits of the GPUs (tables.cpp)
void ShowPlannerPanel(AppState& state);     // max fit, and the layouts of a cluster that fit (planner.cpp)
void ShowComparePanel(AppState& state);      // pinned results beside the current one (tables.cpp)
void ShowSharePanel(AppState& state);        // copy as Markdown, export, import, paste (tables.cpp)
void ShowScenarioPanel(AppState& state);     // the scenario JSON, for the CLI and for sharing
void ShowErrorsPanel(AppState& state);       // what is wrong with the scenario, by field

}  // namespace gpumem::ui
