// The decision panels: what would make the scenario fit (and Apply / Undo), the configs that run
// it, peak memory against a size, and the calibration in use. decisions.cpp asks the core and
// reads its answers; this file places them.

#include <algorithm>
#include <cctype>
#include <cfloat>
#include <cstdio>
#include <iterator>
#include <string>

#include "app.h"
#include "imgui.h"
#include "panels.h"
#include "tools.h"
#include "widgets.h"

#include <gpumem/gpumem.h>

namespace gpumem::ui {

namespace {

using gpumem::detail::kExportFormats;

// "61.20 GiB (77 %)", coloured by the share of the card.
void PeakCell(std::uint64_t bytes, std::uint64_t capacity)
{
    const double used = capacity > 0 ? static_cast<double>(bytes) / static_cast<double>(capacity) : 1.0;
    ImGui::TextColored(UtilizationColor(used), "%s (%.0f %%)", FormatBytes(bytes).c_str(), used * 100.0);
}

// "1.89 s, 8,646 tok/s (1.00x)": the run's step, its tokens per second and its speed against the scenario's.
void SpeedCell(const SuggestionView& s)
{
    if (s.step_time_s <= 0.0)
    {
        ImGui::TextDisabled("-");
        return;
    }
    const ImVec4 color = s.speed >= 0.995 ? ImVec4(0.45f, 0.8f, 0.45f, 1.0f) : ImGui::GetStyleColorVec4(ImGuiCol_Text);
    ImGui::TextColored(color, "%.2f s (%.2fx)", s.step_time_s, s.speed);
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("%.0f tokens/s: %.2fx the scenario's (the step-time model: gpumem plan's)", s.tokens_per_s,
                          s.speed);
}

void ShowSuggestionRow(AppState& state, int index, bool headroom)
{
    const FitState& f = state.decisions.fit;
    const SuggestionView& s = f.suggestions[index];
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    if (s.least_change)
        ImGui::TextColored(ImVec4(0.45f, 0.8f, 0.45f, 1.0f), "least change");
    else if (s.fastest)
        ImGui::TextColored(ImVec4(0.4f, 0.65f, 1.0f, 1.0f), "fastest (%s)", s.tier.c_str());
    else
        ImGui::TextDisabled("%s", s.saving ? "saves" : s.tier.c_str());
    ImGui::TableNextColumn();
    ImGui::TextWrapped("%s", s.change.c_str());
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("Sets %s\nKind of change: %s%s", s.set.c_str(), s.tier.c_str(),
                          s.host_bytes > 0 ? ("\nHost RAM: " + FormatBytes(s.host_bytes)).c_str() : "");
    ImGui::TableNextColumn();
    const std::uint64_t capacity = s.capacity_bytes > 0 ? s.capacity_bytes : f.capacity_bytes;
    if (s.pool.fills_budget)
    {
        // An engine that fills its budget claims the same share in every row: the rows differ by the pool.
        ImGui::TextColored(UtilizationColor(s.pool.sequences >= s.pool.requested ? 0.5 : 1.0), "%s of %s sequences",
                           FormatCount(std::min(s.pool.sequences, s.pool.requested)).c_str(),
                           FormatCount(s.pool.requested).c_str());
        if (s.pool.sequences > s.pool.requested)
            ImGui::TextDisabled("room for %s; %s tokens in the pool", FormatCount(s.pool.sequences).c_str(),
                                FormatCount(s.pool.tokens).c_str());
        else
            ImGui::TextDisabled("%s tokens in the pool", FormatCount(s.pool.tokens).c_str());
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip("%s; the engine claims %s of the card.", PoolText(s.pool).c_str(),
                              FormatBytes(s.device_total_bytes).c_str());
    }
    else
        PeakCell(s.device_total_bytes, capacity);
    if (!s.pool.fills_budget && s.band_high_bytes > s.device_total_bytes)
    {
        ImGui::TextDisabled("up to %s", FormatBytes(s.band_high_bytes).c_str());
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip("The top of the run's error band: 80 %% of measured runs like it peaked at most this.");
    }
    ImGui::TableNextColumn();
    if (headroom && s.saving && s.pool.fills_budget)
        ImGui::Text("+%s tokens",
                    FormatCount(s.pool.tokens > f.pool.tokens ? s.pool.tokens - f.pool.tokens : 0).c_str());
    else if (headroom && s.saving)
        ImGui::Text("saves %s", FormatBytes(static_cast<std::uint64_t>(std::max(0.0, s.saves_bytes))).c_str());
    else
        SpeedCell(s);
    ImGui::TableNextColumn();
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    ImGui::TextWrapped("%s", s.cost.c_str());
    ImGui::PopStyleColor();
    ImGui::TableNextColumn();
    if (CompactButton(("Apply##fit_" + std::to_string(index + 1)).c_str()))
        ApplySuggestion(state, index);
}

// One sweep as a chart, with its SVG download.
void ShowSweep(AppState& state, const SweepView& v, const char* str_id)
{
    if (!v.ok)
    {
        ImGui::TextDisabled("%s: %s", v.field.c_str(), v.error.c_str());
        return;
    }
    const GpuEntry* gpu = CurrentGpu(state);
    double y_max = v.capacity_gib;
    for (double y : v.ys)
        y_max = std::max(y_max, y);
    const double x_max = v.xs.empty() ? 2.0 : v.xs.back();
    ImGui::Text("%s:", v.label.c_str());
    ImGui::SameLine();
    if (v.max_fit > 0)
        ImGui::TextDisabled("up to %llu fits (%.2f GiB)", static_cast<unsigned long long>(v.max_fit), v.max_fit_gib);
    else
        ImGui::TextColored(UtilizationColor(1.0), "not even 1 fits");
    ImGui::SameLine();
    if (CompactButton((std::string("Download SVG##") + str_id).c_str()) && state.page.download != nullptr)
    {
        const std::string name = "gpumem-" + v.field.substr(v.field.find('.') + 1) + ".svg";
        // The sweep came from the tools (tools.h), so they are here: the SVG answers at once.
        const ToolAnswer svg = CallTool(Tool::SweepSvg, v.result);
        if (svg.result && svg.result->is_string())
            state.page.download(name, svg.result->get<std::string>());
    }
    if (BeginLinePlot(str_id, v.label.c_str(), "GiB", x_max, y_max * 1.1))
    {
        PlotLine("peak per GPU", v.xs.data(), v.ys.data(), static_cast<int>(v.xs.size()), IM_COL32(66, 133, 244, 255));
        const std::string card = gpu != nullptr ? gpu->id : std::string("the card");
        if (v.capacity_gib > 0.0)
            PlotHLine(card.c_str(), v.capacity_gib, ImGui::GetColorU32(UtilizationColor(1.0)));
        if (v.current >= 1.0)
            PlotMarker("this scenario", v.current, v.current_gib, ImGui::GetColorU32(ImGuiCol_Text));
        if (v.max_fit > 0)
            PlotMarker("max fit", static_cast<double>(v.max_fit), v.max_fit_gib,
                       ImGui::GetColorU32(UtilizationColor(0.0)));
        EndLinePlot();
    }
}

}  // namespace

//-----------------------------------------------------------------------------
// [SECTION] What would make it fit
//-----------------------------------------------------------------------------

void ShowFitPanel(AppState& state)
{
    FitState& f = state.decisions.fit;
    const bool fits = state.view.fits;
    if (!ImGui::CollapsingHeader(fits ? "Faster runs and headroom###fit" : "What would make it fit###fit",
                                 ImGuiTreeNodeFlags_DefaultOpen))
        return;
    if (!UpdateFit(state))
    {
        ShowComputing(f.fit_count == 0);  // decisions.h: the panels compute after the first frame
        if (f.fit_count == 0)
            return;
    }
    if (!f.ok)
    {
        ImGui::TextWrapped("%s", f.error.c_str());
        return;
    }
    const bool headroom = f.fits;
    ImGui::PushTextWrapPos(0.0f);  // the line wraps at the column's edge (a phone's column is ~30 characters)
    if (f.pool.fills_budget)
    {
        // The engine fills its budget whatever it serves: the verdict is the sequences its pool holds.
        ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
        ImGui::TextWrapped("%s. %s", PoolText(f.pool).c_str(),
                           headroom ? "Faster runs, then what each change adds to the pool:"
                                    : "The least change that fits, then the fastest run of each tier:");
        ImGui::PopStyleColor();
    }
    else if (headroom)
        ImGui::TextDisabled("Fits with %s to spare. Faster runs that fit, then what each change saves:",
                            FormatBytes(static_cast<std::uint64_t>(std::max(0.0, f.headroom_bytes))).c_str());
    else if (f.headroom_bytes >= 0.0)
        ImGui::TextDisabled(
            "Borderline: the estimate fits, the top of its error band does not. The least change "
            "that fits with the band, then the fastest run of each tier:");
    else
        ImGui::TextDisabled("%s over the card. The least change that fits, then the fastest run of each tier:",
                            FormatBytes(static_cast<std::uint64_t>(std::max(0.0, -f.headroom_bytes))).c_str());
    ImGui::PopTextWrapPos();
    ImGui::SameLine();
    HelpMarker(
        "One search over the layout, engine and sharding, offload, activation checkpointing, micro-batch at the "
        "same global batch, the loss, the optimizer, the precision and the method, each run estimated and timed "
        "by the step-time model (the planner's). Tiers, least change first: same math, slower, numerics, data, "
        "hardware, method. \"least change\" is the run that fits with the fewest and mildest changes; "
        "\"fastest\" the fastest run that fits with changes up to its tier. A run fits when the top of its error "
        "band fits. Speed is the run's tokens per second over the scenario's. Apply puts a run into the "
        "calculator, Undo takes it back.");

    if (f.suggestions.empty())
        ImGui::TextWrapped(headroom ? "No change makes it faster or lowers the peak."
                                    : "No change short of another setup fits.");
    // Narrower than ~100 characters (a phone), the table scrolls sideways: the changes' long words
    // ("optimizer: paged_adamw_8bit") keep room to be read whole.
    else if (BeginWideTable("fit_table", 6,
                            ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_SizingStretchProp,
                            ImGui::CalcTextSize("0").x * 100.0f))
    {
        ImGui::TableSetupColumn("", ImGuiTableColumnFlags_WidthFixed);
        ImGui::TableSetupColumn("Change", ImGuiTableColumnFlags_WidthStretch, 1.4f);
        ImGui::TableSetupColumn(f.pool.fills_budget ? "KV pool" : "Peak per GPU", ImGuiTableColumnFlags_WidthFixed);
        ImGui::TableSetupColumn(headroom ? "Step / saves" : "Step (speed)", ImGuiTableColumnFlags_WidthFixed);
        ImGui::TableSetupColumn("Cost", ImGuiTableColumnFlags_WidthStretch, 1.0f);
        ImGui::TableSetupColumn("", ImGuiTableColumnFlags_WidthFixed);
        ImGui::TableHeadersRow();
        for (int i = 0; i < static_cast<int>(f.suggestions.size()); i++)
            ShowSuggestionRow(state, i, headroom);
        EndWideTable();
    }

    ImGui::BeginDisabled(f.undo.empty());
    if (ImGui::Button("Undo##fit"))
        UndoSuggestion(state);
    ImGui::EndDisabled();
    if (!f.undo.empty())
    {
        ImGui::SameLine();
        ImGui::TextDisabled("takes back: %s", f.undo.back().change.c_str());
    }
    if (!f.message.empty())
        ImGui::TextColored(ImVec4(0.45f, 0.8f, 0.45f, 1.0f), "%s",
                           gpumem::display_text(f.message, kMessageChars).c_str());
    ImGui::Spacing();
}

//-----------------------------------------------------------------------------
// [SECTION] Peak memory against a size
//-----------------------------------------------------------------------------

void ShowSweepPanel(AppState& state)
{
    if (!ImGui::CollapsingHeader("Peak memory against size###sweep"))
        return;
    if (!UpdateSweeps(state))
    {
        ShowComputing(state.decisions.sweep.sweep_count == 0);
        if (state.decisions.sweep.sweep_count == 0)
            return;
    }
    ImGui::TextDisabled("Peak per GPU (device total) at powers of two, the other settings as they are:");
    ImGui::SameLine();
    HelpMarker("Each point is one estimate. The dashed line is the card; the circle is the largest size that fits.");
    ShowSweep(state, state.decisions.sweep.size, "##sweep_size");
    ImGui::Spacing();
    ShowSweep(state, state.decisions.sweep.batch, "##sweep_batch");
    ImGui::Spacing();
}

//-----------------------------------------------------------------------------
// [SECTION] Configs to run
//-----------------------------------------------------------------------------

void ShowExportPanel(AppState& state)
{
    if (!ImGui::CollapsingHeader("Configs to run###export"))
        return;
    ImGui::TextDisabled("This scenario as the config file or command line of what runs it:");
    const int current = ExportFormatIndex(state);
    FormRow("Format", "Each format writes only what the estimate depends on; the notes say what is left to you.");
    if (ImGui::BeginCombo("##export_format", kExportFormats[current].label))
    {
        for (int i = 0; i < static_cast<int>(std::size(kExportFormats)); i++)
        {
            if (ImGui::Selectable(kExportFormats[i].label, i == current))
                SetExportFormat(state, i);
            if (ImGui::IsItemHovered())
                ImGui::SetTooltip("%s", kExportFormats[i].help);
            if (i == current)
                ImGui::SetItemDefaultFocus();
        }
        ImGui::EndCombo();
    }
    ExportState& e = state.decisions.export_;
    if (!UpdateExport(state))
    {
        ShowComputing(e.export_for.empty());
        if (e.export_for.empty())
            return;
    }
    if (!e.errors.empty())
    {
        TextNotice("##export_error", UtilizationColor(1.0), e.errors.c_str());
        return;
    }
    const std::string file_name = e.result.value("file_name", std::string("config.txt"));
    const bool have_page = state.page.copy_text != nullptr;
    ImGui::BeginDisabled(!have_page);
    if (ImGui::Button("Copy##export"))
        state.page.copy_text(e.text);
    ImGui::SameLine();
    if (ImGui::Button("Download##export") && state.page.download != nullptr)
        state.page.download(file_name, e.text);
    ImGui::EndDisabled();
    ImGui::SameLine();
    ImGui::TextDisabled("%s", file_name.c_str());

    int lines = 1;
    for (char c : e.text)
        lines += c == '\n' ? 1 : 0;
    const float height = ImGui::GetTextLineHeight() * static_cast<float>(std::clamp(lines, 3, 18) + 1);
    // Read-only: ImGui does not write to the buffer.
    ImGui::InputTextMultiline("##export_text", e.text.data(), e.text.size() + 1, ImVec2(-FLT_MIN, height),
                              ImGuiInputTextFlags_ReadOnly);
    // A run that does not fit says so here, and in the file where its format has comments.
    if (e.result.contains("fit_note") && e.result["fit_note"].is_string())
    {
        std::string note = e.result["fit_note"].get<std::string>();
        note[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(note[0])));
        note += e.result.value("fit_note_in_file", false) ? " (the file's first line says so)."
                                                          : " (the format has no comments to say it in).";
        TextNotice("##export_fit_note", UtilizationColor(1.0), note.c_str());
    }
    // A setting the format cannot carry: the file, read back as `gpumem check` reads it, runs otherwise.
    if (e.result.contains("dropped") && e.result["dropped"].is_array() && !e.result["dropped"].empty())
    {
        std::string text = "This file does not run the estimated job:";
        for (const nlohmann::json& d : e.result["dropped"])
            text += "\n- " + d.value("text", std::string());
        text += e.result.value("kind", std::string()) != "json" ? "\n(The file's comments say so too.)"
                                                                : "\n(The format has no comments to say it in.)";
        TextNotice("##export_dropped", UtilizationColor(0.9), text.c_str());
    }
    if (e.result.contains("notes") && e.result["notes"].is_array())
        for (const nlohmann::json& note : e.result["notes"])
            BulletWrapped(note.is_string() ? note.get<std::string>() : note.dump());
    ImGui::Spacing();
}

