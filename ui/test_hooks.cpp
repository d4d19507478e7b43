// The test hooks: see test_hooks.h. Dear ImGui 1.86 calls ImGuiTestEngineHook_ItemAdd() for
// every item with an ID, before clipping, with the rectangle it occupies; this file is the only
// place that knows which items the browser tests name.

#include "test_hooks.h"

#include <gpumem/gpumem.h>

#include <cstdarg>
#include <cstdint>
#include <string>
#include <vector>

#include "imgui.h"
#include "access.h"
#include "imgui_internal.h"
#include "scenario_state.h"  // kComponentKeys: the explanation's entries

namespace gpumem::ui {

namespace {

// A name the tests use, and the label (or ID string) the page gives that item.
struct NamedItem
{
    std::string name;
    std::string label;
};

// The items the browser tests (tests/browser) and the page benchmark (tests/bench) look up.
// Input fields with step buttons (InputInt) are found by their text field.
std::vector<NamedItem> MakeNamedItems()
{
    std::vector<NamedItem> items = {
        // The columns (child windows, by their IDs)
        {"controls_column", "controls"},
        {"results_column", "results"},
        {"page_column", "page"},
        // Notices above the columns
        {"hub_banner", "##hub_banner"},
        {"trust_hub", "###trust_hub"},
        {"hub_reset", "Use huggingface.co"},
        {"link_message", "##link_message"},
        // The headline: the card it was judged against, the verdict, what the link set
        {"headline_card", "##headline_card"},
        {"verdict", "##verdict"},
        {"link_values", "##link_values"},
        {"link_defaults", "Back to defaults##link_values"},
        {"bar_gpu_0", "GPU 0"},
        {"hub_status", "##hub_status"},
        {"import_message", "##import_message"},
        // Model
        {"source_preset", "Preset"},
        {"source_hub", "Hub"},
        {"source_config", "config.json"},
        {"source_manual", "By hand"},
        {"preset", "##preset"},
        {"hub_input", "##hub_input"},
        {"hub_fetch", "Fetch"},
        {"hub_message", "##hub_message"},
        {"hub_retry", "Retry"},
        {"hub_settings", "Access token and Hub address"},
        {"hub_token", "##hub_token"},
        {"remember_token", "Remember the token in this browser"},
        {"hub_base", "##hub_base"},
        {"mode_training", "Training##mode"},
        {"mode_inference", "Inference##mode"},
        {"more_header", "###more"},
        // Training, inference, parallelism, hardware
        {"lora_rank", "##lora_rank"},
        {"batch_size", "##batch_size"},
        {"seq_len", "##seq_len"},
        {"concurrent_sequences", "##concurrent_sequences"},
        {"context_len", "##context_len"},
        {"zero_stage", "##zero_stage"},
        {"gpu", "##gpu"},
        {"gpu_filter", "##gpu_filter"},
        {"edit_seq_len", "Edit##seq_len"},
        {"edit_batch_size", "Edit##batch_size"},
        {"edit_context_len", "Edit##context_len"},
        {"number_message", "##number_message"},
        {"lora_alpha", "##lora_alpha"},
        {"gpu_memory_gb", "##gpu_memory_gb"},
        {"training_switches", "More training switches"},
        {"pipeline_microbatches", "##pipeline_microbatches"},
        {"max_num_batched_tokens", "##max_num_batched_tokens"},
        {"gpu_memory_utilization", "##gpu_memory_utilization"},
        {"serving_engine", "##serving_engine"},
        {"method", "##method"},
        {"framework_version", "##framework_version"},
        {"weight_format", "##weight_format"},
        {"num_gpus", "##num_gpus"},
        // Results
        {"gpus_header", "Which GPUs fit"},
        {"compare_header", "###compare"},
        {"pin", "Pin this result"},
        {"share_header", "Share, import and export"},
        {"copy_markdown", "Copy results as Markdown"},
        {"export", "Export scenario.json"},
        {"import", "Import a file..."},
        {"paste", "##paste"},
        {"load_paste", "Import##paste"},
        {"config_read", "##config_read"},
        // Planner
        {"planner_header", "Planner: what fits, and how to run it"},
        {"plan_gpus", "##plan_gpus"},
        {"plan_global_batch", "##plan_global_batch"},
        {"plan_top", "##plan_top"},
        // What would make it fit, the chart, configs to run, calibration
        {"fit_header", "###fit"},
        {"fit_undo", "Undo##fit"},
        {"fit_table", "fit_table"},  // when it scrolls sideways (a phone): its child window
        {"gpu_table", "gpu_table"},  // its child window (it scrolls its rows)
        {"sweep_header", "###sweep"},
        {"sweep_size", "##sweep_size"},
        {"sweep_batch", "##sweep_batch"},
        {"sweep_size_svg", "Download SVG####sweep_size"},
        {"export_header", "###export"},
        {"export_format", "##export_format"},
        {"export_copy", "Copy##export"},
        {"export_download", "Download##export"},
        {"export_text", "##export_text"},
        {"export_error", "##export_error"},
        {"export_fit_note", "##export_fit_note"},
        {"export_dropped", "##export_dropped"},
        {"layout", "##layout"},
        {"help_text", "##help_text"},  // an open help marker's text (widgets.cpp, HelpMarker)
        {"calibration_header", "###calibration"},
        {"load_calibration", "Load calibration..."},
        {"remove_calibration", "Remove##calibration"},
        {"calibration_message", "##calibration_message"},
        {"calibration_notice", "##calibration_notice"},
        {"calibration_notice_load", "Load calibration...##notice"},
        // Why these figures
        {"why_header", "###why"},
        {"why_phases", "###why_phases"},
    };
    for (const char* component : kComponentKeys)  // why_weights: a component's explanation
        items.push_back({std::string("why_") + component, std::string("###why_") + component});
    for (const char* field :
         {"training.batch_size", "training.seq_len", "inference.batch_size", "inference.context_len"})
        items.push_back({std::string("maxfit_use_") + field, std::string("Use##") + field});
    for (const auto& release : gpumem::detail::kFrameworkVersions)  // framework_version_torchtune_0.1: the entries
        items.push_back({std::string("framework_version_") + release.name, release.label});
    for (const auto& format : gpumem::detail::kExportFormats)  // export_format_vllm: the combo's entries
        items.push_back({std::string("export_format_") + format.name, format.label});
    for (int i = 1; i <= 16; i++)  // imported cards in the GPU combo; the scenario's own weight formats
    {
        items.push_back({"imported_gpu_" + std::to_string(i), "###imported_gpu_" + std::to_string(i)});
        items.push_back({"own_format_" + std::to_string(i), "###own_format_" + std::to_string(i)});
    }
    for (int i = 1; i <= 64; i++)  // fit's suggestions
        items.push_back({"fit_apply_" + std::to_string(i), "Apply##fit_" + std::to_string(i)});
    for (int rank = 1; rank <= 100; rank++)  // the planner shows at most 100 rows
        items.push_back({"plan_load_" + std::to_string(rank), "Load " + std::to_string(rank)});
    return items;
}

const std::vector<NamedItem>& NamedItems()
{
    static const std::vector<NamedItem> items = MakeNamedItems();
    return items;
}

TestHooks* HooksOf(ImGuiContext* ctx)
{
    return ctx != nullptr ? static_cast<TestHooks*>(ctx->TestEngine) : nullptr;
}

// The test name of the item `id` submitted in `scope`, or nullptr. Each scope's label IDs are
// hashed once (the scopes of a page are few and stable: windows, tree nodes, table rows).
const char* NameIn(TestHooks& hooks, ImGuiID scope, ImGuiID id)
{
    const std::vector<NamedItem>& items = NamedItems();
    std::vector<std::uint32_t>& ids = hooks.scopes[scope];
    if (ids.empty())
        for (const NamedItem& item : items)
            ids.push_back(ImHashStr(item.label.c_str(), 0, scope));
    for (std::size_t i = 0; i < ids.size(); i++)
        if (ids[i] == id)
            return items[i].name.c_str();
    return nullptr;
}

void OnNewFrame(ImGuiContext* ctx, ImGuiContextHook*)
{
    gpumem::ui::AccessNewFrame();
    if (TestHooks* hooks = HooksOf(ctx))
    {
        hooks->rects.clear();
        hooks->shown.clear();
        hooks->texts.clear();
        hooks->hovered_slider = 0;
        hooks->help_markers = 0;
    }
}

void OnNewFrameStarted(ImGuiContext*, ImGuiContextHook*)
{
    gpumem::ui::AccessFrameStarted();
}

void OnEndFrame(ImGuiContext* ctx, ImGuiContextHook*)
{
    if (TestHooks* hooks = HooksOf(ctx))
    {
        const auto it = hooks->shown.find(ctx->NavId);
        hooks->keyboard_focus = ctx->NavId != 0 && it != hooks->shown.end() ? it->second : "";
    }
}

}  // namespace

void InstallTestHooks(ImGuiContext* ctx, TestHooks* hooks)
{
    ctx->TestEngine = hooks;
    ctx->TestEngineHookItems = true;
    ImGuiContextHook hook;
    hook.Type = ImGuiContextHookType_NewFramePre;
    hook.Callback = OnNewFrame;
    ImGui::AddContextHook(ctx, &hook);
    hook.Type = ImGuiContextHookType_NewFramePost;
    hook.Callback = OnNewFrameStarted;
    ImGui::AddContextHook(ctx, &hook);
    hook.Type = ImGuiContextHookType_EndFramePost;
    hook.Callback = OnEndFrame;
    ImGui::AddContextHook(ctx, &hook);
}

}  // namespace gpumem::ui

