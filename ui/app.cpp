// The application layer: state → scenario → estimate, and the page layout. See app.h.

#include "app.h"

#include <algorithm>

#include "imgui.h"
#include "panels.h"

#include <gpumem/gpumem.h>

namespace gpumem::ui {

namespace {

// The model the page opens on when the catalogue has it.
constexpr const char* kPreferredPreset = "meta-llama/Llama-3.1-8B";

// j[a][b] when both levels exist, else nullptr.
const nlohmann::json* Find(const nlohmann::json& j, const char* a, const char* b)
{
    if (!j.is_object() || !j.contains(a) || !j[a].is_object() || !j[a].contains(b))
        return nullptr;
    return &j[a][b];
}

int FindInt(const nlohmann::json& j, const char* a, const char* b, int fallback)
{
    const nlohmann::json* v = Find(j, a, b);
    return v != nullptr && v->is_number_integer() ? v->get<int>() : fallback;
}

// Sets `key` only when the user picked a value; "" leaves the choice to the core's defaults.
void SetIfChosen(nlohmann::json& section, const char* key, const std::string& value)
{
    if (!value.empty())
        section[key] = value;
}

}  // namespace

//-----------------------------------------------------------------------------
// [SECTION] State → scenario → estimate
//-----------------------------------------------------------------------------

void AppInit(AppState& state)
{
    state.version = gpumem::version();

    for (const nlohmann::json& p : gpumem::list_presets())
    {
        PresetEntry entry;
        entry.id = p.value("id", "");
        entry.model_type = p.value("model_type", "");
        entry.total_params = p.value("total_params", std::uint64_t{0});
        entry.gated = p.value("gated", false);
        state.presets.push_back(entry);
    }
    for (const nlohmann::json& g : gpumem::list_gpus())
    {
        GpuEntry entry;
        entry.id = g.value("id", "");
        entry.name = g.value("name", entry.id);
        entry.memory_bytes = g.value("memory_bytes", std::uint64_t{0});
        state.gpus.push_back(entry);
    }

    state.preset_index = 0;
    for (int i = 0; i < static_cast<int>(state.presets.size()); i++)
        if (state.presets[i].id == kPreferredPreset)
            state.preset_index = i;

    // Ask the core what it assumes for a bare scenario, and start the controls from there:
    // the page then opens on exactly the defaults the CLI would use.
    nlohmann::json bare = {{"version", 1}};
    if (!state.presets.empty())
        bare["model"]["preset"] = state.presets[state.preset_index].id;
    const nlohmann::json first = gpumem::estimate(bare);
    if (first.value("ok", false) && first.contains("scenario"))
    {
        const nlohmann::json& filled = first["scenario"];
        state.batch_size = FindInt(filled, "training", "batch_size", state.batch_size);
        state.seq_len = FindInt(filled, "training", "seq_len", state.seq_len);
        state.concurrent_sequences = FindInt(filled, "inference", "batch_size", state.concurrent_sequences);
        state.context_len = FindInt(filled, "inference", "context_len", state.context_len);
        state.num_gpus = FindInt(filled, "hardware", "num_gpus", state.num_gpus);
        if (const nlohmann::json* gpu = Find(filled, "hardware", "gpu"); gpu != nullptr && gpu->is_string())
            for (int i = 0; i < static_cast<int>(state.gpus.size()); i++)
                if (state.gpus[i].id == gpu->get<std::string>())
                    state.gpu_index = i;
    }
    UpdateEstimate(state);
}

nlohmann::json BuildScenario(const AppState& state)
{
    nlohmann::json s = {{"version", 1}};
    if (!state.presets.empty())
        s["model"]["preset"] = state.presets[state.preset_index].id;
    s["mode"] = state.inference ? "inference" : "training";

    if (!state.inference)
    {
        nlohmann::json& t = s["training"];
        t["method"] = state.method;
        if (state.method == "lora" || state.method == "qlora")
            t["lora"]["rank"] = state.lora_rank;
        SetIfChosen(t, "dtype", state.dtype);
        SetIfChosen(t, "optimizer", state.optimizer);
        SetIfChosen(t, "activation_checkpointing", state.checkpointing);
        SetIfChosen(t, "attention", state.attention);
        SetIfChosen(t, "loss", state.loss);
        t["batch_size"] = state.batch_size;
        t["seq_len"] = state.seq_len;

        if (!state.engine.empty())
        {
            nlohmann::json& e = s["engine"];
            e["type"] = state.engine;
            if (state.engine == "deepspeed")
            {
                e["zero_stage"] = state.zero_stage;
                SetIfChosen(e, "offload_optimizer", state.offload_optimizer);
            }
            if (state.engine == "fsdp")
                SetIfChosen(e, "fsdp_sharding", state.fsdp_sharding);
        }
        if (state.pipeline_parallel != 1)
            s["parallelism"]["pipeline_parallel_size"] = state.pipeline_parallel;
    }
    else
    {
        nlohmann::json& inf = s["inference"];
        inf["batch_size"] = state.concurrent_sequences;
        inf["context_len"] = state.context_len;
        SetIfChosen(inf, "weight_format", state.weight_format);
        SetIfChosen(inf, "kv_cache_dtype", state.kv_cache_dtype);
        SetIfChosen(inf, "engine", state.serving_engine);
    }
    if (state.tensor_parallel != 1)
        s["parallelism"]["tensor_parallel_size"] = state.tensor_parallel;

    if (!state.gpus.empty())
        s["hardware"]["gpu"] = state.gpus[state.gpu_index].id;
    s["hardware"]["num_gpus"] = state.num_gpus;
    return s;
}

bool UpdateEstimate(AppState& state)
{
    const nlohmann::json scenario = BuildScenario(state);
    std::string text = scenario.dump();
    if (text == state.scenario_text)
        return false;
    state.scenario_text = std::move(text);
    state.result = gpumem::estimate(scenario);
    state.estimate_count++;
    if (state.result.value("ok", false) && state.result.contains("scenario"))
        state.filled = state.result["scenario"];
    return true;
}

void RecordItemRect(AppState& state, const char* name)
{
    const ImVec2 min = ImGui::GetItemRectMin();
    const ImVec2 max = ImGui::GetItemRectMax();
    state.widget_rects[name] = WidgetRect{min.x, min.y, max.x - min.x, max.y - min.y};
}

//-----------------------------------------------------------------------------
// [SECTION] Page layout
//-----------------------------------------------------------------------------

namespace {

void ShowControls(AppState& state)
{
    ShowModelPanel(state);
    if (state.inference)
        ShowInferencePanel(state);
    else
        ShowTrainingPanel(state);
    ShowParallelismPanel(state);
    ShowHardwarePanel(state);
}

void ShowResults(AppState& state)
{
    if (!state.result.value("ok", false))
    {
        ShowErrorsPanel(state);
        return;
    }
    ShowSummaryPanel(state);
    ShowBreakdownPanel(state);
    ShowAssumptionsPanel(state);
    ShowScenarioPanel(state);
}

}  // namespace

void ShowApp(AppState& state)
{
    state.widget_rects.clear();

    const ImGuiViewport* viewport = ImGui::GetMainViewport();
    ImGui::SetNextWindowPos(viewport->WorkPos);
    ImGui::SetNextWindowSize(viewport->WorkSize);
    const ImGuiWindowFlags page_flags = ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove |
                                        ImGuiWindowFlags_NoSavedSettings |
                                        ImGuiWindowFlags_NoBringToFrontOnFocus;
    ImGui::Begin("gpumem", nullptr, page_flags);

    ImGui::Text("gpumem %s", state.version.c_str());
    ImGui::SameLine();
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    ImGui::TextWrapped("How much GPU memory will this run take, and what is taking it?");
    ImGui::PopStyleColor();
    ImGui::Separator();

    // Side by side when there is room for both columns, one scrolling column on a phone.
    const float font = ImGui::GetFontSize();
    const float avail = ImGui::GetContentRegionAvail().x;
    if (avail >= 56.0f * font)
    {
        const float controls_w = std::clamp(avail * 0.36f, 30.0f * font, 40.0f * font);
        ImGui::BeginChild("controls", ImVec2(controls_w, 0.0f), true);
        ShowControls(state);
        ImGui::EndChild();

        UpdateEstimate(state);  // this frame's edits show in this frame's results

        ImGui::SameLine();
        ImGui::BeginChild("results", ImVec2(0.0f, 0.0f), true);
        ShowResults(state);
        ImGui::EndChild();
    }
    else
    {
        ImGui::BeginChild("page", ImVec2(0.0f, 0.0f), false);
        ShowControls(state);
        UpdateEstimate(state);
        ImGui::Spacing();
        ShowResults(state);
        ImGui::EndChild();
    }

    ImGui::End();
}

}  // namespace gpumem::ui