//-----------------------------------------------------------------------------
// [SECTION] Calibration
//-----------------------------------------------------------------------------

void ShowCalibrationPanel(AppState& state)
{
    const CalibrationState& c = state.decisions.calibration;
    if (!ImGui::CollapsingHeader("Calibration###calibration"))
        return;
    if (c.hash.empty())
        ImGui::TextWrapped(
            "None: the runtime overheads are the estimator's defaults (under Assumptions). A file from "
            "`gpumem calibrate` fits them to peaks measured on your machines.");
    else
        ImGui::Text("In use: %s (%s)", gpumem::display_text(c.name, kNameChars).c_str(), c.hash.c_str());
    ImGui::BeginDisabled(state.page.open_file == nullptr);
    if (ImGui::Button("Load calibration...") && state.page.open_file != nullptr)
        state.page.open_file();
    ImGui::EndDisabled();
    ImGui::SameLine();
    HelpMarker(
        "A calibration sets the overheads the scenario leaves open (CUDA context, allocator slack, NCCL "
        "buffers, vLLM's CUDA graphs). It belongs to the gpumem version that fitted it. The link names it by "
        "name and hash only; whoever opens the link loads the same file.");
    if (!c.hash.empty())
    {
        ImGui::SameLine();
        if (ImGui::Button("Remove##calibration"))
        {
            // From this page and from the browser: a later link naming it is then not applied.
            if (state.page.forget_calibration != nullptr)
                state.page.forget_calibration(c.hash);
            ClearCalibration(state);
        }
        if (c.file.contains("overheads") && c.file["overheads"].is_object())
            for (const auto& [key, value] : c.file["overheads"].items())
                ImGui::BulletText("%s: %s", gpumem::display_text(key, kNameChars).c_str(),
                                  gpumem::display_text(value.dump(), kNameChars).c_str());
    }
    if (!c.message.empty())
        TextNotice("##calibration_message", UtilizationColor(1.0),
                   gpumem::display_text(c.message, kMessageChars).c_str());
    ImGui::Spacing();
}

}  // namespace gpumem::ui
