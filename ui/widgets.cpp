// Shared widgets: see widgets.h.

#include "widgets.h"

#include "imgui_internal.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>

#include "access.h"

namespace gpumem::ui {

//-----------------------------------------------------------------------------
// [SECTION] Small helpers
//-----------------------------------------------------------------------------

void HelpMarker(const char* desc)
{
    // An item of its own (a button under the "(?)"), so that a tap can open it: where a finger points
    // (ImGuiConfigFlags_IsTouchScreen) a frame-high square at least, 28 CSS px at 3x (main.cpp,
    // TouchStyle), else the text's own size. Hover shows the text as a tooltip, a click or tap opens it
    // until the next click elsewhere. Not a Tab stop (it would take the form row's name from its control).
    const bool touch = (ImGui::GetIO().ConfigFlags & ImGuiConfigFlags_IsTouchScreen) != 0;
    const char* mark = "(?)";
    const ImVec2 text = ImGui::CalcTextSize(mark);
    // The mark on the line's text baseline (the text beside it), the target from the line's top.
    const ImVec2 pos = ImGui::GetCursorScreenPos();
    const float base = ImGui::GetCurrentWindow()->DC.CurrLineTextBaseOffset;
    ImVec2 size(text.x, base + text.y);
    if (touch)
        size = ImVec2(std::max(text.x + ImGui::GetStyle().FramePadding.x * 2.0f, ImGui::GetFrameHeight()),
                      std::max(size.y, ImGui::GetFrameHeight()));
    ImGui::PushID(desc);
    ImGui::PushItemFlag(ImGuiItemFlags_NoNav, true);
    const bool clicked = ImGui::InvisibleButton("##help", size);
    ImGui::PopItemFlag();
    const bool hovered = ImGui::IsItemHovered();
    const ImU32 color = ImGui::GetColorU32(hovered ? ImGuiCol_Text : ImGuiCol_TextDisabled);
    ImGui::GetWindowDrawList()->AddText(ImVec2(pos.x + (size.x - text.x) * 0.5f, pos.y + base), color, mark);
    // Wrapped to the screen's width less a margin (a phone), else 35 characters' width.
    const float wrap = std::min(ImGui::GetFontSize() * 35.0f,
                                ImGui::GetIO().DisplaySize.x * 0.9f - ImGui::GetStyle().WindowPadding.x * 2.0f);
    if (clicked)
        ImGui::OpenPopup("##help_popup");
    if (ImGui::BeginPopup("##help_popup"))
    {
        ImGui::PushTextWrapPos(wrap);
        TextNotice("##help_text", ImGui::GetStyleColorVec4(ImGuiCol_Text), desc);
        ImGui::PopTextWrapPos();
        ImGui::EndPopup();
    }
    else if (hovered)
    {
        ImGui::BeginTooltip();
        ImGui::PushTextWrapPos(wrap);
        ImGui::TextUnformatted(desc);
        ImGui::PopTextWrapPos();
        ImGui::EndTooltip();
    }
    ImGui::PopID();
}

void FormRow(const char* label, const char* help)
{
    AccessRowLabel(label);
    // A narrow column (a phone, NarrowColumn): the label on its own line, the control under it at
    // full width (an empty label takes no line).
    const bool narrow = NarrowColumn();
    if (narrow && label[0] == '\0' && help == nullptr)
    {
        ImGui::SetNextItemWidth(-FLT_MIN);
        return;
    }
    // Beside a control, or beside a finger's help marker (a frame high): the label on its middle line.
    if (!narrow || (help != nullptr && (ImGui::GetIO().ConfigFlags & ImGuiConfigFlags_IsTouchScreen) != 0))
        ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted(label);
    if (help != nullptr)
    {
        ImGui::SameLine();
        HelpMarker(help);
    }
    // The controls' column, or past a label too long for it (an indented row: nothing overlaps).
    if (!narrow)
    {
        const ImGuiWindow* window = ImGui::GetCurrentWindow();
        const float label_end = ImGui::GetItemRectMax().x - (window->Pos.x - window->Scroll.x);
        ImGui::SameLine(std::max(ImGui::GetFontSize() * 14.0f, label_end + ImGui::GetStyle().ItemSpacing.x));
    }
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

void AccessCombo(const char* label, const std::string& preview)
{
    AccessDescribeNext(ImGui::GetID(label), "combo box", preview);
}

std::string ResolvedNumber(const nlohmann::json& resolved, std::initializer_list<const char*> path)
{
    const nlohmann::json* at = &resolved;
    for (const char* key : path)
    {
        if (!at->is_object() || !at->contains(key))
            return "";
        at = &(*at)[key];
    }
    if (!at->is_number())
        return "";
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%g", at->get<double>());
    return buf;
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
    const ImGuiID id = ImGui::GetID(str_id);
    IMGUI_TEST_ENGINE_ITEM_ADD(g.LastItemData.Rect, id);
    IMGUI_TEST_ENGINE_ITEM_INFO(id, text, 0);
#else
    (void)str_id;
#endif
}

//-----------------------------------------------------------------------------
// [SECTION] Numbers
//-----------------------------------------------------------------------------

namespace {

// The one typed edit under way (the page shows one box at a time), and the last refusal.
struct NumberEdit
{
    std::string id;  // the control it is for ("" when none)
    std::string name;
    double lo = 0.0, hi = 0.0;
    bool integer = true;
    bool inline_box = false;        // no page box: an ImGui text field in the control's place
    bool focus_box = false;         // the inline box takes keyboard focus in its first frame
    char text[32] = "";             // the inline box's text
    std::optional<double> pending;  // a committed value the control takes in its next frame
    std::string message;            // why the last text was refused
    std::string message_for;        // the control it names
};

NumberEdit g_edit;
bool (*g_open_editor)(const NumberEditRequest&) = nullptr;

std::string NumberText(double value, bool integer)
{
    char buf[32];
    if (integer)
        std::snprintf(buf, sizeof(buf), "%lld", static_cast<long long>(std::llround(value)));
    else
        std::snprintf(buf, sizeof(buf), "%g", value);
    return buf;
}

// Whether `text` is a number for the edit under way, else why not.
std::string ParseNumber(const std::string& text, double& out)
{
    std::size_t b = 0, e = text.size();
    while (b < e && std::isspace(static_cast<unsigned char>(text[b])))
        b++;
    while (e > b && std::isspace(static_cast<unsigned char>(text[e - 1])))
        e--;
    const std::string t = text.substr(b, std::min<std::size_t>(e - b, 40));
    const std::string range = "; allowed: " + std::string(g_edit.integer ? "a whole number " : "a number ") + "from " +
                              NumberText(g_edit.lo, g_edit.integer) + " to " + NumberText(g_edit.hi, g_edit.integer) +
                              ".";
    const std::string quoted = "\"" + gpumem::display_text(t, 40) + "\"";
    if (t.empty())
        return g_edit.name + ": no value typed" + range;
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(t.c_str(), &end);
    if (end != t.c_str() + t.size() || errno != 0 || !std::isfinite(v))
        return g_edit.name + ": " + quoted + " is not a number" + range;
    if (g_edit.integer && v != std::floor(v))
        return g_edit.name + ": " + quoted + " is not a whole number" + range;
    if (v < g_edit.lo || v > g_edit.hi)
        return g_edit.name + ": " + quoted + " is out of range" + range;
    out = v;
    return "";
}

// Opens the box for the control just submitted (its rectangle: the last item's, widened to `x0`).
// Returns true when a box opened (a touch_only request opens only the page's, for a finger).
bool OpenEditor(const char* id, const char* name, double value, double lo, double hi, bool integer, float x0,
                bool touch_only)
{
    NumberEditRequest request;
    request.id = id;
    request.name = name;
    request.value = NumberText(value, integer);
    request.lo = lo;
    request.hi = hi;
    request.integer = integer;
    request.touch_only = touch_only;
    const ImRect r = GImGui->LastItemData.Rect;
    request.x = std::min(x0, r.Min.x);
    request.y = r.Min.y;
    request.w = r.Max.x - request.x;
    request.h = r.GetHeight();
    const bool page_box = g_open_editor != nullptr && g_open_editor(request);
    if (!page_box && touch_only)
        return false;
    g_edit.id = id;
    g_edit.name = name;
    g_edit.lo = lo;
    g_edit.hi = hi;
    g_edit.integer = integer;
    g_edit.pending.reset();
    g_edit.inline_box = !page_box;
    g_edit.focus_box = !page_box;
    std::snprintf(g_edit.text, sizeof(g_edit.text), "%s", request.value.c_str());
    return true;
}

// The committed value for control `id`, taken once.
std::optional<double> TakePending(const char* id)
{
    if (g_edit.id != id || !g_edit.pending)
        return std::nullopt;
    const std::optional<double> v = g_edit.pending;
    g_edit.pending.reset();
    g_edit.id.clear();
    return v;
}

// The refusal under the control it names.
void ShowRefusal(const char* id)
{
    if (g_edit.message.empty() || g_edit.message_for != id)
        return;
    TextNotice("##number_message", UtilizationColor(1.0), g_edit.message.c_str());
}

// The inline box (no page): Enter or leaving it commits, Escape cancels. True while it is shown.
bool ShowInlineBox(const char* id)
{
    if (!g_edit.inline_box || g_edit.id != id)
        return false;
    const std::string box = std::string(id) + "_edit";
    if (g_edit.focus_box)
        ImGui::SetKeyboardFocusHere();
    g_edit.focus_box = false;
    const bool entered = ImGui::InputText(box.c_str(), g_edit.text, sizeof(g_edit.text),
                                          ImGuiInputTextFlags_EnterReturnsTrue | ImGuiInputTextFlags_AutoSelectAll);
    if (ImGui::IsItemActive() && ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape)))
        CancelNumberEdit();
    else if (entered || ImGui::IsItemDeactivated())
        CommitNumberEdit(id, g_edit.text);
    return true;
}

float EditButtonWidth()
{
    return ImGui::CalcTextSize("Edit").x + ImGui::GetStyle().FramePadding.x * 2.0f;
}

}  // namespace

