// The results of one estimate: the headline figures, the breakdown per GPU, the step timeline, the
// warnings and assumptions, the scenario JSON, and what is wrong with a scenario that has errors.
// Every figure is the core's, read once per estimate into AppState::view.

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "app.h"
#include "decisions.h"
#include "imgui.h"
#include "panels.h"
#include "share.h"
#include "widgets.h"

#include <gpumem/gpumem.h>

namespace gpumem::ui {

namespace {

// More bars than this and the rest are summarised in a line: they are the same.
constexpr int kMaxBars = 8;

// Phase names as the page shows them.
const char* PhaseLabel(const std::string& phase)
{
    if (phase == "forward")
        return "Forward";
    if (phase == "loss")
        return "Loss";
    if (phase == "backward")
        return "Backward";
    if (phase == "optimizer_step")
        return "Optimizer step";
    if (phase == "prefill")
        return "Prefill";
    if (phase == "decode")
        return "Decode";
    if (phase == "encode_images")
        return "Encode images";
    if (phase == "load")
        return "Load";
    return phase.c_str();
}

}  // namespace

//-----------------------------------------------------------------------------
// [SECTION] One estimate: the figures, the breakdown, the timeline, the assumptions
//-----------------------------------------------------------------------------

void ShowSummaryPanel(AppState& state)
{
    const ResultView& r = state.view;
    const std::uint64_t device_total = r.device_total_bytes;
    const double utilization = r.utilization;

    // The headline: what nvidia-smi would show on the busiest GPU, against the memory the verdict
    // was judged on (a custom size when one is set, which the line says).
    state.displayed_peak = FormatBytes(device_total);
    state.displayed_peak_bytes = device_total;
    ImGui::PushTextWrapPos(0.0f);  // wrapped at the column's edge (a phone's column is ~30 characters)
    if (r.fills_budget)
        ImGui::TextDisabled(
            "Per GPU, what the serving engine claims at start-up (its share of the card, whatever it "
            "serves)");
    else
        ImGui::TextDisabled("Per GPU, at the peak of %s", state.scenario.IsInference() ? "serving" : "a training step");
    ImGui::PopTextWrapPos();
    // The large font holds only FormatBytes' characters (main.cpp).
    const bool large =
        state.font_large != nullptr && state.displayed_peak.find_first_not_of(kFormatBytesChars) == std::string::npos;
    if (large)
        ImGui::PushFont(state.font_large);
    ImGui::TextColored(UtilizationColor(utilization), "%s", state.displayed_peak.c_str());
    if (large)
        ImGui::PopFont();
    ImGui::SameLine();
    ImGui::AlignTextToFramePadding();
    TextNotice("##headline_card", ImGui::GetStyleColorVec4(ImGuiCol_Text), CapacityText(state).c_str());

    // The verdict in three states, coloured: the band's top fits (green), only the point fits (amber), or the
    // point does not fit (red).
    const bool borderline = r.verdict == "borderline";
    // An engine that fills its budget (vLLM, SGLang, TGI, TensorRT-LLM) claims the same share of the card whatever
    // it serves: its verdict is the sequences its KV pool holds.
    char verdict[256];
    const char* state_word = !r.fits      ? "Does not fit"
                             : borderline ? "Borderline (the estimate fits, the top of its error band does not)"
                                          : "Fits";
    if (r.fills_budget)
        std::snprintf(verdict, sizeof(verdict), "%s: %s.", state_word,
                      PoolText({true, r.max_concurrent_sequences, r.requested_sequences, r.at_context_len,
                                r.kv_cache_tokens, r.kv_cache_bytes})
                          .c_str());
    else
        std::snprintf(verdict, sizeof(verdict), "%s: %.0f %% of %s.", state_word, utilization * 100.0,
                      FormatBytes(r.capacity_bytes).c_str());
    TextNotice("##verdict",
               UtilizationColor(!r.fits      ? 1.0
                                : borderline ? 0.9
                                             : std::min(r.fills_budget ? 0.5 : utilization, 0.79)),
               verdict);
    if (r.gpus_needed)
    {
        if (!NarrowColumn())  // on a phone, a line of its own
            ImGui::SameLine();
        ImGui::Text(NarrowColumn() ? "GPUs needed: %d" : " GPUs needed: %d", static_cast<int>(*r.gpus_needed));
        ImGui::SameLine();
        HelpMarker(
            "The fewest GPUs of this model that would hold the job with the same settings, "
            "sharding what the engine shards.");
    }

    // The error band: where measured runs like this one landed, against this estimate.
    if (r.band_high_bytes > r.band_low_bytes)
    {
        const bool own = r.band_origin == "calibration";
        char band[256];
        std::snprintf(band, sizeof(band), "Error band: %s - %s (%s %llu %s%s); %.0f %% of them would not have fit.",
                      FormatBytes(r.band_low_bytes).c_str(), FormatBytes(r.band_high_bytes).c_str(),
                      r.band_runs < 9 ? "all" : "80 % of", static_cast<unsigned long long>(r.band_runs),
                      own ? "of your calibration's runs" : "measured runs",
                      r.band_level == "class"         ? " like this"
                      : r.band_level == "mode_method" ? " of the same mode and method, too few like this"
                      : r.band_level == "mode"        ? " of the same mode, too few like this"
                                                      : ", too few like this",
                      r.band_oom_share * 100.0);
        HelpMarker(r.band_note.empty()
                       ? "Measured / estimated of the published runs of the same mode, framework or engine, method "
                         "and single or multi-GPU (tests/data/validation), this run left out; the band holds 80 % "
                         "of them, scaled onto this estimate. A calibration draws it from your own runs."
                       : r.band_note.c_str());
        ImGui::SameLine();
        TextNotice("##band", ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled), band);
    }

