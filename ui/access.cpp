// Keyboard focus order and the controls' names for screen readers: see access.h.

#include "access.h"

#include <cstdio>
#include <string>
#include <vector>

#include "app.h"
#include "imgui.h"
#include "imgui_internal.h"
#include "widgets.h"

namespace gpumem::ui {

namespace {

// One control as the frame submitted it.
struct AccessItem
{
    ImGuiID id = 0;
    ImGuiWindow* window = nullptr;
    ImRect rect;
    ImGuiID focus_scope = 0;
    std::string name;  // the form row's label, else the widget's own
    std::string row;   // the form row it sits in ("" when none)
    std::string role;
    std::string value;
    int flags = 0;          // ImGuiItemStatusFlags the widget reported
    bool in_popup = false;  // an open combo's: described, but not a Tab stop
};

struct AccessState
{
    std::vector<AccessItem> items;  // this frame's so far; between frames, the last frame's
    std::string row_label;          // FormRow's, until the row's first control takes it
    std::string row;                // the current row's label
    AccessItem pending;             // Tab's target, focused once the next frame has started (id 0: none)
    ImGuiID next_id = 0;            // AccessDescribeNext's item, role and value
    std::string next_role, next_value;
};

AccessState g_access;

// "Sequence length" from "Sequence length##seq_len"; "" from "##seq_len".
std::string Visible(const char* label)
{
    const std::string text = label != nullptr ? label : "";
    return text.substr(0, text.find("##"));
}

AccessItem* Find(ImGuiID id)
{
    for (auto it = g_access.items.rbegin(); it != g_access.items.rend(); ++it)
        if (it->id == id)
            return &*it;
    return nullptr;
}

// Puts keyboard navigation on `item`, shows its focus frame and scrolls it into view.
void Focus(const AccessItem& item)
{
    ImGuiContext& g = *GImGui;
    ImGui::FocusWindow(item.window);
    g.NavWindow = item.window;
    g.NavId = item.id;
    g.NavLayer = ImGuiNavLayer_Main;
    g.NavFocusScopeId = item.focus_scope;
    item.window->NavLastIds[ImGuiNavLayer_Main] = item.id;
    item.window->NavRectRel[ImGuiNavLayer_Main] = ImGui::WindowRectAbsToRel(item.window, item.rect);
    g.NavDisableHighlight = false;
    g.NavDisableMouseHover = true;
    ImGui::ScrollToRect(item.window, item.rect, ImGuiScrollFlags_KeepVisibleEdgeX | ImGuiScrollFlags_KeepVisibleEdgeY);
}

}  // namespace

void AccessRowLabel(const char* label)
{
    g_access.row_label = label != nullptr ? label : "";
    g_access.row = g_access.row_label;
}

void AccessDescribe(const char* role, const std::string& value, const char* name)
{
    if (AccessItem* item = Find(GImGui->LastItemData.ID))
    {
        item->role = role;
        item->value = value;
        if (name != nullptr)
            item->name = name;
    }
}

void AccessDescribeNext(unsigned int id, const char* role, const std::string& value)
{
    g_access.next_id = id;
    g_access.next_role = role;
    g_access.next_value = value;
}

void AccessItemAdd(ImGuiContext* ctx, const ImRect& bb, unsigned int id)
{
    ImGuiContext& g = *ctx;
    ImGuiWindow* window = g.CurrentWindow;
    // Only real items (a notice announces an ID of its own), where navigation can land.
    if (window == nullptr || window->IsFallbackWindow || g.LastItemData.ID != id)
        return;
    if ((window->Flags & ImGuiWindowFlags_Tooltip) != 0 ||
        (g.LastItemData.InFlags & (ImGuiItemFlags_Disabled | ImGuiItemFlags_NoNav)) != 0)
        return;
    for (const ImGuiWindow* child : window->DC.ChildWindows)
        if (child->ChildId == id)
            return;
    AccessItem item;
    item.id = id;
    item.window = window;
    item.rect = bb;
    item.focus_scope = window->DC.NavFocusScopeIdCurrent;
    item.in_popup = (window->Flags & ImGuiWindowFlags_Popup) != 0;
    item.name = g_access.row_label;
    item.row = g_access.row;
    g_access.row_label.clear();
    if (id == g_access.next_id)
    {
        item.role = g_access.next_role;
        item.value = g_access.next_value;
        g_access.next_id = 0;
    }
    g_access.items.push_back(std::move(item));
}

void AccessItemInfo(ImGuiContext*, unsigned int id, const char* label, int status_flags)
{
    AccessItem* item = Find(id);
    if (item == nullptr)
        return;
    item->flags = status_flags;
    const std::string own = Visible(label);
    if (own == "-" || own == "+")  // an InputInt's step buttons
        item->name = (own == "-" ? "Decrease " : "Increase ") + item->row;
    else if (item->name.empty())
        item->name = own;
    else if (!own.empty() && own != item->name && own != item->value)  // a button in a form row: "config.json: Open
                                                                       // a file..." (not a field's shown value)
        item->name += ": " + own;
}

void AccessFrameStarted()
{
    if (g_access.pending.id != 0)
        Focus(g_access.pending);
    g_access.pending.id = 0;
}

void AccessNewFrame()
{
    g_access.items.clear();
    g_access.row_label.clear();
    g_access.row.clear();
    g_access.next_id = 0;
}

namespace {

// The Tab stops: the last frame's controls outside popups.
std::vector<const AccessItem*> TabStops()
{
    std::vector<const AccessItem*> stops;
    for (const AccessItem& item : g_access.items)
        if (!item.in_popup)
            stops.push_back(&item);
    return stops;
}

}  // namespace

bool AccessTab(bool backward)
{
    ImGuiContext& g = *GImGui;
    const std::vector<const AccessItem*> stops = TabStops();
    int at = -1;
    for (int i = 0; i < static_cast<int>(stops.size()); i++)
        if (stops[i]->id == g.NavId && g.NavId != 0)
            at = i;
    // Inside an open combo, Tab closes it and moves on from the combo.
    if (at < 0 && g.OpenPopupStack.Size > 0)
        for (int i = 0; i < static_cast<int>(stops.size()); i++)
            if (stops[i]->id == g.OpenPopupStack[0].OpenParentId)
                at = i;
    if (g.OpenPopupStack.Size > 0)
        ImGui::ClosePopupToLevel(0, false);
    if (g.ActiveId != 0)
        ImGui::ClearActiveID();
    const int count = static_cast<int>(stops.size());
    const int next = at < 0 ? (backward ? count - 1 : 0) : at + (backward ? -1 : 1);
    if (next < 0 || next >= count)
        return false;
    g_access.pending = *stops[static_cast<std::size_t>(next)];
    return true;
}

void AccessEnter(bool backward)
{
    const std::vector<const AccessItem*> stops = TabStops();
    if (!stops.empty())
        g_access.pending = backward ? *stops.back() : *stops.front();
}

std::string FocusText()
{
    const ImGuiContext& g = *GImGui;
    if (g.NavId == 0)
        return "";
    for (const AccessItem& item : g_access.items)
    {
        if (item.id != g.NavId)
            continue;
        std::string role = item.role;
        if (role.empty())
            role = (item.flags & ImGuiItemStatusFlags_Checkable) != 0  ? "check box"
                   : (item.flags & ImGuiItemStatusFlags_Openable) != 0 ? "section"
                                                                       : "button";
        std::string text = (item.name.empty() ? std::string("unnamed") : item.name) + ", " + role;
        if (!item.value.empty())
            text += ", " + item.value;
        if ((item.flags & ImGuiItemStatusFlags_Checkable) != 0)
            text += (item.flags & ImGuiItemStatusFlags_Checked) != 0 ? ", checked" : ", not checked";
        if ((item.flags & ImGuiItemStatusFlags_Openable) != 0)
            text += (item.flags & ImGuiItemStatusFlags_Opened) != 0 ? ", expanded" : ", collapsed";
        return text;
    }
    return "";
}

std::string DetailsText(const AppState& state)
{
    std::string text;
    const FitState& fit = state.decisions.fit;
    if (fit.ok && !fit.suggestions.empty())
    {
        text += fit.fits ? "It fits. What each change would save:\n" : "What would make it fit:\n";
        for (const SuggestionView& s : fit.suggestions)
        {
            text += "- " + s.change + ": " + FormatBytes(s.device_total_bytes) + " per GPU";
            text += s.fits ? ", fits" : ", does not fit";
            if (s.least_change)
                text += " (the least change)";
            if (s.fastest)
                text += " (the fastest run)";
            if (!s.cost.empty())
                text += "; " + s.cost;
            text += ".\n";
        }
    }
    for (const auto& [key, lines] : state.explain_shown.items())
    {
        if (!lines.is_array() || lines.empty())
            continue;
        text += "Why " + key + ":\n";
        for (const nlohmann::json& line : lines)
            if (line.is_string())
                text += "- " + line.get<std::string>() + "\n";
    }
    if (!state.decisions.export_.text.empty())
    {
        text += "Config to run:\n" + state.decisions.export_.text + "\n";
        const nlohmann::json& r = state.decisions.export_.result;
        if (r.is_object() && r.contains("dropped") && r["dropped"].is_array())
            for (const nlohmann::json& d : r["dropped"])
                text += "Not in that file: " + d.value("text", std::string()) + ".\n";
    }
    return text;
}

}  // namespace gpumem::ui