std::vector<int> SnapValues(int lo, int hi, Snap snap)
{
    std::vector<int> values;
    if (hi < lo)
        return values;
    values.push_back(lo);
    auto add = [&](long long v) {
        if (v > lo && v < hi)
            values.push_back(static_cast<int>(v));
    };
    for (long long p = 1; p < hi; p *= 2)
    {
        add(p);
        if (snap != Snap::Tokens || p < 1024)
            continue;
        // Between p and 2p: every 1024 below 4096, else four steps of p / 4 (multiples of 1024).
        const long long step = p < 4096 ? 1024 : p / 4;
        for (long long v = p + step; v < 2 * p; v += step)
            add(v);
    }
    if (hi > lo)
        values.push_back(hi);
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
    return values;
}

void SetNumberEditor(bool (*open)(const NumberEditRequest& request))
{
    g_open_editor = open;
}

std::string CommitNumberEdit(const std::string& id, const std::string& text)
{
    if (g_edit.id != id || g_edit.id.empty())
        return "this field is no longer open for typing";
    double v = 0.0;
    std::string why = ParseNumber(text, v);
    g_edit.message = why;
    g_edit.message_for = id;
    g_edit.inline_box = false;
    if (why.empty())
        g_edit.pending = v;  // else the box stays open to correct the text
    return why;
}

