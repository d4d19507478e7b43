// The Hub and the HF cache for the CLI (hub.h). No network code here: HTTP comes in as HttpGet.

#include "cli/hub.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <sstream>
#include <system_error>

#include <gpumem/gpumem.h>

#include "cli/args.h"

namespace gpumem::cli {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

std::string trim(const std::string& s) {
    const std::size_t a = s.find_first_not_of(" \t\r\n");
    if (a == std::string::npos) return "";
    return s.substr(a, s.find_last_not_of(" \t\r\n") - a + 1);
}

// The whole file, at most kMaxInputBytes; nullopt when it cannot be read or is larger.
std::optional<std::string> read_small_file(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return std::nullopt;
    std::string text;
    char buffer[1 << 16];
    while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
        text.append(buffer, static_cast<std::size_t>(in.gcount()));
        if (text.size() > kMaxInputBytes) return std::nullopt;
    }
    return text;
}

//-----------------------------------------------------------------------------
// [SECTION] URLs
//-----------------------------------------------------------------------------

struct Url {
    std::string scheme, host, port, path;  // scheme and host in lower case; path starts with '/'
};

std::optional<Url> parse_url(const std::string& text) {
    static const std::regex kUrl(
        R"(^([A-Za-z][A-Za-z0-9+.-]*)://(\[[0-9A-Fa-f:.]+\]|[^/:?#@\[\]]+)(?::([0-9]{1,5}))?([/?#].*)?$)");
    std::smatch m;
    if (!std::regex_match(text, m, kUrl)) return std::nullopt;
    Url u{lower(m[1]), lower(m[2]), m[3], m[4]};
    if (u.path.empty() || u.path[0] != '/') u.path = "/" + u.path;
    const std::string default_port = u.scheme == "https" ? "443" : u.scheme == "http" ? "80" : "";
    if (u.port == default_port) u.port.clear();
    return u;
}

std::string origin_of(const Url& u) { return u.scheme + "://" + u.host + (u.port.empty() ? "" : ":" + u.port); }

bool loopback(const std::string& host) {
    return host == "localhost" || host == "[::1]" ||
           std::regex_match(host, std::regex(R"(127\.\d{1,3}\.\d{1,3}\.\d{1,3})"));
}

// Where a redirect's Location points, from the URL that answered.
std::string resolve_location(const Url& from, const std::string& location) {
    if (location.find("://") != std::string::npos) return location;
    if (location.rfind("//", 0) == 0) return from.scheme + ":" + location;
    if (!location.empty() && location[0] == '/') return origin_of(from) + location;
    const std::string dir = from.path.substr(0, from.path.rfind('/') + 1);
    return origin_of(from) + dir + location;
}

// Each path segment escaped on its own (the id's '/' stays a separator; a revision's is escaped).
std::string escape(const std::string& s) {
    static const char* hex = "0123456789ABCDEF";
    std::string out;
    for (unsigned char c : s) {
        if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') out += static_cast<char>(c);
        else out += {'%', hex[c >> 4], hex[c & 15]};
    }
    return out;
}

std::string id_path(const std::string& id) {
    const std::size_t slash = id.find('/');
    return slash == std::string::npos ? escape(id) : escape(id.substr(0, slash)) + "/" + escape(id.substr(slash + 1));
}

bool is_commit(const std::string& rev) { return std::regex_match(rev, std::regex("[0-9a-f]{40}")); }

//-----------------------------------------------------------------------------
// [SECTION] The cache (huggingface_hub's layout)
//-----------------------------------------------------------------------------

fs::path repo_dir(const HubEnv& env, const std::string& id) {
    std::string name = "models--" + id;
    for (std::size_t at = name.find('/'); at != std::string::npos; at = name.find('/', at + 2))
        name.replace(at, 1, "--");
    return fs::path(env.cache_dir) / name;
}

// The cached config.json for the revision (a commit, or a ref the cache knows), if any.
std::optional<fs::path> cached_config(const HubEnv& env, const std::string& id, const std::string& rev,
                                      std::string& commit) {
    const fs::path repo = repo_dir(env, id);
    commit = rev;
    if (!is_commit(rev)) {
        std::optional<std::string> ref = read_small_file(repo / "refs" / rev);
        if (!ref) return std::nullopt;
        commit = trim(*ref);
        if (!is_commit(commit)) return std::nullopt;
    }
    const fs::path file = repo / "snapshots" / commit / "config.json";
    std::error_code ec;
    if (!fs::is_regular_file(file, ec)) return std::nullopt;
    return file;
}

