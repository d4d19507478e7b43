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

bool Here(const val& tools)
{
    return !tools.isUndefined() && !tools.isNull();
}

// Why the module, not here, cannot be had ("" while it may still come), starting its fetch if no one has.
std::string Missing()
{
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
    return Here(val::module_property("gpumemTools")) || !Missing().empty();
}

ToolAnswer CallTool(Tool tool, const nlohmann::json& request)
{
    const val tools = val::module_property("gpumemTools");
    if (!Here(tools))
        return {std::nullopt, Missing()};  // "": on its way
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
