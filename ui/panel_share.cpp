// The share panel: copy the result or the scenario, export it, import files or pasted text (tools' configs too) (the
// work itself is share.cpp's; the link in the address bar follows the scenario on its own).

#include <cfloat>
#include <cstdio>
#include <cstring>
#include <string>

#include "app.h"
#include "imgui.h"
#include "panels.h"
#include "share.h"
#include "widgets.h"

#include <gpumem/gpumem.h>

namespace gpumem::ui {

namespace {

// One list of the configs' reading ("read": {key: value}, or a list of lines), folded unless `open`.
void ConfigList(const char* label, const nlohmann::json& items, bool open = false)
{
    if (!items.is_object() && !items.is_array())
        return;
    char header[192];
    std::snprintf(header, sizeof(header), "%s (%zu)###config_%s", label, items.size(), label);
    if (items.empty() || !ImGui::TreeNodeEx(header, open ? ImGuiTreeNodeFlags_DefaultOpen : 0))
        return;
    ImGui::PushTextWrapPos(0.0f);
    if (items.is_object())
        for (const auto& [key, value] : items.items())
            ImGui::BulletText(
                "%s = %s", gpumem::display_text(key, kNameChars).c_str(),
                gpumem::display_text(value.is_string() ? value.get<std::string>() : value.dump(), kNameChars).c_str());
    else
        for (const nlohmann::json& line : items)
            ImGui::BulletText(
                "%s",
                gpumem::display_text(line.is_string() ? line.get<std::string>() : line.dump(), kMessageChars).c_str());
    ImGui::PopTextWrapPos();
    ImGui::TreePop();
}

// What the last tools' configs read said: format, files, then each list.
void ShowConfigRead(const AppState& state)
{
    const nlohmann::json& check = state.config_check;
    if (!check.is_object())
        return;
    std::string files;
    if (check.contains("files") && check["files"].is_array())
        for (const nlohmann::json& f : check["files"])
            if (f.is_string())
                files += (files.empty() ? "" : ", ") + gpumem::display_text(f.get<std::string>(), kNameChars);
    const std::string format =
        check.contains("format") && check["format"].is_string() ? check["format"].get<std::string>() : "";
    const std::string model = state.config_model.empty() ? "not named (the page's is kept)"
                                                         : gpumem::display_text(state.config_model, kNameChars);
    TextNotice(
        "##config_read", ImGui::GetStyleColorVec4(ImGuiCol_Text),
        ("Configs read: " + gpumem::display_text(format, kNameChars) + " (" + files + "); model " + model).c_str());
    ConfigList("Warnings (would change memory, not modelled)", check.value("warnings", nlohmann::json()), true);
    ConfigList("Assumptions", check.value("assumptions", nlohmann::json()), true);
    ConfigList("Settings read", check.value("read", nlohmann::json()));
    ConfigList("Ignored (no effect on memory)", check.value("ignored", nlohmann::json()));
}

}  // namespace

void ShowSharePanel(AppState& state)
{
    const bool open = ImGui::CollapsingHeader("Share, import and export");
    if (!open)
        return;
    ImGui::TextDisabled("The link in the address bar always holds this scenario (never the access token).");
    const bool have_page = state.page.copy_text != nullptr;
    ImGui::BeginDisabled(!have_page);
    if (ImGui::Button("Copy results as Markdown"))
        state.page.copy_text(ResultMarkdown(state));
    ImGui::SameLine();
    if (ImGui::Button("Copy scenario JSON"))
        state.page.copy_text(state.scenario_json.dump(2));
    ImGui::SameLine();
    if (ImGui::Button("Export scenario.json") && state.page.download != nullptr)
        state.page.download("scenario.json", state.scenario_json.dump(2) + "\n");
    ImGui::SameLine();
    if (ImGui::Button("Import a file...") && state.page.open_file != nullptr)
        state.page.open_file();
    ImGui::EndDisabled();

    ImGui::PushTextWrapPos(0.0f);  // at the column's edge
    ImGui::TextDisabled(
        "Files (several at once, or dropped on the page): a tool's config (DeepSpeed JSON; accelerate, "
        "axolotl, torchtune or litgpt YAML, with the files it names), a scenario, a model's config.json, a "
        "calibration, or vram_calculator.py's data_types.json and gpu_types.json.");
    ImGui::TextDisabled(
        "Paste a config or command: a tool's YAML or JSON, a vllm serve / torchrun / tune run / "
        "llama-server ... line, a scenario or a model's config.json:");
    ImGui::PopTextWrapPos();
    ImGui::InputTextMultiline("##paste", state.paste_buffer.data(), state.paste_buffer.size(),
                              ImVec2(-FLT_MIN, ImGui::GetTextLineHeight() * 6.0f));
    if (ImGui::Button("Import##paste"))
    {
        // A full box means the paste was cut at its end: say that, not "not valid JSON".
        const std::size_t length = std::strlen(state.paste_buffer.data());
        const std::string text(state.paste_buffer.data(), length);
        const std::size_t first = text.find_first_not_of(" \t\r\n");
        const bool json = first != std::string::npos && (text[first] == '{' || text[first] == '[');
        const std::string name = json ? "pasted JSON" : "pasted text";
        if (length + 1 >= state.paste_buffer.size())
            state.import_message = name + ": too large for the paste box (limit " +
                                   std::to_string(state.paste_buffer.size() / 1024) +
                                   " KiB); open or drop the file instead (limit 4 MiB)";
        else if (first == std::string::npos)
            state.import_message = "the paste box is empty: paste a config, a command or a scenario first";
        else if (LoadFiles(state, nlohmann::json::array({{{"name", name}, {"text", text}}})))
            state.paste_buffer[0] = '\0';
    }
    if (!state.import_message.empty())
    {
        ImGui::SameLine();
        const bool refusal = state.import_message != state.import_note;  // a note says what was added
        ImGui::PushStyleColor(ImGuiCol_Text, refusal ? UtilizationColor(1.0) : ImGui::GetStyleColorVec4(ImGuiCol_Text));
        ImGui::TextWrapped("%s", gpumem::display_text(state.import_message, kMessageChars).c_str());
        ImGui::PopStyleColor();
    }
    ShowConfigRead(state);
}

}  // namespace gpumem::ui