// Writes the download where huggingface_hub would: the blob under its ETag, the snapshot's
// config.json as a link to it, and the ref. Returns "" or what failed (the model still loads).
std::string write_cache(const HubEnv& env, const std::string& id, const std::string& rev, const std::string& commit,
                        std::string etag, const std::string& body) {
    if (!is_commit(commit)) return "the Hub sent no commit id (X-Repo-Commit), so the cache was not written";
    etag.erase(std::remove(etag.begin(), etag.end(), '"'), etag.end());
    if (etag.rfind("W/", 0) == 0) etag = etag.substr(2);
    if (!std::regex_match(etag, std::regex("[0-9A-Za-z_-]{8,128}")))
        return "the Hub sent no usable ETag, so the cache was not written";
    const fs::path repo = repo_dir(env, id);
    std::error_code ec;
    fs::create_directories(repo / "blobs", ec);
    fs::create_directories(repo / "snapshots" / commit, ec);
    if (!is_commit(rev)) fs::create_directories((repo / "refs" / rev).parent_path(), ec);
    if (ec) return "could not create " + repo.string() + " (" + ec.message() + ")";
    const fs::path blob = repo / "blobs" / etag;
    const fs::path temp = repo / "blobs" / (etag + ".incomplete");
    {
        std::ofstream out(temp, std::ios::binary | std::ios::trunc);
        out << body;
        if (!out) return "could not write " + temp.string();
    }
    fs::rename(temp, blob, ec);
    const fs::path link = repo / "snapshots" / commit / "config.json";
    fs::remove(link, ec);
    fs::create_symlink(fs::path("..") / ".." / "blobs" / etag, link, ec);
    if (ec) return "could not link " + link.string() + " (" + ec.message() + ")";
    if (!is_commit(rev)) {
        std::ofstream ref(repo / "refs" / rev, std::ios::binary | std::ios::trunc);
        ref << commit;  // no newline, as huggingface_hub writes it
        if (!ref) return "could not write " + (repo / "refs" / rev).string();
    }
    return "";
}

//-----------------------------------------------------------------------------
// [SECTION] The Hub
//-----------------------------------------------------------------------------

std::string header(const HttpResponse& r, const std::string& name) {
    auto it = r.headers.find(name);
    return it == r.headers.end() ? "" : trim(it->second);
}

// GET, following up to 5 redirects; the token only while the URL's origin is the endpoint's.
HttpResponse get(const HubEnv& env, const HttpGet& http, std::string url) {
    const std::optional<Url> endpoint = parse_url(env.endpoint);
    for (int hop = 0; hop <= 5; hop++) {
        const std::optional<Url> u = parse_url(url);
        if (!u || (u->scheme != "https" && u->scheme != "http"))
            return {HttpResponse::Failure::Network, 0, "", {}, "a redirect pointed at " + url};
        std::vector<std::string> headers = {"User-Agent: gpumem/" + std::string(gpumem::version())};
        const bool same_origin = endpoint && origin_of(*u) == origin_of(*endpoint);
        const bool secure = u->scheme == "https" || loopback(u->host);
        if (!env.token.empty() && same_origin && secure) headers.push_back("Authorization: Bearer " + env.token);
        HttpResponse r = http(url, headers, env.timeout_s);
        const bool redirect = r.failure == HttpResponse::Failure::None && r.status >= 300 && r.status < 400 &&
                              !header(r, "location").empty();
        if (!redirect) return r;
        url = resolve_location(*u, header(r, "location"));
    }
    return {HttpResponse::Failure::Network, 0, "", {}, "more than 5 redirects"};
}

// "; bundled models with a similar name: a, b" (or "" when none is close).
std::string similar(const std::string& id, const Suggest& suggest) {
    const std::vector<std::string> near = suggest ? suggest(id) : std::vector<std::string>();
    std::string text;
    for (std::size_t i = 0; i < near.size(); i++)
        text += (i ? ", " : "; bundled models with a similar name: ") + near[i];
    return text;
}

