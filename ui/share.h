// Getting scenarios in and out of the page: the link and the saved settings (page.js keeps them in
// the URL and localStorage), imported and dropped files, pasted text, and the result as Markdown
// or as a few sentences for screen readers. The token is never part of any of them.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpumem::ui {

struct AppState;
struct ResultView;

// What a link or saved settings asked for (page.js reads the URL and localStorage):
// {"hub": base, "model": id, "revision": rev, "scenario_text": "{...}", "link_problem": why,
//  "token": t, "remember_token": b, "calibration": {"name", "hash"}, "calibration_text": the
// browser's copy of that file, when it has one}. A model that is a bundled preset loads at once; any other id
// is fetched from the Hub. "hub" comes only from a link and holds for this visit; settings that
// cannot be read (link_problem, or scenario_text the core refuses) leave the defaults and say so
// in state.link_message.
void OpenFromPage(AppState& state, const nlohmann::json& request);

// A link's scenario held back while its Hub model loaded (hub.h), applied as OpenFromPage applies one.
void ApplyPendingLinkScenario(AppState& state, const nlohmann::json& scenario);

// The memory the verdict was judged against, as the headline names it: "of 79.65 GiB (NVIDIA H100
// 80GB HBM3)", or "of 800.00 GiB: a custom size (the NVIDIA H100 80GB HBM3 has 79.65 GiB)".
std::string CapacityText(const AppState& state);

// What of the link's values (AppState::link_values) is still in effect, one phrase each
// ("GPU memory 800 GiB (the card has 79.65 GiB)", "overhead cuda_context_gib = 0", ...); empty
// when none is. Text from the link is shown through display_text.
std::vector<std::string> LinkValuesInEffect(const AppState& state);

// "Back to defaults": clears exactly the link's values still in effect (the card size, the overhead
// factors, its weight formats, its card, the calibration it named); the rest of its settings stay.
void ClearLinkValues(AppState& state);

// The share state handed to the page for the URL and saved settings:
// {"model", "revision", "hub", "scenario", "calibration": {"name", "hash"}} (the scenario without its model for presets
// and Hub models, which the link names instead). Never holds the token.
nlohmann::json ShareState(const AppState& state);

// Loads a scenario document (v1 or gpu-mem-calculator's config format) into the controls. Fields
// no control owns are kept as they are. Returns false, with state.import_message saying why, when
// it is not a scenario the core accepts.
bool ImportScenario(AppState& state, const nlohmann::json& doc);

// Text from a file drop, the file picker or the paste box: a scenario, a model's config.json or a
// calibration file (gpumem calibrate's; decisions.h).
bool LoadText(AppState& state, const std::string& text, const std::string& name);

// Files opened or dropped together, or the paste box's text, as [{"name", "text"}]. The tools'
// configs and command lines (gpumem check's: a DeepSpeed JSON, an accelerate, axolotl, torchtune or
// litgpt YAML, a vllm serve / torchrun / ... command; core read_configs) become the scenario, and
// the model they name is loaded as a Hub id typed in the model box would be (a bundled preset at
// once, else fetched from the Hub, the settings applied when it arrives). What was read stays in
// state.config_check. One file that is no tool's config loads as LoadText loads it. A group that
// names a file not given is held (state.held_config_files) and read again with the next files.
// Returns false, with state.import_message saying why, when nothing was loaded.
bool LoadFiles(AppState& state, const nlohmann::json& files);

// The scenario the configs set (read_configs' "scenario"), applied over the model now chosen, with
// the page's card when the files name none; state.import_message then says what was read.
void ApplyConfigScenario(AppState& state, const nlohmann::json& scenario);

// The model and the settings that tell results apart ("Llama-3.1-8B, full bs 1 x 2048, 1 x
// H100-80GB"): a pinned result's header, the Markdown table's.
std::string ResultLabel(const ResultView& view);

// The result as a Markdown table (what "Copy as Markdown" puts on the clipboard).
std::string ResultMarkdown(const AppState& state);

// The result in a few sentences (the model and settings, the device total, fits, GPUs needed, the
// three largest components, the warnings), for screen readers: the page keeps it in an aria-live
// region, since the canvas itself says nothing to them.
std::string ResultSummary(const AppState& state);

}  // namespace gpumem::ui
