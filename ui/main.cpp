// gpumem's page: the only platform file. GLFW (emscripten's built-in port) for the window and
// input, WebGL2 for drawing, the canvas kept at the browser window's size in device pixels, and
// the main loop. Everything the user sees is ShowApp() in app.cpp, pure Dear ImGui.
//
// Sizes: the canvas's backing store is CSS size × devicePixelRatio, and Dear ImGui works in
// those device pixels (emscripten reports the mouse in them too). Fonts and style are scaled by
// the ratio rounded to a whole number, so the default pixel font stays crisp on any screen.
//
// The page (web/page.js) sets Module.onFirstFrame before loading; it is called once, after the
// first frame has been drawn. Module.openRequest (the link's or the saved settings' request) is
// applied before the first estimate.

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include <emscripten.h>
#include <emscripten/bind.h>
#include <emscripten/val.h>
#include <emscripten/html5.h>
#define GLFW_INCLUDE_ES3
#include <GLFW/glfw3.h>

#include <nlohmann/json.hpp>

#include "imgui.h"
#include "imgui_impl_glfw.h"
#include "imgui_internal.h"  // the touch input: scrolling a window, holding a slider (ImGui 1.86 has no touch)

#include "access.h"
#include "app.h"
#include "share.h"
#include "test_hooks.h"
#include "tools.h"
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
// A start-up step done (main() and the first frame): the page notes when (page.js, gpumemTimings.steps;
// tests/bench/page.mjs prints how long each took).
EM_JS(void, NoteStartupStep, (const char* name), {
    if (Module['onStartupStep'])
        Module['onStartupStep'](UTF8ToString(name));
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
// 1 when the page's main pointer is coarse (a finger: matchMedia('(pointer: coarse)'), web/page.js).
EM_JS(int, PageCoarsePointer, (), {
    return Module['coarsePointer'] ? 1 : 0;
});
// The visual viewport's scale (a pinch-zoom), as the page last settled on it (web/page.js, watchZoom); 1 unzoomed.
EM_JS(double, PageZoomScale, (), {
    return Module['zoomScale'] || 1;
});
// clang-format on

namespace {

//-----------------------------------------------------------------------------
// [SECTION] Touch (Dear ImGui 1.86 knows only a mouse)
//-----------------------------------------------------------------------------

// The page (web/page.js) hands over one finger's touches, in CSS pixels; a second finger is the
// browser's (pinch-zoom) and cancels the gesture. What a finger does, decided once it has moved
// past a few pixels:
//   - a tap (no move) clicks where it lands, except on a slider, which keeps its value;
//   - a horizontal drag that starts on a slider moves its value from where it was (the slider is
//     held as the keyboard holds it: each pixel moves it one pixel's worth of its track);
//   - anything else scrolls the window under the finger (the first one, inward out, that can scroll
//     that way), and keeps scrolling after the finger lifts, slowing down (momentum).
// While touch is in use, the mouse is nowhere (no hover) except under a resting finger (a long press
// shows a tooltip); a real mouse moving hands the page back to the mouse.
struct TouchEvent
{
    int kind = 0;  // 0 start, 1 move, 2 end, 3 cancel
    ImVec2 pos;    // device pixels
    double ms = 0.0;
};

struct Touch
{
    enum class Phase
    {
        None,     // no finger (momentum may still run)
        Pending,  // a finger down, not yet moved past the slop
        Scroll,   // dragging a window's content
        Slider,   // dragging a slider's value
        Ignored,  // a finger that neither taps nor drags (cancelled, or a tap that stopped momentum)
    };
    std::vector<TouchEvent> queue;        // since the last frame
    bool active = false;                  // touch is in use (until the real mouse moves)
    double mouse_x = 0.0, mouse_y = 0.0;  // GLFW's cursor when touch took over
    Phase phase = Phase::None;
    ImVec2 start, pos;
    ImGuiID start_slider = 0;  // the slider under the finger when it landed
    float start_slider_width = 0.0f;
    ImGuiID start_window = 0;   // the window under the finger when it landed
    bool classified = false;    // start_slider / start_window are known (one frame after landing)
    ImGuiID scroll_window = 0;  // the window being scrolled (or flung)
    ImVec2 scroll_delta;        // finger movement not yet applied to it
    ImVec2 velocity;            // pixels per ms, smoothed over the last moves
    double last_ms = 0.0;
    bool momentum = false;
    float slider_dx = 0.0f;  // finger movement not yet given to the slider
    int tap_frames = 0;      // 2: press this frame, 1: release, 0: none
    ImVec2 tap_pos;
    bool down = false;            // the finger is on the glass
    bool no_tap = false;          // it landed on a moving page: it stops the page, it does not click
    bool slider_held = false;     // TouchInFrame made the slider active
    bool release_slider = false;  // the finger lifted: let go of the slider this frame
    double last_frame_ms = 0.0;
};

//-----------------------------------------------------------------------------
// [SECTION] Drawing (WebGL2)
//-----------------------------------------------------------------------------
// Dear ImGui's draw lists onto the canvas. Dear ImGui's OpenGL3 backend is made for programs that
// share their GL context: it reads back and restores the GL state around every frame, each read a
// synchronous call to the browser's GPU process, and it checks its shaders as soon as it compiles
// them. This canvas is the page's alone, so the state that never changes is set once, the shaders'
// status is read at the first draw, and the font atlas is a one-channel texture (a quarter of the
// RGBA upload). Issue #29, two interleaved runs of 9 loads against the OpenGL3 backend: the first
// frame's set-up step 78 -> 49 and 58 -> 48 ms, the decision panels ready 150 and 25 ms sooner; main()
// 18-21 ms longer (on this 2-core machine the GPU process compiles the shaders beside it), so the first
// frame as a whole moved within the noise.

// Positions in pixels to clip space through one scale and offset; the atlas holds coverage in its red
// channel, and every glyph and shape is its vertex colour times that coverage.
constexpr const char* kVertexShader = R"glsl(#version 300 es
uniform vec4 u_transform;
layout(location = 0) in vec2 a_position;
layout(location = 1) in vec2 a_uv;
layout(location = 2) in vec4 a_color;
out vec2 v_uv;
out vec4 v_color;
void main()
{
    v_uv = a_uv;
    v_color = a_color;
    gl_Position = vec4(a_position * u_transform.xy + u_transform.zw, 0.0, 1.0);
}
)glsl";

constexpr const char* kFragmentShader = R"glsl(#version 300 es
precision mediump float;
uniform sampler2D u_atlas;
in vec2 v_uv;
in vec4 v_color;
out vec4 out_color;
void main()
{
    out_color = vec4(v_color.rgb, v_color.a * texture(u_atlas, v_uv).r);
}
)glsl";

struct Renderer
{
    GLuint program = 0, vertex_shader = 0, fragment_shader = 0;
    GLuint atlas = 0;
    GLint transform = -1;  // u_transform's location, read at the first draw
    bool checked = false;  // the link status was read
    bool usable = false;
};

GLuint Compile(GLenum type, const char* source)
{
    const GLuint shader = glCreateShader(type);
    glShaderSource(shader, 1, &source, nullptr);
    glCompileShader(shader);
    return shader;
}

// The shaders' logs, once, when the program did not link.
void ReportLinkFailure(const Renderer& r)
{
    char log[1024];
    for (GLuint shader : {r.vertex_shader, r.fragment_shader})
    {
        GLint ok = GL_FALSE;
        glGetShaderiv(shader, GL_COMPILE_STATUS, &ok);
        if (ok == GL_TRUE)
            continue;
        glGetShaderInfoLog(shader, sizeof(log), nullptr, log);
        std::fprintf(stderr, "gpumem: the renderer's %s shader did not compile: %s\n",
                     shader == r.vertex_shader ? "vertex" : "fragment", log);
    }
    glGetProgramInfoLog(r.program, sizeof(log), nullptr, log);
    std::fprintf(stderr, "gpumem: the renderer's shaders did not link: %s\n", log);
}

bool Ready(Renderer& r)
{
    if (r.checked)
        return r.usable;
    r.checked = true;
    GLint linked = GL_FALSE;
    glGetProgramiv(r.program, GL_LINK_STATUS, &linked);
    if (linked != GL_TRUE)
    {
        ReportLinkFailure(r);
        return false;
    }
    glUseProgram(r.program);
    r.transform = glGetUniformLocation(r.program, "u_transform");
    glUniform1i(glGetUniformLocation(r.program, "u_atlas"), 0);
    r.usable = true;
    return true;
}

// Starts compiling the shaders and sets the state that never changes on this canvas (blending, the
// vertex layout), with the context current. Nothing here waits for the GPU process: the shaders
// compile there while main() reads the catalogues and runs the first estimate.
void RendererStart(Renderer& r)
{
    r.vertex_shader = Compile(GL_VERTEX_SHADER, kVertexShader);
    r.fragment_shader = Compile(GL_FRAGMENT_SHADER, kFragmentShader);
    r.program = glCreateProgram();
    glAttachShader(r.program, r.vertex_shader);
    glAttachShader(r.program, r.fragment_shader);
    glLinkProgram(r.program);

    // One vertex array and its two buffers, bound for the page's lifetime (RendererDraw fills them).
    // ImDrawVert: position (2 floats), uv (2 floats), colour (4 bytes, normalized).
    GLuint vao = 0, buffers[2] = {};
    glGenVertexArrays(1, &vao);
    glBindVertexArray(vao);
    glGenBuffers(2, buffers);
    glBindBuffer(GL_ARRAY_BUFFER, buffers[0]);
    glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, buffers[1]);  // kept by the vertex array
    constexpr GLsizei stride = sizeof(ImDrawVert);
    glEnableVertexAttribArray(0);
    glVertexAttribPointer(0, 2, GL_FLOAT, GL_FALSE, stride, reinterpret_cast<void*>(offsetof(ImDrawVert, pos)));
    glEnableVertexAttribArray(1);
    glVertexAttribPointer(1, 2, GL_FLOAT, GL_FALSE, stride, reinterpret_cast<void*>(offsetof(ImDrawVert, uv)));
    glEnableVertexAttribArray(2);
    glVertexAttribPointer(2, 4, GL_UNSIGNED_BYTE, GL_TRUE, stride, reinterpret_cast<void*>(offsetof(ImDrawVert, col)));

    // What never changes on this canvas: straight alpha blending, no depth, stencil or culling.
    glEnable(GL_BLEND);
    glBlendEquation(GL_FUNC_ADD);
    glBlendFuncSeparate(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA, GL_ONE, GL_ONE_MINUS_SRC_ALPHA);
    glDisable(GL_CULL_FACE);
    glDisable(GL_DEPTH_TEST);
    glDisable(GL_STENCIL_TEST);
    glActiveTexture(GL_TEXTURE0);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 1);

    ImGui::GetIO().BackendRendererName = "gpumem_webgl2";
}

