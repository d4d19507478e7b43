// The share panel: copy the result or the scenario, export it, import a file or pasted JSON (the
// work itself is share.cpp's; the link in the address bar follows the scenario on its own).

#include <cfloat>
#include <cstring>
#include <string>

#include "app.h"
#include "imgui.h"
#include "panels.h"
#include "share.h"
#include "widgets.h"

namespace gpumem::ui {

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
        "Files: a scenario, a model's config.json, a calibration, or vram_calculator.py's "
        "data_types.json and gpu_types.json (weight formats and GPUs, as gpumem table "
        "--config-dir reads them).");
    ImGui::TextDisabled(
        "Or paste a scenario (v1 or gpu-mem-calculator's config format), a model's config.json, "
        "or one of those two files:");
    ImGui::PopTextWrapPos();
    ImGui::InputTextMultiline("##paste", state.paste_buffer.data(), state.paste_buffer.size(),
                              ImVec2(-FLT_MIN, ImGui::GetTextLineHeight() * 6.0f));
    if (ImGui::Button("Load pasted JSON"))
    {
        // A full box means the paste was cut at its end: say that, not "not valid JSON".
        const std::size_t length = std::strlen(state.paste_buffer.data());
        if (length + 1 >= state.paste_buffer.size())
            state.import_message = "pasted JSON: too large for the paste box (limit " +
                                   std::to_string(state.paste_buffer.size() / 1024) +
                                   " KiB); open or drop the file instead (limit 4 MiB)";
        else if (LoadText(state, state.paste_buffer.data(), "pasted JSON"))
            state.paste_buffer[0] = '\0';
    }
    if (!state.import_message.empty())
    {
        ImGui::SameLine();
        const bool refusal = state.import_message != state.import_note;  // a note says what was added
        ImGui::PushStyleColor(ImGuiCol_Text, refusal ? UtilizationColor(1.0) : ImGui::GetStyleColorVec4(ImGuiCol_Text));
        ImGui::TextWrapped("%s", state.import_message.c_str());
        ImGui::PopStyleColor();
    }
}

}  // namespace gpumem::ui
