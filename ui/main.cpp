// gpumem's page: the only platform file. GLFW (emscripten's built-in port) for the window and
// input, WebGL2 for drawing, the canvas kept at the browser window's size in device pixels, and
// the main loop. Everything the user sees is ShowApp() in app.cpp, pure Dear ImGui.
//
// Sizes: the canvas's backing store is CSS size × devicePixelRatio, and Dear ImGui works in
// those device pixels (emscripten reports the mouse in them too). Fonts and style are scaled by
// the ratio rounded to a whole number, so the default pixel font stays crisp on any screen.
//
// The page (web/page.js) sets Module.onFirstFrame before loading; it is called once, after the
// first frame has been drawn.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>

#include <emscripten.h>
#include <emscripten/bind.h>
#include <emscripten/html5.h>
#define GLFW_INCLUDE_ES3
#include <GLFW/glfw3.h>

#include <nlohmann/json.hpp>

#include "imgui.h"
#include "imgui_impl_glfw.h"
#include "imgui_impl_opengl3.h"

#include "access.h"
#include "app.h"
#include "share.h"
#include "test_hooks.h"
#include "widgets.h"

#include <gpumem/gpumem.h>

// JavaScript, not C++: clang-format would rewrite its operators (!== into != =).
// clang-format off
// The page's side of two calls (web/page.js).
EM_JS(void, SetCanvasBackingSize, (int width, int height), {
    Module['setCanvasSize'](width, height);  // emscripten's Browser.setCanvasSize: tells GLFW too
});
EM_JS(void, NotifyFirstFrame, (), {
    if (Module['onFirstFrame'])
        Module['onFirstFrame']();
});

// The page's services (web/page.js, Module.page): the Hub, the URL and saved settings, the
// clipboard, downloads and the file picker. Strings cross as UTF-8 pointers.
EM_JS(void, PageHubFetch, (const char* request, const char* token), {
    Module['page']['hubFetch'](UTF8ToString(request), UTF8ToString(token));
});
EM_JS(void, PageSetToken, (const char* token, int remember), {
    Module['page']['setToken'](UTF8ToString(token), remember !== 0);
});
EM_JS(void, PageTrustHub, (const char* base), {
    Module['page']['trustHub'](UTF8ToString(base));
});
EM_JS(void, PageSetSummary, (const char* text), {
    Module['page']['setSummary'](UTF8ToString(text));
});
EM_JS(void, PageSaveState, (const char* share), {
    Module['page']['saveState'](UTF8ToString(share));
});
EM_JS(void, PageCopyText, (const char* text), {
    Module['page']['copyText'](UTF8ToString(text));
});
EM_JS(void, PageDownload, (const char* name, const char* text), {
    Module['page']['download'](UTF8ToString(name), UTF8ToString(text));
});
EM_JS(void, PageOpenFile, (), {
    Module['page']['openFile']();
});
EM_JS(void, PageRememberCalibration, (const char* hash, const char* text), {
    Module['page']['rememberCalibration'](UTF8ToString(hash), UTF8ToString(text));
});
EM_JS(void, PageForgetCalibration, (const char* hash), {
    Module['page']['forgetCalibration'](UTF8ToString(hash));
});
EM_JS(int, PageHasServices, (), {
    return Module['page'] ? 1 : 0;
});
// Keyboard and screen reader (web/page.js, the keyboard object): the next queued navigation key, focus
// leaving the canvas, the focused control and the results' details in words, the typed-value box.
EM_JS(int, PageNextKey, (), {
    return Module['page'] && Module['page']['nextKey'] ? Module['page']['nextKey']() : -1;
});
EM_JS(void, PageLeaveCanvas, (int backward), {
    Module['page']['leaveCanvas'](backward !== 0);
});
EM_JS(void, PageSetFocusText, (const char* text), {
    Module['page']['setFocusText'](UTF8ToString(text));
});
EM_JS(void, PageSetDetails, (const char* text), {
    Module['page']['setDetails'](UTF8ToString(text));
});
EM_JS(int, PageOpenNumberEditor, (const char* request), {
    return Module['page']['openNumberEditor'](UTF8ToString(request)) ? 1 : 0;
});
// clang-format on

