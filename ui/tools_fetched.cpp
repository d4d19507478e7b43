// CallTool (tools.h) for the served page: those parts of the core live in a second module,
// gpumem_tools.wasm, which web/page.js fetches the first time one is asked for
// (Module.loadGpumemTools) and hands over as Module.gpumemTools, or says why it could not
// (Module.gpumemToolsFailure). Its functions take and return JSON text, as gpumem.js's do.

#include "tools.h"

#include <cstddef>
#include <iterator>
#include <optional>
#include <string>
#include <utility>

#include <emscripten/val.h>

#include <gpumem/gpumem.h>

namespace gpumem::ui {

namespace {

using emscripten::val;

// Why the module cannot be had ("" while it may still come, or is here), starting its fetch if no one has.
std::string Missing(const val& tools)
{
    if (!tools.isUndefined() && !tools.isNull())
        return "";
    const val failure = val::module_property("gpumemToolsFailure");
    if (failure.isString())
        return failure.as<std::string>();
    const val load = val::module_property("loadGpumemTools");
    if (load.isUndefined())
        return "this page cannot fetch the tools (no loadGpumemTools)";
    load();
    return "";
}

}  // namespace

bool ToolsHere()
{
    const val tools = val::module_property("gpumemTools");
    return !Missing(tools).empty() || (!tools.isUndefined() && !tools.isNull());
}

ToolAnswer CallTool(Tool tool, const nlohmann::json& request)
{
    const val tools = val::module_property("gpumemTools");
    if (tools.isUndefined() || tools.isNull())
        return {std::nullopt, Missing(tools)};  // "": on its way
    // The module's functions (wasm/bindings.cpp, GPUMEM_BINDINGS_TOOLS), in Tool's order.
    static const char* const kNames[] = {"readConfigs", "exportConfig", "maxfit", "plan", "sweep", "sweepSvg"};
    static_assert(std::size(kNames) == static_cast<std::size_t>(Tool::SweepSvg) + 1, "a name for each Tool");
    // Text from the page is valid UTF-8 already; a file's stray bytes are replaced, never thrown on.
    const std::string text = request.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    std::string answer = tools.call<std::string>(kNames[static_cast<int>(tool)], text);
    if (tool == Tool::SweepSvg)
        return {nlohmann::json(std::move(answer)), ""};
    std::string error;
    std::optional<nlohmann::json> result = gpumem::parse_json(answer, error);
    if (!result)
        return {std::nullopt, "the tools answered with " + error};
    return {std::move(result), ""};
}

}  // namespace gpumem::ui
