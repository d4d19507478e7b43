// The planner panel: the largest sizes that fit the current scenario (gpumem::maxfit), and for a
// cluster of N cards the layouts that fit, fastest first (gpumem::plan). A plan row's Load puts
// its scenario into the calculator. planner.cpp asks the core and reads its answers; this file
// places them.

#include <algorithm>
#include <string>

#include "app.h"
#include "imgui.h"
#include "panels.h"
#include "widgets.h"

#include <gpumem/gpumem.h>

namespace gpumem::ui {

namespace {

// How the page names a max-fit field, and the control it can set.
struct SolverField
{
    const char* field;
    const char* label;
    int* (*control)(ScenarioState&);
    int control_max;  // the control's slider range ends here
};

const SolverField kSolverFields[] = {
    {"training.batch_size", "Micro-batch per GPU", [](ScenarioState& s) { return &s.training.batch_size; }, 512},
    {"training.seq_len", "Sequence length", [](ScenarioState& s) { return &s.training.seq_len; }, 131072},
    {"inference.batch_size", "Concurrent sequences", [](ScenarioState& s) { return &s.inference.concurrent_sequences; },
     512},
    {"inference.context_len", "Context length", [](ScenarioState& s) { return &s.inference.context_len; }, 131072},
};

const SolverField* FindSolverField(const std::string& field)
{
    for (const SolverField& f : kSolverFields)
        if (field == f.field)
            return &f;
    return nullptr;
}

void ShowSolver(AppState& state, const MaxFitSolver& solver)
{
    const SolverField* f = FindSolverField(solver.field);
    ImGui::Bullet();
    ImGui::Text("%s:", f != nullptr ? f->label : solver.field.c_str());
    ImGui::SameLine();
    if (solver.limited_by == "does_not_fit")
        ImGui::TextColored(UtilizationColor(1.0), "not even 1 fits");
    else
        ImGui::Text("%llu", static_cast<unsigned long long>(solver.value));
    if (solver.limited_by == "memory")
    {
        ImGui::SameLine();
        ImGui::TextDisabled("(%s at that size; one more needs %s)", FormatBytes(solver.device_total_bytes).c_str(),
                            FormatBytes(solver.next_device_total_bytes).c_str());
    }
    else if (solver.limited_by == "field_maximum")
    {
        ImGui::SameLine();
        ImGui::TextDisabled("(the most the scenario allows)");
    }
    if (!solver.note.empty())
    {
        ImGui::SameLine();
        HelpMarker(solver.note.c_str());
    }
    if (f != nullptr && solver.value >= 1 && solver.value <= static_cast<std::uint64_t>(f->control_max))
    {
        ImGui::SameLine();
        if (CompactButton(("Use##" + solver.field).c_str()))
            *f->control(state.scenario) = static_cast<int>(solver.value);
    }
}

void ShowMaxFit(AppState& state)
{
    const bool current = UpdateMaxFit(state);
    const MaxFitView& view = state.planner.maxfit_view;
    ImGui::TextDisabled("Largest size that fits one GPU of this scenario, the other settings as they are:");
    if (!current)
    {
        ShowComputing(state.planner.maxfit_for.empty());  // decisions.h: the panels' turns
        if (state.planner.maxfit_for.empty())
            return;
    }
    if (!view.ok)
    {
        ImGui::TextWrapped("%s", view.error.c_str());
        return;
    }
    for (std::size_t i = 0; i < view.solvers.size(); i++)
    {
        ImGui::PushID(static_cast<int>(i));
        ShowSolver(state, view.solvers[i]);
        ImGui::PopID();
    }
}

void ShowPlanGpuCombo(AppState& state)
{
    PlannerState& p = state.planner;
    FormRow("GPU");
    const bool own = p.gpu_index < 0 || p.gpu_index >= static_cast<int>(state.gpus.size());
    const GpuEntry* current = CurrentGpu(state);
    const std::string own_label =
        "the calculator's" + (current != nullptr ? " (" + current->name + ")" : std::string());
    if (!ImGui::BeginCombo("##plan_gpu", own ? own_label.c_str() : state.gpus[p.gpu_index].name.c_str(),
                           ImGuiComboFlags_HeightLarge))
        return;
    if (ImGui::Selectable(own_label.c_str(), own))
        p.gpu_index = -1;
    // The plan names a catalogue card; an imported one is planned for as the calculator's card.
    for (int i = 0; i < static_cast<int>(state.gpus.size()); i++)
        if (!state.gpus[i].imported && ImGui::Selectable(state.gpus[i].name.c_str(), i == p.gpu_index))
            p.gpu_index = i;
    ImGui::EndCombo();
}

void ShowPlanInputs(AppState& state)
{
    PlannerState& p = state.planner;
    FormRow("Cluster GPUs", "GPUs to plan for, in all (not the calculator's count).");
    if (ImGui::InputInt("##plan_gpus", &p.gpus))
        p.gpus = std::clamp(p.gpus, 1, 4096);
    ShowPlanGpuCombo(state);
    FormRow("GPUs per node", "Tensor parallelism stays inside a node (NVLink); the rest crosses the network.");
    if (ImGui::InputInt("##plan_gpus_per_node", &p.gpus_per_node))
        p.gpus_per_node = std::clamp(p.gpus_per_node, 1, 64);
    FormRow("Host RAM (GB)",
            "CPU memory per node (GB, 10^9 bytes) for offloaded optimizer states and parameters. "
            "0: not limited.");
    NumberInputFloat("##plan_host_ram_gb", "Host RAM (GB)", p.host_ram_gb, 0.0f, 1.0e6f, DefaultLabel("not limited"));
    if (!state.scenario.IsInference())
    {
        FormRow("Global batch",
                "Sequences per optimizer step, split into data-parallel ranks x "
                "micro-batch x accumulation. 0: GPUs x the calculator's micro-batch x "
                "accumulation.");
        // 0 shows the size the core's plan takes (core/src/search/plan.cpp: num_gpus x training.batch_size x
        // gradient_accumulation_steps, the plan's GPUs and the calculator's last resolved sizes).
        const TrainingSettings& t = state.last_good.resolved.training;
        const long long fallback = static_cast<long long>(p.gpus) * t.batch_size * t.grad_accum;
        const std::string global = DefaultLabel(fallback > 0 ? std::to_string(fallback).c_str() : nullptr);
        NumberInput("##plan_global_batch", "Global batch", p.global_batch, 0, 1 << 24, global.c_str());
    }
    FormRow("Rows");
    if (ImGui::InputInt("##plan_top", &p.top))
        p.top = std::clamp(p.top, 1, 100);
}

// The step-time parts of a row, largest first, for its tooltip.
void StepTimeTooltip(const PlanRow& row)
{
    ImGui::BeginTooltip();
    ImGui::Text("Step %.4g s, MFU %.1f %%", row.step_time_s, 100.0 * row.mfu);
    for (const auto& [seconds, name] : row.step_parts)
        ImGui::BulletText("%s: %.4g s", name.c_str(), seconds);
    if (row.host_bytes_per_node > 0)
        ImGui::BulletText("host memory per node: %s", FormatBytes(row.host_bytes_per_node).c_str());
    ImGui::EndTooltip();
}

void ShowPlanRow(AppState& state, const PlanRow& row, bool training, std::uint64_t capacity)
{
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    if (CompactButton(("Load " + std::to_string(row.rank)).c_str()))
        LoadPlanRow(state, row);
    for (const std::string& cell : row.cells)
    {
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(cell.c_str());
    }
    ImGui::TableNextColumn();
    if (training)
        ImGui::Text("%.3g s / %s", row.step_time_s, FormatCount(static_cast<std::uint64_t>(row.tokens_per_s)).c_str());
    else
    {
        ImGui::Text("%.3g ms", row.step_time_s * 1000.0);
        ImGui::TableNextColumn();
        ImGui::Text("%s", FormatCount(static_cast<std::uint64_t>(row.tokens_per_s)).c_str());
    }
    if (ImGui::IsItemHovered())
        StepTimeTooltip(row);
    ImGui::TableNextColumn();
    const double used =
        capacity > 0 ? static_cast<double>(row.device_total_bytes) / static_cast<double>(capacity) : 1.0;
    ImGui::TextColored(UtilizationColor(used), "%s", FormatBytes(row.device_total_bytes).c_str());
}

void ShowPlanTable(AppState& state)
{
    const PlanView& plan = state.planner.plan_view;
    if (!plan.ok)
    {
        ImGui::TextWrapped("%s", plan.error.c_str());
        return;
    }
    ImGui::TextDisabled("%s layouts searched, %s fit; %.1f ms in this page.", FormatCount(plan.candidates).c_str(),
                        FormatCount(plan.fitting).c_str(), state.planner.plan_ms);
    for (const std::string& w : plan.warnings)
        BulletWrapped(w);
    if (plan.rows.empty())
        return;
    const bool training = !state.scenario.IsInference();
    const ImGuiTableFlags flags =
        ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_SizingFixedFit;
    // Narrower than ~90 characters (a phone), the table scrolls sideways.
    if (BeginWideTable("plan_table", training ? 11 : 9, flags, ImGui::CalcTextSize("0").x * 90.0f))
    {
        if (training)
            for (const char* h :
                 {"#", "DP", "TP", "PP", "CP", "EP", "Engine", "Ckpt", "mb x acc", "Step / tok/s", "Per GPU"})
                ImGui::TableSetupColumn(h);
        else
            for (const char* h : {"#", "Replicas", "TP", "PP", "Batch", "Max seqs", "Step", "tok/s", "Per GPU"})
                ImGui::TableSetupColumn(h);
        ImGui::TableHeadersRow();
        for (const PlanRow& row : plan.rows)
        {
            ImGui::PushID(row.rank);
            ShowPlanRow(state, row, training, plan.gpu_memory_bytes);
            ImGui::PopID();
        }
        EndWideTable();
    }
    ImGui::TextDisabled(
        "Step time: FLOPs at an assumed MFU plus exposed communication (README, \"Planner\"). "
        "Hover a step time for its parts.");
}

}  // namespace

//-----------------------------------------------------------------------------
// [SECTION] The planner
//-----------------------------------------------------------------------------

void ShowPlannerPanel(AppState& state)
{
    if (!ImGui::CollapsingHeader("Planner: what fits, and how to run it"))
        return;
    if (!state.view.ok)
    {
        ImGui::TextDisabled("The scenario has errors; fix them to plan.");
        return;
    }
    ShowMaxFit(state);
    ImGui::Spacing();
    ShowPlanInputs(state);
    if (!UpdatePlan(state))
        ShowComputing(state.planner.plan_count == 0);
    // The load message stands until the scenario changes again after the load took effect.
    PlannerState& p = state.planner;
    if (!p.message.empty() && p.message_for.empty())
        p.message_for = state.scenario_text;
    else if (p.message_for != state.scenario_text)
    {
        p.message.clear();
        p.message_for.clear();
    }
    if (!p.message.empty())
        ImGui::TextColored(ImVec4(0.45f, 0.8f, 0.45f, 1.0f), "%s",
                           gpumem::display_text(p.message, kMessageChars).c_str());  // it may quote the core's refusal
    ShowPlanTable(state);
}

}  // namespace gpumem::ui