namespace {

// Emscripten owns the loop and calls Frame() from requestAnimationFrame, so what lives across
// frames lives here: the window, the canvas metrics, and the app's one state struct.
struct Platform
{
    GLFWwindow* window = nullptr;
    int width = 0;  // canvas backing store, device pixels
    int height = 0;
    double css_width = 0.0;  // canvas size in CSS pixels
    double css_height = 0.0;
    float ui_scale = 0.0f;  // whole-number scale applied to fonts and style
    bool first_frame_done = false;
    std::string focus_text;    // what the page's focus mirror last said
    std::string details_text;  // and its details region
    gpumem::ui::AppState app;
    gpumem::ui::TestHooks test_hooks;  // where the tests' named widgets are (test_hooks.h)

    // How long each Frame() took (ms, CPU side): a ring of the last kFrameSamples, for the
    // page benchmark's frame-time figures (ui_frame_times).
    static constexpr int kFrameSamples = 240;
    double frame_ms[kFrameSamples] = {};
    int frame_count = 0;
};

Platform g_platform;

constexpr float kBaseFontSize = 13.0f;  // Dear ImGui's default font, ProggyClean, at 1×
constexpr const char* kCanvas = "#canvas";

// (Re)builds the font atlas and the style for `scale` device pixels per UI pixel.
void ApplyScale(Platform& p, float scale)
{
    ImGuiIO& io = ImGui::GetIO();
    io.Fonts->Clear();
    ImFontConfig regular;
    regular.SizePixels = kBaseFontSize * scale;
    io.Fonts->AddFontDefault(&regular);
    ImFontConfig large;
    large.SizePixels = kBaseFontSize * scale * 2.0f;  // the same pixel font doubled: still crisp
    p.app.font_large = io.Fonts->AddFontDefault(&large);
    // Upload the new atlas. Only the texture: 1.86's DestroyDeviceObjects() keeps its cached
    // buffer sizes, and the recreated buffers then overflow. Before the first frame there is
    // nothing to replace; the first NewFrame() creates everything.
    if (p.ui_scale > 0.0f)
    {
        ImGui_ImplOpenGL3_DestroyFontsTexture();
        ImGui_ImplOpenGL3_CreateFontsTexture();
    }

    ImGuiStyle style;
    ImGui::StyleColorsDark(&style);
    style.WindowRounding = 0.0f;
    style.FrameRounding = 3.0f;
    style.ChildRounding = 3.0f;
    style.GrabRounding = 3.0f;
    gpumem::ui::ApplyPageColors(style);
    style.ScaleAllSizes(scale);
    ImGui::GetStyle() = style;
    p.ui_scale = scale;
}

// Keeps the canvas backing store at its CSS size × devicePixelRatio (window resizes, zoom,
// moving to another screen). Module.setCanvasSize tells emscripten's GLFW without the
// fullscreen request that glfwSetWindowSize makes when the size equals the screen's.
void SyncCanvasSize(Platform& p)
{
    double css_w = 0.0, css_h = 0.0;
    emscripten_get_element_css_size(kCanvas, &css_w, &css_h);
    const double dpr = emscripten_get_device_pixel_ratio();
    const int w = std::max(1, static_cast<int>(std::lround(css_w * dpr)));
    const int h = std::max(1, static_cast<int>(std::lround(css_h * dpr)));
    p.css_width = css_w;
    p.css_height = css_h;
    if (w != p.width || h != p.height)
    {
        SetCanvasBackingSize(w, h);
        p.width = w;
        p.height = h;
    }
    const float scale = std::max(1.0f, std::round(static_cast<float>(dpr)));
    if (scale != p.ui_scale)
        ApplyScale(p, scale);
}

//-----------------------------------------------------------------------------
// [SECTION] Keyboard and screen reader
//-----------------------------------------------------------------------------
// The page queues navigation keys (web/page.js, the keyboard object) and the app takes one event a frame:
// Dear ImGui 1.86 samples keys once a frame, so a press and release within one slow frame was lost,
// and a key held across a slow frame counted as a repeat. Tab is the app's own (ui/access.h).

// A queued event: the DOM keyCode, then flags (page.js, keyboard.install).
constexpr int kKeyDown = 1 << 16, kKeyShift = 1 << 17, kKeyCtrl = 1 << 18, kKeyAlt = 1 << 19, kKeyEnter = 1 << 20;

// GLFW's key for a DOM keyCode of the navigation keys page.js queues (-1 for others).
int GlfwKeyOf(int code)
{
    switch (code)
    {
    case 8:
        return GLFW_KEY_BACKSPACE;
    case 13:
        return GLFW_KEY_ENTER;
    case 27:
        return GLFW_KEY_ESCAPE;
    case 32:
        return GLFW_KEY_SPACE;
    case 33:
        return GLFW_KEY_PAGE_UP;
    case 34:
        return GLFW_KEY_PAGE_DOWN;
    case 35:
        return GLFW_KEY_END;
    case 36:
        return GLFW_KEY_HOME;
    case 37:
        return GLFW_KEY_LEFT;
    case 38:
        return GLFW_KEY_UP;
    case 39:
        return GLFW_KEY_RIGHT;
    case 40:
        return GLFW_KEY_DOWN;
    case 46:
        return GLFW_KEY_DELETE;
    default:
        return -1;
    }
}

void FeedQueuedKey(Platform& p)
{
    const int event = PageNextKey();
    if (event < 0)
        return;
    const int code = event & 0xffff;
    const bool down = (event & kKeyDown) != 0, shift = (event & kKeyShift) != 0;
    if ((event & kKeyEnter) != 0)  // Tab brought focus into the canvas from the page
    {
        gpumem::ui::AccessEnter(shift);
        return;
    }
    if (code == 9)
    {
        if (down && (event & (kKeyCtrl | kKeyAlt)) == 0 && !gpumem::ui::AccessTab(shift))
            PageLeaveCanvas(shift ? 1 : 0);
        return;
    }
    const int key = GlfwKeyOf(code);
    if (key < 0)
        return;
    const int mods = (shift ? GLFW_MOD_SHIFT : 0) | ((event & kKeyCtrl) != 0 ? GLFW_MOD_CONTROL : 0) |
                     ((event & kKeyAlt) != 0 ? GLFW_MOD_ALT : 0);
    ImGui_ImplGlfw_KeyCallback(p.window, key, code, down ? GLFW_PRESS : GLFW_RELEASE, mods);
}

// The focused control, and the results' details, in words for the page's accessible elements.
void MirrorFocus(Platform& p)
{
    if (!PageHasServices())
        return;
    std::string focus = gpumem::ui::FocusText();
    if (focus != p.focus_text)
    {
        p.focus_text = std::move(focus);
        PageSetFocusText(p.focus_text.c_str());
    }
    std::string details = gpumem::ui::DetailsText(p.app);
    if (details != p.details_text)
    {
        p.details_text = std::move(details);
        PageSetDetails(p.details_text.c_str());
    }
}

const ImVec4 kClearColor(0.08f, 0.08f, 0.09f, 1.0f);  // under the page's window

// The colours text is drawn in and on, for the contrast test: {"Text": [r, g, b, a], ..., "Clear": ...},
// and the utilisation colours the figures are drawn in.
nlohmann::json StyleColors()
{
    static const struct
    {
        ImGuiCol col;
        const char* name;
    } kColors[] = {{ImGuiCol_Text, "Text"},
                   {ImGuiCol_TextDisabled, "TextDisabled"},
                   {ImGuiCol_WindowBg, "WindowBg"},
                   {ImGuiCol_ChildBg, "ChildBg"},
                   {ImGuiCol_PopupBg, "PopupBg"},
                   {ImGuiCol_FrameBg, "FrameBg"},
                   {ImGuiCol_FrameBgHovered, "FrameBgHovered"},
                   {ImGuiCol_FrameBgActive, "FrameBgActive"},
                   {ImGuiCol_Button, "Button"},
                   {ImGuiCol_ButtonHovered, "ButtonHovered"},
                   {ImGuiCol_ButtonActive, "ButtonActive"},
                   {ImGuiCol_Header, "Header"},
                   {ImGuiCol_HeaderHovered, "HeaderHovered"},
                   {ImGuiCol_HeaderActive, "HeaderActive"},
                   {ImGuiCol_SliderGrab, "SliderGrab"},
                   {ImGuiCol_SliderGrabActive, "SliderGrabActive"},
                   {ImGuiCol_TableHeaderBg, "TableHeaderBg"},
                   {ImGuiCol_TableRowBg, "TableRowBg"},
                   {ImGuiCol_TableRowBgAlt, "TableRowBgAlt"},
                   {ImGuiCol_TextSelectedBg, "TextSelectedBg"}};
    auto rgba = [](const ImVec4& c) { return nlohmann::json::array({c.x, c.y, c.z, c.w}); };
    nlohmann::json out = nlohmann::json::object();
    for (const auto& [col, name] : kColors)
        out[name] = rgba(ImGui::GetStyle().Colors[col]);
    out["Clear"] = rgba(kClearColor);
    out["Fits"] = rgba(gpumem::ui::UtilizationColor(0.0));
    out["Tight"] = rgba(gpumem::ui::UtilizationColor(0.9));
    out["Over"] = rgba(gpumem::ui::UtilizationColor(1.0));
    return out;
}

// The page's typed-value box (ui/widgets.h, NumberEditRequest), its rectangle in CSS pixels.
bool OpenNumberEditor(const gpumem::ui::NumberEditRequest& r)
{
    const Platform& p = g_platform;
    const double sx = p.width > 0 ? p.css_width / p.width : 1.0;
    const double sy = p.height > 0 ? p.css_height / p.height : 1.0;
    const nlohmann::json request = {{"id", r.id},
                                    {"name", r.name},
                                    {"value", r.value},
                                    {"lo", r.lo},
                                    {"hi", r.hi},
                                    {"integer", r.integer},
                                    {"touch_only", r.touch_only},
                                    {"x", r.x * sx},
                                    {"y", r.y * sy},
                                    {"w", r.w * sx},
                                    {"h", r.h * sy}};
    return PageOpenNumberEditor(request.dump().c_str()) != 0;
}

void Frame()
{
    Platform& p = g_platform;
    const double start = emscripten_get_now();
    SyncCanvasSize(p);
    glfwPollEvents();
    FeedQueuedKey(p);

    ImGui_ImplOpenGL3_NewFrame();
    ImGui_ImplGlfw_NewFrame();
    ImGui::NewFrame();
    gpumem::ui::ShowApp(p.app);
    ImGui::Render();

    glViewport(0, 0, p.width, p.height);
    glClearColor(kClearColor.x, kClearColor.y, kClearColor.z, kClearColor.w);
    glClear(GL_COLOR_BUFFER_BIT);
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());

