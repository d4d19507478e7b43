// The Hub and the HF cache for the CLI (hub.h). No network code here: HTTP comes in as HttpGet.

#include "cli/hub.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
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

// Whether NO_PROXY exempts `host`, as curl reads it (lib/noproxy.c): "*" exempts every host; else
// the list's entries, split at commas and spaces, a leading '.' ignored, match a host name that is
// the entry or ends with '.' and the entry, and an IP address that is the entry's (IPv4 also as
// ADDRESS/BITS). Case does not matter.
bool no_proxy_matches(const std::string& list, std::string host) {
    if (host.size() > 2 && host.front() == '[') host = host.substr(1, host.size() - 2);
    host = lower(host);
    if (trim(list) == "*") return true;
    auto ipv4 = [](const std::string& text, std::uint32_t& address) {
        static const std::regex kIpv4(R"((\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3}))");
        std::smatch m;
        if (!std::regex_match(text, m, kIpv4)) return false;
        address = 0;
        for (int i = 1; i <= 4; i++) {
            const unsigned long octet = std::stoul(m[i]);
            if (octet > 255) return false;
            address = (address << 8) | static_cast<std::uint32_t>(octet);
        }
        return true;
    };
    std::uint32_t host_ip = 0;
    const bool host_is_ip = ipv4(host, host_ip) || host.find(':') != std::string::npos;
    std::string spaced = list;
    std::replace(spaced.begin(), spaced.end(), ',', ' ');
    std::istringstream entries(spaced);
    for (std::string entry; entries >> entry;) {
        if (entry[0] == '.') entry.erase(0, 1);
        entry = lower(entry);
        if (entry.empty()) continue;
        if (host_is_ip) {
            const std::size_t slash = entry.find('/');
            std::uint32_t net = 0;
            if (host.find(':') == std::string::npos && ipv4(entry.substr(0, slash), net)) {
                const std::string suffix = slash == std::string::npos ? "32" : entry.substr(slash + 1);
                if (!std::regex_match(suffix, std::regex("[0-9]{1,2}")) || std::stoi(suffix) > 32) continue;
                const int bits = std::stoi(suffix);
                const std::uint32_t mask = bits == 0 ? 0 : ~std::uint32_t{0} << (32 - bits);
                if ((host_ip & mask) == (net & mask)) return true;
            } else if (entry == host) {
                return true;
            }
        } else if (host == entry ||
                   (host.size() > entry.size() && host.compare(host.size() - entry.size(), entry.size(), entry) == 0 &&
                    host[host.size() - entry.size() - 1] == '.')) {
            return true;
        }
    }
    return false;
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

// `text` written to `path` as a whole or not at all: into a file of its own beside it (this
// process's id in its name), then renamed over `path`, as huggingface_hub writes blobs and refs.
bool write_atomically(const fs::path& path, const std::string& text) {
    const fs::path temp = path.string() + "." + std::to_string(::getpid()) + ".incomplete";
    {
        std::ofstream out(temp, std::ios::binary | std::ios::trunc);
        out << text;
        if (!out) return false;
    }
    std::error_code ec;
    fs::rename(temp, path, ec);
    if (ec) fs::remove(temp, ec);
    return !ec;
}

// Writes the download where huggingface_hub would (src/huggingface_hub/file_download.py at commit
// ee0a451: get_hf_file_metadata, _normalize_etag, _download_to_tmp_and_move, _create_symlink,
// _cache_commit_hash_for_specific_revision): the blob under its ETag, the
// snapshot's config.json as a relative link to it, and refs/REVISION holding the commit. Each file
// appears whole or not at all. Returns "" or what failed (the model still loads). Every name it
// writes is checked first: the id by parse_hub_id, the revision by revision_problem, the commit as
// 40 hex digits, the ETag as letters, digits, '-' and '_': nothing the Hub sends reaches outside
// the repository's folder.
std::string write_cache(const HubEnv& env, const std::string& id, const std::string& rev, const std::string& commit,
                        std::string etag, const std::string& body) {
    if (!is_commit(commit)) return "the Hub sent no commit id (X-Repo-Commit), so the cache was not written";
    etag.erase(std::remove(etag.begin(), etag.end(), '"'), etag.end());
    if (etag.rfind("W/", 0) == 0) etag = etag.substr(2);
    if (!std::regex_match(etag, std::regex("[0-9A-Za-z_-]{8,128}")))
        return "the Hub sent no usable ETag (X-Linked-Etag or ETag), so the cache was not written";
    if (!revision_problem(rev).empty()) return "the revision cannot name a file in refs/";
    const fs::path repo = repo_dir(env, id);
    const fs::path snapshot = repo / "snapshots" / commit;
    const fs::path ref = repo / "refs" / rev;
    std::error_code ec;
    fs::create_directories(repo / "blobs", ec);
    if (!ec) fs::create_directories(snapshot, ec);
    if (!ec && !is_commit(rev)) fs::create_directories(ref.parent_path(), ec);
    if (ec) return "could not create " + repo.string() + " (" + ec.message() + ")";
    const fs::path blob = repo / "blobs" / etag;
    if (!fs::is_regular_file(blob, ec) && !write_atomically(blob, body)) return "could not write " + blob.string();
    // The link is made under a name of its own, then renamed over config.json: a reader sees the
    // old link or the new one, never none.
    const fs::path link = snapshot / "config.json";
    const fs::path temp = snapshot / ("config.json." + std::to_string(::getpid()) + ".incomplete");
    fs::remove(temp, ec);
    fs::create_symlink(fs::path("..") / ".." / "blobs" / etag, temp, ec);
    if (!ec) fs::rename(temp, link, ec);
    if (ec) {
        fs::remove(temp, ec);
        return "could not link " + link.string();
    }
    // No newline after the commit, as huggingface_hub writes it.
    if (!is_commit(rev) && !write_atomically(ref, commit)) return "could not write " + ref.string();
    return "";
}

//-----------------------------------------------------------------------------
// [SECTION] The Hub
//-----------------------------------------------------------------------------

std::string header(const HttpResponse& r, const std::string& name) {
    auto it = r.headers.find(name);
    return it == r.headers.end() ? "" : trim(it->second);
}

using Clock = std::chrono::steady_clock;

constexpr std::size_t kMaxUrlChars = 4096;  // a redirect's Location (the Hub's CDN URLs are ~1 kB)

// What a GET ended with: the last answer, and the last one the endpoint itself gave. huggingface_hub
// reads a file's commit and ETag from the endpoint's answer, before any redirect to a CDN
// (file_download.py, get_hf_file_metadata: relative redirects only).
struct Fetched {
    HttpResponse response;
    std::map<std::string, std::string> hub_headers;
};

// GET, following up to kMaxRedirects redirects, all before `deadline`; the token only while the
// URL's origin is the endpoint's and the request is private: https, or plain http to this computer
// with no proxy in the path.
Fetched get(const HubEnv& env, const HttpGet& http, std::string url, Clock::time_point deadline,
            std::size_t max_bytes) {
    const std::optional<Url> endpoint = parse_url(env.endpoint);
    Fetched f;
    for (int hop = 0;; hop++) {
        const std::optional<Url> u = parse_url(url);
        if (!u || (u->scheme != "https" && u->scheme != "http")) {
            f.response = {HttpResponse::Failure::Network, 0, "", {}, "a redirect pointed at " + display_text(url)};
            return f;
        }
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
        if (left <= 0) {
            f.response = {HttpResponse::Failure::Timeout, 0, "", {}, ""};
            return f;
        }
        HttpRequest request{url,
                            {"User-Agent: gpumem/" + std::string(gpumem::version())},
                            proxy_for(url, env).url,
                            static_cast<long>(left),
                            max_bytes};
        const bool same_origin = endpoint && origin_of(*u) == origin_of(*endpoint);
        const bool private_path = u->scheme == "https" || (loopback(u->host) && request.proxy.empty());
        if (!env.token.empty() && same_origin && private_path)
            request.headers.push_back("Authorization: Bearer " + env.token);
        f.response = http(request);
        if (same_origin) f.hub_headers = f.response.headers;
        const bool redirect = f.response.failure == HttpResponse::Failure::None && f.response.status >= 300 &&
                              f.response.status < 400 && !header(f.response, "location").empty();
        if (!redirect) return f;
        const std::string location = header(f.response, "location");
        if (location.size() > kMaxUrlChars) {
            f.response = {HttpResponse::Failure::Network,
                          0,
                          "",
                          {},
                          "a redirect to an address of " + std::to_string(location.size()) + " characters"};
            return f;
        }
        const std::string next = resolve_location(*u, location);
        if (hop == kMaxRedirects) {
            f.response = {
                HttpResponse::Failure::Network,
                0,
                "",
                {},
                "more than " + std::to_string(kMaxRedirects) + " redirects, the last to " + display_text(next)};
            return f;
        }
        url = next;
    }
}

// "; bundled models with a similar name: a, b" (or "" when none is close).
std::string similar(const std::string& id, const Suggest& suggest) {
    const std::vector<std::string> near = suggest ? suggest(id) : std::vector<std::string>();
    std::string text;
    for (std::size_t i = 0; i < near.size(); i++)
        text += (i ? ", " : "; bundled models with a similar name: ") + near[i];
    return text;
}

// The message for a failed config.json request: what happened, and what to do. The endpoint and
// what the transport or the Hub said are shown through display_text.
std::string failure_message(const HttpResponse& r, const HubEnv& env, const std::string& id, const std::string& rev,
                            const Suggest& suggestions) {
    const std::string endpoint = display_text(env.endpoint);
    const std::string page = endpoint + "/" + id;
    switch (r.failure) {
        case HttpResponse::Failure::Timeout:
            return "the Hub at " + endpoint + " did not answer within " + std::to_string(env.timeout_s) +
                   " s (HF_HUB_DOWNLOAD_TIMEOUT, for all of this command's requests and redirects): check the "
                   "connection, or set HF_HUB_OFFLINE=1 to use only the HF cache";
        case HttpResponse::Failure::Proxy:
            return "could not reach the Hub through the proxy in " + proxy_for(env.endpoint, env).variable + " (" +
                   display_text(r.detail) + "): check it, or exempt the Hub's host in NO_PROXY";
        case HttpResponse::Failure::Network:
            return "could not reach the Hub at " + endpoint + " for " + id + " (" + display_text(r.detail) +
                   "): check the connection and HF_ENDPOINT, or use a bundled preset (gpumem presets) or a local "
                   "config.json (--hf-config FILE)" +
                   similar(id, suggestions);
        case HttpResponse::Failure::TooLarge:
            return id + "'s config.json from " + endpoint + " is larger than 64 MiB: that is not a model config";
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
        return id + " was not found on " + endpoint + " " + status + ": check the spelling and the organisation" +
               similar(id, suggestions) + (env.token.empty() ? ". A private model needs a token: set HF_TOKEN" : "");
    }
    if (r.status == 401) {
        const std::optional<Url> u = parse_url(env.endpoint);
        if (!env.token.empty() && u && u->scheme == "http" && !loopback(u->host))
            return id + " needs a Hub account " + status + ", and the token from " + env.token_source +
                   " was not sent: HF_ENDPOINT is plain http, and a token goes only over https (or to this computer)";
        if (const Proxy proxy = proxy_for(env.endpoint, env);
            !env.token.empty() && u && u->scheme == "http" && !proxy.url.empty())
            return id + " needs a Hub account " + status + ", and the token from " + env.token_source +
                   " was not sent: HF_ENDPOINT is plain http through the proxy in " + proxy.variable +
                   ", which would read it. Reach this computer directly (add " + u->host + " to NO_PROXY) or use https";
        if (env.token.empty())
            return id + " needs a Hub account " + status + ": it is gated or private. Accept its licence at " + page +
                   ", then give gpumem a read token: set HF_TOKEN, or run `huggingface-cli login` (it writes " +
                   display_text(env.token_path, 400) + ")";
        return "the Hub refused the token from " + display_text(env.token_source, 400) + " for " + id + " " + status +
               ": check that it is valid and can read this repository";
    }
    if (r.status == 403)
        return id + " is gated and " +
               (env.token.empty() ? std::string("no token was given")
                                  : "the token from " + display_text(env.token_source, 400) + " has no access yet") +
               " " + status + ": accept its licence at " + page + (env.token.empty() ? ", then set HF_TOKEN" : "");
    if (r.status == 429) {
        const std::string after = header(r, "retry-after");
        return "the Hub is rate-limiting requests " + status +
               (after.empty() ? ": try again shortly" : ": try again in " + display_text(after, 40) + " s");
    }
    if (r.status >= 500) return "the Hub is having trouble " + status + ": try again in a moment";
    return "the Hub answered " + status + " for " + id + "'s config.json";
}

// Reads only safetensors.total from /api/models' answer, in one pass, keeping no more than the
// keys of the first two levels: a huge, wide or deep answer costs time linear in its size and
// no memory beyond that, and is refused past kMaxJsonDepth levels.
class SafetensorsTotal : public nlohmann::json_sax<json> {
public:
    std::uint64_t total = 0;
    bool too_deep = false;

    bool null() override { return true; }
    bool boolean(bool) override { return true; }
    bool number_integer(number_integer_t) override { return true; }
    bool number_unsigned(number_unsigned_t value) override {
        if (depth_ == 2 && in_safetensors_ && key2_ == "total") total = value;
        return true;
    }
    bool number_float(number_float_t, const string_t&) override { return true; }
    bool string(string_t&) override { return true; }
    bool binary(binary_t&) override { return true; }
    bool start_object(std::size_t) override { return open(true); }
    bool end_object() override { return close(); }
    bool start_array(std::size_t) override { return open(false); }
    bool end_array() override { return close(); }
    bool key(string_t& key) override {
        if (depth_ == 1) key1_ = key;
        if (depth_ == 2) key2_ = key;
        return true;
    }
    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }

private:
    int depth_ = 0;
    bool root_object_ = false, in_safetensors_ = false;
    std::string key1_, key2_;
    bool open(bool object) {
        if (++depth_ > gpumem::kMaxJsonDepth) {
            too_deep = true;
            return false;
        }
        if (depth_ == 1) root_object_ = object;
        if (depth_ == 2) in_safetensors_ = object && root_object_ && key1_ == "safetensors";
        if (depth_ == 2) key2_.clear();
        return true;
    }
    bool close() {
        if (--depth_ < 2) in_safetensors_ = false;
        return true;
    }
};

