// The decision panels' requests and answers: see decisions.h. The core does the work (fit,
// export_config, sweep, apply_calibration); this file builds the requests from the calculator's
// scenario, reads each answer once, and moves suggestions into the calculator and back.

#include "decisions.h"

#include <algorithm>
#include <iterator>

#include "app.h"
#include "imgui.h"
#include "share.h"
#include "tools.h"
#include "widgets.h"

#include <gpumem/gpumem.h>

#include "json_read.h"

namespace gpumem::ui {

namespace {

using nlohmann::json;

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

SuggestionView ReadSuggestion(const json& s)
{
    SuggestionView view;
    view.pool = ReadPool(At(s, "serving"));
    view.change = Text(At(s, "change"));
    view.cost = Text(At(s, "cost"));
    view.tier = Text(At(s, "tier"));
    if (At(s, "set").is_object())
        for (const auto& [field, value] : At(s, "set").items())
            view.set += (view.set.empty() ? "" : ", ") + field + " = " + Text(value);
    view.fits = At(s, "fits") == true;
    view.device_total_bytes = Count(s, "device_total_bytes");
    view.capacity_bytes = Count(At(At(s, "estimate"), "per_gpu"), "capacity_bytes");
    view.band_high_bytes = Count(At(At(At(s, "estimate"), "per_gpu"), "band"), "high_bytes");
    view.saves_bytes = Number(s, "saves_bytes");
    view.host_bytes = Count(s, "host_bytes");
    view.step_time_s = Number(s, "step_time_s");
    view.tokens_per_s = Number(s, "tokens_per_s");
    view.speed = Number(s, "speed_vs_scenario");
    view.least_change = At(s, "least_change") == true;
    view.fastest = At(s, "fastest") == true;
    view.scenario = At(s, "scenario");
    return view;
}

// The scenario with one dotted field ("training.seq_len") set to `value`.
json WithField(json scenario, const std::string& field, std::uint64_t value)
{
    const std::size_t dot = field.find('.');
    json& section = scenario[field.substr(0, dot)];
    if (!section.is_object())
        section = json::object();
    section[field.substr(dot + 1)] = value;
    return scenario;
}

SweepView ReadSweep(const json& r, const std::string& field, const json& scenario)
{
    SweepView view;
    view.field = field;
    view.result = r;
    view.ok = r.is_object() && r.value("ok", false);
    if (!view.ok)
    {
        view.error = ErrorText(r);
        return view;
    }
    view.label = Text(At(r, "label"));
    view.capacity_gib = Number(r, "capacity_bytes") / kGiB;
    view.max_fit = Count(r, "max_fit");
    if (At(r, "points").is_array())
        for (const json& p : At(r, "points"))
        {
            view.xs.push_back(Number(p, "value"));
            view.ys.push_back(Number(p, "device_total_bytes") / kGiB);
        }
    view.current = Number(At(r, "current"), "value");
    view.current_gib = Number(At(r, "current"), "device_total_bytes") / kGiB;
    // The max fit is rarely a power of two: its own estimate places the marker.
    if (view.max_fit > 0)
        view.max_fit_gib =
            Number(At(gpumem::estimate(WithField(scenario, field, view.max_fit)), "per_gpu"), "device_total_bytes") /
            kGiB;
    return view;
}

// A drag or a field being typed in: fit and the sweeps (tens of estimates) wait until it ends.
bool Editing()
{
    return ImGui::GetCurrentContext() != nullptr &&
           (ImGui::IsMouseDown(ImGuiMouseButton_Left) || ImGui::IsAnyItemActive());
}

}  // namespace

PoolView ReadPool(const json& serving)
{
    PoolView p;
    if (!serving.is_object())
        return p;
    p.fills_budget = At(serving, "fills_budget") == true;
    p.sequences = Count(serving, "max_concurrent_sequences");
    p.requested = Count(serving, "requested_sequences");
    p.context = Count(serving, "at_context_len");
    p.tokens = Count(serving, "kv_cache_tokens");
    p.pool_bytes = Count(serving, "kv_cache_bytes");
    return p;
}

std::string Grouped(std::uint64_t n)
{
    std::string digits = std::to_string(n), out;
    for (std::size_t i = 0; i < digits.size(); i++)
    {
        if (i > 0 && (digits.size() - i) % 3 == 0)
            out += ',';
        out += digits[i];
    }
    return out;
}

std::string PoolText(const PoolView& p)
{
    // Never "53 of 32": what was asked fits, and the room beyond it is said as room.
    return Grouped(std::min(p.sequences, p.requested)) + " of " + Grouped(p.requested) + " sequences of " +
           Grouped(p.context) + " tokens fit" +
           (p.sequences > p.requested ? ", room for " + Grouped(p.sequences) : "") + " (KV pool " +
           FormatBytes(p.pool_bytes) + " per GPU)";
}

//-----------------------------------------------------------------------------
// [SECTION] When the decision panels compute
//-----------------------------------------------------------------------------

void BeginDecisionFrame(AppState& state)
{
    ScheduleState& s = state.decisions.schedule;
    s.frame++;
    s.waiting = 0;
    s.turn_taken = s.frame <= 1;  // the first frame draws the estimate alone
}

void EstimateRan(AppState& state)
{
    state.decisions.schedule.turn_taken = true;
}

bool DecisionTurn(AppState& state)
{
    ScheduleState& s = state.decisions.schedule;
    if (s.turn_taken || Editing())
    {
        s.waiting++;
        return false;
    }
    s.turn_taken = true;
    return true;
}

bool ToolDecisionTurn(AppState& state)
{
    if (!ToolsHere())
    {
        state.decisions.schedule.waiting++;
        return false;
    }
    return DecisionTurn(state);
}

bool DecisionsReady(const AppState& state)
{
    const ScheduleState& s = state.decisions.schedule;
    return s.frame > 1 && s.waiting == 0;
}

void ShowComputing(bool never_computed)
{
    ImGui::TextDisabled(never_computed ? "computing..." : "computing... (the answer below is for the last scenario)");
}

//-----------------------------------------------------------------------------
// [SECTION] What would make it fit
//-----------------------------------------------------------------------------

bool UpdateFit(AppState& state)
{
    FitState& f = state.decisions.fit;
    if (f.fit_for == state.scenario_text)
        return true;
    if (!DecisionTurn(state))
        return false;
    const json r = gpumem::fit(state.scenario_json);
    f.fit_for = state.scenario_text;
    f.fit_count++;
    f.fit_frame = state.decisions.schedule.frame;
    f.ok = r.is_object() && r.value("ok", false);
    f.suggestions.clear();
    f.fit = r;
    if (f.fit.is_object())
        f.fit.erase("estimate");
    if (!f.ok)
    {
        f.error = ErrorText(r);
        return true;
    }
    f.error.clear();
    // fit's own sense of fitting: the top of the error band fits (the point alone is borderline).
    f.fits = Text(At(r, "verdict")) == "fits";
    f.device_total_bytes = Count(r, "device_total_bytes");
    f.capacity_bytes = Count(r, "capacity_bytes");
    f.headroom_bytes = Number(r, "headroom_bytes");
    f.pool = ReadPool(At(r, "serving"));
    f.step_time_s = Number(r, "step_time_s");
    if (At(r, "suggestions").is_array())
        for (const json& s : At(r, "suggestions"))
            f.suggestions.push_back(ReadSuggestion(s));
    if (At(r, "savings").is_array())
        for (const json& s : At(r, "savings"))
        {
            f.suggestions.push_back(ReadSuggestion(s));
            f.suggestions.back().saving = true;
        }
    for (const char* list : {"suggestions", "savings"})
        if (f.fit[list].is_array())
            for (json& s : f.fit[list])
                s.erase("estimate");
    return true;
}

void ApplySuggestion(AppState& state, int index)
{
    FitState& f = state.decisions.fit;
    if (index < 0 || index >= static_cast<int>(f.suggestions.size()))
        return;
    const SuggestionView s = f.suggestions[index];  // a copy: the import may refresh the list
    UndoEntry before{s.change, state.scenario};
    json scenario = WithoutCalibration(state, s.scenario);
    // The model stays the calculator's own (a Hub or pasted model is not a preset the import knows).
    if (scenario.is_object())
        scenario.erase("model");
    if (!ImportScenario(state, scenario))
    {
        f.message = "Not applied: " + state.import_message;
        return;
    }
    f.undo.push_back(std::move(before));
    if (static_cast<int>(f.undo.size()) > kMaxUndo)
        f.undo.erase(f.undo.begin());
    f.message = "Applied: " + s.change + ".";
}

void UndoSuggestion(AppState& state)
{
    FitState& f = state.decisions.fit;
    if (f.undo.empty())
        return;
    state.scenario = f.undo.back().scenario;
    f.message = "Undone: " + f.undo.back().change + ".";
    f.undo.pop_back();
}

//-----------------------------------------------------------------------------
// [SECTION] Configs to run
//-----------------------------------------------------------------------------

int ExportFormatIndex(const AppState& state)
{
    const ExportState& e = state.decisions.export_;
    const int index = state.scenario.IsInference() ? e.inference_format : e.training_format;
    return std::clamp(index, 0, static_cast<int>(std::size(gpumem::detail::kExportFormats)) - 1);
}

void SetExportFormat(AppState& state, int index)
{
    ExportState& e = state.decisions.export_;
    (state.scenario.IsInference() ? e.inference_format : e.training_format) = index;
}

bool UpdateExport(AppState& state)
{
    ExportState& e = state.decisions.export_;
    const char* format = gpumem::detail::kExportFormats[ExportFormatIndex(state)].name;
    const std::string key = state.scenario_text + "|" + format;
    if (e.export_for == key)
        return true;
    if (!ToolDecisionTurn(state))
        return false;
    // ToolDecisionTurn waited for the config writers (tools.h): the call answers now, or says why it cannot.
    json r = AnswerOrFailure(CallTool(Tool::ExportConfig, {{"format", format}, {"scenario", state.scenario_json}}));
    e.export_for = key;
    if (r.is_object())
    {
        r.erase("scenario");
        r.erase("estimate");
    }
    e.result = r;
    const bool ok = r.is_object() && r.value("ok", false);
    e.text = ok ? Text(At(r, "text")) : "";
    e.errors = ok ? "" : ErrorText(r);
    return true;
}

//-----------------------------------------------------------------------------
// [SECTION] Peak memory against a size
//-----------------------------------------------------------------------------

bool UpdateSweeps(AppState& state)
{
    SweepState& s = state.decisions.sweep;
    if (s.sweep_for == state.scenario_text)
        return true;
    if (!ToolDecisionTurn(state))
        return false;
    const bool inference = state.scenario.IsInference();
    const std::string size_field = inference ? "inference.context_len" : "training.seq_len";
    const std::string batch_field = inference ? "inference.batch_size" : "training.batch_size";
    const json& scenario = state.scenario_json;
    const json size = AnswerOrFailure(CallTool(Tool::Sweep, {{"scenario", scenario}, {"field", size_field}}));
    const json batch = AnswerOrFailure(CallTool(Tool::Sweep, {{"scenario", scenario}, {"field", batch_field}}));
    s.sweep_for = state.scenario_text;
    s.sweep_count++;
    s.size = ReadSweep(size, size_field, scenario);
    s.batch = ReadSweep(batch, batch_field, scenario);
    return true;
}

//-----------------------------------------------------------------------------
// [SECTION] Calibration
//-----------------------------------------------------------------------------

bool LoadCalibration(AppState& state, const json& file)
{
    CalibrationState& c = state.decisions.calibration;
    // The core checks the file (its format and the version that fitted it) on a scenario it can read.
    const json r = gpumem::apply_calibration(json{{"version", 1}}, file);
    if (!r.is_object() || !r.value("ok", false))
    {
        c.message = "calibration not loaded: " + ErrorText(r);
        return false;
    }
    c.file = file;
    c.name = Text(At(At(r, "calibration"), "name"));
    c.hash = Text(At(At(r, "calibration"), "hash"));
    c.message.clear();
    if (c.hash == c.wanted_hash)
    {
        c.wanted_hash.clear();
        c.wanted_name.clear();
    }
    state.scenario_text.clear();  // estimate again with it
    return true;
}

void ClearCalibration(AppState& state)
{
    CalibrationState& c = state.decisions.calibration;
    c.file = nullptr;
    c.name.clear();
    c.hash.clear();
    c.message.clear();
    state.scenario_text.clear();
}

json Calibrated(AppState& state, const json& scenario)
{
    CalibrationState& c = state.decisions.calibration;
    if (c.file.is_null())
        return scenario;
    const json r = gpumem::apply_calibration(scenario, c.file);
    if (r.is_object() && r.value("ok", false) && r.contains("scenario"))
        return r["scenario"];
    c.message = "calibration not applied: " + ErrorText(r);
    return scenario;
}

json WithoutCalibration(const AppState& state, json scenario)
{
    const json& own = state.scenario.overheads;
    const json& cal = At(state.decisions.calibration.file, "overheads");
    if (!cal.is_object() || !scenario.is_object() || !At(scenario, "overheads").is_object())
        return scenario;
    json& o = scenario["overheads"];
    for (const auto& [key, value] : cal.items())
        if (!(own.is_object() && own.contains(key)) && o.contains(key) && o[key] == value)
            o.erase(key);
    if (o.empty())
        scenario.erase("overheads");
    return scenario;
}

//-----------------------------------------------------------------------------
// [SECTION] For the test hooks
//-----------------------------------------------------------------------------

json DecisionsJson(const AppState& state)
{
    const DecisionState& d = state.decisions;
    auto sweep = [](const SweepView& v) {
        return json{{"ok", v.ok},       {"field", v.field},     {"label", v.label},
                    {"error", v.error}, {"max_fit", v.max_fit}, {"points", v.xs.size()}};
    };
    return {
        {"fit", d.fit.fit},
        {"fit_count", d.fit.fit_count},
        {"fit_frame", d.fit.fit_frame},
        {"ready", DecisionsReady(state)},
        {"waiting", d.schedule.waiting},
        {"undo", d.fit.undo.size()},
        {"message", d.fit.message},
        {"export", d.export_.result},
        {"export_format", gpumem::detail::kExportFormats[ExportFormatIndex(state)].name},
        {"sweep", {{"count", d.sweep.sweep_count}, {"size", sweep(d.sweep.size)}, {"batch", sweep(d.sweep.batch)}}},
        {"calibration",
         {{"name", d.calibration.name},
          {"hash", d.calibration.hash},
          {"message", d.calibration.message},
          {"wanted_name", d.calibration.wanted_name},
          {"wanted_hash", d.calibration.wanted_hash}}},
    };
}

}  // namespace gpumem::ui