    // What the link set that changes the verdict or the figures, and the way back to the defaults.
    if (const std::vector<std::string> set = LinkValuesInEffect(state); !set.empty())
    {
        std::string text = "Set by the link: ";
        for (std::size_t i = 0; i < set.size(); i++)
            text += (i == 0 ? "" : "; ") + set[i];
        TextNotice("##link_values", UtilizationColor(0.9), (text + ".").c_str());
        if (CompactButton("Back to defaults##link_values"))
            ClearLinkValues(state);
        ImGui::SameLine();
        HelpMarker(
            "A link can carry values that are not the run's own settings: a card size, overhead factors, "
            "a calibration. These are the ones this link set; the button clears exactly these and keeps "
            "the rest of its settings.");
    }

    if (ImGui::BeginTable("figures", 3, ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_RowBg))
    {
        const std::string& phase = r.peak_phase;
        auto row = [](const char* name, std::uint64_t bytes, const char* help) {
            ImGui::TableNextRow();
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(name);
            ImGui::TableNextColumn();
            ImGui::Text("%s", FormatBytes(bytes).c_str());
            ImGui::TableNextColumn();
            HelpMarker(help);
        };
        row("Allocated peak", r.peak_allocated_bytes,
            "What torch.cuda.max_memory_allocated() would report: the tensors alive at the peak of the step.");
        row("Reserved", r.peak_reserved_bytes,
            "Allocated plus the caching allocator's slack (fragmentation): torch.cuda.max_memory_reserved(). "
            "The slack is an assumed factor, listed under Assumptions.");
        row("Device total", device_total,
            "Reserved plus the CUDA context, kernels and library workspaces: what nvidia-smi shows. "
            "The context size is an assumed figure, listed under Assumptions.");
        ImGui::EndTable();
        if (!phase.empty())
            ImGui::TextDisabled("The peak falls in: %s", phase.c_str());
    }

    if (r.has_parameters)
        ImGui::TextWrapped("Parameters: %s total, %s trainable", FormatCount(r.params_total).c_str(),
                           FormatCount(r.params_trainable).c_str());
    if (r.host_bytes > 0)
        ImGui::Text("Host RAM for offloaded state: %s", FormatBytes(r.host_bytes).c_str());
    if (const CalibrationState& c = state.decisions.calibration; !c.hash.empty())
    {
        ImGui::TextDisabled("Calibrated: %s (%s)", gpumem::display_text(c.name, kNameChars).c_str(), c.hash.c_str());
        ImGui::SameLine();
        HelpMarker(
            "The runtime overheads the scenario leaves open come from this calibration file (under "
            "Calibration), fitted to measured peaks, instead of the estimator's defaults.");
    }
    if (r.has_serving)
    {
        ImGui::Text("KV cache: %s tokens (%s blocks); %s sequences of %s tokens at once",
                    FormatCount(r.kv_cache_tokens).c_str(), FormatCount(r.kv_cache_blocks).c_str(),
                    FormatCount(r.max_concurrent_sequences).c_str(), FormatCount(r.at_context_len).c_str());
        ImGui::SameLine();
        HelpMarker(
            "The engine claims its share of the card at start-up (vLLM: gpu_memory_utilization; SGLang: "
            "mem_fraction_static; TGI, TensorRT-LLM: a fraction of the free memory), keeps the weights and its "
            "profiling step's activations, and turns every byte left into KV-cache blocks. The device total is that "
            "claim whatever the batch; what the batch needs is sequences in the pool.");
    }
    if (state.scenario.IsInference() && !r.layout_text.empty())
        ImGui::TextDisabled("Layout: %s.", r.layout_text.c_str());
    ImGui::Spacing();
}

