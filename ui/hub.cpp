// The Hub fetch state machine: see hub.h.

#include "hub.h"

#include <cctype>
#include <optional>

#include "app.h"
#include "share.h"

#include <gpumem/gpumem.h>

namespace gpumem::ui {

namespace {

std::string Lower(std::string s)
{
    for (char& c : s)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

// The Hub's safetensors parameter count in an answer (0: none).
std::uint64_t ApiTotal(const nlohmann::json& response)
{
    if (!response.contains("api") || !response["api"].is_object())
        return 0;
    const nlohmann::json& api = response["api"];
    return api.contains("safetensors_total") && api["safetensors_total"].is_number_unsigned()
               ? api["safetensors_total"].get<std::uint64_t>()
               : 0;
}

void Fail(HubState& hub, const std::string& kind, const std::string& message, bool retryable)
{
    hub.status = HubState::Status::Failed;
    hub.error_kind = kind;
    hub.message = gpumem::display_text(message, kMessageChars);  // it may quote the id or the server
    hub.retryable = retryable;
    hub.pending_scenario = nullptr;
}

}  // namespace

int PresetIndexOf(const AppState& state, const std::string& id)
{
    const std::optional<std::string> preset = gpumem::preset_id(id);
    if (!preset)
        return -1;
    const std::string model_id = Lower(*preset);
    for (int i = 0; i < static_cast<int>(state.presets.size()); i++)
        if (Lower(state.presets[i].id) == model_id)
            return i;
    return -1;
}

void RequestHubModel(AppState& state)
{
    HubState& hub = state.hub;
    hub.serial++;
    hub.status = HubState::Status::Loading;
    hub.message.clear();
    hub.error_kind.clear();
    hub.bundled_twin.clear();
    const nlohmann::json request = {
        {"serial", hub.serial}, {"base", hub.base}, {"id", hub.input}, {"revision", hub.revision}};
    if (state.page.hub_fetch == nullptr)
    {
        ReceiveHubResponse(state, {{"serial", hub.serial},
                                   {"ok", false},
                                   {"kind", "offline"},
                                   {"message", "this build has no network access"}});
        return;
    }
    state.page.hub_fetch(request.dump(), hub.token);
}

void ReceiveHubResponse(AppState& state, const nlohmann::json& response)
{
    HubState& hub = state.hub;
    if (!response.is_object() || response.value("serial", -1) != hub.serial)
        return;  // an answer to a request the user has since replaced
    const std::string id = response.value("id", std::string(hub.input));
    hub.token_withheld = response.value("token_withheld", false);
    const int twin = PresetIndexOf(state, id);
    hub.bundled_twin = twin >= 0 ? state.presets[twin].id : "";
    if (!response.value("ok", false))
    {
        if (!hub.pending_import.is_null())
        {
            state.import_message =
                "configs not loaded: their model " + gpumem::display_text(id, kNameChars) +
                " could not be fetched from the Hub (" +
                gpumem::display_text(response.value("message", std::string("the Hub request failed")), kNameChars) +
                "); load the model another way and import them again";
            hub.pending_import = nullptr;
        }
        Fail(hub, response.value("kind", "error"), response.value("message", "the Hub request failed"),
             response.value("retryable", false));
        return;
    }
    const nlohmann::json& config = response.contains("config") ? response["config"] : nlohmann::json();
    const nlohmann::json counted = gpumem::params(config);
    if (!counted.value("ok", false))
    {
        Fail(hub, "unsupported", id + "'s config.json cannot be read: " + ErrorText(counted), false);
        if (!hub.pending_import.is_null())
            state.import_message = "configs not loaded: " + hub.message;
        hub.pending_import = nullptr;
        return;
    }
    hub.status = HubState::Status::Ready;
    hub.id = id;
    hub.loaded_revision = response.value("revision", std::string("main"));
    hub.config = config;
    hub.api_total = ApiTotal(response);
    state.scenario.model.source = ModelSource::Hub;
    if (!hub.pending_scenario.is_null())
    {
        ApplyPendingLinkScenario(state, hub.pending_scenario);
        hub.pending_scenario = nullptr;
    }
    if (!hub.pending_import.is_null())
    {
        const nlohmann::json scenario = std::move(hub.pending_import);
        hub.pending_import = nullptr;
        ApplyConfigScenario(state, scenario);
    }
}

}  // namespace gpumem::ui
