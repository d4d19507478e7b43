// The parts of the core the page needs only when a user asks: the config readers and writers
// (gpumem::read_configs for the tools' configs a user drops or opens, gpumem::export_config for
// "Configs to run"; with yaml-cpp about a fifth of the core's code) and the panels that open closed
// (the planner: gpumem::maxfit and gpumem::plan; the sweeps: gpumem::sweep and sweep_svg). No first
// answer needs them, so the served page leaves them out of its own module and fetches a second one
// (gpumem_tools.wasm, issue #29) the first time one is asked for; the offline bundle links them in
// (tools_linked.cpp). A call therefore answers now, "not yet" (the fetch has started: the page
// calls ToolsArrived when it ends, and the caller asks again: a panel says "computing..."), or
// with why the module could not be had.
#pragma once

#include <optional>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

namespace gpumem::ui {

struct AppState;

enum class Tool
{
    ReadConfigs,   // gpumem::read_configs: {"files": [{"name", "text"}...]}
    ExportConfig,  // gpumem::export_config: {"format", "scenario"}
    MaxFit,        // gpumem::maxfit: the scenario
    Plan,          // gpumem::plan: the scenario and its "plan"
    Sweep,         // gpumem::sweep: {"scenario", "field"}
    SweepSvg,      // gpumem::sweep_svg: a sweep's result; the SVG text as a JSON string
};

struct ToolAnswer
{
    std::optional<nlohmann::json> result;  // the core's answer; none while the module is on its way, or failed
    std::string failure;                   // why the module could not be had ("" when none)
};

// tools_linked.cpp (the offline bundle) or tools_fetched.cpp (the served page).
ToolAnswer CallTool(Tool tool, const nlohmann::json& request);
// Whether a call would answer now (the module is here, or could not be had); when not, the fetch is
// started.
bool ToolsHere();

// The answer of a call made when the module is here or could not be had (ToolsHere(), decisions.h's
// ToolDecisionTurn): the core's result, or its error document saying why the module could not be had.
inline nlohmann::json AnswerOrFailure(ToolAnswer answer)
{
    if (answer.result)
        return std::move(*answer.result);
    const std::string problem = "could not be fetched (" + answer.failure + ")";
    return {{"ok", false},
            {"errors", {{{"field", ""}, {"problem", problem}, {"value", ""}, {"message", "the tools " + problem}}}}};
}

// The page's word that the fetched module arrived or could not be had: the files that waited for it
// are read now (share.h, LoadFiles), or told why they cannot be.
void ToolsArrived(AppState& state);

}  // namespace gpumem::ui
