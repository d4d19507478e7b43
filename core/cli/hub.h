// Where a --model that is not a bundled preset comes from: a local file or folder, the Hugging Face
// cache on this machine, or the Hub. The CLI's only network code, kept out of the core (which stays
// free of platform code; the page fetches with the browser instead, web/hub.js).
//
// It follows huggingface_hub's own conventions, so that gpumem and transformers share what either
// downloaded:
//
//   HF_ENDPOINT               the Hub's address (default https://huggingface.co)
//   HF_TOKEN                  an access token; else the file HF_TOKEN_PATH, else $HF_HOME/token
//                             (what `huggingface-cli login` writes)
//   HF_HUB_CACHE / HF_HOME    the cache: $HF_HUB_CACHE, else $HF_HOME/hub, else
//                             ~/.cache/huggingface/hub, laid out as models--ORG--NAME/
//                             {refs/REVISION, snapshots/COMMIT/config.json -> ../../blobs/ETAG}
//   HF_HUB_OFFLINE=1          never touch the network: the cache or nothing
//   HF_HUB_DOWNLOAD_TIMEOUT   seconds to wait for the Hub (default 10)
//
// The token goes only to the endpoint's origin (scheme, host and port), over https, or over plain
// http to a loopback address (a local mirror); a redirect elsewhere is followed without it. It is
// never printed, never written anywhere and never part of a message.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpumem::cli {

//-----------------------------------------------------------------------------
// [SECTION] HTTP, as the caller provides it
//-----------------------------------------------------------------------------

struct HttpResponse {
    enum class Failure { None, Timeout, Proxy, Network, TooLarge };
    Failure failure = Failure::None;  // None: `status` is the server's answer
    int status = 0;
    std::string body;                            // at most kMaxInputBytes (args.h)
    std::map<std::string, std::string> headers;  // names in lower case
    std::string detail;                          // the transport's own words, for messages
};

// One GET of `url` with `headers` ("Name: value"), following no redirect: the caller decides where
// a redirect may take the token. `timeout_s` bounds the whole request.
using HttpGet =
    std::function<HttpResponse(const std::string& url, const std::vector<std::string>& headers, long timeout_s)>;

// libcurl's GET (hub_curl.cpp): http and https only, the body capped at kMaxInputBytes.
HttpGet curl_http_get();

//-----------------------------------------------------------------------------
// [SECTION] Settings from the environment
//-----------------------------------------------------------------------------

struct HubEnv {
    std::string endpoint = "https://huggingface.co";  // no trailing slash
    std::string token;                                // "" when none
    std::string token_source;                         // "HF_TOKEN" or the token file's path
    std::string token_path;                           // where `huggingface-cli login` would write it
    std::string cache_dir;                            // the hub cache folder
    bool offline = false;
    long timeout_s = 10;
};

// Reads the variables above through `getenv` (std::getenv in the CLI, a map in tests) and the token
// file. A malformed HF_ENDPOINT is kept as given: load_model reports it.
HubEnv hub_env(const std::function<const char*(const char*)>& getenv);

//-----------------------------------------------------------------------------
// [SECTION] Loading a model's config.json
//-----------------------------------------------------------------------------

// "Qwen/Qwen3-8B", "gpt2", "https://huggingface.co/Qwen/Qwen3-8B", ".../tree/REV",
// ".../blob/REV/config.json", ".../resolve/REV/config.json" -> id and revision (`revision` as given
// wins over one in the URL; "main" when neither names one). False with `error` for anything that is
// not a Hub repository name (huggingface_hub's rule: letters, digits, '-', '_', '.', at most 96
// characters, no '--' or '..', not starting or ending with '-' or '.').
bool parse_hub_id(const std::string& text, const std::string& revision, std::string& id, std::string& rev,
                  std::string& error);

struct HubModel {
    bool ok = false;
    std::string error;                  // when !ok: what went wrong and what to do about it
    std::string id;                     // "org/name", or the path for a local file
    std::string revision;               // as asked ("main" by default)
    std::string commit;                 // the snapshot's commit, when known
    std::string from;                   // "the HF cache (PATH)", "the Hub (ENDPOINT)", "PATH"
    nlohmann::json config;              // the config.json object
    std::uint64_t published_total = 0;  // the Hub's safetensors parameter count; 0 when unknown
    std::vector<std::string> notes;     // e.g. the cache could not be written
};

// A config.json from a local file or a folder holding one; `ok` false with no error when `path`
// names nothing on disk (then it is an id).
HubModel load_local(const std::string& path);

// Ids to offer for one the Hub does not have (the CLI passes gpumem::nearest_presets).
using Suggest = std::function<std::vector<std::string>(const std::string& id)>;

// A Hub model's config.json: from the cache when it holds the revision, else from the Hub (written
// to the cache for next time). When the model cannot be had, `suggest`'s ids are named in the message.
HubModel load_hub_model(const std::string& text, const std::string& revision, const HubEnv& env, const HttpGet& http,
                        const Suggest& suggest);

}  // namespace gpumem::cli