    MirrorFocus(p);

    p.frame_ms[p.frame_count % Platform::kFrameSamples] = emscripten_get_now() - start;
    p.frame_count++;

    if (!p.first_frame_done)
    {
        p.first_frame_done = true;
        NotifyFirstFrame();
    }
}

//-----------------------------------------------------------------------------
// [SECTION] Calls from the page (web/page.js)
//-----------------------------------------------------------------------------

nlohmann::json ParseFromPage(const std::string& text)
{
    std::string error;
    std::optional<nlohmann::json> doc = gpumem::parse_json(text, error);
    return doc ? *doc : nlohmann::json();
}

// A link's or the saved settings' request: see gpumem::ui::OpenFromPage.
void UiOpen(const std::string& request)
{
    gpumem::ui::OpenFromPage(g_platform.app, ParseFromPage(request));
}

// web/hub.js's answer to PageHubFetch.
void UiHubResponse(const std::string& response)
{
    gpumem::ui::ReceiveHubResponse(g_platform.app, ParseFromPage(response));
}

// Files opened or dropped together, or pasted text, as [{"name", "text"}] (JSON text): the tools'
// configs among them read as one (gpumem::ui::LoadFiles). Returns "" when loaded, else why not.
std::string UiLoadFiles(const std::string& files)
{
    gpumem::ui::AppState& app = g_platform.app;
    if (gpumem::ui::LoadFiles(app, ParseFromPage(files)))
        return "";
    const std::string& calibration = app.decisions.calibration.message;
    return calibration.empty() ? app.import_message : calibration;
}

