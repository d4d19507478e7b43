// CallTool (tools.h) for a module that links those parts of the core in: the offline bundle's,
// which fetches nothing. Every call answers at once.

#include "tools.h"

#include <gpumem/gpumem.h>

namespace gpumem::ui {

bool ToolsHere()
{
    return true;
}

ToolAnswer CallTool(Tool tool, const nlohmann::json& request)
{
    switch (tool)
    {
    case Tool::ReadConfigs:
        return {gpumem::read_configs(request), ""};
    case Tool::ExportConfig:
        return {gpumem::export_config(request), ""};
    case Tool::MaxFit:
        return {gpumem::maxfit(request), ""};
    case Tool::Plan:
        return {gpumem::plan(request), ""};
    case Tool::Sweep:
        return {gpumem::sweep(request), ""};
    case Tool::SweepSvg:
        return {nlohmann::json(gpumem::sweep_svg(request)), ""};
    }
    return {std::nullopt, "no such tool"};
}

}  // namespace gpumem::ui
