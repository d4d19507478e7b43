// The Hugging Face Hub side of the model panel: a small state machine (Idle -> Loading -> Ready or
// Failed) over the requests web/hub.js runs for the page. The answers arrive through
// ReceiveHubResponse(); a stale answer (an older serial) is dropped.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace gpumem::ui {

struct AppState;

// The Hugging Face Hub side of the model panel.
struct HubState
{
    enum class Status
    {
        Idle,
        Loading,
        Ready,
        Failed
    };

    char input[256] = "";                       // what the user typed: an id or a Hub URL
    char revision[64] = "main";                 // branch, tag or commit
    char base[256] = "https://huggingface.co";  // the Hub's address (hub= in links)
    bool base_from_link = false;                // base came from this visit's link, not the user
    // The access token for gated models. It stays in this buffer (and in localStorage only when
    // remember_token is set); it is never part of the scenario, the share link, the exported JSON
    // or the saved settings. page.js hands it to hub.js with each fetch, which attaches it only
    // for https://huggingface.co and the https origins the user confirmed (ShowLinkNotices).
    char token[256] = "";
    bool remember_token = false;
    bool token_withheld = false;  // the last fetch from base had a token, not sent there

    Status status = Status::Idle;
    int serial = 0;  // of the request in flight: stale answers are dropped
    std::string id;  // the model loaded (or being loaded)
    std::string loaded_revision;
    nlohmann::json config;        // its config.json, as fetched
    std::uint64_t api_total = 0;  // the Hub's safetensors parameter count (0: unknown)
    std::string error_kind;       // "unauthorized", "not_found", "timeout", ...
    std::string message;          // what the page shows for the last failure
    bool retryable = false;
    std::string bundled_twin;         // a bundled preset with this id's architecture, if any
    nlohmann::json pending_scenario;  // a share link's scenario, applied once the model arrives
    nlohmann::json pending_import;    // the scenario tools' configs set (share.h, LoadFiles), likewise
};

// Starts fetching state.hub.input from the Hub (page.hub_fetch); the answer comes back through
// ReceiveHubResponse: {"serial", "ok", "id", "revision", "config", "api", "origin",
// "token_withheld"} or {"serial", "ok": false, "kind", "message", "retryable", "origin",
// "token_withheld"}. A model that loads becomes the scenario's (ModelSource::Hub), and a link's
// pending settings are applied to it.
void RequestHubModel(AppState& state);
void ReceiveHubResponse(AppState& state, const nlohmann::json& response);

// The index of the bundled preset `id` answers to (its own id or an alias), or -1.
int PresetIndexOf(const AppState& state, const std::string& id);

}  // namespace gpumem::ui