//-----------------------------------------------------------------------------
// [SECTION] Dear ImGui's test-engine hooks (imgui_internal.h)
//-----------------------------------------------------------------------------

// Every item with an ID. Its ID is its label hashed into the current ID scope, except for the text
// field of an InputInt, which takes its widget's ID scope as its own ID (ImGui::InputScalar), so the
// enclosing scope is learned as well.
void ImGuiTestEngineHook_ItemAdd(ImGuiContext* ctx, const ImRect& bb, ImGuiID id)
{
    gpumem::ui::AccessItemAdd(ctx, bb, id);  // the keyboard's Tab order and the controls' names
    gpumem::ui::TestHooks* hooks = gpumem::ui::HooksOf(ctx);
    ImGuiWindow* window = ctx->CurrentWindow;
    if (hooks == nullptr || window == nullptr || window->IDStack.empty())
        return;
    hooks->item_id = id;
    hooks->item_vertices = window->DrawList->VtxBuffer.Size;
    hooks->item_rect = gpumem::ui::WidgetRect{bb.Min.x, bb.Min.y, bb.Max.x - bb.Min.x, bb.Max.y - bb.Min.y};
    const ImVector<ImGuiID>& stack = window->IDStack;
    // The help markers, each in a scope of its own (its text): help_1, help_2, ... in the order drawn.
    if (id == ImHashStr("##help", 0, stack.back()))
    {
        const std::string help = "help_" + std::to_string(++hooks->help_markers);
        hooks->rects[help] = gpumem::ui::WidgetRect{bb.Min.x, bb.Min.y, bb.Max.x - bb.Min.x, bb.Max.y - bb.Min.y};
        return;
    }
    const char* name = gpumem::ui::NameIn(*hooks, stack.back(), id);
    if (name == nullptr && stack.Size >= 2 && id == stack.back())
        name = gpumem::ui::NameIn(*hooks, stack[stack.Size - 2], id);
    if (name == nullptr)
        return;
    hooks->rects[name] = gpumem::ui::WidgetRect{bb.Min.x, bb.Min.y, bb.Max.x - bb.Min.x, bb.Max.y - bb.Min.y};
    hooks->shown[id] = name;
}

