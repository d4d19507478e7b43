// The core's config readers and writers, as the page calls them: gpumem::read_configs (the tools'
// configs a user drops or opens) and gpumem::export_config ("Configs to run"). Together with
// yaml-cpp they are about a fifth of the core's code and no first answer needs them, so the served
// page leaves them out of its own module and fetches a second one (gpumem_tools.wasm, issue #29)
// the first time either is asked for; the offline bundle links them in (tools_linked.cpp). A call
// therefore answers now, "not yet" (the fetch has started: the page calls ToolsArrived when it
// ends, and the caller asks again), or with why the module could not be had.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace gpumem::ui {

struct AppState;

enum class Tool
{
    ReadConfigs,   // gpumem::read_configs: {"files": [{"name", "text"}...]}
    ExportConfig,  // gpumem::export_config: {"format", "scenario"}
};

struct ToolAnswer
{
    std::optional<nlohmann::json> result;  // the core's answer; none while the module is on its way, or failed
    std::string failure;                   // why the module could not be had ("" when none)
};

// tools_linked.cpp (the offline bundle, tests) or tools_fetched.cpp (the served page).
ToolAnswer CallTool(Tool tool, const nlohmann::json& request);

// The page's word that the fetched module arrived or could not be had: the files that waited for it
// are read now (share.h, LoadFiles), or told why they cannot be.
void ToolsArrived(AppState& state);

}  // namespace gpumem::ui