// A file or dropped text the page refused before reading it (too large): its name and why.
void UiImportProblem(const std::string& name, const std::string& problem)
{
    g_platform.app.import_message = name + ": " + problem;
}

// Emscripten 3.1.6's GLFW hands the browser's wheel deltas over raw (wheel down: +100 pixels, or
// +3 lines) where GLFW, and Dear ImGui after it, mean one unit per notch with up positive. So the
// page scrolled the wrong way, a hundred lines at a time. This puts the units and the sign right.
void ScrollCallback(GLFWwindow* window, double dx, double dy)
{
    auto notches = [](double d) {
        const double n = std::abs(d) >= 10.0 ? d / 100.0 : d / 3.0;  // pixels, else lines
        return std::clamp(-n, -5.0, 5.0);
    };
    ImGui_ImplGlfw_ScrollCallback(window, notches(dx), notches(dy));
}

//-----------------------------------------------------------------------------
// [SECTION] Test hooks (the browser tests drive the page through these)
//-----------------------------------------------------------------------------

// The page's typed-value box committed `text` for control `id`: "" when taken, else why not.
std::string UiNumberCommit(const std::string& id, const std::string& text)
{
    return gpumem::ui::CommitNumberEdit(id, text);
}

void UiNumberCancel()
{
    gpumem::ui::CancelNumberEdit();
}