// Uploads the font atlas (building it if it is not yet) as a one-channel texture, replacing the last.
void RendererSetFonts(Renderer& r)
{
    ImGuiIO& io = ImGui::GetIO();
    unsigned char* pixels = nullptr;
    int width = 0, height = 0;
    io.Fonts->GetTexDataAsAlpha8(&pixels, &width, &height);
    if (r.atlas != 0)
        glDeleteTextures(1, &r.atlas);
    glGenTextures(1, &r.atlas);
    glBindTexture(GL_TEXTURE_2D, r.atlas);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_LINEAR);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_LINEAR);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
    glTexImage2D(GL_TEXTURE_2D, 0, GL_R8, width, height, 0, GL_RED, GL_UNSIGNED_BYTE, pixels);
    io.Fonts->SetTexID(reinterpret_cast<ImTextureID>(static_cast<std::uintptr_t>(r.atlas)));
}

// Draws `data` over the framebuffer of `width` x `height` pixels. The first call reads the shaders'
// link status; when they failed it says why on stderr once and draws nothing.
void RendererDraw(Renderer& r, const ImDrawData* data, int width, int height)
{
    if (data == nullptr || width <= 0 || height <= 0 || data->DisplaySize.x <= 0.0f || data->DisplaySize.y <= 0.0f ||
        !Ready(r))
        return;
    glViewport(0, 0, width, height);
    // The display rectangle onto clip space, y pointing down.
    const ImVec2 pos = data->DisplayPos, size = data->DisplaySize;
    glUniform4f(r.transform, 2.0f / size.x, -2.0f / size.y, -1.0f - 2.0f * pos.x / size.x,
                1.0f + 2.0f * pos.y / size.y);
    const ImVec2 scale = data->FramebufferScale;
    glEnable(GL_SCISSOR_TEST);
    GLuint bound = 0;
    for (int n = 0; n < data->CmdListsCount; n++)
    {
        const ImDrawList* list = data->CmdLists[n];
        glBufferData(GL_ARRAY_BUFFER, static_cast<GLsizeiptr>(list->VtxBuffer.Size) * sizeof(ImDrawVert),
                     list->VtxBuffer.Data, GL_STREAM_DRAW);
        glBufferData(GL_ELEMENT_ARRAY_BUFFER, static_cast<GLsizeiptr>(list->IdxBuffer.Size) * sizeof(ImDrawIdx),
                     list->IdxBuffer.Data, GL_STREAM_DRAW);
        for (const ImDrawCmd& cmd : list->CmdBuffer)
        {
            if (cmd.UserCallback != nullptr)
            {
                // The page draws no callbacks; ImDrawCallback_ResetRenderState has nothing to reset here.
                if (cmd.UserCallback != ImDrawCallback_ResetRenderState)
                    cmd.UserCallback(list, &cmd);
                continue;
            }
            // The clip rectangle in framebuffer pixels; GL's scissor counts rows from the bottom.
            const float x0 = (cmd.ClipRect.x - pos.x) * scale.x, y0 = (cmd.ClipRect.y - pos.y) * scale.y;
            const float x1 = (cmd.ClipRect.z - pos.x) * scale.x, y1 = (cmd.ClipRect.w - pos.y) * scale.y;
            if (x1 <= x0 || y1 <= y0)
                continue;
            glScissor(static_cast<GLint>(x0), static_cast<GLint>(static_cast<float>(height) - y1),
                      static_cast<GLsizei>(x1 - x0), static_cast<GLsizei>(y1 - y0));
            const GLuint texture = static_cast<GLuint>(reinterpret_cast<std::uintptr_t>(cmd.GetTexID()));
            if (texture != bound)
            {
                glBindTexture(GL_TEXTURE_2D, texture);
                bound = texture;
            }
            glDrawElements(GL_TRIANGLES, static_cast<GLsizei>(cmd.ElemCount),
                           sizeof(ImDrawIdx) == 2 ? GL_UNSIGNED_SHORT : GL_UNSIGNED_INT,
                           reinterpret_cast<void*>(static_cast<std::uintptr_t>(cmd.IdxOffset) * sizeof(ImDrawIdx)));
        }
    }
    glDisable(GL_SCISSOR_TEST);  // the next frame's glClear covers the whole canvas
}

