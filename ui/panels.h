// The page's panels, one function each, all over the one AppState (app.h).
// Controls edit the state; results only read AppState::result, the core's answer.
#pragma once

#include "app.h"

namespace gpumem::ui {

// Controls (left column)
void ShowModelPanel(AppState& state);        // preset picker, mode
void ShowTrainingPanel(AppState& state);     // method, precision, optimizer, batch, sequence
void ShowInferencePanel(AppState& state);    // weights, KV cache, engine, sequences, context
void ShowParallelismPanel(AppState& state);  // engine / ZeRO / FSDP, tensor and pipeline parallel
void ShowHardwarePanel(AppState& state);     // GPU model and count

// Results (right column)
void ShowSummaryPanel(AppState& state);      // the three figures, fits, GPUs needed
void ShowBreakdownPanel(AppState& state);    // stacked bars per GPU against the card, legend
void ShowAssumptionsPanel(AppState& state);  // warnings and the defaults the core applied
void ShowScenarioPanel(AppState& state);     // the scenario JSON, for the CLI and for sharing
void ShowErrorsPanel(AppState& state);       // what is wrong with the scenario, by field

}  // namespace gpumem::ui