namespace {

// One figure of the explanation: what it is, its rule, the numbers, its source; each line drawn is
// also kept in `shown` for the browser tests.
void ExplainFigure(const std::string& key, const nlohmann::json& figures, nlohmann::json& shown)
{
    auto line = [&shown](const std::string& text, bool dim) {
        shown.push_back(text);
        if (dim)
            ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
        ImGui::TextWrapped("%s", text.c_str());
        if (dim)
            ImGui::PopStyleColor();
    };
    if (!figures.contains(key))
        return;
    const nlohmann::json& f = figures[key];
    auto text = [](const nlohmann::json& v, const char* name) {
        return v.contains(name) && v[name].is_string() ? v[name].get<std::string>() : std::string();
    };
    auto list = [](const nlohmann::json& v, const char* name) {
        return v.contains(name) && v[name].is_array() ? v[name] : nlohmann::json::array();
    };
    const std::string kind = text(f, "kind");
    line(key + " = " + text(f, "text") + ": " + text(f, "what"), false);
    ImGui::Indent();
    if (kind != "sum")
        line(text(f, "formula"), true);
    if (kind == "product")
        line("= " + text(f, "with"), false);
    for (const nlohmann::json& part : list(f, "parts"))
        line("+ " + text(part, "name") + ": " + text(part, "with"), false);
    for (const nlohmann::json& input : list(f, "inputs"))
        line(text(input, "name") + " = " + text(input, "text"), false);
    for (const nlohmann::json& by : list(f, "scaled_by"))
        line(std::string(by.value("divides", false) ? "÷ " : "× ") + text(by, "name") + " = " + text(by, "text"),
             false);
    if (f.contains("source"))
        line("source: " + text(f, "source"), true);
    ImGui::Unindent();
}

// "Why these figures": each component at the peak opens to the figures it adds up, and the
// timeline's phases to theirs (the result's "explain", built by the code that computes them).
void ShowExplanation(AppState& state)
{
    state.explain_shown = nlohmann::json::object();
    state.explain_wanted = ImGui::CollapsingHeader("Why these figures###why");
    if (!state.explain_wanted)
        return;
    const nlohmann::json& e = state.view.explain;
    if (!e.is_object() || !e.contains("peak") || !e.contains("figures"))
    {
        ImGui::TextDisabled("Working out the figures...");  // the next frame's estimate records them
        return;
    }
    ImGui::TextDisabled("Each component is the sum of the figures listed; each figure is computed as shown.");
    const nlohmann::json& figures = e["figures"];
    for (int i = 0; i < kComponentCount; i++)
    {
        const char* key = kComponentKeys[i];
        const std::uint64_t bytes = state.view.components[i];
        if (bytes == 0 || !e["peak"].contains(key))
            continue;
        const std::string label = std::string(kComponents[i].label) + "  " + FormatBytes(bytes) + "###why_" + key;
        if (!ImGui::TreeNode(label.c_str()))
            continue;
        nlohmann::json& shown = state.explain_shown[key];
        shown = nlohmann::json::array();
        for (const nlohmann::json& term : e["peak"][key])
            ExplainFigure(term.value("figure", std::string()), figures, shown);
        ImGui::TreePop();
    }
    if (!ImGui::TreeNode("Each phase, by the figures it adds up###why_phases"))
        return;
    nlohmann::json& shown = state.explain_shown["phases"];
    shown = nlohmann::json::array();
    const nlohmann::json& phases = e.contains("phases") ? e["phases"] : nlohmann::json::object();
    for (const PhaseView& phase : state.view.timeline)
    {
        const std::string head = std::string(PhaseLabel(phase.phase)) + ": " + FormatBytes(phase.allocated_bytes);
        shown.push_back(head);
        ImGui::TextUnformatted(head.c_str());
        if (!phases.contains(phase.phase))
            continue;
        ImGui::Indent();
        for (int i = 0; i < kComponentCount; i++)
        {
            const nlohmann::json& terms = phases[phase.phase].value(kComponentKeys[i], nlohmann::json::array());
            if (terms.empty())
                continue;
            std::string line = std::string(kComponents[i].label) + ":";
            for (std::size_t t = 0; t < terms.size(); t++)
                line += std::string(t == 0 ? " " : " + ") + terms[t].value("figure", std::string()) + " " +
                        FormatBytes(static_cast<std::uint64_t>(terms[t].value("bytes", 0.0)));
            shown.push_back(line);
            ImGui::TextDisabled("%s", line.c_str());
        }
        ImGui::Unindent();
    }
    ImGui::TreePop();
}

}  // namespace

