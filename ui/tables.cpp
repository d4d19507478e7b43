// The panels that look beyond one estimate: the step timeline, the GPU and layout tables, pinned
// results side by side, sharing (link, import, export, Markdown) and the advanced factors. Every
// number comes from gpumem::estimate(); these panels only vary the scenario and place the answers.

#include "panels.h"

#include <algorithm>
#include <cfloat>
#include <cstdio>
#include <cstring>
#include <string>

#include "imgui.h"
#include "panel_helpers.h"
#include "widgets.h"

#include <gpumem/gpumem.h>

namespace gpumem::ui {

namespace {

// The tables re-estimate many variants of the scenario; while a slider is being dragged they keep
// their last answer and catch up when the mouse is released, so dragging stays smooth.
bool MayRecompute(const std::string& computed_for, const std::string& current)
{
    return computed_for != current && !ImGui::IsMouseDown(ImGuiMouseButton_Left);
}

// The scenario as last sent, parsed (it is always valid JSON: BuildScenario wrote it).
nlohmann::json CurrentScenario(const AppState& state)
{
    return nlohmann::json::parse(state.scenario_text, nullptr, false);
}

// Phase names as the page shows them.
const char* PhaseLabel(const std::string& phase)
{
    if (phase == "forward") return "Forward";
    if (phase == "loss") return "Loss";
    if (phase == "backward") return "Backward";
    if (phase == "optimizer_step") return "Optimizer step";
    if (phase == "prefill") return "Prefill";
    if (phase == "decode") return "Decode";
    if (phase == "encode_images") return "Encode images";
    if (phase == "load") return "Load";
    return phase.c_str();
}

// One row of the GPU table: the current model estimated on `gpu` alone for one task.
nlohmann::json EstimateOn(nlohmann::json scenario, const GpuEntry& gpu)
{
    scenario["hardware"] = {{"gpu", gpu.id}, {"num_gpus", 1}};
    scenario.erase("parallelism");
    if (scenario.contains("engine"))
        scenario.erase("engine");
    return gpumem::estimate(scenario);
}

// Variants of the current scenario for the GPU table: serving, full training and LoRA. Each keeps
// the user's settings for its mode when the page is in that mode, and the core's defaults otherwise.
nlohmann::json TaskVariant(const AppState& state, const nlohmann::json& current, const char* task)
{
    nlohmann::json s = {{"version", 1}, {"model", current.contains("model") ? current["model"] : nlohmann::json()}};
    const std::string t = task;
    if (t == "inference")
    {
        s["mode"] = "inference";
        if (state.inference && current.contains("inference"))
            s["inference"] = current["inference"];
    }
    else
    {
        s["mode"] = "training";
        if (!state.inference && current.contains("training"))
            s["training"] = current["training"];
        s["training"]["method"] = t;
        if (t == "full")
            s["training"].erase("lora");
    }
    return s;
}

void FitsCell(const nlohmann::json& r)
{
    if (!r.value("ok", false))
    {
        ImGui::TextDisabled("-");
        return;
    }
    const double u = At(r, "utilization").is_number() ? At(r, "utilization").get<double>() : 0.0;
    const bool fits = At(r, "fits").is_boolean() && At(r, "fits").get<bool>();
    ImGui::TextColored(UtilizationColor(fits ? u : 1.0), "%s %s", fits ? "yes" : "no ",
                       FormatBytes(Bytes(At(r, "per_gpu"), "device_total_bytes")).c_str());
}

}  // namespace

//-----------------------------------------------------------------------------
// [SECTION] The step timeline
//-----------------------------------------------------------------------------

void ShowTimelinePanel(AppState& state)
{
    const nlohmann::json& timeline = At(At(state.result, "per_gpu"), "timeline");
    if (!timeline.is_array() || timeline.empty())
        return;
    if (!ImGui::CollapsingHeader("Step timeline", ImGuiTreeNodeFlags_DefaultOpen))
        return;
    ImGui::TextDisabled("Allocated memory in each phase of %s:", state.inference ? "serving" : "a training step");
    ImGui::SameLine();
    HelpMarker("What is alive at the high-water mark of each phase. The peak is the tallest bar; overheads "
               "outside PyTorch's allocator (CUDA context, NCCL) are in the device total only.");

    const char* labels[kComponentCount];
    ImU32 colors[kComponentCount];
    for (int i = 0; i < kComponentCount; i++)
    {
        labels[i] = kComponents[i].label;
        colors[i] = kComponents[i].color;
    }
    const std::string peak = Text(At(At(state.result, "per_gpu"), "peak_phase"));
    double x_max = 0.0;
    for (const nlohmann::json& phase : timeline)
        x_max = std::max(x_max, ToGiB(Bytes(phase, "allocated_bytes")));
    const GpuEntry* gpu = CurrentGpu(state);
    const double capacity = gpu != nullptr ? ToGiB(gpu->memory_bytes) : 0.0;
    if (BeginStackedBars("##timeline", std::max(x_max, capacity) * 1.05, "GiB", 0.0f, "Optimizer step (peak)"))
    {
        SetupStackedBarsItems(labels, colors, kComponentCount);
        for (const nlohmann::json& phase : timeline)
        {
            double values[kComponentCount];
            for (int i = 0; i < kComponentCount; i++)
                values[i] = ToGiB(Bytes(At(phase, "components"), kComponents[i].key));
            const std::string name = Text(At(phase, "phase"));
            std::string label = PhaseLabel(name);
            if (name == peak)
                label += " (peak)";
            PlotStackedBar(label.c_str(), values, kComponentCount, capacity);
        }
        EndStackedBars();
    }
    ImGui::Spacing();
}

//-----------------------------------------------------------------------------
// [SECTION] Which GPUs fit and which layouts fit
//-----------------------------------------------------------------------------

void ShowGpuTablePanel(AppState& state)
{
    const bool open = ImGui::CollapsingHeader("Which GPUs fit");
    if (!open)
        return;
    if (MayRecompute(state.gpu_table_for, state.scenario_text))
    {
        const nlohmann::json current = CurrentScenario(state);
        const nlohmann::json variants[] = {TaskVariant(state, current, "inference"), TaskVariant(state, current, "full"),
                                           TaskVariant(state, current, "lora")};
        state.gpu_table = nlohmann::json::array();
        for (const GpuEntry& gpu : state.gpus)
        {
            nlohmann::json row = {{"id", gpu.id}, {"name", gpu.name}, {"memory_bytes", gpu.memory_bytes}};
            row["inference"] = EstimateOn(variants[0], gpu);
            row["full"] = EstimateOn(variants[1], gpu);
            row["lora"] = EstimateOn(variants[2], gpu);
            state.gpu_table.push_back(std::move(row));
        }
        state.gpu_table_for = state.scenario_text;
    }
    ImGui::TextDisabled("One GPU of each kind, this model. Serving and training use this page's settings for the "
                        "mode it is in, the defaults otherwise.");
    const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_ScrollY |
                                  ImGuiTableFlags_SizingStretchProp;
    if (ImGui::BeginTable("gpu_table", 5, flags, ImVec2(0.0f, ImGui::GetTextLineHeightWithSpacing() * 14.0f)))
    {
        ImGui::TableSetupScrollFreeze(0, 1);
        ImGui::TableSetupColumn("GPU", ImGuiTableColumnFlags_WidthStretch, 2.2f);
        ImGui::TableSetupColumn("Memory");
        ImGui::TableSetupColumn("Serving");
        ImGui::TableSetupColumn("Full training");
        ImGui::TableSetupColumn("LoRA");
        ImGui::TableHeadersRow();
        for (const nlohmann::json& row : state.gpu_table)
        {
            ImGui::TableNextRow();
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(Text(At(row, "name")).c_str());
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(FormatBytes(Bytes(row, "memory_bytes")).c_str());
            for (const char* task : {"inference", "full", "lora"})
            {
                ImGui::TableNextColumn();
                FitsCell(At(row, task));
            }
        }
        ImGui::EndTable();
    }
}

void ShowLayoutTablePanel(AppState& state)
{
    if (!ImGui::CollapsingHeader("Parallel layouts"))
        return;
    const bool moe = Bytes(At(At(state.result, "parameters"), "per_component"), "experts") > 0;
    if (MayRecompute(state.layout_table_for, state.scenario_text))
    {
        const nlohmann::json current = CurrentScenario(state);
        state.layout_table = nlohmann::json::array();
        const int sizes[] = {1, 2, 4, 8};
        for (int tp : sizes)
            for (int pp : sizes)
                for (int ep : sizes)
                {
                    if ((!moe && ep > 1) || (state.inference && pp > 1))
                        continue;
                    if (tp * pp > state.num_gpus || state.num_gpus % (tp * pp) != 0)
                        continue;
                    nlohmann::json s = current;
                    s["parallelism"] = {{"tensor_parallel_size", tp}, {"pipeline_parallel_size", pp},
                                        {"expert_parallel_size", ep}};
                    nlohmann::json r = gpumem::estimate(s);
                    nlohmann::json row = {{"tp", tp}, {"pp", pp}, {"ep", ep}, {"dp", state.num_gpus / (tp * pp)}};
                    row["ok"] = r.value("ok", false);
                    if (row["ok"])
                    {
                        row["device_total_bytes"] = Bytes(At(r, "per_gpu"), "device_total_bytes");
                        row["fits"] = At(r, "fits");
                        row["utilization"] = At(r, "utilization");
                    }
                    else if (r.contains("errors") && r["errors"].is_array() && !r["errors"].empty())
                        row["why"] = r["errors"][0].value("message", "");
                    state.layout_table.push_back(std::move(row));
                }
        state.layout_table_for = state.scenario_text;
    }
    ImGui::TextDisabled("Tensor x pipeline%s splits of the %d GPUs; the rest is data parallel.", moe ? " x expert" : "",
                        state.num_gpus);
    const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_SizingStretchSame;
    if (ImGui::BeginTable("layout_table", 6, flags))
    {
        for (const char* h : {"TP", "PP", "EP", "DP", "Per GPU", ""})
            ImGui::TableSetupColumn(h);
        ImGui::TableHeadersRow();
        int index = 0;
        for (const nlohmann::json& row : state.layout_table)
        {
            ImGui::PushID(index++);
            ImGui::TableNextRow();
            for (const char* key : {"tp", "pp", "ep", "dp"})
            {
                ImGui::TableNextColumn();
                ImGui::Text("%d", At(row, key).get<int>());
            }
            ImGui::TableNextColumn();
            if (row.value("ok", false))
            {
                const bool fits = At(row, "fits").is_boolean() && At(row, "fits").get<bool>();
                const double u = At(row, "utilization").is_number() ? At(row, "utilization").get<double>() : 1.0;
                ImGui::TextColored(UtilizationColor(fits ? u : 1.0), "%s%s", FormatBytes(Bytes(row, "device_total_bytes")).c_str(),
                                   fits ? "" : " (does not fit)");
            }
            else
            {
                ImGui::TextDisabled("not possible");
                if (ImGui::IsItemHovered())
                    ImGui::SetTooltip("%s", Text(At(row, "why")).c_str());
            }
            ImGui::TableNextColumn();
            if (row.value("ok", false) && ImGui::SmallButton("Use"))
            {
                state.tensor_parallel = At(row, "tp").get<int>();
                state.pipeline_parallel = At(row, "pp").get<int>();
                state.expert_parallel = At(row, "ep").get<int>();
            }
            ImGui::PopID();
        }
        ImGui::EndTable();
    }
}

//-----------------------------------------------------------------------------
// [SECTION] Pinned results, side by side
//-----------------------------------------------------------------------------

namespace {

std::string PinLabel(const AppState& state)
{
    const nlohmann::json& model = At(state.result, "model");
    std::string label = Text(At(model, "name"));
    const nlohmann::json& f = state.filled;
    if (state.inference)
        label += ", serve " + Text(At(At(f, "inference"), "batch_size")) + " x " + Text(At(At(f, "inference"), "context_len"));
    else
        label += ", " + Text(At(At(f, "training"), "method")) + " bs " + Text(At(At(f, "training"), "batch_size")) +
                 " x " + Text(At(At(f, "training"), "seq_len"));
    label += ", " + std::to_string(state.num_gpus) + " x " + Text(At(At(f, "hardware"), "gpu"));
    return label;
}

}  // namespace

void ShowComparePanel(AppState& state)
{
    char title[64];
    std::snprintf(title, sizeof(title), "Compare (%d pinned)###compare", static_cast<int>(state.pinned.size()));
    const bool open = ImGui::CollapsingHeader(title, state.pinned.empty() ? 0 : ImGuiTreeNodeFlags_DefaultOpen);
    if (!open)
        return;
    ImGui::BeginDisabled(!state.result.value("ok", false) || state.pinned.size() >= 3);
    if (ImGui::Button("Pin this result"))
        state.pinned.push_back({PinLabel(state), state.scenario_text, state.result});
    ImGui::EndDisabled();
    ImGui::SameLine();
    ImGui::TextDisabled("Pin up to three results, then change settings: the table shows them beside the current one.");
    if (state.pinned.empty())
        return;

    const int columns = 2 + static_cast<int>(state.pinned.size());
    if (ImGui::BeginTable("compare", columns, ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV))
    {
        ImGui::TableSetupColumn("");
        for (std::size_t i = 0; i < state.pinned.size(); i++)
            ImGui::TableSetupColumn(("Pinned " + std::to_string(i + 1)).c_str());
        ImGui::TableSetupColumn("Current");
        ImGui::TableHeadersRow();

        std::vector<const nlohmann::json*> results;
        for (const PinnedResult& p : state.pinned)
            results.push_back(&p.result);
        results.push_back(&state.result);

        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::TextDisabled("Scenario");
        for (std::size_t i = 0; i < results.size(); i++)
        {
            ImGui::TableNextColumn();
            ImGui::TextWrapped("%s", i < state.pinned.size() ? state.pinned[i].label.c_str() : PinLabel(state).c_str());
        }
        auto row = [&](const char* name, auto value_of) {
            ImGui::TableNextRow();
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(name);
            const std::uint64_t now = value_of(*results.back());
            for (std::size_t i = 0; i < results.size(); i++)
            {
                ImGui::TableNextColumn();
                const std::uint64_t v = value_of(*results[i]);
                if (i + 1 < results.size() && v != now)
                {
                    const double delta = ToGiB(now) - ToGiB(v);
                    ImGui::Text("%s", FormatBytes(v).c_str());
                    ImGui::SameLine();
                    ImGui::TextDisabled("(now %+.2f)", delta);
                }
                else
                    ImGui::Text("%s", FormatBytes(v).c_str());
            }
        };
        row("Device total", [](const nlohmann::json& r) { return Bytes(At(r, "per_gpu"), "device_total_bytes"); });
        row("Reserved", [](const nlohmann::json& r) { return Bytes(At(r, "per_gpu"), "peak_reserved_bytes"); });
        row("Allocated", [](const nlohmann::json& r) { return Bytes(At(r, "per_gpu"), "peak_allocated_bytes"); });
        for (const Component& c : kComponents)
            row(c.label, [&c](const nlohmann::json& r) { return Bytes(At(At(r, "per_gpu"), "components"), c.key); });

        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        for (std::size_t i = 0; i < state.pinned.size(); i++)
        {
            ImGui::TableNextColumn();
            ImGui::PushID(static_cast<int>(i));
            if (ImGui::SmallButton("Unpin"))
            {
                state.pinned.erase(state.pinned.begin() + static_cast<std::ptrdiff_t>(i));
                ImGui::PopID();
                break;
            }
            ImGui::SameLine();
            if (ImGui::SmallButton("Load"))
                ImportScenario(state, nlohmann::json::parse(state.pinned[i].scenario_text, nullptr, false));
            ImGui::PopID();
        }
        ImGui::EndTable();
    }
}

//-----------------------------------------------------------------------------
// [SECTION] Sharing and saving
//-----------------------------------------------------------------------------

std::string ResultMarkdown(const AppState& state)
{
    const nlohmann::json& r = state.result;
    if (!r.value("ok", false))
        return "";
    const nlohmann::json& per_gpu = At(r, "per_gpu");
    std::string md = "| " + PinLabel(state) + " | GiB |\n|---|---:|\n";
    auto line = [&md](const std::string& name, std::uint64_t bytes) {
        char value[32];
        std::snprintf(value, sizeof(value), "%.2f", ToGiB(bytes));
        md += "| " + name + " | " + value + " |\n";
    };
    for (const Component& c : kComponents)
        if (const std::uint64_t b = Bytes(At(per_gpu, "components"), c.key); b > 0)
            line(c.label, b);
    line("**Allocated peak** (" + Text(At(per_gpu, "peak_phase")) + ")", Bytes(per_gpu, "peak_allocated_bytes"));
    line("**Reserved**", Bytes(per_gpu, "peak_reserved_bytes"));
    line("**Device total**", Bytes(per_gpu, "device_total_bytes"));
    const bool fits = At(r, "fits").is_boolean() && At(r, "fits").get<bool>();
    char tail[96];
    std::snprintf(tail, sizeof(tail), "\n%s: %.0f %% of the card (gpumem %s).\n", fits ? "Fits" : "Does not fit",
                  At(r, "utilization").is_number() ? At(r, "utilization").get<double>() * 100.0 : 0.0, state.version.c_str());
    return md + tail;
}

std::string ResultSummary(const AppState& state)
{
    const nlohmann::json& r = state.result;
    if (!r.is_object())
        return "";
    if (!r.value("ok", false))
    {
        std::string text = "The scenario cannot be estimated:";
        for (const nlohmann::json& e : At(r, "errors"))
            text += " " + Text(At(e, "message")) + ".";
        return text;
    }
    const nlohmann::json& per_gpu = At(r, "per_gpu");
    const bool fits = At(r, "fits").is_boolean() && At(r, "fits").get<bool>();
    char head[256];
    std::snprintf(head, sizeof(head), "%s: %.1f GiB per GPU at the peak (%s), %s: %.0f %% of the card.", PinLabel(state).c_str(),
                  ToGiB(Bytes(per_gpu, "device_total_bytes")), Text(At(per_gpu, "peak_phase")).c_str(),
                  fits ? "fits" : "does not fit",
                  At(r, "utilization").is_number() ? At(r, "utilization").get<double>() * 100.0 : 0.0);
    std::string text = head;
    if (const nlohmann::json& needed = At(r, "gpus_needed"); !fits && needed.is_number())
        text += " GPUs needed: " + std::to_string(needed.get<std::uint64_t>()) + ".";
    // The largest components, biggest first.
    std::vector<std::pair<std::uint64_t, const char*>> parts;
    for (const Component& c : kComponents)
        if (const std::uint64_t b = Bytes(At(per_gpu, "components"), c.key); b > 0)
            parts.push_back({b, c.label});
    std::sort(parts.begin(), parts.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    for (std::size_t i = 0; i < parts.size() && i < 3; i++)
    {
        char part[96];
        std::snprintf(part, sizeof(part), "%s %s %.1f GiB", i == 0 ? " Largest:" : ",", parts[i].second, ToGiB(parts[i].first));
        text += part;
    }
    if (!parts.empty())
        text += ".";
    for (const nlohmann::json& w : At(r, "warnings"))
        text += " Warning: " + Text(w) + ".";
    return text;
}

void ShowSharePanel(AppState& state)
{
    const bool open = ImGui::CollapsingHeader("Share, import and export");
    if (!open)
        return;
    ImGui::TextDisabled("The link in the address bar always holds this scenario (never the access token).");
    const bool have_page = state.page.copy_text != nullptr;
    ImGui::BeginDisabled(!have_page);
    if (ImGui::Button("Copy results as Markdown"))
        state.page.copy_text(ResultMarkdown(state));
    ImGui::SameLine();
    if (ImGui::Button("Copy scenario JSON"))
        state.page.copy_text(nlohmann::json::parse(state.scenario_text, nullptr, false).dump(2));
    ImGui::SameLine();
    if (ImGui::Button("Export scenario.json") && state.page.download != nullptr)
        state.page.download("scenario.json", nlohmann::json::parse(state.scenario_text, nullptr, false).dump(2) + "\n");
    ImGui::SameLine();
    if (ImGui::Button("Import a file...") && state.page.open_file != nullptr)
        state.page.open_file();
    ImGui::EndDisabled();

    ImGui::TextDisabled("Or paste a scenario (v1 or gpu-mem-calculator's config format) or a model's config.json:");
    ImGui::InputTextMultiline("##paste", state.paste_buffer.data(), state.paste_buffer.size(),
                              ImVec2(-FLT_MIN, ImGui::GetTextLineHeight() * 6.0f));
    if (ImGui::Button("Load pasted JSON"))
    {
        // A full box means the paste was cut at its end: say that, not "not valid JSON".
        const std::size_t length = std::strlen(state.paste_buffer.data());
        if (length + 1 >= state.paste_buffer.size())
            state.import_message = "pasted JSON: too large for the paste box (limit " +
                                   std::to_string(state.paste_buffer.size() / 1024) +
                                   " KiB); open or drop the file instead (limit 4 MiB)";
        else if (LoadText(state, state.paste_buffer.data(), "pasted JSON"))
            state.paste_buffer[0] = '\0';
    }
    if (!state.import_message.empty())
    {
        ImGui::SameLine();
        ImGui::PushStyleColor(ImGuiCol_Text, UtilizationColor(1.0));
        ImGui::TextWrapped("%s", state.import_message.c_str());
        ImGui::PopStyleColor();
    }
}

//-----------------------------------------------------------------------------
// [SECTION] Advanced: every tunable factor
//-----------------------------------------------------------------------------

void ShowAdvancedPanel(AppState& state)
{
    if (!ImGui::CollapsingHeader("Advanced factors"))
        return;
    const nlohmann::json& factors = At(At(state.result, "assumptions"), "overheads");
    if (!factors.is_object())
    {
        ImGui::TextDisabled("(shown once the scenario can be estimated)");
        return;
    }
    ImGui::TextDisabled("Each factor the estimate assumes, with its default; change one to match your setup.");
    for (const auto& [key, info] : factors.items())
    {
        const bool changed = state.overheads.contains(key);
        double value = changed ? state.overheads[key].get<double>() : At(info, "value").is_number() ? At(info, "value").get<double>() : 0.0;
        ImGui::PushID(key.c_str());
        const std::string about = Text(At(info, "about")) + "\nUnit: " + Text(At(info, "unit"));
        FormRow(key.c_str(), about.c_str());
        const float reset_w = ImGui::CalcTextSize("Reset").x + ImGui::GetStyle().FramePadding.x * 2.0f;
        ImGui::SetNextItemWidth(-(reset_w + ImGui::GetStyle().ItemSpacing.x));
        if (ImGui::InputDouble("##value", &value, 0.0, 0.0, "%g"))
            state.overheads[key] = std::max(0.0, value);
        ImGui::SameLine();
        ImGui::BeginDisabled(!changed);
        if (ImGui::Button("Reset"))
            state.overheads.erase(key);
        ImGui::EndDisabled();
        ImGui::PopID();
    }
}

}  // namespace gpumem::ui
