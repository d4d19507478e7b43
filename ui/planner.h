// The planner: the panel's state (a cluster to plan for, and the core's last answers (gpumem::maxfit for
// the current scenario, gpumem::plan for the cluster), kept as JSON for the test hooks and read once
// into the views the panel draws), and the requests. planner.cpp builds the requests and reads
// the answers; panel_planner.cpp draws them.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpumem::ui {

// One max-fit solver: the largest value of `field` that fits, and what stopped it.
struct MaxFitSolver
{
    std::string field;  // "training.batch_size", ...
    std::uint64_t value = 0;
    std::string limited_by;  // "memory", "field_maximum", "does_not_fit"
    std::uint64_t device_total_bytes = 0;
    std::uint64_t next_device_total_bytes = 0;
    std::string note;  // "" when none
};

struct MaxFitView
{
    bool ok = false;
    std::string error;
    std::vector<MaxFitSolver> solvers;
};

// One row of a plan: a layout, its step time and memory, and the scenario that runs it.
struct PlanRow
{
    int rank = 0;
    std::vector<std::string> cells;  // the layout's columns, as text (see ShowPlanTable)
    double step_time_s = 0.0;
    double tokens_per_s = 0.0;
    double mfu = 0.0;
    std::vector<std::pair<double, std::string>> step_parts;  // seconds, name; largest first
    std::uint64_t host_bytes_per_node = 0;
    std::uint64_t device_total_bytes = 0;
    nlohmann::json scenario;  // what Load puts into the calculator
};

struct PlanView
{
    bool ok = false;
    std::string error;
    std::uint64_t candidates = 0;
    std::uint64_t fitting = 0;
    std::uint64_t gpu_memory_bytes = 0;  // the cluster's card
    std::vector<std::string> warnings;
    std::vector<PlanRow> rows;
};

struct PlannerState
{
    int gpus = 8;
    int gpu_index = -1;  // into AppState::gpus; -1: the calculator's card
    int gpus_per_node = 8;
    float host_ram_gb = 0.0f;  // per node; 0: offload not limited
    int global_batch = 0;      // training, sequences per step; 0: the core's default
    int top = 10;              // rows

    std::string plan_for;  // the plan request the answer is for
    nlohmann::json plan;   // gpumem::plan's answer
    PlanView plan_view;
    double plan_ms = 0.0;     // how long that call took in this page
    int plan_count = 0;       // plans computed (for tests)
    std::string message;      // "Plan 3 is in the calculator."
    std::string message_for;  // the scenario the loaded row gave
    std::string maxfit_for;
    nlohmann::json maxfit;  // gpumem::maxfit's answer for scenario_text
    MaxFitView maxfit_view;
};

struct AppState;

// Asks gpumem::maxfit again when the scenario changed, on the panel's turn (decisions.h: after the
// first frame, one panel a frame, not during a drag or typing). True when the answer is current.
bool UpdateMaxFit(AppState& state);

// Asks gpumem::plan again when the scenario or the cluster changed, on its turn; true when current.
bool UpdatePlan(AppState& state);

// Puts a plan row's scenario into the calculator (the model stays the calculator's own) and says
// so in planner.message.
void LoadPlanRow(AppState& state, const PlanRow& row);

}  // namespace gpumem::ui