void CancelNumberEdit()
{
    g_edit.id.clear();
    g_edit.pending.reset();
    g_edit.inline_box = false;
    g_edit.message.clear();
}

bool NumberSlider(const char* id, const char* name, int& value, int lo, int hi, Snap snap, const char* unit)
{
    bool changed = false;
    if (const std::optional<double> typed = TakePending(id))
    {
        value = static_cast<int>(*typed);
        changed = true;
    }
    const std::vector<int> stops = SnapValues(lo, hi, snap);
    // The stop nearest the value, in the slider's logarithmic sense.
    int index = 0;
    for (int i = 1; i < static_cast<int>(stops.size()); i++)
        if (std::fabs(std::log(static_cast<double>(stops[i]) / std::max(value, 1))) <
            std::fabs(std::log(static_cast<double>(stops[index]) / std::max(value, 1))))
            index = i;

    const float x0 = ImGui::GetCursorScreenPos().x;
    const float spacing = ImGui::GetStyle().ItemInnerSpacing.x;
    ImGui::SetNextItemWidth(ImGui::CalcItemWidth() - EditButtonWidth() - spacing);
    std::string shown = std::to_string(value) + (unit[0] != '\0' ? " " : "") + unit;
    if (!ShowInlineBox(id))
    {
        // The value before a click, which a double-click or Ctrl+click puts back (the click dragged).
        static int before_press = 0;
        const int before = value;
        // Shown text, not a format: '%' has no place in it.
        if (ImGui::SliderInt(id, &index, 0, static_cast<int>(stops.size()) - 1, shown.c_str(),
                             ImGuiSliderFlags_NoInput | ImGuiSliderFlags_AlwaysClamp))
        {
            value = stops[static_cast<std::size_t>(index)];
            changed = value != before;
        }
        const ImGuiIO& io = ImGui::GetIO();
        const bool double_click = ImGui::IsItemHovered() && ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left);
        if (ImGui::IsItemActivated() && !double_click)
            before_press = before;
        const bool typed_request = (ImGui::IsItemActivated() && io.KeyCtrl) || double_click ||
                                   (ImGui::IsItemFocused() && ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Enter)));
        if (typed_request)
        {
            if (ImGui::IsItemActive())
            {
                value = before_press;
                ImGui::ClearActiveID();
            }
            changed = value != before;
            shown = std::to_string(value) + (unit[0] != '\0' ? " " : "") + unit;
        }
        AccessDescribe("slider", shown);
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip("Drag, or type a value: Edit, double-click or Ctrl+click");
        if (typed_request)
            OpenEditor(id, name, value, lo, hi, true, x0, false);
    }
    ImGui::SameLine(0.0f, spacing);
    const std::string button = std::string("Edit") + id;
    if (ImGui::Button(button.c_str(), ImVec2(EditButtonWidth(), 0.0f)))
    {
        OpenEditor(id, name, value, lo, hi, true, x0, false);
    }
    AccessDescribe("button", std::string("types ") + name);
    ShowRefusal(id);
    return changed;
}

