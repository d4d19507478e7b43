// Shared widgets: see widgets.h.

#include "widgets.h"

#include "imgui_internal.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace gpumem::ui {

//-----------------------------------------------------------------------------
// [SECTION] Small helpers
//-----------------------------------------------------------------------------

void HelpMarker(const char* desc)
{
    ImGui::TextDisabled("(?)");
    if (ImGui::IsItemHovered())
    {
        ImGui::BeginTooltip();
        ImGui::PushTextWrapPos(ImGui::GetFontSize() * 35.0f);
        ImGui::TextUnformatted(desc);
        ImGui::PopTextWrapPos();
        ImGui::EndTooltip();
    }
}

void FormRow(const char* label, const char* help)
{
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted(label);
    if (help != nullptr)
    {
        ImGui::SameLine();
        HelpMarker(help);
    }
    ImGui::SameLine(ImGui::GetFontSize() * 12.5f);
    ImGui::SetNextItemWidth(-FLT_MIN);
}

void BulletWrapped(const std::string& text)
{
    ImGui::Bullet();
    ImGui::TextWrapped("%s", text.c_str());
}

std::string DefaultLabel(const char* resolved)
{
    return resolved != nullptr && resolved[0] != '\0' ? "default (" + std::string(resolved) + ")" : "default";
}

bool OnOffCombo(const char* label, std::optional<bool>& value, const std::optional<bool>& resolved)
{
    static const Choice<bool> kOnOff[] = {{true, "on"}, {false, "off"}};
    return ChoiceCombo(label, value, kOnOff, std::optional<bool>(resolved.value_or(false)),
                       [](bool on) { return std::string(on ? "on" : "off"); });
}

void TextNotice(const char* str_id, const ImVec4& color, const char* text)
{
    ImGui::PushStyleColor(ImGuiCol_Text, color);
    ImGui::TextWrapped("%s", text);
    ImGui::PopStyleColor();
#ifdef IMGUI_ENABLE_TEST_ENGINE
    // Text has no ID of its own in Dear ImGui: announce the one given, as ImGui's widgets do.
    ImGuiContext& g = *GImGui;
    IMGUI_TEST_ENGINE_ITEM_ADD(g.LastItemData.Rect, ImGui::GetID(str_id));
#else
    (void)str_id;
#endif
}

std::string FormatBytes(std::uint64_t bytes)
{
    const double kib = 1024.0, mib = kib * 1024.0, gib = mib * 1024.0;
    const double b = static_cast<double>(bytes);
    char buf[32];
    if (b >= gib)
        std::snprintf(buf, sizeof(buf), "%.2f GiB", b / gib);
    else if (b >= mib)
        std::snprintf(buf, sizeof(buf), "%.1f MiB", b / mib);
    else if (b >= kib)
        std::snprintf(buf, sizeof(buf), "%.1f KiB", b / kib);
    else
        std::snprintf(buf, sizeof(buf), "%llu B", static_cast<unsigned long long>(bytes));
    return buf;
}

std::string FormatCount(std::uint64_t count)
{
    const double c = static_cast<double>(count);
    char buf[32];
    if (c >= 1e12)
        std::snprintf(buf, sizeof(buf), "%.2f T", c / 1e12);
    else if (c >= 1e9)
        std::snprintf(buf, sizeof(buf), "%.2f B", c / 1e9);
    else if (c >= 1e6)
        std::snprintf(buf, sizeof(buf), "%.1f M", c / 1e6);
    else if (c >= 1e3)
        std::snprintf(buf, sizeof(buf), "%.1f K", c / 1e3);
    else
        std::snprintf(buf, sizeof(buf), "%llu", static_cast<unsigned long long>(count));
    return buf;
}

ImVec4 UtilizationColor(double utilization)
{
    if (utilization < 0.80)
        return ImVec4(0.36f, 0.80f, 0.42f, 1.0f);  // green: fits with room to spare
    if (utilization <= 0.95)
        return ImVec4(0.95f, 0.72f, 0.25f, 1.0f);  // amber: fits, tightly
    return ImVec4(0.95f, 0.35f, 0.33f, 1.0f);      // red: does not fit (or only just)
}

//-----------------------------------------------------------------------------
// [SECTION] Stacked bars
//-----------------------------------------------------------------------------
// Like ImPlot's GImPlot, the chart being built lives in one context between Begin and End.
// Charts do not nest; Begin asserts that no other chart is open.