// Emscripten owns the loop and calls Frame() from requestAnimationFrame, so what lives across
// frames lives here: the window, the canvas metrics, and the app's one state struct.
struct Platform
{
    GLFWwindow* window = nullptr;
    int width = 0;  // canvas backing store, device pixels
    int height = 0;
    double css_width = 0.0;  // canvas size in CSS pixels
    double css_height = 0.0;
    float ui_scale = 0.0f;    // whole-number scale applied to fonts and style (a pinch-zoom's included)
    float base_scale = 0.0f;  // UiScale's, unzoomed: CSS px per UI px is base_scale / devicePixelRatio
    bool ui_coarse = false;   // the style applied is the finger's (TouchStyle)
    bool first_frame_done = false;
    std::string focus_text;    // what the page's focus mirror last said
    std::string details_text;  // and its details region
    gpumem::ui::AppState app;
    gpumem::ui::TestHooks test_hooks;  // where the tests' named widgets are (test_hooks.h)
    bool coarse = false;               // a finger is the main pointer: larger text and targets
    Touch touch;
    Renderer renderer;
    ImVector<ImWchar> headline_glyphs;  // the large font's characters (ApplyScale)

    // How long each Frame() took (ms, CPU side): a ring of the last kFrameSamples, for the
    // page benchmark's frame-time figures (ui_frame_times).
    static constexpr int kFrameSamples = 240;
    double frame_ms[kFrameSamples] = {};
    int frame_count = 0;
};