// The Hub's safetensors parameter count for the revision (0 when it has none or cannot say, with a
// note when its answer was not one a Hub gives), asked for alone (?expand=safetensors, as
// huggingface_hub's HfApi.model_info(expand=...) asks) and read within the command's deadline.
std::uint64_t published_total(const HubEnv& env, const HttpGet& http, const std::string& id, const std::string& rev,
                              Clock::time_point deadline, std::vector<std::string>& notes) {
    const std::string url = env.endpoint + "/api/models/" + id_path(id) +
                            (rev == "main" ? "" : "/revision/" + escape(rev)) + "?expand=safetensors";
    const HttpResponse r = get(env, http, url, deadline, kMaxModelInfoBytes).response;
    const std::string skipped = "the Hub's safetensors count for " + id + " is not compared: ";
    if (r.failure == HttpResponse::Failure::TooLarge) {
        notes.push_back(skipped + "its model info (/api/models) was larger than 1 MiB");
        return 0;
    }
    if (r.failure == HttpResponse::Failure::Timeout) {
        notes.push_back(skipped + "no answer within HF_HUB_DOWNLOAD_TIMEOUT (" + std::to_string(env.timeout_s) + " s)");
        return 0;
    }
    if (r.failure != HttpResponse::Failure::None || r.status != 200) return 0;
    SafetensorsTotal reader;
    if (!json::sax_parse(r.body, &reader)) {
        notes.push_back(skipped + (reader.too_deep ? "its model info (/api/models) is nested deeper than " +
                                                         std::to_string(gpumem::kMaxJsonDepth) + " levels"
                                                   : std::string("its model info (/api/models) is not JSON")));
        return 0;
    }
    return reader.total;
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
    if (timeout.size() <= 4 && std::regex_match(timeout, std::regex("[0-9]{1,4}")) && std::stol(timeout) > 0)
        env.timeout_s = std::stol(timeout);
    else if (!timeout.empty())
        env.timeout_note = "HF_HUB_DOWNLOAD_TIMEOUT \"" + display_text(timeout, 40) +
                           "\" is not a whole number of seconds from 1 to 9999: " + std::to_string(env.timeout_s) +
                           " s used";
    // curl's variables: the lower-case name first; http_proxy has no upper-case form (a CGI program
    // gets HTTP_PROXY from a request's Proxy header).
    auto first = [&var](std::initializer_list<const char*> names) {
        for (const char* name : names)
            if (!trim(var(name)).empty()) return Proxy{trim(var(name)), name};
        return Proxy{};
    };
    env.http_proxy = first({"http_proxy"});
    env.https_proxy = first({"https_proxy", "HTTPS_PROXY"});
    env.all_proxy = first({"all_proxy", "ALL_PROXY"});
    env.no_proxy = first({"no_proxy", "NO_PROXY"}).url;
    return env;
}