// The message for a failed config.json request: what happened, and what to do.
std::string failure_message(const HttpResponse& r, const HubEnv& env, const std::string& id, const std::string& rev,
                            const Suggest& suggestions) {
    const std::string page = env.endpoint + "/" + id;
    switch (r.failure) {
        case HttpResponse::Failure::Timeout:
            return "the Hub at " + env.endpoint + " did not answer within " + std::to_string(env.timeout_s) +
                   " s (HF_HUB_DOWNLOAD_TIMEOUT): check the connection, or set HF_HUB_OFFLINE=1 to use only the HF "
                   "cache";
        case HttpResponse::Failure::Proxy:
            return "could not reach the Hub through the proxy (" + r.detail +
                   "): check HTTPS_PROXY / https_proxy / NO_PROXY";
        case HttpResponse::Failure::Network:
            return "could not reach the Hub at " + env.endpoint + " for " + id + " (" + r.detail +
                   "): check the connection and HF_ENDPOINT, or use a bundled preset (gpumem presets) or a local "
                   "config.json (--hf-config FILE)" +
                   similar(id, suggestions);
        case HttpResponse::Failure::TooLarge:
            return id + "'s config.json from " + env.endpoint + " is larger than 64 MiB: that is not a model config";
        case HttpResponse::Failure::None:
            break;
    }
    const std::string code = header(r, "x-error-code");
    const std::string status = "(HTTP " + std::to_string(r.status) + ")";
    if (code == "EntryNotFound")
        return id + " has no config.json at revision " + rev + " " + status +
               ": gpumem reads transformers model repositories, which have one";
    if (code == "RevisionNotFound")
        return id + " has no revision \"" + rev + "\" " + status + ": see " + page + "/tree/main";
    if (code == "RepoNotFound" || r.status == 404) {
        return id + " was not found on " + env.endpoint + " " + status + ": check the spelling and the organisation" +
               similar(id, suggestions) + (env.token.empty() ? ". A private model needs a token: set HF_TOKEN" : "");
    }
    if (r.status == 401) {
        const std::optional<Url> u = parse_url(env.endpoint);
        if (!env.token.empty() && u && u->scheme == "http" && !loopback(u->host))
            return id + " needs a Hub account " + status + ", and the token from " + env.token_source +
                   " was not sent: HF_ENDPOINT is plain http, and a token goes only over https (or to this computer)";
        if (env.token.empty())
            return id + " needs a Hub account " + status + ": it is gated or private. Accept its licence at " + page +
                   ", then give gpumem a read token: set HF_TOKEN, or run `huggingface-cli login` (it writes " +
                   env.token_path + ")";
        return "the Hub refused the token from " + env.token_source + " for " + id + " " + status +
               ": check that it is valid and can read this repository";
    }
    if (r.status == 403)
        return id + " is gated and " +
               (env.token.empty() ? std::string("no token was given")
                                  : "the token from " + env.token_source + " has no access yet") +
               " " + status + ": accept its licence at " + page + (env.token.empty() ? ", then set HF_TOKEN" : "");
    if (r.status == 429) {
        const std::string after = header(r, "retry-after");
        return "the Hub is rate-limiting requests " + status +
               (after.empty() ? ": try again shortly" : ": try again in " + after + " s");
    }
    if (r.status >= 500) return "the Hub is having trouble " + status + ": try again in a moment";
    return "the Hub answered " + status + " for " + id + "'s config.json";
}

// The Hub's safetensors parameter count for the revision (0 when it has none or cannot say).
std::uint64_t published_total(const HubEnv& env, const HttpGet& http, const std::string& id, const std::string& rev) {
    const std::string url =
        env.endpoint + "/api/models/" + id_path(id) + (rev == "main" ? "" : "/revision/" + escape(rev));
    const HttpResponse r = get(env, http, url);
    if (r.failure != HttpResponse::Failure::None || r.status != 200) return 0;
    const json info = json::parse(r.body, nullptr, false);
    const json* total = info.is_object() && info.contains("safetensors") && info["safetensors"].is_object() &&
                                info["safetensors"].contains("total")
                            ? &info["safetensors"]["total"]
                            : nullptr;
    return total != nullptr && total->is_number_unsigned() ? total->get<std::uint64_t>() : 0;
}