Platform g_platform;

constexpr float kBaseFontSize = 13.0f;  // Dear ImGui's default font, ProggyClean, at 1×
constexpr const char* kCanvas = "#canvas";

// Device pixels per UI pixel: the device pixel ratio rounded to a whole number, so the pixel
// font stays crisp; with a finger as the pointer a step larger (at 3x, 4: text ~17 CSS px).
float UiScale(double dpr, bool coarse)
{
    const float fine = std::max(1.0f, std::round(static_cast<float>(dpr)));
    return coarse ? std::max(fine + 1.0f, std::round(static_cast<float>(dpr) * 4.0f / 3.0f)) : fine;
}

// Sizes for a finger (UI pixels, before scaling): controls 13 + 2 x 4 = 21 px tall, 28 CSS px at
// 3x (scale 4); rows of a list 13 + 6 = 19 px, 25 CSS px. WCAG 2.2's minimum target is 24 CSS px.
void TouchStyle(ImGuiStyle& style)
{
    style.FramePadding = ImVec2(6.0f, 4.0f);
    style.ItemSpacing = ImVec2(8.0f, 6.0f);
    style.ItemInnerSpacing = ImVec2(6.0f, 6.0f);
    style.GrabMinSize = 16.0f;
}

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
    // Only the headline's characters (a byte size): the atlas then rasterizes ~17 large glyphs, not
    // ~190 (the font atlas was the first frame's largest step).
    if (p.headline_glyphs.empty())
    {
        ImFontGlyphRangesBuilder builder;
        builder.AddText(gpumem::ui::kFormatBytesChars);
        builder.AddChar(static_cast<ImWchar>('?'));  // Dear ImGui's fallback glyph
        builder.BuildRanges(&p.headline_glyphs);
    }
    large.GlyphRanges = p.headline_glyphs.Data;
    p.app.font_large = io.Fonts->AddFontDefault(&large);
    RendererSetFonts(p.renderer);  // builds the atlas and uploads it

    // Every window's scroll is in device pixels: kept at the same place in the content.
    if (p.ui_scale > 0.0f && scale != p.ui_scale)
    {
        const float ratio = scale / p.ui_scale;
        for (ImGuiWindow* window : GImGui->Windows)
        {
            window->Scroll = ImVec2(window->Scroll.x * ratio, window->Scroll.y * ratio);
            if (window->ScrollTarget.x != FLT_MAX)
                window->ScrollTarget.x *= ratio;
            if (window->ScrollTarget.y != FLT_MAX)
                window->ScrollTarget.y *= ratio;
        }
    }

    ImGuiStyle style;
    ImGui::StyleColorsDark(&style);
    style.WindowRounding = 0.0f;
    style.FrameRounding = 3.0f;
    style.ChildRounding = 3.0f;
    style.GrabRounding = 3.0f;
    gpumem::ui::ApplyPageColors(style);
    if (p.coarse)
        TouchStyle(style);
    style.ScaleAllSizes(scale);
    ImGui::GetStyle() = style;
    p.ui_scale = scale;
    p.ui_coarse = p.coarse;
    if (p.coarse)
        io.ConfigFlags |= ImGuiConfigFlags_IsTouchScreen;  // widgets.cpp: full-height small buttons
    else
        io.ConfigFlags &= ~ImGuiConfigFlags_IsTouchScreen;
}