// An item's label, or the text a notice shows (widgets.cpp, TextNotice): kept for the named ones.
void ImGuiTestEngineHook_ItemInfo(ImGuiContext* ctx, ImGuiID id, const char* label, ImGuiItemStatusFlags flags)
{
    gpumem::ui::AccessItemInfo(ctx, id, label, flags);
    gpumem::ui::TestHooks* hooks = gpumem::ui::HooksOf(ctx);
    if (hooks == nullptr)
        return;
    // The hovered item: a slider if it drew a grab (ImGui::SliderScalar draws it between ItemAdd and here).
    if (id != 0 && id == ctx->HoveredId && id == hooks->item_id && ctx->CurrentWindow != nullptr)
    {
        const ImVector<ImDrawVert>& vertices = ctx->CurrentWindow->DrawList->VtxBuffer;
        const ImU32 grab = ImGui::GetColorU32(ImGuiCol_SliderGrab);
        const ImU32 grab_active = ImGui::GetColorU32(ImGuiCol_SliderGrabActive);
        for (int i = hooks->item_vertices; i < vertices.Size; i++)
            if (vertices[i].col == grab || vertices[i].col == grab_active)
            {
                hooks->hovered_slider = id;
                hooks->hovered_slider_rect = hooks->item_rect;
                break;
            }
    }
    if (label == nullptr)
        return;
    if (const auto it = hooks->shown.find(id); it != hooks->shown.end())
        hooks->texts[it->second] = label;
}

void ImGuiTestEngineHook_Log(ImGuiContext*, const char*, ...) {}

const char* ImGuiTestEngine_FindItemDebugLabel(ImGuiContext*, ImGuiID)
{
    return nullptr;
}
