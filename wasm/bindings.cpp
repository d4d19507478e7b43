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

EMSCRIPTEN_BINDINGS(gpumem) {
    emscripten::function("estimate", &gpumem::estimate_json);    // scenario JSON -> result JSON
    emscripten::function("params", &gpumem::params_json);        // config.json   -> parameter counts
    emscripten::function("presets", &gpumem::presets_json);      // -> {"models": [...], "gpus": [...]}
    emscripten::function("maxfit", &gpumem::maxfit_json);        // scenario JSON -> largest sizes that fit
    emscripten::function("plan", &gpumem::plan_json);            // scenario + "plan" JSON -> ranked layouts
    emscripten::function("settings", &gpumem::settings_json);    // -> {field path: {default, help, values}}
    emscripten::function("fit", &gpumem::fit_json);              // scenario JSON -> the changes that make it fit
    emscripten::function("exportConfig", &gpumem::export_json);  // {format, scenario} -> the config / command line
    emscripten::function("importDeepspeed", &gpumem::import_deepspeed_json);  // ds_config.json -> scenario fields
    emscripten::function("readConfigs", &gpumem::read_configs_json);  // {files, command} -> scenario, model, check
    emscripten::function("calibrate", &gpumem::calibrate_json);       // {records} -> a calibration and its report
    emscripten::function("sweep", &gpumem::sweep_json);               // {scenario, field} -> the peak at each value
    emscripten::function("sweepSvg", &gpumem::sweep_svg_text);        // a sweep result -> its SVG text
    emscripten::function("version", &version_string);                 // -> "MAJOR.MINOR.PATCH"
}