Proxy proxy_for(const std::string& url, const HubEnv& env) {
    const std::optional<Url> u = parse_url(url);
    if (!u) return {};
    Proxy proxy = u->scheme == "http" ? env.http_proxy : u->scheme == "https" ? env.https_proxy : Proxy{};
    if (proxy.url.empty()) proxy = env.all_proxy;
    if (proxy.url.empty() || no_proxy_matches(env.no_proxy, u->host)) return {};
    return proxy;
}

std::string revision_problem(const std::string& rev) {
    if (rev.empty()) return "it is empty";
    if (rev.size() > 128) return "it is longer than 128 characters";
    for (char c : rev)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.' && c != '/')
            return "it holds a character other than letters, digits, '-', '_', '.' and '/'";
    if (rev[0] == '-') return "it starts with '-'";
    if (rev.find("..") != std::string::npos) return "it holds '..'";
    if (rev.back() == '.') return "it ends with '.'";
    for (std::size_t start = 0;;) {
        const std::size_t slash = rev.find('/', start);
        const std::string part = rev.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
        if (part.empty()) return "it has an empty part (a leading, trailing or doubled '/')";
        if (part[0] == '.') return "a part starts with '.'";
        if (part.size() >= 5 && part.compare(part.size() - 5, 5, ".lock") == 0) return "a part ends with '.lock'";
        if (slash == std::string::npos) return "";
        start = slash + 1;
    }
}

