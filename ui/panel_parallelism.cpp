// The parallelism and hardware panels (how the job is spread over which cards), and the advanced
// factors: every tunable factor the estimate assumes, with its default.

#include <algorithm>
#include <string>
#include <vector>

#include "app.h"
#include "imgui.h"
#include "panels.h"
#include "widgets.h"

namespace gpumem::ui {

//-----------------------------------------------------------------------------
// [SECTION] Parallelism, hardware and the advanced factors
//-----------------------------------------------------------------------------

void ShowParallelismPanel(AppState& state)
{
    if (!ImGui::CollapsingHeader("Parallelism", ImGuiTreeNodeFlags_DefaultOpen))
        return;
    ParallelSettings& par = state.scenario.parallel;
    const ParallelSettings& resolved = state.last_good.resolved.parallel;

    if (!state.scenario.IsInference())
    {
        FormRow("Engine",
                "How state is spread over data-parallel GPUs: DDP replicates it, ZeRO and "
                "FSDP shard it.");
        SettingCombo("##engine", par.engine, resolved.engine);
        if (state.scenario.IsDeepSpeed())
        {
            FormRow("ZeRO stage",
                    "1: optimizer states sharded over data-parallel GPUs.\n"
                    "2: + gradients.\n3: + the weights themselves.");
            NumberSlider("##zero_stage", "ZeRO stage", par.zero_stage, 0, 3, Snap::PowersOfTwo);
            FormRow("Offload optimizer", "ZeRO-Offload: optimizer states live in host RAM (or NVMe).");
            SettingCombo("##offload_optimizer", par.offload_optimizer, resolved.offload_optimizer);
            if (par.zero_stage == 3)
            {
                FormRow("Offload weights", "ZeRO-Infinity: the weights themselves live in host RAM (or NVMe).");
                SettingCombo("##offload_param", par.offload_param, resolved.offload_param);
            }
        }
        if (par.engine == EngineType::Fsdp)
        {
            FormRow("Sharding");
            SettingCombo("##fsdp_sharding", par.fsdp_sharding, resolved.fsdp_sharding);
        }
    }

    FormRow("Tensor parallel", "GPUs that split each weight matrix (Megatron / vLLM tensor parallelism).");
    NumberInput("##tensor_parallel", "Tensor parallel", par.tensor_parallel, 1, 64);
    // Serving over several GPUs with no layout given: the core splits the model by tensor parallelism.
    if (state.scenario.IsInference() && par.tensor_parallel == 1 && resolved.tensor_parallel > 1)
        ImGui::TextDisabled("Serving over %d GPUs: tensor parallel %d by default", state.scenario.hardware.num_gpus,
                            resolved.tensor_parallel);
    if (!state.scenario.IsInference())
    {
        FormRow("Pipeline parallel", "Pipeline stages; the figures are for the heaviest stage.");
        NumberInput("##pipeline_parallel", "Pipeline parallel", par.pipeline_parallel, 1, 64);
        FormRow("Context parallel", "GPUs that split each sequence (ring attention); activations shrink with it.");
        NumberInput("##context_parallel", "Context parallel", par.context_parallel, 1, 64);
        if (par.tensor_parallel > 1)
        {
            FormRow("");
            ImGui::Checkbox("Sequence parallel", &par.sequence_parallel);
            ImGui::SameLine();
            HelpMarker(
                "Megatron's sequence parallelism: the activations outside the tensor-parallel regions "
                "(norms, dropout) are split over the tensor-parallel GPUs too.");
        }
    }
    FormRow("Expert parallel", "GPUs that split a mixture-of-experts layer's experts.");
    NumberInput("##expert_parallel", "Expert parallel", par.expert_parallel, 1, 1024);
}

void ShowHardwarePanel(AppState& state)
{
    if (!ImGui::CollapsingHeader("Hardware", ImGuiTreeNodeFlags_DefaultOpen))
        return;

    FormRow("GPU",
            "The catalogue's cards, and those you imported (a gpu_types.json, under Share, import "
            "and export), marked as such.");
    // An imported card says so; its ID is its place among them (###imported_gpu_N), for the tests.
    auto label = [&state](int i) {
        std::string text = state.gpus[i].name;
        if (state.gpus[i].imported)
        {
            int n = 0;
            for (int k = 0; k <= i; k++)
                n += state.gpus[k].imported ? 1 : 0;
            text += " (imported)###imported_gpu_" + std::to_string(n);
        }
        return text;
    };
    const std::string preview = state.gpus.empty() ? "(no GPUs)" : label(state.scenario.hardware.gpu_index);
    AccessCombo("##gpu", preview.substr(0, preview.find("###")));
    if (ImGui::BeginCombo("##gpu", preview.substr(0, preview.find("###")).c_str(), ImGuiComboFlags_HeightLarge))
    {
        // Filtered as you type; the user's own cards first, then by vendor (the name's first word) and memory.
        static char filter[64] = "";
        const bool enter = ComboFilter("##gpu_filter", filter, sizeof(filter), "filter, e.g. h100 80");
        std::vector<int> order;
        for (int i = 0; i < static_cast<int>(state.gpus.size()); i++)
            if (FilterMatches(filter, state.gpus[i].name) || FilterMatches(filter, state.gpus[i].id))
                order.push_back(i);
        auto vendor = [&state](int i) {
            const std::string& name = state.gpus[i].name;
            return name.substr(0, name.find(' '));
        };
        std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
            const GpuEntry &x = state.gpus[a], &y = state.gpus[b];
            if (x.imported != y.imported)
                return x.imported;
            if (vendor(a) != vendor(b))
                return vendor(a) < vendor(b);
            if (x.memory_bytes != y.memory_bytes)
                return x.memory_bytes < y.memory_bytes;
            return x.name < y.name;
        });
        AccessDescribe("text field",
                       std::string(filter) + (filter[0] != '\0' ? ", " : "") + std::to_string(order.size()) + " of " +
                           std::to_string(state.gpus.size()) + " cards shown",
                       "GPU filter");
        if (enter && !order.empty())  // Enter in the filter takes the first card shown
        {
            state.scenario.hardware.gpu_index = order.front();
            filter[0] = '\0';
            ImGui::CloseCurrentPopup();
        }
        for (int i : order)
        {
            const bool selected = i == state.scenario.hardware.gpu_index;
            if (ImGui::Selectable(label(i).c_str(), selected))
            {
                state.scenario.hardware.gpu_index = i;
                filter[0] = '\0';
            }
            AccessDescribe("option", FormatBytes(state.gpus[i].memory_bytes));
            ImGui::SameLine(ImGui::GetWindowContentRegionMax().x - ImGui::CalcTextSize("000.0 GiB").x);
            ImGui::TextDisabled("%s", FormatBytes(state.gpus[i].memory_bytes).c_str());
            if (selected)
                ImGui::SetItemDefaultFocus();
        }
        ImGui::EndCombo();
    }

    FormRow("Number of GPUs",
            "All GPUs in the job. Training: the data-parallel size is this divided by tensor x pipeline parallel. "
            "Serving with no tensor parallel set: one server split over them by tensor parallelism (transformers, "
            "llama.cpp: whole layers per GPU); the line below says the layout.");
    NumberInput("##num_gpus", "Number of GPUs", state.scenario.hardware.num_gpus, 1, 4096);
    // The layout in words (the core's), so that a count never silently means replicas.
    if (state.scenario.hardware.num_gpus > 1 && !state.last_good.layout_text.empty())
        TextNotice("##layout", ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled), state.last_good.layout_text.c_str());
}