// {"batch_size": {"x", "y", "w", "h"}, ...}: named widgets' rectangles in CSS pixels,
// relative to the canvas (which fills the page at 0, 0).
std::string UiLayout()
{
    const Platform& p = g_platform;
    const double to_css_x = p.width > 0 ? p.css_width / p.width : 1.0;
    const double to_css_y = p.height > 0 ? p.css_height / p.height : 1.0;
    nlohmann::json layout = nlohmann::json::object();
    for (const auto& [name, r] : p.test_hooks.rects)
        layout[name] = {{"x", r.x * to_css_x}, {"y", r.y * to_css_y}, {"w", r.w * to_css_x}, {"h", r.h * to_css_y}};
    return layout.dump();
}

// {"text": "17.51 GiB", "bytes": ..., "estimates": n}: the headline figure as currently drawn.
std::string UiTotal()
{
    const gpumem::ui::AppState& app = g_platform.app;
    return nlohmann::json{{"text", app.displayed_peak},
                          {"bytes", app.displayed_peak_bytes},
                          {"estimates", app.estimate_count},
                          {"decisions_ready", gpumem::ui::DecisionsReady(app)}}  // every open decision panel is current
        .dump();
}

// The scenario document the page last sent to the core, exactly as sent (JSON text): what the
// headline and the breakdown are the estimate of.
std::string UiScenario()
{
    return g_platform.app.scenario_text;
}

// The cards an import added to the GPU combo: [{"name", "memory_gb", "memory_bytes"}].
nlohmann::json ImportedGpus(const gpumem::ui::AppState& app)
{
    nlohmann::json out = nlohmann::json::array();
    for (const gpumem::ui::GpuEntry& gpu : app.gpus)
        if (gpu.imported)
            out.push_back({{"name", gpu.name}, {"memory_gb", gpu.memory_gb}, {"memory_bytes", gpu.memory_bytes}});
    return out;
}