// A pinch-zoom's sharper canvas: at most this many pixels in the backing store (64 MiB of RGBA, 4096 x 4096),
// and this many on a side; and at most this UI scale: ProggyClean at 13 x 6 = 78 px and its double at 156 px
// keep the font atlas within 4096 px a side, the smallest WebGL texture limit phones have (at 8 it is
// 2048 x 8192; ui_state's font_atlas says its size).
constexpr double kMaxZoomPixels = 4096.0 * 4096.0;
constexpr double kMaxZoomSide = 8192.0;
constexpr float kMaxZoomUiScale = 6.0f;

// The UI scale for `base` (UiScale's) under a pinch-zoom of `zoom`: the whole number nearest base x zoom,
// lowered until the backing store (css x dpr x scale / base) fits the caps above; `base` when unzoomed.
float ZoomedUiScale(float base, double zoom, double css_w, double css_h, double dpr)
{
    float scale = std::min(std::round(base * static_cast<float>(std::max(zoom, 1.0))), std::max(base, kMaxZoomUiScale));
    for (; scale > base; scale -= 1.0f)
    {
        const double k = dpr * scale / base;
        if (css_w * k <= kMaxZoomSide && css_h * k <= kMaxZoomSide && css_w * k * css_h * k <= kMaxZoomPixels)
            break;
    }
    return std::max(scale, base);
}

