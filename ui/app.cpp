// The application layer: catalogues, the estimate of the scenario, and the page layout. See app.h.

#include "app.h"

#include <algorithm>

#include "imgui.h"
#include "panels.h"
#include "share.h"

#include <gpumem/gpumem.h>

namespace gpumem::ui {

namespace {

// The model the page opens on when the catalogue has it.
constexpr const char* kPreferredPreset = "meta-llama/Llama-3.1-8B";

void NoteMoreFields(AppState& state);

}  // namespace

//-----------------------------------------------------------------------------
// [SECTION] State → scenario → estimate
//-----------------------------------------------------------------------------

void AppInit(AppState& state, const nlohmann::json* open)
{
    state.version = gpumem::version();

    for (const nlohmann::json& p : gpumem::list_presets_brief())
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

    state.scenario.model.preset_index = 0;
    for (int i = 0; i < static_cast<int>(state.presets.size()); i++)
        if (state.presets[i].id == kPreferredPreset)
            state.scenario.model.preset_index = i;

    // Ask the core what it assumes for a bare scenario, and start the controls from there:
    // the page then opens on exactly the defaults the CLI would use.
    nlohmann::json bare = {{"version", 1}};
    if (!state.presets.empty())
        bare["model"]["preset"] = state.presets[state.scenario.model.preset_index].id;
    const ResultView first = ReadResult(gpumem::estimate(bare));
    if (first.ok)
    {
        ScenarioState& s = state.scenario;
        s.training.batch_size = first.resolved.training.batch_size;
        s.training.seq_len = first.resolved.training.seq_len;
        s.inference.concurrent_sequences = first.resolved.inference.concurrent_sequences;
        s.inference.context_len = first.resolved.inference.context_len;
        s.hardware.num_gpus = first.resolved.hardware.num_gpus;
        for (int i = 0; i < static_cast<int>(state.gpus.size()); i++)
            if (state.gpus[i].id == first.resolved_gpu)
                s.hardware.gpu_index = i;
    }
    state.default_gpu_index = state.scenario.hardware.gpu_index;
    const Mode mode = state.scenario.mode;
    state.scenario.mode = Mode::Training;
    state.more_default_training = MoreFields(state);
    state.scenario.mode = Mode::Inference;
    state.more_default_inference = MoreFields(state);
    state.scenario.mode = mode;
    state.more_seen = MoreFields(state);
    // The link or the saved settings before the first estimate: the first frame shows what was asked
    // for, not the defaults for one frame and the link the next (issue #29: one estimate, not two).
    if (open != nullptr)
        OpenFromPage(state, *open);
    UpdateEstimate(state);
    NoteMoreFields(state);
}

std::string MoreFields(const AppState& state)
{
    nlohmann::json doc = BuildScenario(state);
    for (const char* top : {"version", "model", "mode", "hardware"})
        doc.erase(top);
    // The hardware's one field under "More": a custom card size (0: the card's own).
    if (state.scenario.hardware.custom_gpu_gb > 0.0f)
        doc["custom_gpu_gb"] = state.scenario.hardware.custom_gpu_gb;
    return doc.dump();
}

bool UpdateEstimate(AppState& state)
{
    const nlohmann::json built = BuildScenario(state);
    std::string key = built.dump() + "|" + state.decisions.calibration.hash + (state.explain_wanted ? "|explain" : "");
    if (key == state.estimate_key && !state.scenario_text.empty())
        return false;
    state.estimate_key = std::move(key);
    const nlohmann::json scenario = Calibrated(state, built);
    state.scenario_text = scenario.dump();
    state.scenario_json = scenario;
    // "explain" is an output option: asked for while its panel is open, never part of the shared scenario.
    nlohmann::json asked = scenario;
    if (state.explain_wanted)
        asked["explain"] = true;
    state.view = ReadResult(gpumem::estimate(asked));
    state.estimate_count++;
    if (state.view.ok)
        state.last_good = state.view;
    if (state.page.set_summary != nullptr)
        state.page.set_summary(ResultSummary(state));

    // The link and the saved settings follow the scenario (not while a link's model is loading:
    // the link it came from stays until the model is there).
    if (state.page.save_state != nullptr && state.link_applied && state.hub.status != HubState::Status::Loading)
    {
        std::string share = ShareState(state).dump();
        if (share != state.share_text)
        {
            state.share_text = std::move(share);
            state.page.save_state(state.share_text);
        }
    }
    return true;
}

nlohmann::json GpuHardware(const GpuEntry& gpu)
{
    nlohmann::json hardware = {{"gpu", gpu.id}};
    if (gpu.imported)
        hardware["gpu_memory_gb"] = gpu.memory_gb;
    return hardware;
}

const GpuEntry* CurrentGpu(const AppState& state)
{
    for (const GpuEntry& gpu : state.gpus)
        if (gpu.id == state.last_good.resolved_gpu)
            return &gpu;
    return state.gpus.empty() ? nullptr : &state.gpus[state.scenario.hardware.gpu_index];
}

//-----------------------------------------------------------------------------
// [SECTION] Page layout
//-----------------------------------------------------------------------------

namespace {

// The first things to set (the model, the mode, the GPUs), then the rest under "More", closed at
// first and opened when something changes a field there while it is closed (AppState::more_open).
void ShowControls(AppState& state)
{
    ShowModelPanel(state);
    ShowHardwarePanel(state);
    if (state.more_open_request)
        ImGui::SetNextItemOpen(true);
    state.more_open_request = false;
    const char* more = state.more_changed ? "More (changed from the defaults)###more" : "More###more";
    state.more_open = ImGui::CollapsingHeader(more);
    if (!state.more_open)
    {
        ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
        ImGui::TextWrapped("%s",
                           state.scenario.IsInference()
                               ? "Weights, KV cache, engine, sequences, context, parallelism, card memory, factors"
                               : "Method, precision, batch, sequence, parallelism, card memory, factors");
        ImGui::PopStyleColor();
        return;
    }
    ImGui::Indent(ImGui::GetStyle().IndentSpacing * 0.5f);
    if (state.scenario.IsInference())
        ShowInferencePanel(state);
    else
        ShowTrainingPanel(state);
    ShowParallelismPanel(state);
    ShowGpuMemoryPanel(state);
    ShowAdvancedPanel(state);
    ImGui::Unindent(ImGui::GetStyle().IndentSpacing * 0.5f);
}

// After an estimate: whether the fields under "More" differ from the defaults, and whether they
// changed while it was closed (then it opens next frame).
void NoteMoreFields(AppState& state)
{
    const std::string fields = MoreFields(state);
    const std::string& defaults =
        state.scenario.IsInference() ? state.more_default_inference : state.more_default_training;
    state.more_changed = fields != defaults;
    if (fields != state.more_seen && state.more_changed && !state.more_open)
        state.more_open_request = true;
    state.more_seen = fields;
}

void ShowResults(AppState& state)
{
    if (!state.view.ok)
    {
        ShowErrorsPanel(state);
        ShowSharePanel(state);
        return;
    }
    ShowSummaryPanel(state);
    ShowBreakdownPanel(state);
    ShowFitPanel(state);
    ShowTimelinePanel(state);
    ShowSweepPanel(state);
    ShowComparePanel(state);
    ShowGpuTablePanel(state);
    ShowLayoutTablePanel(state);
    ShowPlannerPanel(state);
    ShowExportPanel(state);
    ShowCalibrationPanel(state);
    ShowAssumptionsPanel(state);
    ShowSharePanel(state);
    ShowScenarioPanel(state);
}

}  // namespace

void ShowApp(AppState& state)
{
    const ImGuiViewport* viewport = ImGui::GetMainViewport();
    ImGui::SetNextWindowPos(viewport->WorkPos);
    ImGui::SetNextWindowSize(viewport->WorkSize);
    const ImGuiWindowFlags page_flags = ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove |
                                        ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoBringToFrontOnFocus;
    // Keyboard first: the page window has focus from the start, so the arrow keys work without a
    // click. Each column is a scrolling child window: the arrow keys pick a column, Space enters
    // it, the arrow keys move between its controls, Space or Enter uses one, Escape leaves it.
    // (ImGui 1.86's NavFlattened would let the arrows cross columns, but not in scrolling children.)
    if (ImGui::GetFrameCount() <= 1)
        ImGui::SetNextWindowFocus();
    ImGui::Begin("gpumem", nullptr, page_flags);
    BeginDecisionFrame(state);  // decisions.h: the first frame shows the estimate alone

    ImGui::Text("gpumem %s", state.version.c_str());
    ImGui::SameLine();
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    ImGui::TextWrapped("How much GPU memory will this run take, and what is taking it?");
    ImGui::PopStyleColor();
    ShowLinkNotices(state);
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

        if (UpdateEstimate(state))  // this frame's edits show in this frame's results
        {
            EstimateRan(state);  // and the decision panels wait for the next (decisions.h)
            NoteMoreFields(state);
        }

        ImGui::SameLine();
        ImGui::BeginChild("results", ImVec2(0.0f, 0.0f), true);
        ShowResults(state);
        ImGui::EndChild();
    }
    else
    {
        ImGui::BeginChild("page", ImVec2(0.0f, 0.0f), false);
        ShowControls(state);
        if (UpdateEstimate(state))
        {
            EstimateRan(state);
            NoteMoreFields(state);
        }
        ImGui::Spacing();
        ShowResults(state);
        ImGui::EndChild();
    }

    ImGui::End();
}

}  // namespace gpumem::ui