bool NumberInput(const char* id, const char* name, int& value, int lo, int hi, const char* zero_label)
{
    bool changed = false;
    if (const std::optional<double> typed = TakePending(id))
    {
        value = static_cast<int>(*typed);
        changed = true;
    }
    const float x0 = ImGui::GetCursorScreenPos().x;
    const ImGuiID text_id = ImGui::GetID(id);  // InputInt's text field takes its label's ID
    AccessDescribeNext(text_id, "number field",
                       value == 0 && zero_label != nullptr ? zero_label : std::to_string(value));
    // 0 with a zero label shows the label ("default (8192)") until the field is typed into: the text
    // is InputScalar's format, '%' doubled; typing (everything selected as the field opens) replaces it.
    std::string format = "%d";
    if (value == 0 && zero_label != nullptr && GImGui->ActiveId != text_id)
    {
        format.clear();
        for (const char* c = zero_label; *c != '\0'; c++)
            format += *c == '%' ? std::string("%%") : std::string(1, *c);
    }
    const int step = 1, step_fast = 10;
    const std::string shown = value == 0 && zero_label != nullptr ? zero_label : std::to_string(value);
    if (ImGui::InputScalar(id, ImGuiDataType_S32, &value, &step, &step_fast, format.c_str(), 0))
    {
        value = std::clamp(value, lo, hi);
        changed = true;
    }
    const ImGuiContext& g = *GImGui;
#ifdef IMGUI_ENABLE_TEST_ENGINE
    {
        // The text the field showed this frame, for tools following items by ID (as TextNotice does).
        ImGuiContext& ctx = *GImGui;
        if (ctx.TestEngineHookItems)
            ImGuiTestEngineHook_ItemInfo(&ctx, text_id, shown.c_str(), 0);
    }
#else
    (void)shown;
#endif
    if (g.ActiveId == text_id && g.ActiveIdPreviousFrame != text_id &&
        OpenEditor(id, name, value, lo, hi, true, x0, true))  // a finger: the page's box, with its keyboard
        ImGui::ClearActiveID();
    ShowRefusal(id);
    return changed;
}

bool NumberInputFloat(const char* id, const char* name, float& value, float lo, float hi, const std::string& zero_label)
{
    bool changed = false;
    if (const std::optional<double> typed = TakePending(id))
    {
        value = static_cast<float>(*typed);
        changed = true;
    }
    // Empty shows the default, in the field's hint: "default (32)". Each field's text, kept while it is edited.
    static std::map<ImGuiID, std::array<char, 32>> texts;
    const ImGuiID field_id = ImGui::GetID(id);
    std::array<char, 32>& text = texts[field_id];
    char* buffer = text.data();
    if (GImGui->ActiveId != field_id)
    {
        if (value == 0.0f)
            buffer[0] = '\0';
        else
            std::snprintf(buffer, text.size(), "%g", static_cast<double>(value));
    }
    const float x0 = ImGui::GetCursorScreenPos().x;
    if (ImGui::InputTextWithHint(id, zero_label.c_str(), buffer, text.size(), ImGuiInputTextFlags_CharsScientific))
    {
        char* end = nullptr;
        const double v = buffer[0] == '\0' ? 0.0 : std::strtod(buffer, &end);
        if (buffer[0] == '\0' || (end != nullptr && *end == '\0' && std::isfinite(v)))
        {
            value = static_cast<float>(std::clamp(v, static_cast<double>(lo), static_cast<double>(hi)));
            changed = true;
        }
    }
    if (ImGui::IsItemActivated() && OpenEditor(id, name, value, lo, hi, false, x0, true))
        ImGui::ClearActiveID();
    AccessDescribe("number field", value == 0.0f ? zero_label : NumberText(value, false));
    ShowRefusal(id);
    return changed;
}