// Keeps the canvas backing store at its CSS size × devicePixelRatio (window resizes, zoom,
// moving to another screen), and × the pinch-zoom's scale over UiScale's once one settles
// (ZoomedUiScale), so that zoomed-in text is drawn at the zoomed size instead of enlarged.
// Module.setCanvasSize tells emscripten's GLFW without the fullscreen request that
// glfwSetWindowSize makes when the size equals the screen's.
void SyncCanvasSize(Platform& p)
{
    double css_w = 0.0, css_h = 0.0;
    emscripten_get_element_css_size(kCanvas, &css_w, &css_h);
    const double dpr = emscripten_get_device_pixel_ratio();
    p.coarse = PageCoarsePointer() != 0;
    const float base = UiScale(dpr, p.coarse);
    const float scale = ZoomedUiScale(base, PageZoomScale(), css_w, css_h, dpr);
    const double render = dpr * scale / base;  // device pixels per CSS pixel
    const int w = std::max(1, static_cast<int>(std::lround(css_w * render)));
    const int h = std::max(1, static_cast<int>(std::lround(css_h * render)));
    p.css_width = css_w;
    p.css_height = css_h;
    if (w != p.width || h != p.height)
    {
        SetCanvasBackingSize(w, h);
        p.width = w;
        p.height = h;
    }
    p.base_scale = base;
    if (scale != p.ui_scale || p.coarse != p.ui_coarse)
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

// Device pixels per CSS pixel (the canvas's backing store over its CSS size).
float DevicePixelsPerCss(const Platform& p)
{
    return p.css_width > 0.0 ? static_cast<float>(p.width / p.css_width) : 1.0f;
}

// The window a finger's drag scrolls: the one it landed in or the nearest enclosing one that can
// still move the drag's way along its main axis (0 if none can). A nested list or text box already at
// its end hands the drag to the page, as a browser chains a gesture that starts on a scroller at its
// end to the one around it; otherwise such a box would hold the page still under the finger.
ImGuiID ScrollTarget(ImGuiID landed, ImVec2 drag, bool vertical)
{
    const float along = vertical ? drag.y : drag.x;  // the content follows the finger: scroll goes the other way
    for (ImGuiWindow* w = ImGui::FindWindowByID(landed); w != nullptr; w = w->ParentWindow)
    {
        const float scroll = vertical ? w->Scroll.y : w->Scroll.x, max = vertical ? w->ScrollMax.y : w->ScrollMax.x;
        if (max > 0.0f && (along > 0.0f ? scroll > 0.0f : scroll < max))
            return w->ID;
    }
    return 0;
}

// Before ImGui::NewFrame: this frame's touches, what the finger is doing, and where the mouse is.
void TouchBeforeFrame(Platform& p)
{
    Touch& t = p.touch;
    ImGuiIO& io = ImGui::GetIO();
    const double now = emscripten_get_now();
    const float slop = 8.0f * DevicePixelsPerCss(p);  // CSS px a finger may wander and still tap

    if (t.active && t.queue.empty())
    {
        double x = 0.0, y = 0.0;
        glfwGetCursorPos(p.window, &x, &y);
        if (x != t.mouse_x || y != t.mouse_y)  // the real mouse moved: it has the page back
            t = Touch();
    }
    for (const TouchEvent& e : t.queue)
    {
        if (!t.active)
        {
            t.active = true;
            glfwGetCursorPos(p.window, &t.mouse_x, &t.mouse_y);
        }
        if (e.kind == 0)
        {
            t.no_tap = t.momentum;
            t.momentum = false;
            t.phase = Touch::Phase::Pending;
            t.down = true;
            t.classified = false;
            t.start = t.pos = e.pos;
            t.velocity = ImVec2(0.0f, 0.0f);
            t.scroll_delta = ImVec2(0.0f, 0.0f);
            t.slider_dx = 0.0f;
            t.last_ms = e.ms;
        }
        else if (e.kind == 1 && t.down)
        {
            const ImVec2 d(e.pos.x - t.pos.x, e.pos.y - t.pos.y);
            const float dt = static_cast<float>(std::max(1.0, e.ms - t.last_ms));
            const float blend = 1.0f - std::exp(-dt / 40.0f);  // velocity: the last ~40 ms weigh most
            t.velocity.x += (d.x / dt - t.velocity.x) * blend;
            t.velocity.y += (d.y / dt - t.velocity.y) * blend;
            t.pos = e.pos;
            t.last_ms = e.ms;
            if (t.phase == Touch::Phase::Scroll)
                t.scroll_delta = ImVec2(t.scroll_delta.x + d.x, t.scroll_delta.y + d.y);
            else if (t.phase == Touch::Phase::Slider)
                t.slider_dx += d.x;
        }
        else if (e.kind == 2 || e.kind == 3)
        {
            t.down = false;
            if (e.kind == 3)  // a second finger (the browser's pinch) or the browser took the touch
                t.phase = t.phase == Touch::Phase::Slider ? Touch::Phase::Slider : Touch::Phase::Ignored;
            if (e.kind == 3)
                t.velocity = ImVec2(0.0f, 0.0f);
            else if (e.ms - t.last_ms > 150.0)  // the finger rested before lifting: no fling
                t.velocity = ImVec2(0.0f, 0.0f);
        }
    }
    t.queue.clear();

    // Decide what a landed finger does once the item under it is known (TouchAfterFrame).
    if (t.phase == Touch::Phase::Pending && t.classified)
    {
        const ImVec2 total(t.pos.x - t.start.x, t.pos.y - t.start.y);
        if (std::abs(total.x) > slop || std::abs(total.y) > slop)
        {
            const bool vertical = std::abs(total.y) >= std::abs(total.x);
            if (t.start_slider != 0 && !vertical)
            {
                t.phase = Touch::Phase::Slider;
                t.slider_dx = total.x;
            }
            else
            {
                t.phase = Touch::Phase::Scroll;
                t.scroll_window = ScrollTarget(t.start_window, total, vertical);
                t.scroll_delta = total;
            }
        }
        else if (!t.down)
        {
            if (!t.no_tap && t.start_slider == 0)  // a tap on a slider keeps its value
            {
                t.tap_frames = 2;
                t.tap_pos = t.start;
            }
            t.phase = Touch::Phase::None;
        }
    }
    // A lifted finger ends its gesture (a slider once its last movement is given to it).
    if (!t.down && t.phase != Touch::Phase::Pending && !(t.phase == Touch::Phase::Slider && t.slider_dx != 0.0f))
    {
        if (t.phase == Touch::Phase::Scroll)
        {
            const float min_speed = 0.05f * DevicePixelsPerCss(p);  // px per ms
            t.momentum = std::hypot(t.velocity.x, t.velocity.y) > min_speed && t.scroll_window != 0;
        }
        if (t.phase == Touch::Phase::Slider)
            t.release_slider = true;
        t.phase = Touch::Phase::None;
    }

    if (t.momentum && t.phase == Touch::Phase::None)
    {
        // Momentum: the content keeps the finger's speed and slows down (a time constant of 325 ms,
        // as iOS's and Android's scrollers roughly do).
        const float dt = static_cast<float>(std::clamp(now - t.last_frame_ms, 1.0, 100.0));
        t.scroll_delta = ImVec2(t.scroll_delta.x + t.velocity.x * dt, t.scroll_delta.y + t.velocity.y * dt);
        const float decay = std::exp(-dt / 325.0f);
        t.velocity = ImVec2(t.velocity.x * decay, t.velocity.y * decay);
        if (std::hypot(t.velocity.x, t.velocity.y) < 0.02f * DevicePixelsPerCss(p))
            t.momentum = false;
    }
    t.last_frame_ms = now;

    if (!t.active)
        return;
    // The mouse, as Dear ImGui sees it: pressed then released for a tap, resting under a finger that
    // has not moved (hover, tooltips), else nowhere.
    for (bool& down : io.MouseDown)
        down = false;
    io.MousePos = ImVec2(-FLT_MAX, -FLT_MAX);
    if (t.tap_frames > 0)
    {
        io.MousePos = t.tap_pos;
        io.MouseDown[0] = t.tap_frames == 2;
        t.tap_frames--;
    }
    else if (t.phase == Touch::Phase::Pending)
        io.MousePos = t.start;
}

// After ImGui::NewFrame, before the page: scroll, and hold or let go of a slider.
void TouchInFrame(Platform& p)
{
    Touch& t = p.touch;
    ImGuiContext& g = *ImGui::GetCurrentContext();
    if (t.release_slider)
    {
        if (g.ActiveId == t.start_slider && t.slider_held)
            ImGui::ClearActiveID();
        t.release_slider = false;
        t.slider_held = false;
    }
    if (t.phase == Touch::Phase::Slider)
    {
        if (!t.slider_held)
        {
            // Held as the keyboard holds it (ImGuiInputSource_Nav): SliderBehavior then moves the
            // value by g.SliderCurrentAccum, a share of the track, from where it is.
            ImGuiWindow* window = ImGui::FindWindowByID(t.start_window);
            if (window == nullptr)
            {
                t.phase = Touch::Phase::Ignored;
                return;
            }
            ImGui::SetActiveID(t.start_slider, window);
            g.ActiveIdSource = ImGuiInputSource_Nav;
            t.slider_held = true;
        }
        else if (g.ActiveId != t.start_slider)
        {
            t.phase = Touch::Phase::Ignored;  // something else took it (the slider went away)
            t.slider_held = false;
        }
        else if (t.slider_dx != 0.0f && !g.ActiveIdIsJustActivated)
        {
            // The track's usable length: the frame less ImGui's 2 px padding each side and the grab.
            const float track = std::max(1.0f, t.start_slider_width - 4.0f - g.Style.GrabMinSize);
            g.SliderCurrentAccum += t.slider_dx / track;
            g.SliderCurrentAccumDirty = true;
            t.slider_dx = 0.0f;
        }
    }
    if (t.scroll_delta.x != 0.0f || t.scroll_delta.y != 0.0f)
    {
        ImGuiWindow* w = ImGui::FindWindowByID(t.scroll_window);
        if (w != nullptr)
        {
            const ImVec2 to(std::clamp(w->Scroll.x - t.scroll_delta.x, 0.0f, w->ScrollMax.x),
                            std::clamp(w->Scroll.y - t.scroll_delta.y, 0.0f, w->ScrollMax.y));
            if (t.momentum && to.x == w->Scroll.x && to.y == w->Scroll.y)
                t.momentum = false;  // flung against an end
            ImGui::SetScrollX(w, to.x);
            ImGui::SetScrollY(w, to.y);
        }
        else
            t.momentum = false;
        t.scroll_delta = ImVec2(0.0f, 0.0f);
    }
}

// After the page: the item and window under a finger that just landed (the mouse was there).
void TouchAfterFrame(Platform& p)
{
    Touch& t = p.touch;
    if (t.phase != Touch::Phase::Pending || t.classified)
        return;
    const ImGuiContext& g = *ImGui::GetCurrentContext();
    t.start_window = g.HoveredWindow != nullptr ? g.HoveredWindow->ID : 0;
    t.start_slider = p.test_hooks.hovered_slider;
    t.start_slider_width = p.test_hooks.hovered_slider_rect.w;
    t.classified = true;
}

void Frame()
{
    Platform& p = g_platform;
    const double start = emscripten_get_now();
    SyncCanvasSize(p);
    glfwPollEvents();
    FeedQueuedKey(p);

    ImGui_ImplGlfw_NewFrame();
    TouchBeforeFrame(p);
    ImGui::NewFrame();
    TouchInFrame(p);
    if (!p.first_frame_done)
        NoteStartupStep("frame_setup");
    gpumem::ui::ShowApp(p.app);
    TouchAfterFrame(p);
    ImGui::Render();
    if (!p.first_frame_done)
        NoteStartupStep("frame_app");

    glViewport(0, 0, p.width, p.height);
    glClearColor(kClearColor.x, kClearColor.y, kClearColor.z, kClearColor.w);
    glClear(GL_COLOR_BUFFER_BIT);
    RendererDraw(p.renderer, ImGui::GetDrawData(), p.width, p.height);

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

// web/page.js: the tools' module (tools.h) arrived, or could not be had.
void UiToolsArrived()
{
    gpumem::ui::ToolsArrived(g_platform.app);
}

// One finger's touch from the page (web/page.js): kind 0 start, 1 move, 2 end, 3 cancel; where, in
// CSS pixels from the canvas's corner; when, in ms (the event's timeStamp: performance.now()'s clock).
// At most 256 a frame.
void UiTouch(int kind, double x, double y, double ms)
{
    Platform& p = g_platform;
    if (kind < 0 || kind > 3 || p.touch.queue.size() >= 256)
        return;
    const float k = DevicePixelsPerCss(p);
    p.touch.queue.push_back({kind, ImVec2(static_cast<float>(x) * k, static_cast<float>(y) * k), ms});
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

// The tables drawn in the last frame, for tests: {"NAME or ID": [{"width", "content"}, ...]}, each
// column's room (its work rectangle) and how far its cells' content reached (device pixels): a
// column whose content is wider than its room is cut. Named as the test hooks name items (a table
// that scrolls is a child window: its ID is an item's).
nlohmann::json TablesShown()
{
    ImGuiContext& g = *ImGui::GetCurrentContext();
    const Platform& p = g_platform;
    nlohmann::json out = nlohmann::json::object();
    for (int i = 0; i < g.Tables.GetMapSize(); i++)
    {
        const ImGuiTable* table = g.Tables.TryGetMapData(i);
        if (table == nullptr || table->LastFrameActive < g.FrameCount - 1)
            continue;
        nlohmann::json columns = nlohmann::json::array();
        for (int c = 0; c < table->ColumnsCount; c++)
        {
            const ImGuiTableColumn& column = table->Columns[c];
            columns.push_back({{"width", column.WorkMaxX - column.WorkMinX},
                               {"content", column.ContentMaxXUnfrozen - column.WorkMinX}});
        }
        const auto named = p.test_hooks.shown.find(table->ID);
        char id[16];
        std::snprintf(id, sizeof(id), "%08X", table->ID);
        out[named != p.test_hooks.shown.end() ? named->second : id] = columns;
    }
    return out;
}

// What the model panel and the import box say, for tests: {"source", "hub": {"status", "id",
// "kind", "message", "api_total", "bundled_twin", "base", "base_from_link", "token_withheld"},
// "import_message", "config_check" and "config_model" (the tools' configs last read),
// "held_config_files" (how many wait for a file they name), "files_waiting_for_tools" (how many wait for the
// tools' module: tools.h), "imported_gpus", "link_message",
// "share", "pinned", "compare" (the Compare table's columns: ComparedResults), "markdown", "plan", "maxfit",
// "decisions" (decisions.h: fit, export, sweeps, calibration), "keyboard_focus": the recorded widget keyboard
// navigation is on, "more_open" (the controls' "More"), "coarse_pointer" and "ui_scale" (UiScale, a pinch-zoom's
// included), "tables" (TablesShown), "touch": {"active", "phase" (Touch::Phase), "momentum", "speed" (CSS px per ms)},
// "base_scale" (UiScale's, before a pinch-zoom's: ZoomedUiScale), "canvas" (the backing store, device px),
// "font_atlas" (its width and height)}.
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
        {"files_waiting_for_tools", app.files_waiting_for_tools.is_array() ? app.files_waiting_for_tools.size() : 0},
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
        {"more_open", app.more_open},
        {"tables", TablesShown()},
        {"touch",
         {{"active", g_platform.touch.active},
          {"phase", static_cast<int>(g_platform.touch.phase)},
          {"momentum", g_platform.touch.momentum},
          {"speed",
           std::hypot(g_platform.touch.velocity.x, g_platform.touch.velocity.y) / DevicePixelsPerCss(g_platform)}}},
        {"coarse_pointer", g_platform.coarse},
        {"ui_scale", g_platform.ui_scale},
        {"base_scale", g_platform.base_scale},
        {"canvas", {g_platform.width, g_platform.height}},
        {"font_atlas", {ImGui::GetIO().Fonts->TexWidth, ImGui::GetIO().Fonts->TexHeight}},
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
    emscripten::function("ui_hub_response", &UiHubResponse);
    emscripten::function("ui_load_files", &UiLoadFiles);
    emscripten::function("ui_import_problem", &UiImportProblem);
    emscripten::function("ui_tools_arrived", &UiToolsArrived);
    emscripten::function("ui_number_commit", &UiNumberCommit);
    emscripten::function("ui_number_cancel", &UiNumberCancel);
    emscripten::function("ui_touch", &UiTouch);
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
    NoteStartupStep("window");  // GLFW and the WebGL2 context

    IMGUI_CHECKVERSION();
    ImGui::CreateContext();
    gpumem::ui::InstallTestHooks(ImGui::GetCurrentContext(), &p.test_hooks);
    ImGuiIO& io = ImGui::GetIO();
    io.IniFilename = nullptr;  // no imgui.ini: the page has no filesystem and keeps no layout
    io.LogFilename = nullptr;
    io.ConfigFlags |= ImGuiConfigFlags_NavEnableKeyboard;
    // A double-click within half a second (Windows' default; Dear ImGui's own 0.30 s drops a double-click whose
    // two presses straddle slow frames, and the slider moves instead of opening its box).
    io.MouseDoubleClickTime = 0.5f;

    ImGui_ImplGlfw_InitForOpenGL(p.window, true);
    glfwSetScrollCallback(p.window, ScrollCallback);
    RendererStart(p.renderer);  // its shaders compile while AppInit runs
    NoteStartupStep("imgui");

    const bool page = PageHasServices();
    if (page)
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
    // What the link or the saved settings ask for (page.js, Module.openRequest: JSON text, read from
    // the URL and localStorage before the module loaded), applied before the first estimate.
    nlohmann::json open;
    if (page)
    {
        const emscripten::val request = emscripten::val::module_property("openRequest");
        open = request.isString() ? ParseFromPage(request.as<std::string>()) : nlohmann::json::object();
    }
    gpumem::ui::AppInit(p.app, page ? &open : nullptr);
    NoteStartupStep("app");  // the catalogues, the first estimate

    // 0 fps: follow requestAnimationFrame. Returns at once; the state lives on in g_platform.
    emscripten_set_main_loop(Frame, 0, false);
    return 0;
}
