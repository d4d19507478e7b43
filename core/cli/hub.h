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
//   HF_HUB_DOWNLOAD_TIMEOUT   seconds for the whole command's Hub traffic (default 10): every
//                             request and redirect of one --model shares this one deadline
//   http_proxy, HTTPS_PROXY / https_proxy, ALL_PROXY / all_proxy, NO_PROXY / no_proxy
//                             the proxy, chosen per URL as curl chooses it (curl reads http_proxy
//                             in lower case only); hub.cpp decides and hands it to the transport
//
// The token goes only to the endpoint's origin (scheme, host and port), over https, or over plain
// http to a loopback address (a local mirror) when no proxy is in the path (a proxy would read
// plain http); a redirect elsewhere is followed without it, and at most kMaxRedirects are followed.
// It is never printed, never written anywhere and never part of a message. Text from the Hub
// (headers, a redirect's Location, the transport's words) reaches messages through display_text.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpumem::cli {

//-----------------------------------------------------------------------------
// [SECTION] HTTP, as the caller provides it
//-----------------------------------------------------------------------------

struct HttpRequest {
    std::string url;
    std::vector<std::string> headers;  // "Name: value"
    std::string proxy;                 // the proxy to go through; "" for a direct connection
    long timeout_ms = 10000;           // the whole request: connecting, the headers and the body
    std::size_t max_bytes = 0;         // the body's cap: past it the transfer stops (TooLarge)
};

struct HttpResponse {
    enum class Failure { None, Timeout, Proxy, Network, TooLarge };
    Failure failure = Failure::None;  // None: `status` is the server's answer
    int status = 0;
    std::string body;                            // at most the request's max_bytes
    std::map<std::string, std::string> headers;  // names in lower case; at most kMaxHeaderBytes in all
    std::string detail;                          // the transport's own words, for messages
};

constexpr std::size_t kMaxHeaderBytes = 64 * 1024;  // one response's headers (the Hub's are ~2 kB)
// Redirects followed per file. huggingface_hub follows redirects with httpx, which stops after 20
// (httpx/_config.py, DEFAULT_MAX_REDIRECTS; requests stopped after 30, DEFAULT_REDIRECT_LIMIT); the
// Hub itself sends at most two (a renamed repository, then its CDN), so 5 leaves room and no more.
constexpr int kMaxRedirects = 5;
constexpr std::size_t kMaxModelInfoBytes = std::size_t{1} << 20;  // /api/models/ID?expand=safetensors

// One GET, following no redirect (the caller decides where a redirect may take the token), through
// exactly the proxy the request names (none when ""), whatever the environment says.
using HttpGet = std::function<HttpResponse(const HttpRequest& request)>;

// libcurl's GET (hub_curl.cpp): http and https only.
HttpGet curl_http_get();

//-----------------------------------------------------------------------------
// [SECTION] Settings from the environment
//-----------------------------------------------------------------------------

struct Proxy {
    std::string url;       // "" when the request goes direct
    std::string variable;  // the variable it came from, for messages (never its value: it may hold a password)
};

struct HubEnv {
    std::string endpoint = "https://huggingface.co";  // no trailing slash
    std::string token;                                // "" when none
    std::string token_source;                         // "HF_TOKEN" or the token file's path
    std::string token_path;                           // where `huggingface-cli login` would write it
    std::string cache_dir;                            // the hub cache folder
    bool offline = false;
    long timeout_s = 10;       // the whole command's Hub traffic (HF_HUB_DOWNLOAD_TIMEOUT)
    std::string timeout_note;  // why HF_HUB_DOWNLOAD_TIMEOUT as set was not used ("" when it was, or is unset)
    // The proxy variables as set (empty when not): http_proxy (lower case only, as curl reads it),
    // https_proxy / HTTPS_PROXY, all_proxy / ALL_PROXY, no_proxy / NO_PROXY (lower case wins).
    Proxy http_proxy, https_proxy, all_proxy;
    std::string no_proxy;
};

// The proxy curl would use for `url` under `env`: the scheme's variable, else ALL_PROXY, unless
// NO_PROXY exempts the host ("*"; a host name or a domain that contains it, a leading '.' ignored;
// an IP address, IPv4 with an optional /BITS). curl's rules (curl(1) ENVIRONMENT and --noproxy).
Proxy proxy_for(const std::string& url, const HubEnv& env);

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
// characters, no '--' or '..', not starting or ending with '-' or '.') or not a revision name (see
// revision_problem).
bool parse_hub_id(const std::string& text, const std::string& revision, std::string& id, std::string& rev,
                  std::string& error);

// Why `rev` cannot name a revision ("" when it can). huggingface_hub writes a branch or tag's commit
// to refs/REVISION in the cache without checking the name (src/huggingface_hub/file_download.py at
// commit ee0a451, _cache_commit_hash_for_specific_revision: Path(storage_folder) / "refs" /
// revision), leaving the name to the Hub; written here as given, "main/" or "a/../b" would make
// folders or reach out of refs/. A revision is a git ref name, so git's rules (git
// check-ref-format) apply, on top of the Hub's characters: letters, digits, '-', '_', '.', and '/'
// between parts; at most 128 characters; no empty part (no leading, trailing or doubled '/'), no
// part starting with '.' or ending with '.lock', no '..', not ending with '.'; not starting with '-'.
std::string revision_problem(const std::string& rev);

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
// to the cache for next time, as huggingface_hub writes it: the blob under the ETag, atomically; the
// snapshot's config.json a relative link to it; refs/REVISION holding the commit), then the Hub's
// safetensors count (/api/models/ID?expand=safetensors, at most kMaxModelInfoBytes, only that key
// read). All of it within env.timeout_s. When the model cannot be had, `suggest`'s ids are named in
// the message.
HubModel load_hub_model(const std::string& text, const std::string& revision, const HubEnv& env, const HttpGet& http,
                        const Suggest& suggest);

}  // namespace gpumem::cli
