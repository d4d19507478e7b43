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
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "access.h"
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

// Names the combo `label` about to be drawn (by its ID) a combo box showing `preview`, for screen readers.
// Call it before BeginCombo: its description is applied when the item is added.
void AccessCombo(const char* label, const std::string& preview);

// "default" or "default (<what the core resolved>)": the entry that leaves a field out.
std::string DefaultLabel(const char* resolved);

// The number at `path` in a resolved scenario as text ("32", "0.9"), "" when there is none.
std::string ResolvedNumber(const nlohmann::json& resolved, std::initializer_list<const char*> path);

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
    AccessCombo(label, value ? SettingLabel(*value) : default_label);
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
    AccessCombo(label, SettingLabel(value));
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
    AccessCombo(label, preview);
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
// [SECTION] Numbers
//-----------------------------------------------------------------------------
// Every numeric control can be typed into. A NumberSlider snaps to the values people use and has
// an "Edit" button beside it (double-click, Ctrl+click and Enter open the same box): on the page
// the box is an HTML <input inputmode="numeric"> over the control (the phone's number keyboard),
// elsewhere an ImGui text field. Enter or leaving the box commits through CommitNumberEdit, the
// one path a typed value takes; Escape cancels; text that is not a whole number in range is
// refused with a message naming the field and the allowed range.
//
//     if (NumberSlider("##seq_len", "Sequence length", t.seq_len, 128, 131072, Snap::Tokens, "tokens")) ...
//     NumberInput("##num_gpus", "Number of GPUs", hw.num_gpus, 1, 4096);
//     NumberInputFloat("##lora_alpha", "LoRA alpha", t.lora_alpha, 0, 1e6, DefaultLabel("32"));

// The values a slider stops at: powers of two (batch sizes, ranks, GPU counts), or token counts
// (powers of two up to 1024, then multiples of 1024: every 1024 to 4096, four a doubling above).
enum class Snap
{
    PowersOfTwo,
    Tokens,
};

// The snapped values in [lo, hi], lo and hi included, ascending.
std::vector<int> SnapValues(int lo, int hi, Snap snap);

// The box a control asks the page to open: the field, its value and range, and the control's
// rectangle in framebuffer pixels. touch_only: open it only when the last pointer was a finger
// (a number field's own text field serves mouse and keyboard).
struct NumberEditRequest
{
    std::string id;    // the control's label, e.g. "##seq_len"
    std::string name;  // "Sequence length"
    std::string value;
    double lo = 0.0, hi = 0.0;
    bool integer = true;
    bool touch_only = false;
    float x = 0.0f, y = 0.0f, w = 0.0f, h = 0.0f;
};

// Set by main.cpp when a page can open its box: returns true when it did.
void SetNumberEditor(bool (*open)(const NumberEditRequest& request));

// The page's box committed `text` for control `id`: "" when taken (the control takes the value in
// the next frame, as if dragged there), else why not (also shown under the control).
std::string CommitNumberEdit(const std::string& id, const std::string& text);
// Escape in the page's box: nothing changes.
void CancelNumberEdit();

// A slider over SnapValues(lo, hi, snap) that shows `value` with `unit`, and its Edit button.
bool NumberSlider(const char* id, const char* name, int& value, int lo, int hi, Snap snap, const char* unit = "");
// A whole-number field (with - and + buttons); `zero_label` ("default (2)") is shown for 0.
bool NumberInput(const char* id, const char* name, int& value, int lo, int hi, const char* zero_label = nullptr);
// A decimal field that shows `zero_label` for 0 (0 leaves the field to its default).
bool NumberInputFloat(const char* id, const char* name, float& value, float lo, float hi,
                      const std::string& zero_label);

// A filter box at the top of an open combo (focused when it opens; true when Enter is pressed in it) and
// whether `text` passes it: case-insensitive, every word of the filter found in the text.
bool ComboFilter(const char* id, char* filter, std::size_t size, const char* hint);
bool FilterMatches(const char* filter, const std::string& text);

//-----------------------------------------------------------------------------
// [SECTION] Colours
//-----------------------------------------------------------------------------

// The page's colours: Dear ImGui's dark style with the dimmed text raised so that every text colour
// reads at least 4.5:1 (WCAG 2.x AA) on every background it is drawn on.
void ApplyPageColors(ImGuiStyle& style);
// WCAG 2.x contrast ratio of two opaque colours (1 to 21).
double ContrastRatio(const ImVec4& a, const ImVec4& b);
// `top` (with its alpha) drawn over the opaque `under`.
ImVec4 Over(const ImVec4& top, const ImVec4& under);

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
// Every character FormatBytes writes: the large font (main.cpp) holds only these glyphs, so its
// atlas is rasterized in a fraction of the time (issue #29), and the headline draws a text with
// any other character in the regular font.
inline constexpr const char* kFormatBytesChars = " .0123456789BGKMi";
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