// The Compare table's columns, for tests: each pinned result, then the current one, with the
// figures its rows show.
nlohmann::json ComparedResults(const gpumem::ui::AppState& app)
{
    auto column = [](const std::string& label, const gpumem::ui::ResultView& v) {
        return nlohmann::json{{"label", label},
                              {"device_total_bytes", v.device_total_bytes},
                              {"peak_reserved_bytes", v.peak_reserved_bytes},
                              {"peak_allocated_bytes", v.peak_allocated_bytes}};
    };
    nlohmann::json out = nlohmann::json::array();
    for (const gpumem::ui::PinnedResult& p : app.pinned)
        out.push_back(column(p.label, p.view));
    out.push_back(column("current", app.view));
    return out;
}

// What the model panel and the import box say, for tests: {"source", "hub": {"status", "id",
// "kind", "message", "api_total", "bundled_twin", "base", "base_from_link", "token_withheld"},
// "import_message", "config_check" and "config_model" (the tools' configs last read),
// "held_config_files" (how many wait for a file they name), "imported_gpus", "link_message",
// "share", "pinned", "compare" (the Compare table's columns: ComparedResults), "markdown", "plan", "maxfit",
// "decisions" (decisions.h: fit, export, sweeps, calibration), "keyboard_focus": the recorded widget keyboard
// navigation is on}.
std::string UiState()
{
    const gpumem::ui::AppState& app = g_platform.app;
    static const char* const kSources[] = {"preset", "hub", "config", "manual"};
    static const char* const kStatus[] = {"idle", "loading", "ready", "failed"};
    const gpumem::ui::HubState& hub = app.hub;
    const gpumem::ui::PlannerState& planner = app.planner;
    return nlohmann::json{
        {"source", kSources[static_cast<int>(app.scenario.model.source)]},
        {"hub",
         {{"status", kStatus[static_cast<int>(hub.status)]},
          {"id", hub.id},
          {"input", hub.input},
          {"serial", hub.serial},
          {"kind", hub.error_kind},
          {"message", hub.message},
          {"retryable", hub.retryable},
          {"api_total", hub.api_total},
          {"bundled_twin", hub.bundled_twin},
          {"base", hub.base},
          {"base_from_link", hub.base_from_link},
          {"token_withheld", hub.token_withheld}}},
        {"import_message", app.import_message},
        {"config_check", app.config_check},
        {"config_model", app.config_model},
        {"held_config_files", app.held_config_files.size()},
        {"imported_gpus", ImportedGpus(app)},
        {"link_message", app.link_message},
        {"share", gpumem::ui::ShareState(app)},
        {"pinned", app.pinned.size()},
        {"compare", ComparedResults(app)},
        {"markdown", gpumem::ui::ResultMarkdown(app)},
        {"plan",
         {{"count", planner.plan_count},
          {"ms", planner.plan_ms},
          {"message", planner.message},
          {"rows",
           planner.plan.is_object() ? planner.plan.value("plans", nlohmann::json::array()) : nlohmann::json::array()},
          {"search", planner.plan.is_object() ? planner.plan.value("search", nlohmann::json()) : nlohmann::json()}}},
        {"maxfit", planner.maxfit},
        {"decisions", gpumem::ui::DecisionsJson(app)},
        {"explain_shown", app.explain_shown},
        {"keyboard_focus", g_platform.test_hooks.keyboard_focus},
        {"texts", g_platform.test_hooks.texts},
        {"link_values", gpumem::ui::LinkValuesInEffect(app)},
        {"style", StyleColors()},
        {"focus_text", g_platform.focus_text},
    }
        .dump();
}

// The last frames' CPU time in ms, oldest first.
std::string UiFrameTimes()
{
    const Platform& p = g_platform;
    nlohmann::json times = nlohmann::json::array();
    const int n = std::min(p.frame_count, Platform::kFrameSamples);
    for (int i = p.frame_count - n; i < p.frame_count; i++)
        times.push_back(p.frame_ms[i % Platform::kFrameSamples]);
    return times.dump();
}

}  // namespace

