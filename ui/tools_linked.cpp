// CallTool (tools.h) for a module that links the core's config readers and writers in: the offline
// bundle's, which fetches nothing. Every call answers at once.

#include "tools.h"

#include <gpumem/gpumem.h>

namespace gpumem::ui {

ToolAnswer CallTool(Tool tool, const nlohmann::json& request)
{
    return {tool == Tool::ReadConfigs ? gpumem::read_configs(request) : gpumem::export_config(request), ""};
}

}  // namespace gpumem::ui