bool parse_hub_id(const std::string& text, const std::string& revision, std::string& id, std::string& rev,
                  std::string& error) {
    std::string input = trim(text);
    rev = trim(revision);
    const bool given = !rev.empty();
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
            error = "\"" + display_text(input) + "\" is not an http(s) Hub URL";
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
        error = "\"" + display_text(input) + "\" has too many parts: a Hub model id is \"organisation/name\"";
        return false;
    }
    if (rev.empty() && parts.size() > name_parts + 1) rev = parts[name_parts + 1];
    static const std::regex kName("[A-Za-z0-9_](?:[A-Za-z0-9_.-]{0,94}[A-Za-z0-9_])?");
    id.clear();
    for (std::size_t i = 0; i < name_parts; i++) {
        const std::string& part = parts[i];
        if (!std::regex_match(part, kName) || part.find("--") != std::string::npos ||
            part.find("..") != std::string::npos) {
            error = "\"" + display_text(part) +
                    "\" is not a valid Hub name: letters, digits, '-', '_' and '.', at most 96 characters, "
                    "no '--' or '..', not starting or ending with '-' or '.'";
            return false;
        }
        id += (i ? "/" : "") + part;
    }
    if (rev.empty()) rev = "main";
    if (const std::string problem = revision_problem(rev); !problem.empty()) {
        error = (given ? "--revision \"" : "the URL's revision \"") + display_text(rev) +
                "\" is not a branch, tag or commit name: " + problem +
                ". A revision has letters, digits, '-', '_', '.', and '/' between parts (git's rules: no empty "
                "part, no part starting with '.' or ending with '.lock', no '..', at most 128 characters)";
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
        m.error = "HF_ENDPOINT \"" + display_text(env.endpoint) +
                  "\" is not an http(s) address (for example https://huggingface.co)";
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

    if (!env.timeout_note.empty()) m.notes.push_back(env.timeout_note);
    // One deadline for every request and redirect below (HF_HUB_DOWNLOAD_TIMEOUT).
    const Clock::time_point deadline = Clock::now() + std::chrono::seconds(env.timeout_s);
    const std::string url = env.endpoint + "/" + id_path(m.id) + "/resolve/" + escape(m.revision) + "/config.json";
    const Fetched fetched = get(env, http, url, deadline, kMaxInputBytes);
    const HttpResponse& r = fetched.response;
    if (r.failure != HttpResponse::Failure::None || r.status != 200) {
        m.error = failure_message(r, env, m.id, m.revision, suggestions);
        return m;
    }
    if (!config_object(r.body, "what " + display_text(env.endpoint) + " sent as " + m.id + "'s config.json", m.config,
                       m.error)) {
        m.error += ": is HF_ENDPOINT a Hub, and is " + m.id + " a model repository?";
        return m;
    }
    m.ok = true;
    m.from = "the Hub (" + display_text(env.endpoint) + ")";
    // The commit and the ETag as the endpoint gave them (not a CDN it redirected to).
    auto hub_header = [&fetched](const std::string& name) {
        auto it = fetched.hub_headers.find(name);
        return it == fetched.hub_headers.end() ? std::string() : trim(it->second);
    };
    m.commit = is_commit(m.revision) ? m.revision : hub_header("x-repo-commit");
    const std::string etag = !hub_header("x-linked-etag").empty() ? hub_header("x-linked-etag") : hub_header("etag");
    if (std::string problem = write_cache(env, m.id, m.revision, m.commit, etag, r.body); !problem.empty())
        m.notes.push_back("HF cache not written: " + problem);
    m.published_total = published_total(env, http, m.id, m.revision, deadline, m.notes);
    return m;
}

}  // namespace gpumem::cli