EMSCRIPTEN_BINDINGS(gpumem_ui)
{
    emscripten::function("ui_layout", &UiLayout);
    emscripten::function("ui_total", &UiTotal);
    emscripten::function("ui_scenario", &UiScenario);
    emscripten::function("ui_state", &UiState);
    emscripten::function("ui_frame_times", &UiFrameTimes);
    emscripten::function("ui_open", &UiOpen);
    emscripten::function("ui_hub_response", &UiHubResponse);
    emscripten::function("ui_load_files", &UiLoadFiles);
    emscripten::function("ui_import_problem", &UiImportProblem);
    emscripten::function("ui_number_commit", &UiNumberCommit);
    emscripten::function("ui_number_cancel", &UiNumberCancel);
}

int main()
{
    Platform& p = g_platform;
    if (!glfwInit())
    {
        std::fprintf(stderr, "gpumem: glfwInit failed\n");
        return 1;
    }
    glfwWindowHint(GLFW_CLIENT_API, GLFW_OPENGL_ES_API);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 0);

    double css_w = 0.0, css_h = 0.0;
    emscripten_get_element_css_size(kCanvas, &css_w, &css_h);
    const double dpr = emscripten_get_device_pixel_ratio();
    p.width = std::max(1, static_cast<int>(std::lround(css_w * dpr)));
    p.height = std::max(1, static_cast<int>(std::lround(css_h * dpr)));
    p.window = glfwCreateWindow(p.width, p.height, "gpumem", nullptr, nullptr);
    if (p.window == nullptr)
    {
        std::fprintf(stderr, "gpumem: WebGL2 is not available in this browser\n");
        return 1;
    }
    glfwMakeContextCurrent(p.window);

    IMGUI_CHECKVERSION();
    ImGui::CreateContext();
    gpumem::ui::InstallTestHooks(ImGui::GetCurrentContext(), &p.test_hooks);
    ImGuiIO& io = ImGui::GetIO();
    io.IniFilename = nullptr;  // no imgui.ini: the page has no filesystem and keeps no layout
    io.LogFilename = nullptr;
    io.ConfigFlags |= ImGuiConfigFlags_NavEnableKeyboard;

    ImGui_ImplGlfw_InitForOpenGL(p.window, true);
    glfwSetScrollCallback(p.window, ScrollCallback);
    ImGui_ImplOpenGL3_Init("#version 300 es");

    if (PageHasServices())
    {
        gpumem::ui::PageHooks& hooks = p.app.page;
        hooks.hub_fetch = [](const std::string& request, const std::string& token) {
            PageHubFetch(request.c_str(), token.c_str());
        };
        hooks.set_token = [](const std::string& token, bool remember) {
            PageSetToken(token.c_str(), remember ? 1 : 0);
        };
        hooks.trust_hub = [](const std::string& base) { PageTrustHub(base.c_str()); };
        hooks.save_state = [](const std::string& share) { PageSaveState(share.c_str()); };
        hooks.copy_text = [](const std::string& text) { PageCopyText(text.c_str()); };
        hooks.download = [](const std::string& name, const std::string& text) {
            PageDownload(name.c_str(), text.c_str());
        };
        hooks.open_file = []() { PageOpenFile(); };
        hooks.remember_calibration = [](const std::string& hash, const std::string& text) {
            PageRememberCalibration(hash.c_str(), text.c_str());
        };
        hooks.forget_calibration = [](const std::string& hash) { PageForgetCalibration(hash.c_str()); };
        hooks.set_summary = [](const std::string& text) { PageSetSummary(text.c_str()); };
        gpumem::ui::SetNumberEditor(OpenNumberEditor);
    }
    gpumem::ui::AppInit(p.app);

    // 0 fps: follow requestAnimationFrame. Returns at once; the state lives on in g_platform.
    emscripten_set_main_loop(Frame, 0, false);
    return 0;
}