// A config.json's text as an object; false with `error` naming what is wrong.
bool config_object(const std::string& text, const std::string& what, json& config, std::string& error) {
    std::optional<json> parsed = gpumem::parse_json(text, error);
    if (!parsed) {
        error = what + " is not JSON (" + error + ")";
        return false;
    }
    if (!parsed->is_object()) {
        error = what + " is not a JSON object";
        return false;
    }
    config = std::move(*parsed);
    return true;
}

}  // namespace

//-----------------------------------------------------------------------------
// [SECTION] Public functions
//-----------------------------------------------------------------------------

HubEnv hub_env(const std::function<const char*(const char*)>& getenv) {
    auto var = [&getenv](const char* name) {
        const char* v = getenv(name);
        return v == nullptr ? std::string() : std::string(v);
    };
    HubEnv env;
    if (!var("HF_ENDPOINT").empty()) {
        env.endpoint = trim(var("HF_ENDPOINT"));
        while (!env.endpoint.empty() && env.endpoint.back() == '/') env.endpoint.pop_back();
    }
    const std::string home = var("HOME");
    const std::string hf_home = !var("HF_HOME").empty()          ? var("HF_HOME")
                                : !var("XDG_CACHE_HOME").empty() ? var("XDG_CACHE_HOME") + "/huggingface"
                                                                 : home + "/.cache/huggingface";
    env.cache_dir = !var("HF_HUB_CACHE").empty() ? var("HF_HUB_CACHE") : hf_home + "/hub";
    env.token_path = !var("HF_TOKEN_PATH").empty() ? var("HF_TOKEN_PATH") : hf_home + "/token";
    env.token = trim(var("HF_TOKEN"));
    env.token_source = "HF_TOKEN";
    if (env.token.empty()) {
        if (std::optional<std::string> file = read_small_file(env.token_path)) {
            env.token = trim(*file);
            env.token_source = env.token_path;
        }
    }
    if (env.token.empty()) env.token_source.clear();
    const std::string offline = lower(var("HF_HUB_OFFLINE"));
    env.offline = offline == "1" || offline == "true" || offline == "yes" || offline == "on";
    const std::string timeout = var("HF_HUB_DOWNLOAD_TIMEOUT");
    if (std::regex_match(timeout, std::regex("[0-9]{1,4}")) && std::stol(timeout) > 0)
        env.timeout_s = std::stol(timeout);
    return env;
}

bool parse_hub_id(const std::string& text, const std::string& revision, std::string& id, std::string& rev,
                  std::string& error) {
    std::string input = trim(text);
    rev = trim(revision);
    if (input.empty()) {
        error = "a Hub model id such as Qwen/Qwen3-8B, or its URL, was expected";
        return false;
    }
    if (input.size() > 512) {
        error = "that is too long to be a Hub model id or URL";
        return false;
    }
    if (input.find("://") != std::string::npos) {
        const std::optional<Url> u = parse_url(input);
        if (!u || (u->scheme != "https" && u->scheme != "http")) {
            error = "\"" + input + "\" is not an http(s) Hub URL";
            return false;
        }
        input = u->path.substr(0, u->path.find_first_of("?#"));
        while (!input.empty() && input[0] == '/') input.erase(0, 1);
    }
    if (input.rfind("models/", 0) == 0) input.erase(0, 7);
    while (!input.empty() && input.back() == '/') input.pop_back();
    std::vector<std::string> parts;
    for (std::size_t start = 0;;) {
        const std::size_t slash = input.find('/', start);
        parts.push_back(input.substr(start, slash == std::string::npos ? std::string::npos : slash - start));
        if (slash == std::string::npos) break;
        start = slash + 1;
    }
    auto marker = [](const std::string& p) { return p == "tree" || p == "blob" || p == "resolve"; };
    std::size_t name_parts = parts.size();
    if (parts.size() >= 3 && marker(parts[2])) name_parts = 2;
    else if (parts.size() >= 2 && marker(parts[1])) name_parts = 1;  // a legacy id without organisation
    else if (parts.size() > 2) {
        error = "\"" + input + "\" has too many parts: a Hub model id is \"organisation/name\"";
        return false;
    }
    if (rev.empty() && parts.size() > name_parts + 1) rev = parts[name_parts + 1];
    static const std::regex kName("[A-Za-z0-9_](?:[A-Za-z0-9_.-]{0,94}[A-Za-z0-9_])?");
    id.clear();
    for (std::size_t i = 0; i < name_parts; i++) {
        const std::string& part = parts[i];
        if (!std::regex_match(part, kName) || part.find("--") != std::string::npos ||
            part.find("..") != std::string::npos) {
            error = "\"" + part +
                    "\" is not a valid Hub name: letters, digits, '-', '_' and '.', at most 96 characters, "
                    "no '--' or '..', not starting or ending with '-' or '.'";
            return false;
        }
        id += (i ? "/" : "") + part;
    }
    if (rev.empty()) rev = "main";
    static const std::regex kRevision("[A-Za-z0-9_][A-Za-z0-9_./-]{0,127}");
    if (!std::regex_match(rev, kRevision) || rev.find("..") != std::string::npos ||
        rev.find("//") != std::string::npos) {
        error = "revision \"" + rev + "\" is not a branch, tag or commit name";
        return false;
    }
    return true;
}

