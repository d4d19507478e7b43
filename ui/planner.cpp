// The planner panel: the largest sizes that fit the current scenario (gpumem::maxfit), and for a
// cluster of N cards the layouts that fit, fastest first (gpumem::plan). A plan row's Load puts
// its scenario into the calculator. Every number comes from the core; this file only builds the
// requests, places the answers and loads a row.

#include "panels.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>

#include "imgui.h"
#include "panel_helpers.h"
#include "widgets.h"

#include <gpumem/gpumem.h>

namespace gpumem::ui {

namespace {

// The request gpumem::plan reads: the calculator's scenario plus the panel's cluster.
nlohmann::json PlanRequest(const AppState& state)
{
    nlohmann::json request = nlohmann::json::parse(state.scenario_text, nullptr, false);
    if (!request.is_object())
        return nlohmann::json();
    nlohmann::json plan = {{"num_gpus", state.plan_gpus},
                           {"gpus_per_node", std::min(state.plan_gpus, state.plan_gpus_per_node)},
                           {"top", state.plan_top}};
    if (state.plan_gpu_index >= 0 && state.plan_gpu_index < static_cast<int>(state.gpus.size()))
        plan["gpu"] = state.gpus[state.plan_gpu_index].id;
    if (state.plan_host_ram_gb > 0.0f)
        plan["host_ram_gb"] = state.plan_host_ram_gb;
    if (!state.inference && state.plan_global_batch > 0)
        plan["global_batch_size"] = state.plan_global_batch;
    request["plan"] = std::move(plan);
    return request;
}

// How the page names a max-fit field, and the control it can set (nullptr: none).
struct SolverField
{
    const char* field;
    const char* label;
    int AppState::*control;
    int control_max;   // the control's slider range ends here
};

const SolverField kSolverFields[] = {
    {"training.batch_size", "Micro-batch per GPU", &AppState::batch_size, 512},
    {"training.seq_len", "Sequence length", &AppState::seq_len, 131072},
    {"inference.batch_size", "Concurrent sequences", &AppState::concurrent_sequences, 512},
    {"inference.context_len", "Context length", &AppState::context_len, 131072},
};

const SolverField* FindSolverField(const std::string& field)
{
    for (const SolverField& f : kSolverFields)
        if (field == f.field)
            return &f;
    return nullptr;
}

void ShowMaxFit(AppState& state)
{
    if (!ImGui::IsMouseDown(ImGuiMouseButton_Left) && state.maxfit_for != state.scenario_text)
    {
        const nlohmann::json scenario = nlohmann::json::parse(state.scenario_text, nullptr, false);
        state.maxfit = gpumem::maxfit(scenario);
        state.maxfit_for = state.scenario_text;
    }
    ImGui::TextDisabled("Largest size that fits one GPU of this scenario, the other settings as they are:");
    if (!state.maxfit.is_object() || !state.maxfit.value("ok", false))
    {
        ImGui::TextWrapped("%s", ErrorText(state.maxfit).c_str());
        return;
    }
    int index = 0;
    for (const nlohmann::json& solver : At(state.maxfit, "solvers"))
    {
        const std::string field = Text(At(solver, "field"));
        const SolverField* f = FindSolverField(field);
        const std::uint64_t value = Bytes(solver, "value");
        const std::string limited = Text(At(solver, "limited_by"));
        ImGui::PushID(index++);
        ImGui::Bullet();
        ImGui::Text("%s:", f != nullptr ? f->label : field.c_str());
        ImGui::SameLine();
        if (limited == "does_not_fit")
            ImGui::TextColored(UtilizationColor(1.0), "not even 1 fits");
        else
            ImGui::Text("%llu", static_cast<unsigned long long>(value));
        if (limited == "memory")
        {
            ImGui::SameLine();
            ImGui::TextDisabled("(%s at that size; one more needs %s)", FormatBytes(Bytes(solver, "device_total_bytes")).c_str(),
                                FormatBytes(Bytes(solver, "next_device_total_bytes")).c_str());
        }
        else if (limited == "field_maximum")
        {
            ImGui::SameLine();
            ImGui::TextDisabled("(the most the scenario allows)");
        }
        if (At(solver, "note").is_string())
        {
            ImGui::SameLine();
            HelpMarker(Text(At(solver, "note")).c_str());
        }
        if (f != nullptr && value >= 1 && value <= static_cast<std::uint64_t>(f->control_max))
        {
            ImGui::SameLine();
            if (ImGui::SmallButton(("Use##" + field).c_str()))
                state.*(f->control) = static_cast<int>(value);
        }
        ImGui::PopID();
    }
}

void ShowPlanInputs(AppState& state)
{
    FormRow("Cluster GPUs", "GPUs to plan for, in all (not the calculator's count).");
    if (ImGui::InputInt("##plan_gpus", &state.plan_gpus))
        state.plan_gpus = std::clamp(state.plan_gpus, 1, 4096);
    FormRow("GPU");
    const bool own = state.plan_gpu_index < 0 || state.plan_gpu_index >= static_cast<int>(state.gpus.size());
    const GpuEntry* current = CurrentGpu(state);
    const std::string own_label = "the calculator's" + (current != nullptr ? " (" + current->name + ")" : std::string());
    if (ImGui::BeginCombo("##plan_gpu", own ? own_label.c_str() : state.gpus[state.plan_gpu_index].name.c_str(),
                          ImGuiComboFlags_HeightLarge))
    {
        if (ImGui::Selectable(own_label.c_str(), own))
            state.plan_gpu_index = -1;
        for (int i = 0; i < static_cast<int>(state.gpus.size()); i++)
            if (ImGui::Selectable(state.gpus[i].name.c_str(), i == state.plan_gpu_index))
                state.plan_gpu_index = i;
        ImGui::EndCombo();
    }
    FormRow("GPUs per node", "Tensor parallelism stays inside a node (NVLink); the rest crosses the network.");
    if (ImGui::InputInt("##plan_gpus_per_node", &state.plan_gpus_per_node))
        state.plan_gpus_per_node = std::clamp(state.plan_gpus_per_node, 1, 64);
    FormRow("Host RAM (GB)", "CPU memory per node (GB, 10^9 bytes) for offloaded optimizer states and parameters. "
                                      "0: not limited.");
    if (ImGui::InputFloat("##plan_host_ram_gb", &state.plan_host_ram_gb, 0.0f, 0.0f, "%g"))
        state.plan_host_ram_gb = std::clamp(state.plan_host_ram_gb, 0.0f, 1.0e6f);
    if (!state.inference)
    {
        FormRow("Global batch", "Sequences per optimizer step, split into data-parallel ranks x "
                                            "micro-batch x accumulation. 0: GPUs x the calculator's micro-batch x "
                                            "accumulation.");
        if (ImGui::InputInt("##plan_global_batch", &state.plan_global_batch))
            state.plan_global_batch = std::clamp(state.plan_global_batch, 0, 1 << 24);
    }
    FormRow("Rows");
    if (ImGui::InputInt("##plan_top", &state.plan_top))
        state.plan_top = std::clamp(state.plan_top, 1, 100);
}

// "ZeRO-3, optimizer on CPU", "FSDP full_shard", "Megatron", ...
std::string EngineLabel(const nlohmann::json& layout)
{
    const std::string type = Text(At(layout, "engine"));
    std::string label = type;
    if (type == "deepspeed")
        label = "ZeRO-" + Text(At(layout, "zero_stage"));
    else if (type == "fsdp")
        label = "FSDP " + Text(At(layout, "fsdp_sharding"));
    else if (type == "megatron")
        label = "Megatron";
    else if (type == "ddp")
        label = "DDP";
    else if (type == "none")
        label = "single GPU";
    const std::string opt = Text(At(layout, "offload_optimizer")), param = Text(At(layout, "offload_param"));
    if (At(layout, "offload_optimizer").is_string() && opt != "none")
        label += ", optimizer on " + opt;
    if (At(layout, "offload_param").is_string() && param != "none")
        label += ", params on " + param;
    return label;
}

// The step-time parts of a row, largest first, for its tooltip.
void StepTimeTooltip(const nlohmann::json& row)
{
    std::vector<std::pair<double, std::string>> parts;
    for (const auto& [name, value] : At(row, "step_time").items())
        if (value.is_number() && value.get<double>() > 0)
            parts.emplace_back(value.get<double>(), name);
    std::sort(parts.rbegin(), parts.rend());
    ImGui::BeginTooltip();
    ImGui::Text("Step %.4g s, MFU %.1f %%", At(row, "step_time_s").get<double>(), 100.0 * At(row, "mfu").get<double>());
    for (const auto& [seconds, name] : parts)
        ImGui::BulletText("%s: %.4g s", name.c_str(), seconds);
    const std::uint64_t host = Bytes(row, "host_bytes_per_node");
    if (host > 0)
        ImGui::BulletText("host memory per node: %s", FormatBytes(host).c_str());
    ImGui::EndTooltip();
}

void LoadPlanRow(AppState& state, const nlohmann::json& row)
{
    nlohmann::json scenario = At(row, "scenario");
    // The model stays the calculator's own (a Hub or pasted model is not a preset the import knows).
    if (scenario.is_object())
        scenario.erase("model");
    const int rank = At(row, "rank").is_number() ? At(row, "rank").get<int>() : 0;
    state.plan_message_for.clear();
    if (ImportScenario(state, scenario))
        state.plan_message = "Plan " + std::to_string(rank) + " is in the calculator.";
    else
        state.plan_message = "Plan " + std::to_string(rank) + " " + state.import_message;
}

void ShowPlanTable(AppState& state)
{
    const nlohmann::json& plan = state.plan;
    if (!plan.is_object() || !plan.value("ok", false))
    {
        ImGui::TextWrapped("%s", ErrorText(plan).c_str());
        return;
    }
    const nlohmann::json& search = At(plan, "search");
    ImGui::TextDisabled("%s layouts searched, %s fit; %.1f ms in this page.", FormatCount(Bytes(search, "candidates")).c_str(),
                        FormatCount(Bytes(search, "fitting")).c_str(), state.plan_ms);
    for (const nlohmann::json& w : At(plan, "warnings"))
        BulletWrapped(Text(w));
    const nlohmann::json& rows = At(plan, "plans");
    if (!rows.is_array() || rows.empty())
        return;
    const bool training = !state.inference;
    const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_SizingFixedFit;
    const int columns = training ? 11 : 9;
    if (ImGui::BeginTable("plan_table", columns, flags))
    {
        if (training)
            for (const char* h : {"#", "DP", "TP", "PP", "CP", "EP", "Engine", "Ckpt", "mb x acc", "Step / tok/s", "Per GPU"})
                ImGui::TableSetupColumn(h);
        else
            for (const char* h : {"#", "Replicas", "TP", "PP", "Batch", "Max seqs", "Step", "tok/s", "Per GPU"})
                ImGui::TableSetupColumn(h);
        ImGui::TableHeadersRow();
        for (const nlohmann::json& row : rows)
        {
            const nlohmann::json& l = At(row, "layout");
            const int rank = At(row, "rank").get<int>();
            ImGui::PushID(rank);
            ImGui::TableNextRow();
            ImGui::TableNextColumn();
            if (ImGui::SmallButton(("Load " + std::to_string(rank)).c_str()))
                LoadPlanRow(state, row);
            const char* const training_keys[] = {"data_parallel_size", "tensor_parallel_size", "pipeline_parallel_size",
                                                 "context_parallel_size", "expert_parallel_size"};
            const char* const inference_keys[] = {"data_parallel_size", "tensor_parallel_size", "pipeline_parallel_size",
                                                  "batch_size", "max_concurrent_sequences"};
            for (const char* key : training ? training_keys : inference_keys)
            {
                ImGui::TableNextColumn();
                ImGui::Text("%s", Text(At(l, key)).c_str());
            }
            const double step = At(row, "step_time_s").get<double>();
            const double tokens = At(row, "tokens_per_s").get<double>();
            if (training)
            {
                ImGui::TableNextColumn();
                ImGui::TextUnformatted(EngineLabel(l).c_str());
                ImGui::TableNextColumn();
                ImGui::TextUnformatted(Text(At(l, "activation_checkpointing")).c_str());
                ImGui::TableNextColumn();
                ImGui::Text("%s x %s", Text(At(l, "micro_batch_size")).c_str(), Text(At(l, "gradient_accumulation_steps")).c_str());
                ImGui::TableNextColumn();
                ImGui::Text("%.3g s / %s", step, FormatCount(static_cast<std::uint64_t>(tokens)).c_str());
            }
            else
            {
                ImGui::TableNextColumn();
                ImGui::Text("%.3g ms", step * 1000.0);
                ImGui::TableNextColumn();
                ImGui::Text("%s", FormatCount(static_cast<std::uint64_t>(tokens)).c_str());
            }
            if (ImGui::IsItemHovered())
                StepTimeTooltip(row);
            ImGui::TableNextColumn();
            const std::uint64_t device = Bytes(row, "device_total_bytes");
            const std::uint64_t capacity = Bytes(At(plan, "cluster"), "gpu_memory_bytes");
            ImGui::TextColored(UtilizationColor(capacity > 0 ? static_cast<double>(device) / static_cast<double>(capacity) : 1.0),
                               "%s", FormatBytes(device).c_str());
            ImGui::PopID();
        }
        ImGui::EndTable();
    }
    ImGui::TextDisabled("Step time: FLOPs at an assumed MFU plus exposed communication (README, \"Planner\"). "
                        "Hover a step time for its parts.");
}

}  // namespace

void ShowPlannerPanel(AppState& state)
{
    const bool open = ImGui::CollapsingHeader("Planner: what fits, and how to run it");
    if (!open)
        return;
    if (!state.result.value("ok", false))
    {
        ImGui::TextDisabled("The scenario has errors; fix them to plan.");
        return;
    }
    ShowMaxFit(state);
    ImGui::Spacing();
    ShowPlanInputs(state);
    // What the plan depends on: the scenario and the panel's fields (the request is built only when they change).
    char inputs[96];
    std::snprintf(inputs, sizeof inputs, "|%d|%d|%d|%g|%d|%d", state.plan_gpus, state.plan_gpu_index, state.plan_gpus_per_node,
                  static_cast<double>(state.plan_host_ram_gb), state.plan_global_batch, state.plan_top);
    const std::string key = state.scenario_text + inputs;
    if (!ImGui::IsMouseDown(ImGuiMouseButton_Left) && state.plan_for != key)
    {
        const nlohmann::json request = PlanRequest(state);
        const auto start = std::chrono::steady_clock::now();
        state.plan = gpumem::plan(request);
        state.plan_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
        state.plan_for = key;
        ++state.plan_count;
    }
    // The load message stands until the scenario changes again after the load took effect.
    if (!state.plan_message.empty() && state.plan_message_for.empty())
        state.plan_message_for = state.scenario_text;
    else if (state.plan_message_for != state.scenario_text)
        state.plan_message.clear(), state.plan_message_for.clear();
    if (!state.plan_message.empty())
        ImGui::TextColored(ImVec4(0.45f, 0.8f, 0.45f, 1.0f), "%s", state.plan_message.c_str());
    ShowPlanTable(state);
}

}  // namespace gpumem::ui