namespace {

struct StackedBarsContext
{
    bool open = false;
    double x_max = 1.0;
    const char* unit = "";
    const char* const* labels = nullptr;
    const ImU32* colors = nullptr;
    int item_count = 0;
    float left = 0.0f;    // screen x where the chart starts (label column)
    float bar_x0 = 0.0f;  // screen x of the value 0
    float bar_x1 = 0.0f;  // screen x of the value x_max
    float width = 0.0f;   // whole chart width, labels and percentages included
};

StackedBarsContext GStackedBars;

// A "nice" axis step (1, 2 or 5 × 10^k) giving about `target` ticks up to `range`.
double NiceStep(double range, int target)
{
    const double raw = range / target;
    const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
    const double fraction = raw / magnitude;
    const double nice = fraction <= 1.0 ? 1.0 : fraction <= 2.0 ? 2.0 : fraction <= 5.0 ? 5.0 : 10.0;
    return nice * magnitude;
}

}  // namespace

bool BeginStackedBars(const char* str_id, double x_max, const char* unit, float width, const char* widest_label)
{
    StackedBarsContext& ctx = GStackedBars;
    IM_ASSERT(!ctx.open && "BeginStackedBars() called twice without EndStackedBars()");
    const ImGuiStyle& style = ImGui::GetStyle();

    ImGui::PushID(str_id);
    ctx.open = true;
    ctx.x_max = x_max > 0.0 ? x_max : 1.0;
    ctx.unit = unit;
    ctx.labels = nullptr;
    ctx.colors = nullptr;
    ctx.item_count = 0;
    ctx.width = width > 0.0f ? width : ImGui::GetContentRegionAvail().x;
    ctx.left = ImGui::GetCursorScreenPos().x;
    const float label_w =
        ImGui::CalcTextSize(widest_label != nullptr ? widest_label : "GPU 000").x + style.ItemInnerSpacing.x;
    const float percent_w = ImGui::CalcTextSize("1000 %").x + style.ItemInnerSpacing.x;
    ctx.bar_x0 = ctx.left + label_w;
    ctx.bar_x1 = std::max(ctx.bar_x0 + 1.0f, ctx.left + ctx.width - percent_w);
    return true;
}

void SetupStackedBarsItems(const char* const labels[], const ImU32 colors[], int count)
{
    StackedBarsContext& ctx = GStackedBars;
    IM_ASSERT(ctx.open);
    ctx.labels = labels;
    ctx.colors = colors;
    ctx.item_count = count;
}

