// Helpers the panels share (panels.cpp, tables.cpp): the combos, the component
// colours, the form-row layout and small readers of the core's result JSON. Header-only.
#pragma once

#include <algorithm>
#include <cctype>
#include <cfloat>
#include <cstdint>
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "app.h"
#include "imgui.h"
#include "widgets.h"

namespace gpumem::ui {

// One entry of a combo: the scenario value and how the page names it.
struct Choice
{
    const char* value;
    const char* label;
};

// The on/off combos' choices. The scenario's enumerated fields (method, dtype, engine, ...) have no
// copies here: SettingCombo() lists the core's own tables (gpumem::settings(), AppState::settings).
const Choice kOnOff[] = {{"true", "on"}, {"false", "off"}};

// The memory components, in stacking order, as the result names them.
struct Component
{
    const char* key;
    const char* label;
    ImU32       color;
};
const Component kComponents[] = {
    {"weights",          "Weights",          IM_COL32( 66, 133, 244, 255)},
    {"gradients",        "Gradients",        IM_COL32(251, 140,   0, 255)},
    {"optimizer_states", "Optimizer states", IM_COL32(171,  71, 188, 255)},
    {"activations",      "Activations",      IM_COL32( 67, 160,  71, 255)},
    {"logits",           "Logits",           IM_COL32(  0, 172, 193, 255)},
    {"kv_cache",         "KV cache",         IM_COL32(236,  64, 122, 255)},
    {"temporaries",      "Temporaries",      IM_COL32(255, 202,  40, 255)},
    {"overheads",        "Overheads",        IM_COL32(144, 164, 174, 255)},
};
constexpr int kComponentCount = IM_ARRAYSIZE(kComponents);

// More bars than this and the rest are summarised in a line: they are the same.
constexpr int kMaxBars = 8;

// Starts a form row: the label (and its help) on the left, the next widget filling the rest.
inline void FormRow(const char* label, const char* help = nullptr)
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

// j[key], or null when j is not an object or has no such key (const operator[] would be UB).
const nlohmann::json kNull;
inline const nlohmann::json& At(const nlohmann::json& j, const char* key)
{
    return j.is_object() && j.contains(key) ? j[key] : kNull;
}

inline std::string Text(const nlohmann::json& j)
{
    return j.is_string() ? j.get<std::string>() : j.dump();
}

// The filled-in scenario's value for section.key, as text ("" when the core has none).
inline std::string Filled(const AppState& state, const char* section, const char* key)
{
    const nlohmann::json& v = At(At(state.filled, section), key);
    return v.is_null() ? "" : Text(v);
}

inline const char* LabelOf(const Choice choices[], int count, const std::string& value)
{
    for (int i = 0; i < count; i++)
        if (value == choices[i].value)
            return choices[i].label;
    return nullptr;
}

// A combo over `choices`. With `offer_default`, its first entry is "default (<what the core
// chose>)" and selecting it stores "" so the field is left out of the scenario.
template <int N>
bool ChoiceCombo(const char* id, std::string& value, const Choice (&choices)[N],
                 bool offer_default = true, const std::string& filled = "")
{
    std::string default_label = "default";
    if (!filled.empty())
    {
        const char* filled_label = LabelOf(choices, N, filled);
        default_label += " (" + std::string(filled_label != nullptr ? filled_label : filled.c_str()) + ")";
    }
    const char* current = LabelOf(choices, N, value);
    const std::string preview = value.empty() ? default_label : current != nullptr ? current : value;

    bool changed = false;
    if (ImGui::BeginCombo(id, preview.c_str()))
    {
        if (offer_default && ImGui::Selectable(default_label.c_str(), value.empty()))
        {
            value.clear();
            changed = true;
        }
        for (const Choice& choice : choices)
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
    }
    return changed;
}

// The label the core's settings table gives `value` of `field` ("" when it has none).
inline std::string SettingLabel(const AppState& state, const char* field, const std::string& value)
{
    for (const nlohmann::json& row : At(At(state.settings, field), "values"))
        if (row.value("name", "") == value)
            return row.value("label", value);
    return "";
}

// A combo over the values the core allows for `field` (its settings table: label, and the help as
// each entry's tooltip). With `offer_default`, its first entry is "default (<what the core chose>)"
// and selecting it stores "" so the field is left out of the scenario; an "auto" row is that
// entry, so it is not listed again.
inline bool SettingCombo(const char* id, std::string& value, const AppState& state, const char* field,
                         bool offer_default = true, const std::string& filled = "")
{
    std::string default_label = "default";
    if (!filled.empty())
    {
        const std::string filled_label = SettingLabel(state, field, filled);
        default_label += " (" + (filled_label.empty() ? filled : filled_label) + ")";
    }
    const std::string current = SettingLabel(state, field, value);
    const std::string preview = value.empty() ? default_label : !current.empty() ? current : value;

    bool changed = false;
    if (ImGui::BeginCombo(id, preview.c_str()))
    {
        if (offer_default && ImGui::Selectable(default_label.c_str(), value.empty()))
        {
            value.clear();
            changed = true;
        }
        for (const nlohmann::json& row : At(At(state.settings, field), "values"))
        {
            const std::string name = row.value("name", "");
            if (offer_default && name == "auto")
                continue;
            const bool selected = value == name;
            if (ImGui::Selectable(row.value("label", name).c_str(), selected))
            {
                value = name;
                changed = true;
            }
            if (ImGui::IsItemHovered())
                ImGui::SetTooltip("%s", row.value("help", "").c_str());
            if (selected)
                ImGui::SetItemDefaultFocus();
        }
        ImGui::EndCombo();
    }
    return changed;
}

inline std::string Lowercase(std::string s)
{
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

inline std::uint64_t Bytes(const nlohmann::json& j, const char* key)
{
    const nlohmann::json& v = At(j, key);
    return v.is_number() ? v.get<std::uint64_t>() : 0;
}

inline double ToGiB(std::uint64_t bytes)
{
    return static_cast<double>(bytes) / static_cast<double>(1ull << 30);
}

// The card the estimate is for, from the catalogue (nullptr when the scenario names none).
inline const GpuEntry* CurrentGpu(const AppState& state)
{
    const std::string id = Filled(state, "hardware", "gpu");
    for (const GpuEntry& gpu : state.gpus)
        if (gpu.id == id)
            return &gpu;
    return state.gpus.empty() ? nullptr : &state.gpus[state.gpu_index];
}

// A number as the page's combos hold it: "0.05", "0" (printf's %g).
inline std::string NumberText(const nlohmann::json& j)
{
    if (!j.is_number())
        return j.is_null() ? "" : Text(j);
    char text[32];
    std::snprintf(text, sizeof text, "%g", j.get<double>());
    return text;
}

// The messages of a refused result ({"ok": false, "errors": [...]}), joined with "; ".
inline std::string ErrorText(const nlohmann::json& result)
{
    std::string text;
    if (result.contains("errors") && result["errors"].is_array())
        for (const nlohmann::json& e : result["errors"])
            text += (text.empty() ? "" : "; ") + (e.is_object() ? e.value("message", e.dump()) : e.dump());
    return text;
}

inline void BulletWrapped(const std::string& text)
{
    ImGui::Bullet();
    ImGui::TextWrapped("%s", text.c_str());
}

}  // namespace gpumem::ui
