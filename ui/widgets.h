// Small widgets the panels share: a help marker, form rows, combos over the core's settings
// tables, byte formatting, and a horizontal stacked-bar chart drawn with ImDrawList in ImPlot's
// grammar (Begin / Setup / Plot / End), since ImPlot itself is in no registry this project can use.
//
//     if (BeginStackedBars("##per_gpu", x_max))               // x_max: axis end, in value units
//     {
//         SetupStackedBarsItems(labels, colors, count);          // one legend item per segment
//         PlotStackedBar("GPU 0", values, count, capacity);      // one bar; values[i] stacks item i
//         EndStackedBars();                                      // draws the value axis
//     }
//
// Values are whatever unit the caller picks (the panels pass GiB); the chart does no memory
// arithmetic beyond placing the numbers it is given.
#pragma once

#include <cfloat>

#include <gpumem/gpumem.h>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

#include "imgui.h"
#include "scenario_state.h"  // kComponentCount; settings.h's tables

namespace gpumem::ui {

// A "(?)" that shows `desc` in a tooltip when hovered (as in imgui_demo.cpp).
void HelpMarker(const char* desc);

// Wrapped text in `color`, as an item with an ID (`str_id`, e.g. "##link_message"): a notice
// that tools following items by ID, such as Dear ImGui's test-engine hooks, can find, with the
// text it shows.
void TextNotice(const char* str_id, const ImVec4& color, const char* text);

// Starts a form row: the label (and its help) on the left, the next widget filling the rest.
void FormRow(const char* label, const char* help = nullptr);

// A bullet and wrapped text.
void BulletWrapped(const std::string& text);

//-----------------------------------------------------------------------------
// [SECTION] Combos
//-----------------------------------------------------------------------------

// "default" or "default (<what the core resolved>)": the entry that leaves a field out.
std::string DefaultLabel(const char* resolved);

// The label the core's table gives `value` ("" when none).
template <typename E>
const char* SettingLabel(E value)
{
    using gpumem::detail::rows;
    for (const auto& row : rows(E{}))
        if (row.value == value)
            return row.label;
    return "";
}

// One row of a setting's table as a selectable combo entry, its help as a tooltip.
template <typename Row, typename E>
bool SettingSelectable(const Row& row, std::optional<E>& value)
{
    const bool selected = value == row.value;
    const bool clicked = ImGui::Selectable(row.label, selected);
    if (clicked)
        value = row.value;
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("%s", row.help);
    if (selected)
        ImGui::SetItemDefaultFocus();
    return clicked;
}

// A combo over every value of setting E, from the core's table (gpumem/settings.h): each
// entry's label, its help as a tooltip. The first entry, "default (<resolved>)", empties `value`
// so the field is left out and follows its default; an "auto" row is that entry, not listed again.
template <typename E>
bool SettingCombo(const char* label, std::optional<E>& value, const std::optional<E>& resolved)
{
    using gpumem::detail::rows;
    const std::string default_label = DefaultLabel(resolved ? SettingLabel(*resolved) : nullptr);
    bool changed = false;
    if (!ImGui::BeginCombo(label, value ? SettingLabel(*value) : default_label.c_str()))
        return false;
    if (ImGui::Selectable(default_label.c_str(), !value.has_value()))
    {
        value.reset();
        changed = true;
    }
    for (const auto& row : rows(E{}))
    {
        if (std::strcmp(row.name, "auto") == 0)
            continue;
        changed |= SettingSelectable(row, value);
    }
    ImGui::EndCombo();
    return changed;
}

// The same for a setting that is always given (no default entry).
template <typename E>
bool SettingCombo(const char* label, E& value)
{
    using gpumem::detail::rows;
    bool changed = false;
    if (!ImGui::BeginCombo(label, SettingLabel(value)))
        return false;
    for (const auto& row : rows(E{}))
    {
        std::optional<E> v = value;
        if (SettingSelectable(row, v))
        {
            value = *v;
            changed = true;
        }
    }
    ImGui::EndCombo();
    return changed;
}

// One entry of a combo over values the core has no table for (on / off, LoRA dropout, ...).
template <typename T>
struct Choice
{
    T value;
    const char* label;
};

// A combo over `choices` whose first entry, "default (<resolved>)", empties `value`. A value that
// is none of the choices (an import brought it in) shows as text_of(value).
template <typename T, int N, typename TextOf>
bool ChoiceCombo(const char* label, std::optional<T>& value, const Choice<T> (&choices)[N],
                 const std::optional<T>& resolved, TextOf text_of)
{
    auto text = [&](const T& v) -> std::string {
        for (const Choice<T>& c : choices)
            if (c.value == v)
                return c.label;
        return text_of(v);
    };
    const std::string default_label = DefaultLabel(resolved ? text(*resolved).c_str() : nullptr);
    const std::string preview = value ? text(*value) : default_label;
    bool changed = false;
    if (!ImGui::BeginCombo(label, preview.c_str()))
        return false;
    if (ImGui::Selectable(default_label.c_str(), !value.has_value()))
    {
        value.reset();
        changed = true;
    }
    for (const Choice<T>& choice : choices)
    {
        const bool selected = value == choice.value;
        if (ImGui::Selectable(choice.label, selected))
        {
            value = choice.value;
            changed = true;
        }
        if (selected)
            ImGui::SetItemDefaultFocus();
    }
    ImGui::EndCombo();
    return changed;
}

// An on / off switch whose default depends on other settings.
bool OnOffCombo(const char* label, std::optional<bool>& value, const std::optional<bool>& resolved);

//-----------------------------------------------------------------------------
// [SECTION] Figures
//-----------------------------------------------------------------------------

// The memory components' names and colours, in the result's stacking order (kComponentKeys).
struct Component
{
    const char* label;
    ImU32 color;
};
inline const Component kComponents[kComponentCount] = {
    {"Weights", IM_COL32(66, 133, 244, 255)},
    {"Gradients", IM_COL32(251, 140, 0, 255)},
    {"Optimizer states", IM_COL32(171, 71, 188, 255)},
    {"Activations", IM_COL32(67, 160, 71, 255)},
    {"Logits", IM_COL32(0, 172, 193, 255)},
    {"KV cache", IM_COL32(236, 64, 122, 255)},
    {"Temporaries", IM_COL32(255, 202, 40, 255)},
    {"Overheads", IM_COL32(144, 164, 174, 255)},
};

inline double ToGiB(std::uint64_t bytes)
{
    return static_cast<double>(bytes) / static_cast<double>(1ull << 30);
}

// "12.34 GiB" (2^30 bytes), "512.0 MiB" below one GiB.
std::string FormatBytes(std::uint64_t bytes);
// "8.03 B", "124 M": a parameter count in words.
std::string FormatCount(std::uint64_t count);

// Green below 80 % of the card, amber up to 95 %, red above: the one colour code for utilisation.
ImVec4 UtilizationColor(double utilization);

// The chart. Begin returns false when clipped (then call nothing else, like ImGui::BeginChild's
// siblings in ImPlot). `x_max` is the end of the value axis; `unit` labels its ticks.
// `widest_label` sets the width of the label column (default: room for "GPU 000").
bool BeginStackedBars(const char* str_id, double x_max, const char* unit = "GiB",
                      float width = 0.0f /* 0: available width */, const char* widest_label = nullptr);
// Names and colours of the segments, in stacking order; the pointers must outlive the chart.
void SetupStackedBarsItems(const char* const labels[], const ImU32 colors[], int count);
// One horizontal bar: values[i] is the length of segment i; a marker is drawn at `capacity`
// (the card), and the part of the bar past it is outlined in red. Hover shows a tooltip. When
// band_high > band_low, the error band (the range measured runs like this one landed in) is drawn
// across the bar as a whisker from band_low to band_high.
void PlotStackedBar(const char* label, const double values[], int count, double capacity, double band_low = 0.0,
                    double band_high = 0.0);
// Draws the value axis under the bars and closes the chart.
void EndStackedBars();

//-----------------------------------------------------------------------------
// [SECTION] Line chart
//-----------------------------------------------------------------------------
// Peak memory against a size, in the same grammar:
//
//     if (BeginLinePlot("##sweep_seq_len", "Sequence length", "GiB", x_max, y_max))
//     {
//         PlotLine("Peak per GPU", xs, ys, count, color);      // one polyline, points marked
//         PlotHLine("H100 80GB", capacity, color);             // a level across the chart
//         PlotMarker("Max fit", x, y, color);                  // one labelled point
//         EndLinePlot();                                       // axes, legend, hover tooltip
//     }
//
// The x axis is logarithmic (base 2) from 1 to x_max: the sweeps step by powers of two. The chart is
// one item (its ID is str_id), so tools following items by ID see its rectangle.
bool BeginLinePlot(const char* str_id, const char* x_label, const char* y_unit, double x_max, double y_max,
                   float height = 0.0f /* 0: 14 lines */);
void PlotLine(const char* label, const double xs[], const double ys[], int count, ImU32 color);
void PlotHLine(const char* label, double y, ImU32 color);
void PlotMarker(const char* label, double x, double y, ImU32 color);
void EndLinePlot();

//-----------------------------------------------------------------------------
// [SECTION] Touch screens (the page on a phone)
//-----------------------------------------------------------------------------

// ImGui::SmallButton (no vertical padding: one text line tall) where a mouse points, a full-height
// Button where a finger does (ImGuiConfigFlags_IsTouchScreen, set by main.cpp for a coarse
// pointer): a finger's target is at least 24 CSS px.
bool CompactButton(const char* label);

// The column is narrower than 30 characters' height (a phone): FormRow puts labels above controls.
bool NarrowColumn();

// ImGui::SameLine() before a radio button or checkbox labelled `next_label`, or a new line when it
// would not fit beside the last item (a row of choices wraps on a phone).
void SameLineIfRoom(const char* next_label);

// A table that keeps `min_width` pixels when its column is narrower (a phone) and scrolls sideways
// there, as tall as its rows (last frame's height); otherwise ImGui::BeginTable. End it with
// EndWideTable() when it returns true.
bool BeginWideTable(const char* str_id, int columns, ImGuiTableFlags flags, float min_width);
void EndWideTable();

}  // namespace gpumem::ui
