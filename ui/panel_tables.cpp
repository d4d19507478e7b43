// The panels that look beyond one estimate: which cards fit, the parallel layouts of the GPUs, and
// pinned results side by side. Every number comes from gpumem::estimate(); these panels only vary
// the scenario, read each answer into a ResultView and place it.

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "app.h"
#include "imgui.h"
#include "panels.h"
#include "share.h"
#include "widgets.h"

#include <gpumem/gpumem.h>

namespace gpumem::ui {

namespace {

// The tables re-estimate many variants of the scenario: they take their turn after the first frame,
// one panel per frame, and keep their last answer while a slider is being dragged (decisions.h).
bool MayRecompute(AppState& state, const std::string& computed_for)
{
    return computed_for != state.scenario_text && DecisionTurn(state);
}

FitView Estimate(const nlohmann::json& scenario)
{
    const ResultView r = ReadResult(gpumem::estimate(scenario));
    return {r.ok, r.device_total_bytes, r.fits, r.utilization, r.errors.empty() ? "" : r.errors.front()};
}

// One cell of the GPU table: the current model estimated on `gpu` alone for one task.
FitView EstimateOn(nlohmann::json scenario, const GpuEntry& gpu)
{
    scenario["hardware"] = GpuHardware(gpu);
    scenario["hardware"]["num_gpus"] = 1;
    scenario.erase("parallelism");
    if (scenario.contains("engine"))
        scenario.erase("engine");
    return Estimate(scenario);
}

// Variants of the current scenario for the GPU table: serving, full training and LoRA. Each keeps
// the user's settings for its mode when the page is in that mode, and the core's defaults otherwise.
nlohmann::json TaskVariant(const AppState& state, const nlohmann::json& current, const char* task)
{
    const bool inference = state.scenario.IsInference();
    nlohmann::json s = {{"version", 1}, {"model", current.contains("model") ? current["model"] : nlohmann::json()}};
    if (current.contains("formats"))
        s["formats"] = current["formats"];  // the scenario's own weight formats (an imported data_types.json)
    const std::string t = task;
    if (t == "inference")
    {
        s["mode"] = "inference";
        if (inference && current.contains("inference"))
            s["inference"] = current["inference"];
    }
    else
    {
        s["mode"] = "training";
        if (!inference && current.contains("training"))
            s["training"] = current["training"];
        s["training"]["method"] = t;
        if (t == "full")
            s["training"].erase("lora");
    }
    return s;
}

void ComputeGpuTable(AppState& state)
{
    const nlohmann::json& current = state.scenario_json;
    const nlohmann::json variants[] = {TaskVariant(state, current, "inference"), TaskVariant(state, current, "full"),
                                       TaskVariant(state, current, "lora")};
    state.gpu_table.clear();
    for (const GpuEntry& gpu : state.gpus)
        state.gpu_table.push_back({gpu.name, gpu.memory_bytes, EstimateOn(variants[0], gpu),
                                   EstimateOn(variants[1], gpu), EstimateOn(variants[2], gpu)});
    state.gpu_table_for = state.scenario_text;
}

void ComputeLayoutTable(AppState& state, bool moe)
{
    const int num_gpus = state.scenario.hardware.num_gpus;
    state.layout_table.clear();
    const int sizes[] = {1, 2, 4, 8};
    for (int tp : sizes)
        for (int pp : sizes)
            for (int ep : sizes)
            {
                if ((!moe && ep > 1) || (state.scenario.IsInference() && pp > 1))
                    continue;
                if (tp * pp > num_gpus || num_gpus % (tp * pp) != 0)
                    continue;
                nlohmann::json s = state.scenario_json;
                s["parallelism"] = {
                    {"tensor_parallel_size", tp}, {"pipeline_parallel_size", pp}, {"expert_parallel_size", ep}};
                state.layout_table.push_back({tp, pp, ep, num_gpus / (tp * pp), Estimate(s)});
            }
    state.layout_table_for = state.scenario_text;
}

void FitsCell(const FitView& r)
{
    if (!r.ok)
    {
        ImGui::TextDisabled("-");
        return;
    }
    ImGui::TextColored(UtilizationColor(r.fits ? r.utilization : 1.0), "%s %s", r.fits ? "yes" : "no ",
                       FormatBytes(r.device_total_bytes).c_str());
}

void ShowLayoutRow(AppState& state, const LayoutRow& row)
{
    ImGui::TableNextRow();
    for (int value : {row.tp, row.pp, row.ep, row.dp})
    {
        ImGui::TableNextColumn();
        ImGui::Text("%d", value);
    }
    ImGui::TableNextColumn();
    if (row.fit.ok)
        ImGui::TextColored(UtilizationColor(row.fit.fits ? row.fit.utilization : 1.0), "%s%s",
                           FormatBytes(row.fit.device_total_bytes).c_str(), row.fit.fits ? "" : " (does not fit)");
    else
    {
        ImGui::TextDisabled("not possible");
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip("%s", row.fit.why.c_str());
    }
    ImGui::TableNextColumn();
    if (row.fit.ok && CompactButton("Use"))
    {
        ParallelSettings& par = state.scenario.parallel;
        par.tensor_parallel = row.tp;
        par.pipeline_parallel = row.pp;
        par.expert_parallel = row.ep;
    }
}

// One row of the comparison: a figure of each pinned result, then the current one; a pinned
// figure that differs says by how much the current one is above or below it.
template <typename ValueOf>
void CompareRow(const char* name, const std::vector<const ResultView*>& results, ValueOf value_of)
{
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(name);
    const std::uint64_t now = value_of(*results.back());
    for (std::size_t i = 0; i < results.size(); i++)
    {
        ImGui::TableNextColumn();
        const std::uint64_t v = value_of(*results[i]);
        ImGui::Text("%s", FormatBytes(v).c_str());
        if (i + 1 < results.size() && v != now)
        {
            ImGui::SameLine();
            ImGui::TextDisabled("(now %+.2f)", ToGiB(now) - ToGiB(v));
        }
    }
}

void ShowPinnedButtons(AppState& state)
{
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    for (std::size_t i = 0; i < state.pinned.size(); i++)
    {
        ImGui::TableNextColumn();
        ImGui::PushID(static_cast<int>(i));
        if (CompactButton("Unpin"))
        {
            state.pinned.erase(state.pinned.begin() + static_cast<std::ptrdiff_t>(i));
            ImGui::PopID();
            break;
        }
        ImGui::SameLine();
        if (CompactButton("Load"))
            ImportScenario(
                state, WithoutCalibration(state, nlohmann::json::parse(state.pinned[i].scenario_text, nullptr, false)));
        ImGui::PopID();
    }
}

}  // namespace

//-----------------------------------------------------------------------------
// [SECTION] Which GPUs fit and which layouts fit
//-----------------------------------------------------------------------------

void ShowGpuTablePanel(AppState& state)
{
    if (!ImGui::CollapsingHeader("Which GPUs fit"))
        return;
    if (MayRecompute(state, state.gpu_table_for))
        ComputeGpuTable(state);
    if (state.gpu_table_for != state.scenario_text)
        ShowComputing(state.gpu_table.empty());  // decisions.h: the panels' turns
    ImGui::TextDisabled(
        "One GPU of each kind, this model. Serving and training use this page's settings for the "
        "mode it is in, the defaults otherwise.");
    // Narrower than ~60 characters (a phone), it scrolls sideways too: the cards' names stay whole.
    const float min_width = ImGui::CalcTextSize("0").x * 60.0f;
    const bool narrow = ImGui::GetContentRegionAvail().x < min_width;
    const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_ScrollY |
                                  ImGuiTableFlags_SizingStretchProp | (narrow ? ImGuiTableFlags_ScrollX : 0);
    if (ImGui::BeginTable("gpu_table", 5, flags, ImVec2(0.0f, ImGui::GetTextLineHeightWithSpacing() * 14.0f),
                          narrow ? min_width : 0.0f))
    {
        ImGui::TableSetupScrollFreeze(0, 1);
        ImGui::TableSetupColumn("GPU", ImGuiTableColumnFlags_WidthStretch, 2.2f);
        ImGui::TableSetupColumn("Memory");
        ImGui::TableSetupColumn("Serving");
        ImGui::TableSetupColumn("Full training");
        ImGui::TableSetupColumn("LoRA");
        ImGui::TableHeadersRow();
        for (const GpuFitRow& row : state.gpu_table)
        {
            ImGui::TableNextRow();
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(row.name.c_str());
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(FormatBytes(row.memory_bytes).c_str());
            for (const FitView* fit : {&row.serving, &row.full, &row.lora})
            {
                ImGui::TableNextColumn();
                FitsCell(*fit);
            }
        }
        ImGui::EndTable();
    }
}

void ShowLayoutTablePanel(AppState& state)
{
    if (!ImGui::CollapsingHeader("Parallel layouts"))
        return;
    const bool moe = state.view.params_experts > 0;
    if (MayRecompute(state, state.layout_table_for))
        ComputeLayoutTable(state, moe);
    if (state.layout_table_for != state.scenario_text)
        ShowComputing(state.layout_table.empty());
    ImGui::TextDisabled("Tensor x pipeline%s splits of the %d GPUs; the rest is data parallel.", moe ? " x expert" : "",
                        state.scenario.hardware.num_gpus);
    const ImGuiTableFlags flags =
        ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_SizingStretchSame;
    if (BeginWideTable("layout_table", 6, flags, ImGui::CalcTextSize("0").x * 50.0f))
    {
        for (const char* h : {"TP", "PP", "EP", "DP", "Per GPU", ""})
            ImGui::TableSetupColumn(h);
        ImGui::TableHeadersRow();
        for (std::size_t i = 0; i < state.layout_table.size(); i++)
        {
            ImGui::PushID(static_cast<int>(i));
            ShowLayoutRow(state, state.layout_table[i]);
            ImGui::PopID();
        }
        EndWideTable();
    }
}

//-----------------------------------------------------------------------------
// [SECTION] Pinned results, side by side
//-----------------------------------------------------------------------------

void ShowComparePanel(AppState& state)
{
    char title[64];
    std::snprintf(title, sizeof(title), "Compare (%d pinned)###compare", static_cast<int>(state.pinned.size()));
    if (!ImGui::CollapsingHeader(title, state.pinned.empty() ? 0 : ImGuiTreeNodeFlags_DefaultOpen))
        return;
    ImGui::BeginDisabled(!state.view.ok || state.pinned.size() >= 3);
    if (ImGui::Button("Pin this result"))
        state.pinned.push_back({ResultLabel(state.view), state.scenario_text, state.view});
    ImGui::EndDisabled();
    ImGui::SameLine();
    ImGui::TextDisabled("Pin up to three results, then change settings: the table shows them beside the current one.");
    if (state.pinned.empty())
        return;

    const int columns = 2 + static_cast<int>(state.pinned.size());
    if (!BeginWideTable("compare", columns, ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV,
                        ImGui::CalcTextSize("0").x * 16.0f * static_cast<float>(columns)))
        return;
    ImGui::TableSetupColumn("");
    for (std::size_t i = 0; i < state.pinned.size(); i++)
        ImGui::TableSetupColumn(("Pinned " + std::to_string(i + 1)).c_str());
    ImGui::TableSetupColumn("Current");
    ImGui::TableHeadersRow();

    std::vector<const ResultView*> results;
    for (const PinnedResult& p : state.pinned)
        results.push_back(&p.view);
    results.push_back(&state.view);

    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextDisabled("Scenario");
    for (std::size_t i = 0; i < results.size(); i++)
    {
        ImGui::TableNextColumn();
        ImGui::TextWrapped("%s",
                           i < state.pinned.size() ? state.pinned[i].label.c_str() : ResultLabel(state.view).c_str());
    }
    CompareRow("Device total", results, [](const ResultView& r) { return r.device_total_bytes; });
    CompareRow("Reserved", results, [](const ResultView& r) { return r.peak_reserved_bytes; });
    CompareRow("Allocated", results, [](const ResultView& r) { return r.peak_allocated_bytes; });
    for (int c = 0; c < kComponentCount; c++)
        CompareRow(kComponents[c].label, results, [c](const ResultView& r) { return r.components[c]; });
    ShowPinnedButtons(state);
    EndWideTable();
}

}  // namespace gpumem::ui