void PlotStackedBar(const char* label, const double values[], int count, double capacity)
{
    StackedBarsContext& ctx = GStackedBars;
    IM_ASSERT(ctx.open && count <= ctx.item_count);
    const ImGuiStyle& style = ImGui::GetStyle();
    ImDrawList* draw_list = ImGui::GetWindowDrawList();

    const ImVec2 pos = ImGui::GetCursorScreenPos();
    const float height = ImGui::GetFrameHeight() * 1.2f;
    ImGui::InvisibleButton(label, ImVec2(ctx.width, height));
    if (!ImGui::IsItemVisible())
        return;
    const bool hovered = ImGui::IsItemHovered();

    const float y0 = pos.y + 2.0f, y1 = pos.y + height - 2.0f;
    const float scale = (ctx.bar_x1 - ctx.bar_x0) / static_cast<float>(ctx.x_max);
    const float text_y = pos.y + (height - ImGui::GetFontSize()) * 0.5f;

    // Label column, then the empty track the bar fills.
    draw_list->AddText(ImVec2(ctx.left, text_y), ImGui::GetColorU32(ImGuiCol_Text), label);
    draw_list->AddRectFilled(ImVec2(ctx.bar_x0, y0), ImVec2(ctx.bar_x1, y1), ImGui::GetColorU32(ImGuiCol_FrameBg),
                             style.FrameRounding);

    // Segments, left to right in stacking order.
    double total = 0.0;
    int hovered_item = -1;
    const float mouse_x = ImGui::GetIO().MousePos.x;
    for (int i = 0; i < count; i++)
    {
        if (values[i] <= 0.0)
            continue;
        const float x0 = ctx.bar_x0 + static_cast<float>(total) * scale;
        total += values[i];
        const float x1 = ctx.bar_x0 + static_cast<float>(total) * scale;
        const float x0c = std::min(x0, ctx.bar_x1), x1c = std::min(x1, ctx.bar_x1);
        if (x1c > x0c)
            draw_list->AddRectFilled(ImVec2(x0c, y0), ImVec2(std::max(x1c, x0c + 1.0f), y1), ctx.colors[i]);
        if (hovered && mouse_x >= x0 && mouse_x < x1)
            hovered_item = i;
    }

    // The card: a marker at its capacity, and whatever lies past it outlined in red.
    const ImU32 over_col = ImGui::GetColorU32(UtilizationColor(1.0));
    if (capacity > 0.0)
    {
        const float cap_x = std::min(ctx.bar_x0 + static_cast<float>(capacity) * scale, ctx.bar_x1);
        const float end_x = std::min(ctx.bar_x0 + static_cast<float>(total) * scale, ctx.bar_x1);
        if (end_x > cap_x)
            draw_list->AddRect(ImVec2(cap_x, y0), ImVec2(end_x, y1), over_col, 0.0f, 0, 2.0f);
        const float thickness = std::max(2.0f, ImGui::GetFontSize() * 0.15f);
        draw_list->AddLine(ImVec2(cap_x, pos.y), ImVec2(cap_x, pos.y + height), ImGui::GetColorU32(ImGuiCol_WindowBg),
                           thickness * 2.0f);
        draw_list->AddLine(ImVec2(cap_x, pos.y), ImVec2(cap_x, pos.y + height), ImGui::GetColorU32(ImGuiCol_Text),
                           thickness);
    }

    // Share of the card, colour-coded.
    if (capacity > 0.0)
    {
        const double used = total / capacity;
        char buf[32];
        std::snprintf(buf, sizeof(buf), "%.0f %%", used * 100.0);
        const float text_w = ImGui::CalcTextSize(buf).x;
        draw_list->AddText(ImVec2(ctx.left + ctx.width - text_w, text_y), ImGui::GetColorU32(UtilizationColor(used)),
                           buf);
    }

    if (hovered_item >= 0)
    {
        ImGui::BeginTooltip();
        ImGui::ColorButton("##swatch", ImGui::ColorConvertU32ToFloat4(ctx.colors[hovered_item]),
                           ImGuiColorEditFlags_NoTooltip | ImGuiColorEditFlags_NoPicker);
        ImGui::SameLine();
        ImGui::Text("%s: %.2f %s (%.0f %% of this GPU's peak)", ctx.labels[hovered_item], values[hovered_item],
                    ctx.unit, total > 0.0 ? values[hovered_item] / total * 100.0 : 0.0);
        ImGui::EndTooltip();
    }
}

void EndStackedBars()
{
    StackedBarsContext& ctx = GStackedBars;
    IM_ASSERT(ctx.open);
    ImDrawList* draw_list = ImGui::GetWindowDrawList();

    // Value axis: a baseline with "nice" ticks and their labels.
    const ImVec2 pos = ImGui::GetCursorScreenPos();
    const float tick_h = ImGui::GetFontSize() * 0.35f;
    const ImU32 axis_col = ImGui::GetColorU32(ImGuiCol_TextDisabled);
    draw_list->AddLine(ImVec2(ctx.bar_x0, pos.y), ImVec2(ctx.bar_x1, pos.y), axis_col);
    const double step = NiceStep(ctx.x_max, 6);
    const float scale = (ctx.bar_x1 - ctx.bar_x0) / static_cast<float>(ctx.x_max);
    for (double v = 0.0; v <= ctx.x_max * 1.0001; v += step)
    {
        const float x = ctx.bar_x0 + static_cast<float>(v) * scale;
        draw_list->AddLine(ImVec2(x, pos.y), ImVec2(x, pos.y + tick_h), axis_col);
        char buf[32];
        std::snprintf(buf, sizeof(buf), "%g", v);
        const float text_w = ImGui::CalcTextSize(buf).x;
        const float text_x = std::clamp(x - text_w * 0.5f, ctx.bar_x0 - text_w * 0.5f, ctx.bar_x1 - text_w * 0.5f);
        draw_list->AddText(ImVec2(text_x, pos.y + tick_h), axis_col, buf);
    }
    draw_list->AddText(ImVec2(ctx.left, pos.y + tick_h), axis_col, ctx.unit);
    ImGui::Dummy(ImVec2(ctx.width, tick_h + ImGui::GetTextLineHeightWithSpacing()));

    ctx.open = false;
    ImGui::PopID();
}

}  // namespace gpumem::ui
