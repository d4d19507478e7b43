// What the browser tests see of the page: where named widgets are, and which one keyboard
// navigation is on. The panels know nothing of it. Dear ImGui's test-engine hooks
// (IMGUI_ENABLE_TEST_ENGINE, imgui_internal.h) report every item's ID and rectangle as it is
// submitted; test_hooks.cpp keeps those whose ID is one of the labels in its table of names.
//
//     InstallTestHooks(ImGui::GetCurrentContext(), &hooks);   // once, after CreateContext()
//     ...frames...
//     hooks.rects["batch_size"]                               // the last frame's rectangle
//     hooks.texts["link_message"]                             // and a notice's text
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

struct ImGuiContext;

namespace gpumem::ui {

// A widget's rectangle in framebuffer pixels (main.cpp converts to CSS pixels for tests).
struct WidgetRect
{
    float x = 0.0f, y = 0.0f, w = 0.0f, h = 0.0f;
};

struct TestHooks
{
    // The last frame's named widgets (cleared when a frame starts) and the one keyboard
    // navigation was on when it ended ("" if none of them).
    std::map<std::string, WidgetRect> rects;
    std::string keyboard_focus;
    // The text the last frame showed in the named items that report it (notices, a bar's share).
    std::map<std::string, std::string> texts;
    int help_markers = 0;  // the help markers drawn this frame (rects: help_1, help_2, ...)

    // An item's ID is its label hashed into the ID scope it was submitted in: each scope seen is
    // hashed with every label of the table once, and the IDs kept (in the table's order).
    std::unordered_map<std::uint32_t, std::vector<std::uint32_t>> scopes;
    std::unordered_map<std::uint32_t, const char*> shown;  // this frame's named items, by ID

    // For the page's touch input (main.cpp): the slider under the pointer in the last frame (its ID,
    // 0 if the item there is not a slider, and its rectangle). A slider is an item that drew a slider
    // grab: a touch drag on it moves its value from where it was instead of jumping to the finger.
    std::uint32_t hovered_slider = 0;
    WidgetRect hovered_slider_rect;
    std::uint32_t item_id = 0;  // the item last added, and its window's draw list's vertex count then
    int item_vertices = 0;
    WidgetRect item_rect;
};

// Points `ctx`'s test-engine hooks at `hooks` (which must outlive the context).
void InstallTestHooks(ImGuiContext* ctx, TestHooks* hooks);

}  // namespace gpumem::ui