bool ComboFilter(const char* id, char* filter, std::size_t size, const char* hint)
{
    if (ImGui::IsWindowAppearing())
        ImGui::SetKeyboardFocusHere();
    ImGui::SetNextItemWidth(-FLT_MIN);
    return ImGui::InputTextWithHint(id, hint, filter, size, ImGuiInputTextFlags_EnterReturnsTrue);
}

bool FilterMatches(const char* filter, const std::string& text)
{
    auto lower = [](std::string s) {
        for (char& c : s)
            c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        return s;
    };
    const std::string haystack = lower(text);
    const std::string f = lower(filter);
    std::size_t at = 0;
    while (at < f.size())
    {
        const std::size_t end = std::min(f.find(' ', at), f.size());
        if (end > at && haystack.find(f.substr(at, end - at)) == std::string::npos)
            return false;
        at = end + 1;
    }
    return true;
}

//-----------------------------------------------------------------------------
// [SECTION] Colours
//-----------------------------------------------------------------------------

namespace {

double Linear(float c)
{
    return c <= 0.04045f ? c / 12.92 : std::pow((c + 0.055) / 1.055, 2.4);
}

double Luminance(const ImVec4& c)
{
    return 0.2126 * Linear(c.x) + 0.7152 * Linear(c.y) + 0.0722 * Linear(c.z);
}

}  // namespace

double ContrastRatio(const ImVec4& a, const ImVec4& b)
{
    const double la = Luminance(a), lb = Luminance(b);
    return (std::max(la, lb) + 0.05) / (std::min(la, lb) + 0.05);
}

ImVec4 Over(const ImVec4& top, const ImVec4& under)
{
    const float a = top.w;
    return ImVec4(top.x * a + under.x * (1.0f - a), top.y * a + under.y * (1.0f - a), top.z * a + under.z * (1.0f - a),
                  1.0f);
}