// Under "More": a card size of one's own, rarely set (the catalogue's is the usual answer).
void ShowGpuMemoryPanel(AppState& state)
{
    if (!ImGui::CollapsingHeader("Card memory", ImGuiTreeNodeFlags_DefaultOpen))
        return;
    FormRow("Custom size (GiB)",
            "A card with this much memory (GiB, 2^30 bytes, as gpu_memory_gb in a scenario) "
            "instead of the catalogue's figure: for cards not listed, or memory already "
            "taken. Empty: the catalogue's, shown as default (value).");
    // The default is the size the core used: the card's (gpu_memory_gb in the resolved scenario).
    NumberInputFloat(
        "##gpu_memory_gb", "Custom size (GiB)", state.scenario.hardware.custom_gpu_gb, 0.0f, 100000.0f,
        DefaultLabel(ResolvedNumber(state.last_good.resolved_json, {"hardware", "gpu_memory_gb"}).c_str()));
}

void ShowAdvancedPanel(AppState& state)
{
    if (!ImGui::CollapsingHeader("Advanced factors"))
        return;
    if (!state.view.ok || state.view.overhead_factors.empty())
    {
        ImGui::TextDisabled("(shown once the scenario can be estimated)");
        return;
    }
    nlohmann::json& overheads = state.scenario.overheads;
    ImGui::TextDisabled("Each factor the estimate assumes, with its default; change one to match your setup.");
    for (const FactorView& factor : state.view.overhead_factors)
    {
        const bool changed = overheads.contains(factor.key);
        double value = changed ? overheads[factor.key].get<double>() : factor.value;
        ImGui::PushID(factor.key.c_str());
        const std::string about = factor.about + "\nUnit: " + factor.unit;
        FormRow(factor.key.c_str(), about.c_str());
        const float reset_w = ImGui::CalcTextSize("Reset").x + ImGui::GetStyle().FramePadding.x * 2.0f;
        ImGui::SetNextItemWidth(-(reset_w + ImGui::GetStyle().ItemSpacing.x));
        if (ImGui::InputDouble("##value", &value, 0.0, 0.0, "%g"))
            overheads[factor.key] = std::max(0.0, value);
        ImGui::SameLine();
        ImGui::BeginDisabled(!changed);
        if (ImGui::Button("Reset"))
            overheads.erase(factor.key);
        ImGui::EndDisabled();
        ImGui::PopID();
    }
}

}  // namespace gpumem::ui