void ShowBreakdownPanel(AppState& state)
{
    if (!ImGui::CollapsingHeader("Breakdown per GPU", ImGuiTreeNodeFlags_DefaultOpen))
        return;

    const double capacity = ToGiB(state.view.capacity_bytes);  // what the verdict was judged against

    const char* labels[kComponentCount];
    ImU32 colors[kComponentCount];
    double values[kComponentCount];
    double total = 0.0;
    for (int i = 0; i < kComponentCount; i++)
    {
        labels[i] = kComponents[i].label;
        colors[i] = kComponents[i].color;
        values[i] = ToGiB(state.view.components[i]);
        total += values[i];
    }

    const int bars = std::min(state.scenario.hardware.num_gpus, kMaxBars);
    if (BeginStackedBars("##per_gpu", std::max({capacity, total, ToGiB(state.view.band_high_bytes)}) * 1.05))
    {
        SetupStackedBarsItems(labels, colors, kComponentCount);
        for (int g = 0; g < bars; g++)
        {
            char name[16];
            std::snprintf(name, sizeof(name), "GPU %d", g);
            PlotStackedBar(name, values, kComponentCount, capacity, ToGiB(state.view.band_low_bytes),
                           ToGiB(state.view.band_high_bytes));
        }
        EndStackedBars();
    }
    if (state.scenario.hardware.num_gpus > bars)
        ImGui::TextDisabled("... and %d more GPUs like these.", state.scenario.hardware.num_gpus - bars);
    if (state.scenario.hardware.num_gpus > 1)
    {
        ImGui::TextDisabled("Each bar shows the busiest GPU of the layout.");
        ImGui::SameLine();
        HelpMarker(
            "With pipeline parallelism the first and last stages hold the embeddings and the "
            "head; the figures are for the heaviest stage, so the others hold at most this.");
    }

    // Legend with values, largest first would reorder the bars' colours: keep stacking order. On a phone the
    // figures drop their padding so the share column stays on screen.
    const bool narrow_legend = NarrowColumn();
    if (ImGui::BeginTable("legend", 4, ImGuiTableFlags_SizingFixedFit))
    {
        for (int i = 0; i < kComponentCount; i++)
        {
            if (values[i] <= 0.0)
                continue;
            ImGui::TableNextRow();
            ImGui::TableNextColumn();
            ImGui::ColorButton(labels[i], ImGui::ColorConvertU32ToFloat4(colors[i]),
                               ImGuiColorEditFlags_NoTooltip | ImGuiColorEditFlags_NoPicker,
                               ImVec2(ImGui::GetFontSize(), ImGui::GetFontSize()));
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(labels[i]);
            ImGui::TableNextColumn();
            ImGui::Text(narrow_legend ? "%.2f GiB" : "%8.2f GiB", values[i]);
            ImGui::TableNextColumn();
            ImGui::TextDisabled(narrow_legend ? "%.1f %%" : "%5.1f %%", total > 0.0 ? values[i] / total * 100.0 : 0.0);
        }
        ImGui::EndTable();
    }
    ShowExplanation(state);
    ImGui::Spacing();
}