HubModel load_local(const std::string& path) {
    HubModel m;
    std::error_code ec;
    fs::path file = path;
    if (fs::is_directory(file, ec)) {
        file /= "config.json";
        if (!fs::exists(file, ec)) {
            m.error = "the folder " + path + " has no config.json";
            return m;
        }
    } else if (!fs::exists(file, ec)) {
        return m;  // not a path: an id
    }
    m.id = path;
    m.from = file.string();
    std::optional<std::string> text = read_small_file(file);
    if (!text) {
        m.error = "cannot read " + file.string() + " (or it is larger than 64 MiB)";
        return m;
    }
    if (!config_object(*text, file.string(), m.config, m.error)) return m;
    // A bundled preset record ({"config": {...}}) works as well.
    if (m.config.contains("config") && m.config["config"].is_object()) m.config = json(m.config["config"]);
    m.ok = true;
    return m;
}

HubModel load_hub_model(const std::string& text, const std::string& revision, const HubEnv& env, const HttpGet& http,
                        const Suggest& suggestions) {
    HubModel m;
    if (!parse_hub_id(text, revision, m.id, m.revision, m.error)) return m;
    const std::optional<Url> endpoint = parse_url(env.endpoint);
    if (!endpoint || (endpoint->scheme != "https" && endpoint->scheme != "http")) {
        m.error = "HF_ENDPOINT \"" + env.endpoint + "\" is not an http(s) address (for example https://huggingface.co)";
        return m;
    }

    if (std::optional<fs::path> file = cached_config(env, m.id, m.revision, m.commit)) {
        m.from = "the HF cache (" + file->string() + ")";
        std::optional<std::string> body = read_small_file(*file);
        if (!body) m.error = "cannot read " + file->string();
        else m.ok = config_object(*body, file->string(), m.config, m.error);
        return m;
    }
    if (env.offline) {
        m.error = m.id + " (revision " + m.revision + ") is not in the HF cache at " + env.cache_dir +
                  ", and HF_HUB_OFFLINE=1 keeps gpumem off the network: fetch it once online (gpumem or "
                  "`huggingface-cli download " +
                  m.id + " config.json`), or use a bundled preset" + similar(m.id, suggestions);
        return m;
    }

    const std::string url = env.endpoint + "/" + id_path(m.id) + "/resolve/" + escape(m.revision) + "/config.json";
    const HttpResponse r = get(env, http, url);
    if (r.failure != HttpResponse::Failure::None || r.status != 200) {
        m.error = failure_message(r, env, m.id, m.revision, suggestions);
        return m;
    }
    if (!config_object(r.body, "what " + env.endpoint + " sent as " + m.id + "'s config.json", m.config, m.error)) {
        m.error += ": is HF_ENDPOINT a Hub, and is " + m.id + " a model repository?";
        return m;
    }
    m.ok = true;
    m.from = "the Hub (" + env.endpoint + ")";
    m.commit = is_commit(m.revision) ? m.revision : header(r, "x-repo-commit");
    const std::string etag = !header(r, "x-linked-etag").empty() ? header(r, "x-linked-etag") : header(r, "etag");
    if (std::string problem = write_cache(env, m.id, m.revision, m.commit, etag, r.body); !problem.empty())
        m.notes.push_back("HF cache not written: " + problem);
    m.published_total = published_total(env, http, m.id, m.revision);
    return m;
}

}  // namespace gpumem::cli