void ApplyPageColors(ImGuiStyle& style)
{
    // Dear ImGui's dark style, except: its TextDisabled (0.50 grey) is 4.2:1 on the tables' striped rows
    // and on an input's hint; white text on a hovered or pressed button is 3.0:1. These read at least
    // 4.5:1 on every background they are drawn on (tests/browser/keyboard.test.mjs computes each pair).
    ImVec4* c = style.Colors;
    c[ImGuiCol_TextDisabled] = ImVec4(0.62f, 0.62f, 0.62f, 1.00f);
    c[ImGuiCol_FrameBgHovered] = ImVec4(0.20f, 0.36f, 0.60f, 0.50f);
    c[ImGuiCol_FrameBgActive] = ImVec4(0.20f, 0.38f, 0.66f, 0.45f);
    c[ImGuiCol_ButtonHovered] = ImVec4(0.18f, 0.42f, 0.74f, 1.00f);
    c[ImGuiCol_ButtonActive] = ImVec4(0.12f, 0.36f, 0.66f, 1.00f);
    c[ImGuiCol_HeaderHovered] = ImVec4(0.18f, 0.42f, 0.74f, 0.85f);
    c[ImGuiCol_HeaderActive] = ImVec4(0.14f, 0.38f, 0.70f, 1.00f);
    c[ImGuiCol_SliderGrab] = ImVec4(0.20f, 0.42f, 0.72f, 1.00f);
    c[ImGuiCol_SliderGrabActive] = ImVec4(0.22f, 0.46f, 0.78f, 1.00f);
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

void PlotStackedBar(const char* label, const double values[], int count, double capacity, double band_low,
                    double band_high)
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

    // The error band: a whisker across the bar's middle, its ends marked, the line outlined for contrast.
    if (band_high > band_low)
    {
        const float bx0 = std::min(ctx.bar_x0 + static_cast<float>(band_low) * scale, ctx.bar_x1);
        const float bx1 = std::min(ctx.bar_x0 + static_cast<float>(band_high) * scale, ctx.bar_x1);
        const float mid = (y0 + y1) * 0.5f, tick = (y1 - y0) * 0.3f;
        const float thickness = std::max(1.5f, ImGui::GetFontSize() * 0.1f);
        const ImU32 back = ImGui::GetColorU32(ImGuiCol_WindowBg), line = ImGui::GetColorU32(ImGuiCol_Text);
        for (const auto& [col, width] : {std::pair<ImU32, float>{back, thickness * 3.0f}, {line, thickness}})
        {
            draw_list->AddLine(ImVec2(bx0, mid), ImVec2(bx1, mid), col, width);
            draw_list->AddLine(ImVec2(bx0, mid - tick), ImVec2(bx0, mid + tick), col, width);
            draw_list->AddLine(ImVec2(bx1, mid - tick), ImVec2(bx1, mid + tick), col, width);
        }
        if (hovered && mouse_x >= bx0 - 3.0f && mouse_x <= bx1 + 3.0f && hovered_item < 0)
        {
            ImGui::BeginTooltip();
            ImGui::Text("Error band: %.2f - %.2f %s (80 %% of measured runs like this one)", band_low, band_high,
                        ctx.unit);
            ImGui::EndTooltip();
        }
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
#ifdef IMGUI_ENABLE_TEST_ENGINE
        ImGuiContext& g = *GImGui;
        IMGUI_TEST_ENGINE_ITEM_INFO(ImGui::GetID(label), buf, 0);  // the bar's share, as drawn
#endif
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

//-----------------------------------------------------------------------------
// [SECTION] Line chart
//-----------------------------------------------------------------------------

namespace {

struct LinePlotLegendItem
{
    const char* label;
    ImU32 color;
};

struct LinePlotContext
{
    bool open = false;
    const char* x_label = "";
    const char* y_unit = "";
    double x_max = 2.0;
    double y_max = 1.0;
    ImRect frame;  // the whole item
    ImRect plot;   // the data area inside the axes
    bool hovered = false;
    const double* xs = nullptr;  // the last line, for the hover tooltip
    const double* ys = nullptr;
    int count = 0;
    ImVector<LinePlotLegendItem> legend;
};

LinePlotContext GLinePlot;

ImVec2 PlotToScreen(const LinePlotContext& ctx, double x, double y)
{
    const double lx = std::log2(std::max(x, 1.0)) / std::log2(std::max(ctx.x_max, 2.0));
    const double ly = std::clamp(y / ctx.y_max, 0.0, 1.0);
    return ImVec2(ctx.plot.Min.x + static_cast<float>(lx) * ctx.plot.GetWidth(),
                  ctx.plot.Max.y - static_cast<float>(ly) * ctx.plot.GetHeight());
}

// "512", "8K", "128K": a power of two as a tick label.
std::string SizeLabel(double v)
{
    char buf[32];
    if (v >= 1024.0 && std::fmod(v, 1024.0) == 0.0)
        std::snprintf(buf, sizeof(buf), "%gK", v / 1024.0);
    else
        std::snprintf(buf, sizeof(buf), "%g", v);
    return buf;
}

}  // namespace

bool BeginLinePlot(const char* str_id, const char* x_label, const char* y_unit, double x_max, double y_max,
                   float height)
{
    LinePlotContext& ctx = GLinePlot;
    IM_ASSERT(!ctx.open && "BeginLinePlot() called twice without EndLinePlot()");
    const float font = ImGui::GetFontSize();
    const ImVec2 pos = ImGui::GetCursorScreenPos();
    const ImVec2 size(ImGui::GetContentRegionAvail().x, height > 0.0f ? height : font * 14.0f);
    ImGui::InvisibleButton(str_id, size);
    if (!ImGui::IsItemVisible())
        return false;
    ctx.open = true;
    ctx.x_label = x_label;
    ctx.y_unit = y_unit;
    ctx.x_max = std::max(x_max, 2.0);
    ctx.y_max = y_max > 0.0 ? y_max : 1.0;
    ctx.frame = ImRect(pos, ImVec2(pos.x + size.x, pos.y + size.y));
    const float left = ImGui::CalcTextSize("000.0").x + font * 0.6f;
    const float bottom = ImGui::GetTextLineHeightWithSpacing() * 2.0f + font * 0.35f;
    ctx.plot = ImRect(ImVec2(pos.x + left, pos.y + font * 0.5f),
                      ImVec2(pos.x + size.x - font * 1.5f, pos.y + size.y - bottom));
    ctx.hovered = ImGui::IsItemHovered();
    ctx.xs = ctx.ys = nullptr;
    ctx.count = 0;
    ctx.legend.resize(0);
    ImGui::GetWindowDrawList()->AddRectFilled(ctx.plot.Min, ctx.plot.Max, ImGui::GetColorU32(ImGuiCol_FrameBg),
                                              ImGui::GetStyle().FrameRounding);
    return true;
}

void PlotLine(const char* label, const double xs[], const double ys[], int count, ImU32 color)
{
    LinePlotContext& ctx = GLinePlot;
    IM_ASSERT(ctx.open);
    ImDrawList* draw_list = ImGui::GetWindowDrawList();
    const float thickness = std::max(2.0f, ImGui::GetFontSize() * 0.15f);
    for (int i = 1; i < count; i++)
        draw_list->AddLine(PlotToScreen(ctx, xs[i - 1], ys[i - 1]), PlotToScreen(ctx, xs[i], ys[i]), color, thickness);
    for (int i = 0; i < count; i++)
        draw_list->AddCircleFilled(PlotToScreen(ctx, xs[i], ys[i]), thickness * 1.3f, color);
    ctx.xs = xs;
    ctx.ys = ys;
    ctx.count = count;
    ctx.legend.push_back({label, color});
}

void PlotHLine(const char* label, double y, ImU32 color)
{
    LinePlotContext& ctx = GLinePlot;
    IM_ASSERT(ctx.open);
    const ImVec2 a = PlotToScreen(ctx, 1.0, y);
    const ImVec2 b(ctx.plot.Max.x, a.y);
    // Dashed, like a reference line.
    const float dash = ImGui::GetFontSize() * 0.6f;
    ImDrawList* draw_list = ImGui::GetWindowDrawList();
    for (float x = a.x; x < b.x; x += dash * 1.6f)
        draw_list->AddLine(ImVec2(x, a.y), ImVec2(std::min(x + dash, b.x), a.y), color, 2.0f);
    ctx.legend.push_back({label, color});
}

void PlotMarker(const char* label, double x, double y, ImU32 color)
{
    LinePlotContext& ctx = GLinePlot;
    IM_ASSERT(ctx.open);
    const ImVec2 p = PlotToScreen(ctx, x, y);
    const float r = ImGui::GetFontSize() * 0.45f;
    ImDrawList* draw_list = ImGui::GetWindowDrawList();
    draw_list->AddCircle(p, r, color, 0, 2.0f);
    draw_list->AddLine(ImVec2(p.x, p.y + r), ImVec2(p.x, ctx.plot.Max.y), color, 1.0f);
    ctx.legend.push_back({label, color});
}

void EndLinePlot()
{
    LinePlotContext& ctx = GLinePlot;
    IM_ASSERT(ctx.open);
    ImDrawList* draw_list = ImGui::GetWindowDrawList();
    const float font = ImGui::GetFontSize();
    const float tick_h = font * 0.35f;
    const ImU32 axis_col = ImGui::GetColorU32(ImGuiCol_TextDisabled);

    // y axis: nice steps of the unit, with light grid lines.
    const double y_step = NiceStep(ctx.y_max, 5);
    for (double v = 0.0; v <= ctx.y_max * 1.0001; v += y_step)
    {
        const float y = PlotToScreen(ctx, 1.0, v).y;
        draw_list->AddLine(ImVec2(ctx.plot.Min.x, y), ImVec2(ctx.plot.Max.x, y), ImGui::GetColorU32(ImGuiCol_Border));
        char buf[32];
        std::snprintf(buf, sizeof(buf), "%g", v);
        const ImVec2 text = ImGui::CalcTextSize(buf);
        draw_list->AddText(ImVec2(ctx.plot.Min.x - text.x - font * 0.3f, y - text.y * 0.5f), axis_col, buf);
    }
    draw_list->AddText(ImVec2(ctx.frame.Min.x, ctx.plot.Max.y + tick_h), axis_col, ctx.y_unit);

    // x axis: powers of two, every other one labelled when they crowd.
    draw_list->AddLine(ImVec2(ctx.plot.Min.x, ctx.plot.Max.y), ImVec2(ctx.plot.Max.x, ctx.plot.Max.y), axis_col);
    const int decades = static_cast<int>(std::ceil(std::log2(ctx.x_max)));
    const float per_tick = ctx.plot.GetWidth() / static_cast<float>(std::max(decades, 1));
    const int every = per_tick < ImGui::CalcTextSize("128K ").x ? 2 : 1;
    for (int k = 0; k <= decades; k++)
    {
        const double v = std::ldexp(1.0, k);
        if (v > ctx.x_max * 1.0001)
            break;
        const float x = PlotToScreen(ctx, v, 0.0).x;
        draw_list->AddLine(ImVec2(x, ctx.plot.Max.y), ImVec2(x, ctx.plot.Max.y + tick_h), axis_col);
        if (k % every != 0)
            continue;
        const std::string label = SizeLabel(v);
        const float w = ImGui::CalcTextSize(label.c_str()).x;
        draw_list->AddText(ImVec2(x - w * 0.5f, ctx.plot.Max.y + tick_h), axis_col, label.c_str());
    }

    // The axis title and the legend on one line under the axis.
    float x = ctx.plot.Min.x;
    const float y = ctx.plot.Max.y + tick_h + ImGui::GetTextLineHeightWithSpacing();
    draw_list->AddText(ImVec2(x, y), ImGui::GetColorU32(ImGuiCol_Text), ctx.x_label);
    x += ImGui::CalcTextSize(ctx.x_label).x + font * 1.5f;
    for (const LinePlotLegendItem& item : ctx.legend)
    {
        draw_list->AddRectFilled(ImVec2(x, y + font * 0.25f), ImVec2(x + font * 0.5f, y + font * 0.75f), item.color);
        x += font * 0.8f;
        draw_list->AddText(ImVec2(x, y), axis_col, item.label);
        x += ImGui::CalcTextSize(item.label).x + font;
    }

    // Hover: the nearest point of the last line.
    if (ctx.hovered && ctx.count > 0)
    {
        const float mouse_x = ImGui::GetIO().MousePos.x;
        int best = 0;
        for (int i = 1; i < ctx.count; i++)
            if (std::fabs(PlotToScreen(ctx, ctx.xs[i], 0.0).x - mouse_x) <
                std::fabs(PlotToScreen(ctx, ctx.xs[best], 0.0).x - mouse_x))
                best = i;
        const ImVec2 p = PlotToScreen(ctx, ctx.xs[best], ctx.ys[best]);
        draw_list->AddCircle(p, font * 0.4f, ImGui::GetColorU32(ImGuiCol_Text), 0, 2.0f);
        ImGui::SetTooltip("%s %s: %.2f %s", ctx.x_label, SizeLabel(ctx.xs[best]).c_str(), ctx.ys[best], ctx.y_unit);
    }
    ctx.open = false;
}

//-----------------------------------------------------------------------------
// [SECTION] Touch screens
//-----------------------------------------------------------------------------

bool NarrowColumn()
{
    return ImGui::GetContentRegionAvail().x < ImGui::GetFontSize() * 30.0f;
}

void SameLineIfRoom(const char* next_label)
{
    const ImGuiStyle& style = ImGui::GetStyle();
    const float next =
        ImGui::GetFrameHeight() + style.ItemInnerSpacing.x + ImGui::CalcTextSize(next_label, nullptr, true).x;
    ImGui::SameLine();
    if (ImGui::GetContentRegionAvail().x < next)
        ImGui::NewLine();
}

bool CompactButton(const char* label)
{
    if ((ImGui::GetIO().ConfigFlags & ImGuiConfigFlags_IsTouchScreen) != 0)
        return ImGui::Button(label);
    return ImGui::SmallButton(label);
}

namespace {

// The wide tables drawn this frame, innermost last, and each one's height when it last ended.
struct WideTable
{
    ImGuiID id = 0;
    bool scrolls = false;
    ImGuiTable* table = nullptr;
};
ImVector<WideTable> g_wide_tables;
ImGuiStorage g_wide_table_heights;

}  // namespace

bool BeginWideTable(const char* str_id, int columns, ImGuiTableFlags flags, float min_width)
{
    const ImGuiID id = ImGui::GetID(str_id);
    if (ImGui::GetContentRegionAvail().x >= min_width)
    {
        if (!ImGui::BeginTable(str_id, columns, flags))
            return false;
        g_wide_tables.push_back({id, false, nullptr});
        return true;
    }
    // Scrolling sideways makes the table a child window, whose height must be given: its rows'
    // height the last time it was drawn, plus the horizontal scrollbar (first frame: a guess).
    const ImGuiStyle& style = ImGui::GetStyle();
    const float rows = g_wide_table_heights.GetFloat(id, ImGui::GetFrameHeightWithSpacing() * 6.0f);
    const float height = rows + style.ScrollbarSize + style.CellPadding.y * 2.0f;
    if (!ImGui::BeginTable(str_id, columns, flags | ImGuiTableFlags_ScrollX, ImVec2(0.0f, height), min_width))
        return false;
    g_wide_tables.push_back({id, true, ImGui::GetCurrentTable()});
    return true;
}

void EndWideTable()
{
    IM_ASSERT(!g_wide_tables.empty());
    const WideTable wide = g_wide_tables.back();
    g_wide_tables.pop_back();
    ImGui::EndTable();
    if (wide.scrolls && wide.table != nullptr)
        g_wide_table_heights.SetFloat(wide.id, wide.table->RowPosY2 - wide.table->OuterRect.Min.y);
}

}  // namespace gpumem::ui
