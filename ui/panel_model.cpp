// The model panel: where the model comes from (a bundled preset, the Hub, a config.json, or its
// sizes by hand) and the mode; and the notices above both columns (another Hub, an ignored link).

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <string>

#include "app.h"
#include "hub.h"
#include "imgui.h"
#include "panels.h"
#include "widgets.h"

#include <gpumem/gpumem.h>

namespace gpumem::ui {

namespace {

std::string Lowercase(std::string s)
{
    for (char& c : s)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

void ShowPresetPicker(AppState& state)
{
    FormRow("Preset", "A bundled model: its real config.json is compiled into the page, so nothing is downloaded.");
    const char* preview =
        state.presets.empty() ? "(no presets)" : state.presets[state.scenario.model.preset_index].id.c_str();
    AccessCombo("##preset", preview);
    if (ImGui::BeginCombo("##preset", preview, ImGuiComboFlags_HeightLarge))
    {
        if (ImGui::IsWindowAppearing())
            ImGui::SetKeyboardFocusHere();
        ImGui::SetNextItemWidth(-FLT_MIN);
        ImGui::InputTextWithHint("##filter", "filter, e.g. qwen", state.preset_filter, sizeof(state.preset_filter));
        const std::string filter = Lowercase(state.preset_filter);
        for (int i = 0; i < static_cast<int>(state.presets.size()); i++)
        {
            const PresetEntry& preset = state.presets[i];
            if (!filter.empty() && Lowercase(preset.id).find(filter) == std::string::npos)
                continue;
            const bool selected = i == state.scenario.model.preset_index;
            if (ImGui::Selectable(preset.id.c_str(), selected))
                state.scenario.model.preset_index = i;
            ImGui::SameLine(ImGui::GetWindowContentRegionMax().x - ImGui::CalcTextSize("000.00 B").x);
            ImGui::TextDisabled("%s", FormatCount(preset.total_params).c_str());
            if (selected)
                ImGui::SetItemDefaultFocus();
        }
        ImGui::EndCombo();
    }
}

// What the Hub side is doing: loading, what it loaded, or why it failed (with a retry and, when a
// bundled preset answers to the id, that preset).
void ShowHubStatus(AppState& state)
{
    HubState& hub = state.hub;
    switch (hub.status)
    {
    case HubState::Status::Idle:
        ImGui::TextDisabled("Type an id and press Enter or Fetch.");
        break;
    case HubState::Status::Loading:
    {
        static const char* const kSpinner[] = {"|", "/", "-", "\\"};
        ImGui::Text("%s Fetching %s from the Hub...", kSpinner[static_cast<int>(ImGui::GetTime() * 8.0) & 3],
                    gpumem::display_text(hub.input, kNameChars).c_str());
        break;
    }
    case HubState::Status::Ready:
    {
        const std::string loaded = "Loaded " + gpumem::display_text(hub.id, kNameChars) + " (" +
                                   gpumem::display_text(hub.loaded_revision, kNameChars) + ").";
        TextNotice("##hub_status", UtilizationColor(0.0), loaded.c_str());
        const std::uint64_t ours = state.view.params_total;
        if (hub.api_total > 0 && ours > 0)
        {
            const double diff =
                (static_cast<double>(ours) - static_cast<double>(hub.api_total)) / static_cast<double>(hub.api_total);
            ImGui::TextWrapped("Parameters: ours %s; the Hub's safetensors count %s (%+.2f %%)",
                               FormatCount(ours).c_str(), FormatCount(hub.api_total).c_str(), diff * 100.0);
            ImGui::SameLine();
            HelpMarker(
                "Ours is counted tensor by tensor from config.json; the Hub's is the number of values stored "
                "in the checkpoint's safetensors files. They differ when the checkpoint stores extra tensors "
                "(FP8 scales, rotary buffers, MTP layers) or quantized weights packed several to a value.");
        }
        else if (ours > 0)
            ImGui::TextDisabled("Parameters: %s (the Hub reported no safetensors count to compare with)",
                                FormatCount(ours).c_str());
        break;
    }
    case HubState::Status::Failed:
        TextNotice("##hub_message", UtilizationColor(1.0), hub.message.c_str());
        if (hub.retryable)
        {
            if (ImGui::Button("Retry"))
                RequestHubModel(state);
        }
        if (!hub.bundled_twin.empty())
        {
            if (hub.retryable)
                ImGui::SameLine();
            const std::string label = "Use the bundled " + hub.bundled_twin;
            if (ImGui::Button(label.c_str()))
            {
                for (int i = 0; i < static_cast<int>(state.presets.size()); i++)
                    if (state.presets[i].id == hub.bundled_twin)
                        state.scenario.model.preset_index = i;
                state.scenario.model.source = ModelSource::Preset;
            }
        }
        break;
    }
}

// The access token and the Hub address, folded away.
void ShowHubSettings(AppState& state)
{
    HubState& hub = state.hub;
    if (!ImGui::TreeNode("Access token and Hub address"))
        return;
    FormRow("Token",
            "For gated or private models: a Hugging Face read token. It is sent only to "
            "https://huggingface.co, or to another https Hub address once you confirm it for this "
            "visit; only in the Authorization header, never in the link, the exported scenario or a log.");
    if (ImGui::InputTextWithHint("##hub_token", "hf_...", hub.token, sizeof(hub.token), ImGuiInputTextFlags_Password) &&
        state.page.set_token != nullptr)
        state.page.set_token(hub.token, hub.remember_token);
    FormRow("");
    if (ImGui::Checkbox("Remember the token in this browser", &hub.remember_token) && state.page.set_token != nullptr)
        state.page.set_token(hub.token, hub.remember_token);
    FormRow("");
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    ImGui::TextWrapped(hub.remember_token
                           ? "Kept in this browser's localStorage, which every page of this site's origin can read: "
                             "on GitHub Pages, every project site of the same USER.github.io."
                           : "Forgotten when you close or reload the page.");
    ImGui::PopStyleColor();
    FormRow("Hub address",
            "https://huggingface.co, a mirror, or a local server with the Hub's URL layout "
            "(hub= in a link, for that visit only). The page's security policy allows only the "
            "Hub, its mirror hf-mirror.com and this computer.");
    if (ImGui::InputText("##hub_base", hub.base, sizeof(hub.base)))
    {
        hub.base_from_link = false;
        hub.token_withheld = false;  // said of the last address, not of this one
    }
    ImGui::TreePop();
}

void ShowHubFetch(AppState& state)
{
    HubState& hub = state.hub;
    FormRow("Hub model",
            "A model id (Qwen/Qwen3-8B) or its Hub URL. The page fetches its config.json "
            "straight from the Hub, with no referrer and no cookies.");
    const float button_w = ImGui::CalcTextSize("Fetch").x + ImGui::GetStyle().FramePadding.x * 2.0f;
    ImGui::SetNextItemWidth(-(button_w + ImGui::GetStyle().ItemSpacing.x));
    const bool entered = ImGui::InputTextWithHint("##hub_input", "Qwen/Qwen3-8B or https://huggingface.co/...",
                                                  hub.input, sizeof(hub.input), ImGuiInputTextFlags_EnterReturnsTrue);
    ImGui::SameLine();
    const bool loading = hub.status == HubState::Status::Loading;
    ImGui::BeginDisabled(loading);
    const bool clicked = ImGui::Button("Fetch");
    ImGui::EndDisabled();
    if ((entered || clicked) && !loading)
        RequestHubModel(state);

    FormRow("Revision", "Branch, tag or commit of the model repository.");
    ImGui::InputText("##hub_revision", hub.revision, sizeof(hub.revision));

    ShowHubStatus(state);
    ShowHubSettings(state);
}

void ShowConfigLoader(AppState& state)
{
    FormRow("config.json",
            "A model's config.json: drop the file on the page, open it, or paste it in the box "
            "under Import in the results.");
    if (ImGui::Button("Open a file..."))
        if (state.page.open_file != nullptr)
            state.page.open_file();
    ImGui::SameLine();
    if (state.scenario.model.config.is_null())
        ImGui::TextDisabled("none loaded yet: drop one on the page");
    else
        ImGui::Text("%s", gpumem::display_text(state.scenario.model.config_name, kNameChars).c_str());
}

void ShowManualModel(AppState& state)
{
    ManualModel& m = state.scenario.model.manual;
    FormRow("Parameters", "Total parameters: \"7B\", \"1.3e9\" or a plain number.");
    ImGui::InputText("##manual_params", m.num_parameters, sizeof(m.num_parameters));
    auto field = [](const char* label, const char* id, int& value, int lo, int hi) {
        FormRow(label);
        NumberInput(id, label, value, lo, hi);
    };
    field("Layers", "##manual_layers", m.num_layers, 1, 4096);
    field("Hidden size", "##manual_hidden", m.hidden_size, 1, 1 << 20);
    field("Attention heads", "##manual_heads", m.num_attention_heads, 1, 4096);
    field("KV heads", "##manual_kv_heads", m.num_key_value_heads, 1, 4096);
    field("MLP size", "##manual_mlp", m.intermediate_size, 1, 1 << 22);
    field("Vocabulary", "##manual_vocab", m.vocab_size, 1, 1 << 24);
    FormRow("");
    ImGui::Checkbox("Tied input and output embeddings", &m.tie_word_embeddings);
}

}  // namespace

//-----------------------------------------------------------------------------
// [SECTION] Notices above the columns, and the model panel
//-----------------------------------------------------------------------------

// A banner under the title while models come from another Hub than huggingface.co (a link's hub=
// or the Hub address typed below), with the one button that lets the token go there; and why a
// link's settings were ignored.
void ShowLinkNotices(AppState& state)
{
    HubState& hub = state.hub;
    const std::string base = hub.base;
    if (base != "https://huggingface.co")
    {
        // scheme://host[:port]: what the browser's origin check and the button name.
        const std::size_t scheme = base.find("://");
        const std::string host = base.substr(0, scheme == std::string::npos ? base.size() : base.find('/', scheme + 3));
        const std::string shown = gpumem::display_text(host, kNameChars);  // a link's hub= is anyone's text
        const std::string banner =
            "Models come from " + shown + (hub.base_from_link ? " (set by this link, for this visit only)." : ".");
        TextNotice("##hub_banner", UtilizationColor(0.9), banner.c_str());
        if (hub.token_withheld && hub.token[0] != '\0')
        {
            const bool https = base.rfind("https://", 0) == 0;
            ImGui::TextWrapped(https ? "Your access token was not sent there."
                                     : "Your access token was not sent there: a token never goes over plain http.");
            if (https && state.page.trust_hub != nullptr)
            {
                const std::string label = "Send my token to " + shown + "###trust_hub";
                if (ImGui::Button(label.c_str()))
                {
                    state.page.trust_hub(base);
                    RequestHubModel(state);
                }
                ImGui::SameLine();
            }
        }
        if (CompactButton("Use huggingface.co"))
        {
            std::snprintf(hub.base, sizeof(hub.base), "%s", "https://huggingface.co");
            hub.base_from_link = false;
            hub.token_withheld = false;
        }
    }
    if (const CalibrationState& c = state.decisions.calibration; !c.wanted_hash.empty())
    {
        const std::string notice =
            "Not applied: this link names the calibration \"" + gpumem::display_text(c.wanted_name, kNameChars) +
            "\" (hash " + gpumem::display_text(c.wanted_hash, kNameChars) +
            "), which this browser does not have, so the figures use the defaults. To see the link's numbers, "
            "load that file (Calibration, Load calibration...).";
        TextNotice("##calibration_notice", UtilizationColor(0.9), notice.c_str());
        if (state.page.open_file != nullptr)
        {
            if (CompactButton("Load calibration...##notice"))
                state.page.open_file();
            ImGui::SameLine();
        }
        if (CompactButton("Dismiss##calibration_notice"))
            state.decisions.calibration.wanted_hash.clear();
    }
    if (!state.link_message.empty())
    {
        TextNotice("##link_message", UtilizationColor(1.0),
                   gpumem::display_text(state.link_message, kMessageChars).c_str());
        ImGui::SameLine();
        if (CompactButton("Dismiss"))
            state.link_message.clear();
    }
}

void ShowModelPanel(AppState& state)
{
    if (!ImGui::CollapsingHeader("Model", ImGuiTreeNodeFlags_DefaultOpen))
        return;

    const struct
    {
        ModelSource source;
        const char* label;
    } kSources[] = {{ModelSource::Preset, "Preset"},
                    {ModelSource::Hub, "Hub"},
                    {ModelSource::Config, "config.json"},
                    {ModelSource::Manual, "By hand"}};
    for (int i = 0; i < IM_ARRAYSIZE(kSources); i++)
    {
        if (i > 0)
            SameLineIfRoom(kSources[i].label);
        const bool selected = state.scenario.model.source == kSources[i].source;
        if (ImGui::RadioButton(kSources[i].label, selected))
            state.scenario.model.source = kSources[i].source;
        AccessDescribe("radio button", selected ? "selected" : "not selected");
    }

    switch (state.scenario.model.source)
    {
    case ModelSource::Preset:
        ShowPresetPicker(state);
        break;
    case ModelSource::Hub:
        ShowHubFetch(state);
        break;
    case ModelSource::Config:
        ShowConfigLoader(state);
        break;
    case ModelSource::Manual:
        ShowManualModel(state);
        break;
    }
    if (!state.import_message.empty())
    {
        const bool refusal = state.import_message != state.import_note;  // a note says what was added
        TextNotice("##import_message", refusal ? UtilizationColor(1.0) : ImGui::GetStyleColorVec4(ImGuiCol_Text),
                   gpumem::display_text(state.import_message, kMessageChars).c_str());
    }

    FormRow("Mode");
    const bool inference = state.scenario.IsInference();
    if (ImGui::RadioButton("Training##mode", !inference))
        state.scenario.mode = Mode::Training;
    AccessDescribe("radio button", inference ? "not selected" : "selected");
    ImGui::SameLine();
    if (ImGui::RadioButton("Inference##mode", inference))
        state.scenario.mode = Mode::Inference;
    AccessDescribe("radio button", inference ? "selected" : "not selected");
}

}  // namespace gpumem::ui