void ShowAssumptionsPanel(AppState& state)
{
    const ResultView& r = state.view;
    const std::vector<std::string>& warnings = r.warnings;
    const std::vector<std::string>& defaults = r.defaults_applied;

    if (!warnings.empty())
    {
        char title[48];
        std::snprintf(title, sizeof(title), "Warnings (%d)###warnings", static_cast<int>(warnings.size()));
        if (ImGui::CollapsingHeader(title, ImGuiTreeNodeFlags_DefaultOpen))
        {
            ImGui::PushStyleColor(ImGuiCol_Text, UtilizationColor(0.9));
            for (const std::string& w : warnings)
                BulletWrapped(w);
            ImGui::PopStyleColor();
        }
    }

    char title[48];
    std::snprintf(title, sizeof(title), "Assumptions (%d)###assumptions", static_cast<int>(defaults.size()));
    if (ImGui::CollapsingHeader(title, ImGuiTreeNodeFlags_DefaultOpen))
    {
        ImGui::TextDisabled("Defaults the estimate applied because the scenario left them open:");
        for (const std::string& d : defaults)
            BulletWrapped(d);
        if (!r.factors.empty() && ImGui::TreeNode("Factors"))
        {
            for (const auto& [key, value] : r.factors)
                ImGui::BulletText("%s: %s", key.c_str(), value.c_str());
            ImGui::TreePop();
        }
    }
}

void ShowScenarioPanel(AppState& state)
{
    if (!ImGui::CollapsingHeader("Scenario JSON"))
        return;
    ImGui::TextDisabled("The scenario as sent to the estimator (the CLI reads the same file):");
    const std::string pretty = state.scenario_json.dump(2);
    ImGui::TextUnformatted(pretty.c_str());
    if (ImGui::Button("Copy"))
        ImGui::SetClipboardText(pretty.c_str());
    ImGui::SameLine();
    ImGui::TextDisabled("estimates run: %d", state.estimate_count);
}

void ShowErrorsPanel(AppState& state)
{
    state.displayed_peak.clear();
    state.displayed_peak_bytes = 0;
    const bool waiting = (state.scenario.model.source == ModelSource::Hub && state.hub.config.is_null()) ||
                         (state.scenario.model.source == ModelSource::Config && state.scenario.model.config.is_null());
    if (waiting)
    {
        ImGui::TextWrapped(state.scenario.model.source == ModelSource::Hub
                               ? "No model yet: fetch one from the Hub (Model, on the left), or pick a preset."
                               : "No config.json yet: drop one on the page, open a file, or paste it below.");
        return;
    }
    ImGui::TextColored(UtilizationColor(1.0), "This scenario cannot be estimated:");
    for (const std::string& e : state.view.errors)
        BulletWrapped(e);
    ShowScenarioPanel(state);
}

void ShowTimelinePanel(AppState& state)
{
    const std::vector<PhaseView>& timeline = state.view.timeline;
    if (timeline.empty())
        return;
    if (!ImGui::CollapsingHeader("Step timeline", ImGuiTreeNodeFlags_DefaultOpen))
        return;
    ImGui::TextDisabled("Allocated memory in each phase of %s:",
                        state.scenario.IsInference() ? "serving" : "a training step");
    ImGui::SameLine();
    HelpMarker(
        "What is alive at the high-water mark of each phase. The peak is the tallest bar; overheads "
        "outside PyTorch's allocator (CUDA context, NCCL) are in the device total only.");

    const char* labels[kComponentCount];
    ImU32 colors[kComponentCount];
    for (int i = 0; i < kComponentCount; i++)
    {
        labels[i] = kComponents[i].label;
        colors[i] = kComponents[i].color;
    }
    double x_max = 0.0;
    for (const PhaseView& phase : timeline)
        x_max = std::max(x_max, ToGiB(phase.allocated_bytes));
    const double capacity = ToGiB(state.view.capacity_bytes);
    if (BeginStackedBars("##timeline", std::max(x_max, capacity) * 1.05, "GiB", 0.0f, "Optimizer step (peak)"))
    {
        SetupStackedBarsItems(labels, colors, kComponentCount);
        for (const PhaseView& phase : timeline)
        {
            double values[kComponentCount];
            for (int i = 0; i < kComponentCount; i++)
                values[i] = ToGiB(phase.components[i]);
            std::string label = PhaseLabel(phase.phase);
            if (phase.phase == state.view.peak_phase)
                label += " (peak)";
            PlotStackedBar(label.c_str(), values, kComponentCount, capacity);
        }
        EndStackedBars();
    }
    ImGui::Spacing();
}

}  // namespace gpumem::ui
