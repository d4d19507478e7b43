// The WebAssembly surface of gpumem: fourteen functions, JSON strings in, JSON strings out.
//
// One EMSCRIPTEN_BINDINGS block and no logic. Everything here maps one-to-one onto the core's
// JSON API (core/include/gpumem/gpumem.h, [SECTION] JSON API), which never throws: malformed
// or invalid input comes back as {"ok": false, "errors": [...]}, never as a trap.
//
// This file is compiled straight into each executable that needs it (gpumem_wasm, gpumem_app),
// never into a static library: the linker would drop the registrations (emscripten #11973).
// The contract as seen from JavaScript is in wasm/README.md.

#include <string>

#include <emscripten/bind.h>

#include <gpumem/gpumem.h>

namespace {

std::string version_string() { return gpumem::version(); }

}  // namespace

// Which of them a module binds: all (gpumem.js; the offline page), or a part of the served page
// (issue #29), whose own module binds what its first answer and the panels open at start need
// (GPUMEM_BINDINGS_PAGE) and leaves the config readers and writers, the planner and the sweeps to
// the module it fetches when they are first needed (GPUMEM_BINDINGS_TOOLS; ui/tools.h): a function
// not bound is not linked.
#if defined(GPUMEM_BINDINGS_PAGE) && defined(GPUMEM_BINDINGS_TOOLS)
#error "a module binds the page's functions or the tools', not both"
#endif
#if !defined(GPUMEM_BINDINGS_PAGE) && !defined(GPUMEM_BINDINGS_TOOLS)
#define GPUMEM_BINDINGS_PAGE
#define GPUMEM_BINDINGS_TOOLS
#endif

EMSCRIPTEN_BINDINGS(gpumem) {
#ifdef GPUMEM_BINDINGS_PAGE
    emscripten::function("estimate", &gpumem::estimate_json);  // scenario JSON -> result JSON
    emscripten::function("params", &gpumem::params_json);      // config.json   -> parameter counts
    emscripten::function("fit", &gpumem::fit_json);            // scenario JSON -> the changes that make it fit
#endif
#ifdef GPUMEM_BINDINGS_TOOLS
    emscripten::function("exportConfig", &gpumem::export_json);       // {format, scenario} -> the config / command line
    emscripten::function("readConfigs", &gpumem::read_configs_json);  // {files, command} -> scenario, model, check
    emscripten::function("maxfit", &gpumem::maxfit_json);             // scenario JSON -> largest sizes that fit
    emscripten::function("plan", &gpumem::plan_json);                 // scenario + "plan" JSON -> ranked layouts
    emscripten::function("sweep", &gpumem::sweep_json);               // {scenario, field} -> the peak at each value
    emscripten::function("sweepSvg", &gpumem::sweep_svg_text);        // a sweep result -> its SVG text
    emscripten::function("presets", &gpumem::presets_json);           // -> {"models": [...], "gpus": [...]}
#endif
#if defined(GPUMEM_BINDINGS_PAGE) && defined(GPUMEM_BINDINGS_TOOLS)
    emscripten::function("settings", &gpumem::settings_json);  // -> {field path: {default, help, values}}
    emscripten::function("importDeepspeed", &gpumem::import_deepspeed_json);  // ds_config.json -> scenario fields
    emscripten::function("calibrate", &gpumem::calibrate_json);  // {records} -> a calibration and its report
#endif
    emscripten::function("version", &version_string);  // -> "MAJOR.MINOR.PATCH"
}
