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

#include "app.h"

// The page's side of two calls (web/page.js).
EM_JS(void, SetCanvasBackingSize, (int width, int height), {
    Module['setCanvasSize'](width, height);  // emscripten's Browser.setCanvasSize: tells GLFW too
});
EM_JS(void, NotifyFirstFrame, (), {
    if (Module['onFirstFrame'])
        Module['onFirstFrame']();
});

namespace {

// Emscripten owns the loop and calls Frame() from requestAnimationFrame, so what lives across
// frames lives here: the window, the canvas metrics, and the app's one state struct.
struct Platform
{
    GLFWwindow*         window = nullptr;
    int                 width = 0;          // canvas backing store, device pixels
    int                 height = 0;
    double              css_width = 0.0;    // canvas size in CSS pixels
    double              css_height = 0.0;
    float               ui_scale = 0.0f;    // whole-number scale applied to fonts and style
    bool                first_frame_done = false;
    gpumem::ui::AppState app;
};

Platform g_platform;

constexpr float kBaseFontSize = 13.0f;      // Dear ImGui's default font, ProggyClean, at 1×
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

void Frame()
{
    Platform& p = g_platform;
    SyncCanvasSize(p);
    glfwPollEvents();

    ImGui_ImplOpenGL3_NewFrame();
    ImGui_ImplGlfw_NewFrame();
    ImGui::NewFrame();
    gpumem::ui::ShowApp(p.app);
    ImGui::Render();

    glViewport(0, 0, p.width, p.height);
    glClearColor(0.08f, 0.08f, 0.09f, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());

    if (!p.first_frame_done)
    {
        p.first_frame_done = true;
        NotifyFirstFrame();
    }
}

//-----------------------------------------------------------------------------
// [SECTION] Test hooks (the browser tests drive the page through these)
//-----------------------------------------------------------------------------

// {"batch_size": {"x", "y", "w", "h"}, ...}: named widgets' rectangles in CSS pixels,
// relative to the canvas (which fills the page at 0, 0).
std::string UiLayout()
{
    const Platform& p = g_platform;
    const double to_css_x = p.width > 0 ? p.css_width / p.width : 1.0;
    const double to_css_y = p.height > 0 ? p.css_height / p.height : 1.0;
    nlohmann::json layout = nlohmann::json::object();
    for (const auto& [name, r] : p.app.widget_rects)
        layout[name] = {{"x", r.x * to_css_x}, {"y", r.y * to_css_y}, {"w", r.w * to_css_x}, {"h", r.h * to_css_y}};
    return layout.dump();
}

// {"text": "17.51 GiB", "bytes": ..., "estimates": n}: the headline figure as currently drawn.
std::string UiTotal()
{
    const gpumem::ui::AppState& app = g_platform.app;
    return nlohmann::json{{"text", app.displayed_peak},
                          {"bytes", app.displayed_peak_bytes},
                          {"estimates", app.estimate_count}}.dump();
}

// The scenario document the page last sent to the core, exactly as sent (JSON text): what the
// headline and the breakdown are the estimate of.
std::string UiScenario()
{
    return g_platform.app.scenario_text;
}

}  // namespace

EMSCRIPTEN_BINDINGS(gpumem_ui) {
    emscripten::function("ui_layout", &UiLayout);
    emscripten::function("ui_total", &UiTotal);
    emscripten::function("ui_scenario", &UiScenario);
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
    ImGuiIO& io = ImGui::GetIO();
    io.IniFilename = nullptr;   // no imgui.ini: the page has no filesystem and keeps no layout
    io.LogFilename = nullptr;
    io.ConfigFlags |= ImGuiConfigFlags_NavEnableKeyboard;

    ImGui_ImplGlfw_InitForOpenGL(p.window, true);
    ImGui_ImplOpenGL3_Init("#version 300 es");

    gpumem::ui::AppInit(p.app);

    // 0 fps: follow requestAnimationFrame. Returns at once; the state lives on in g_platform.
    emscripten_set_main_loop(Frame, 0, false);
    return 0;
}
