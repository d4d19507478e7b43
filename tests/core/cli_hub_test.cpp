// Where the CLI's --model comes from (core/cli/hub.h): Hub ids and URLs, where the token may go,
// redirects, the HF cache's layout, and the closest bundled ids. HTTP is a fake that records every
// request. Native only (the CLI has no WebAssembly build). The subprocess tests against a mock Hub
// are tests/cli/hub.test.mjs.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <thread>
#include <tuple>

#include <gpumem/gpumem.h>

#include "cli/hub.h"

using namespace gpumem::cli;
namespace fs = std::filesystem;

namespace {

struct Sent {
    std::string url;
    bool token = false;
    std::string proxy;
    long timeout_ms = 0;
};

// Answers each URL from `routes`, else from `fallback`, else 404, and records what was sent.
struct FakeHub {
    std::map<std::string, HttpResponse> routes;
    std::function<HttpResponse(const HttpRequest&)> fallback;
    std::vector<Sent> sent;
    HttpGet get() {
        return [this](const HttpRequest& request) {
            bool token = false;
            for (const std::string& h : request.headers) token = token || h.rfind("Authorization: Bearer ", 0) == 0;
            sent.push_back({request.url, token, request.proxy, request.timeout_ms});
            auto it = routes.find(request.url);
            if (it != routes.end()) return it->second;
            if (fallback) return fallback(request);
            HttpResponse r;
            r.status = 404;
            return r;
        };
    }
};

HttpResponse ok(const std::string& body, std::map<std::string, std::string> headers = {}) {
    HttpResponse r;
    r.status = 200;
    r.body = body;
    r.headers = std::move(headers);
    return r;
}

HttpResponse redirect(const std::string& location) {
    HttpResponse r;
    r.status = 307;
    r.headers["location"] = location;
    return r;
}

const char* kConfig = R"({"model_type": "gpt2", "n_embd": 768, "n_head": 12, "n_layer": 12, "vocab_size": 50257})";

HubEnv env_for(const std::string& endpoint, const std::string& cache) {
    HubEnv env;
    env.endpoint = endpoint;
    env.token = "hf_secret";
    env.token_source = "HF_TOKEN";
    env.cache_dir = cache;
    return env;
}

fs::path temp_dir(const std::string& name) {
    fs::path dir = fs::temp_directory_path() / ("gpumem_hub_test_" + name);
    fs::remove_all(dir);
    return dir;
}

}  // namespace

TEST(CliHub, IdsAndUrlsAreReadLikeTheHubReadsThem) {
    std::string id, rev, error;
    ASSERT_TRUE(parse_hub_id("https://huggingface.co/Qwen/Qwen3-8B/blob/v1/config.json", "", id, rev, error));
    EXPECT_EQ(id, "Qwen/Qwen3-8B");
    EXPECT_EQ(rev, "v1");
    ASSERT_TRUE(parse_hub_id("https://huggingface.co/Qwen/Qwen3-8B/tree/v1", "abc", id, rev, error));
    EXPECT_EQ(rev, "abc") << "--revision wins over the URL's";
    ASSERT_TRUE(parse_hub_id("gpt2", "", id, rev, error));
    EXPECT_EQ(id, "gpt2");
    EXPECT_EQ(rev, "main");
    ASSERT_TRUE(parse_hub_id("https://huggingface.co/gpt2/resolve/main/config.json", "", id, rev, error));
    EXPECT_EQ(id, "gpt2");
    for (const char* bad : {"", "../x", "a/..", "a/b/c", "-x/y", "x./y", "a--b/c", "a/b c", "ftp://x/y/z",
                            "https://huggingface.co/a/b/c/d"})
        EXPECT_FALSE(parse_hub_id(bad, "", id, rev, error)) << bad;
    EXPECT_FALSE(parse_hub_id("a/b", "../main", id, rev, error));
    EXPECT_FALSE(parse_hub_id("a/b", "-rf", id, rev, error));
}

// huggingface_hub writes refs/REVISION unchecked; a revision is a git ref name (git check-ref-format).
TEST(CliHub, RevisionsAreGitRefNamesCheckedBeforeTheCache) {
    for (const char* good :
         {"main", "v1.2.3", "feature/x_y-z", "refs/pr/1", "0123456789abcdef0123456789abcdef01234567"})
        EXPECT_EQ(revision_problem(good), "") << good;
    for (const char* bad : {"", "main/", "/main", "a//b", "a/../b", "..", ".hidden", "x/.y", "v1.lock", "a/b.lock/c",
                            "v1.", "-rf", "a b", "a~1", "a^", "a:b", "a\\b", "a@{1}", "a\x1b"})
        EXPECT_NE(revision_problem(bad), "") << bad;
    EXPECT_NE(revision_problem(std::string(129, 'a')), "");
    std::string id, rev, error;
    ASSERT_FALSE(parse_hub_id("org/m", "main/", id, rev, error));
    EXPECT_EQ(error.rfind("--revision \"main/\" is not a branch, tag or commit name: it has an empty part", 0), 0u)
        << error;
    ASSERT_FALSE(parse_hub_id("https://huggingface.co/org/m/tree/.x", "", id, rev, error));
    EXPECT_EQ(error.rfind("the URL's revision \".x\"", 0), 0u) << error;
    ASSERT_FALSE(parse_hub_id("org/m", "ma\x1b[2Jin\nNOTICE", id, rev, error));
    EXPECT_EQ(error.find('\x1b'), std::string::npos) << "shown escaped";
    EXPECT_EQ(error.find('\n'), std::string::npos);
    EXPECT_NE(error.find("ma\\x1b[2Jin\\nNOTICE"), std::string::npos) << error;
}

TEST(CliHub, TheTokenGoesOnlyToTheEndpointsOriginOverHttpsOrLoopback) {
    const fs::path cache = temp_dir("token");
    FakeHub hub;
    hub.routes["https://huggingface.co/a/b/resolve/main/config.json"] =
        redirect("https://cdn.example.org/b/config.json");
    hub.routes["https://cdn.example.org/b/config.json"] = ok(kConfig);
    HubModel m = load_hub_model("a/b", "", env_for("https://huggingface.co", cache.string()), hub.get(), {});
    ASSERT_TRUE(m.ok) << m.error;
    ASSERT_GE(hub.sent.size(), 2u);
    EXPECT_TRUE(hub.sent[0].token) << "the endpoint gets it";
    EXPECT_EQ(hub.sent[1].url, "https://cdn.example.org/b/config.json");
    EXPECT_FALSE(hub.sent[1].token) << "the redirect's other host does not";

    // A relative redirect stays on the endpoint: the token goes along.
    FakeHub same;
    same.routes["https://huggingface.co/a/b/resolve/main/config.json"] = redirect("/a/c/resolve/main/config.json");
    same.routes["https://huggingface.co/a/c/resolve/main/config.json"] = ok(kConfig);
    ASSERT_TRUE(load_hub_model("a/b", "", env_for("https://huggingface.co", cache.string()), same.get(), {}).ok);
    EXPECT_TRUE(same.sent[1].token);

    // Plain http: only to this computer. Another port is another origin.
    for (const auto& [endpoint, expected] : std::vector<std::pair<std::string, bool>>{
             {"http://127.0.0.1:8080", true}, {"http://localhost:8080", true}, {"http://hub.example.org", false}}) {
        FakeHub h;
        h.routes[endpoint + "/a/b/resolve/main/config.json"] = ok(kConfig);
        load_hub_model("a/b", "", env_for(endpoint, cache.string()), h.get(), {});
        ASSERT_FALSE(h.sent.empty());
        EXPECT_EQ(h.sent[0].token, expected) << endpoint;
    }
    FakeHub port;
    port.routes["https://huggingface.co/a/b/resolve/main/config.json"] = redirect("https://huggingface.co:8443/x");
    load_hub_model("a/b", "", env_for("https://huggingface.co", cache.string()), port.get(), {});
    ASSERT_GE(port.sent.size(), 2u);
    EXPECT_FALSE(port.sent[1].token);
    fs::remove_all(cache);
}

TEST(CliHub, TheCacheIsWrittenAndReadInHuggingfaceHubsLayout) {
    const fs::path cache = temp_dir("cache");
    const std::string commit = "0123456789abcdef0123456789abcdef01234567";
    FakeHub hub;
    hub.routes["https://huggingface.co/org/m/resolve/v1/config.json"] =
        ok(kConfig, {{"x-repo-commit", commit}, {"etag", "\"89abcdef0123456789abcdef0123456789abcdef\""}});
    HubEnv env = env_for("https://huggingface.co", cache.string());
    HubModel m = load_hub_model("org/m", "v1", env, hub.get(), {});
    ASSERT_TRUE(m.ok) << m.error;
    EXPECT_TRUE(m.notes.empty());
    const fs::path repo = cache / "models--org--m";
    std::ifstream ref(repo / "refs" / "v1");
    std::string text((std::istreambuf_iterator<char>(ref)), std::istreambuf_iterator<char>());
    EXPECT_EQ(text, commit);
    EXPECT_EQ(fs::read_symlink(repo / "snapshots" / commit / "config.json"),
              fs::path("../../blobs/89abcdef0123456789abcdef0123456789abcdef"));

    // Offline: the ref and the commit both find it, and nothing is sent.
    env.offline = true;
    FakeHub none;
    EXPECT_TRUE(load_hub_model("org/m", "v1", env, none.get(), {}).ok);
    EXPECT_TRUE(load_hub_model("org/m", commit, env, none.get(), {}).ok);
    HubModel miss = load_hub_model("org/m", "main", env, none.get(), {});
    EXPECT_FALSE(miss.ok);
    EXPECT_NE(miss.error.find("HF_HUB_OFFLINE=1"), std::string::npos) << miss.error;
    EXPECT_TRUE(none.sent.empty());

    // No commit header: loaded, and the note says the cache was not written.
    FakeHub bare;
    bare.routes["https://huggingface.co/org/n/resolve/main/config.json"] = ok(kConfig);
    HubModel n = load_hub_model("org/n", "", env_for("https://huggingface.co", cache.string()), bare.get(), {});
    EXPECT_TRUE(n.ok);
    ASSERT_EQ(n.notes.size(), 1u);
    EXPECT_FALSE(fs::exists(cache / "models--org--n"));
    fs::remove_all(cache);
}

TEST(CliHub, OneDeadlineBoundsEveryRequestAndRedirectOfTheCommand) {
    // Each answer takes 300 ms (or the time it was given, if less) and redirects further: a 1 s
    // HF_HUB_DOWNLOAD_TIMEOUT runs out during the fourth request, whatever the number of hops.
    FakeHub hub;
    int hop = 0;
    hub.fallback = [&hop](const HttpRequest& request) {
        std::this_thread::sleep_for(std::chrono::milliseconds(std::min(request.timeout_ms, 300L)));
        return redirect("https://huggingface.co/a/b/resolve/main/config.json?hop=" + std::to_string(++hop));
    };
    HubEnv env = env_for("https://huggingface.co", temp_dir("deadline").string());
    env.timeout_s = 1;
    const auto started = std::chrono::steady_clock::now();
    const HubModel m = load_hub_model("a/b", "", env, hub.get(), {});
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    EXPECT_FALSE(m.ok);
    EXPECT_NE(m.error.find("did not answer within 1 s (HF_HUB_DOWNLOAD_TIMEOUT, for all of this command's requests"),
              std::string::npos)
        << m.error;
    ASSERT_GE(hub.sent.size(), 2u);
    EXPECT_LE(hub.sent.size(), 4u) << "300 ms each: the fourth runs out of the second";
    for (std::size_t i = 0; i < hub.sent.size(); i++) {
        EXPECT_LE(hub.sent[i].timeout_ms, 1000) << "each request gets what is left, never more";
        if (i > 0) {
            EXPECT_LE(hub.sent[i].timeout_ms, hub.sent[i - 1].timeout_ms - 250) << i;
        }
    }
    EXPECT_LT(seconds, 10.0) << "1 s asked for";
}

TEST(CliHub, RedirectsStopAfterFiveAndTheirAddressIsShownEscaped) {
    FakeHub hub;
    hub.fallback = [](const HttpRequest& request) { return redirect(request.url + "x"); };
    const HubModel m = load_hub_model("a/b", "", env_for("https://huggingface.co", "/nonexistent"), hub.get(), {});
    EXPECT_FALSE(m.ok);
    EXPECT_EQ(hub.sent.size(), 6u) << "the request and 5 redirects";
    EXPECT_NE(
        m.error.find("more than 5 redirects, the last to https://huggingface.co/a/b/resolve/main/config.jsonxxxxxx"),
        std::string::npos)
        << m.error;

    FakeHub evil;
    evil.routes["https://huggingface.co/a/b/resolve/main/config.json"] = redirect("ftp://x/\x1b]0;pwned\x07\nNOTICE");
    const HubModel e = load_hub_model("a/b", "", env_for("https://huggingface.co", "/nonexistent"), evil.get(), {});
    EXPECT_NE(e.error.find("a redirect pointed at ftp://x/\\x1b]0;pwned\\x07\\nNOTICE"), std::string::npos) << e.error;
    HttpResponse busy;
    busy.status = 429;
    busy.headers["retry-after"] = "30\x1b[2J\r\nNOTICE";
    FakeHub limited;
    limited.routes["https://huggingface.co/a/b/resolve/main/config.json"] = busy;
    const HubModel l = load_hub_model("a/b", "", env_for("https://huggingface.co", "/nonexistent"), limited.get(), {});
    EXPECT_NE(l.error.find("try again in 30\\x1b[2J\\r\\nNOTICE s"), std::string::npos) << l.error;
}

TEST(CliHub, ProxiesAreChosenAsCurlChoosesThem) {
    auto env_with = [](std::map<std::string, std::string> vars) {
        return hub_env([vars](const char* name) {
            auto it = vars.find(name);
            return it == vars.end() ? static_cast<const char*>(nullptr) : it->second.c_str();
        });
    };
    const std::string http = "http://127.0.0.1:8080/x", https = "https://huggingface.co/x";
    EXPECT_EQ(proxy_for(http, env_with({})).url, "");
    EXPECT_EQ(proxy_for(http, env_with({{"http_proxy", "http://p:3128"}})).url, "http://p:3128");
    EXPECT_EQ(proxy_for(http, env_with({{"http_proxy", "http://p:3128"}})).variable, "http_proxy");
    EXPECT_EQ(proxy_for(http, env_with({{"HTTP_PROXY", "http://p:3128"}})).url, "") << "curl reads http_proxy only";
    EXPECT_EQ(proxy_for(http, env_with({{"https_proxy", "http://p:3128"}})).url, "");
    EXPECT_EQ(proxy_for(https, env_with({{"HTTPS_PROXY", "http://p:3128"}})).url, "http://p:3128");
    EXPECT_EQ(proxy_for(https, env_with({{"HTTPS_PROXY", "http://a"}, {"https_proxy", "http://b"}})).url, "http://b");
    EXPECT_EQ(proxy_for(http, env_with({{"ALL_PROXY", "socks5://p"}})).variable, "ALL_PROXY");
    EXPECT_EQ(proxy_for(https, env_with({{"all_proxy", "socks5://p"}})).url, "socks5://p");
    const std::string p = "http://p:3128";
    for (const auto& [no_proxy, url, exempt] : std::vector<std::tuple<std::string, std::string, bool>>{
             {"*", http, true},
             {"127.0.0.1", http, true},
             {"127.0.0.0/8", http, true},
             {"10.0.0.0/8", http, false},
             {"127.0.0.1/abc", http, false},
             {"example.org, 127.0.0.1", http, true},
             {"huggingface.co", https, true},
             {".huggingface.co", https, true},
             {"co", https, true},
             {"face.co", https, false},
             {"HUGGINGFACE.CO", https, true},
             {"other.org", https, false},
             {"localhost", "http://localhost:1/x", true},
             {"::1", "http://[::1]:1/x", true},
         }) {
        const HubEnv env = env_with({{"http_proxy", p}, {"https_proxy", p}, {"NO_PROXY", no_proxy}});
        EXPECT_EQ(proxy_for(url, env).url, exempt ? "" : p) << no_proxy << " " << url;
    }
}

TEST(CliHub, NoTokenOverPlainHttpWhenAProxyIsInThePath) {
    const fs::path cache = temp_dir("proxy");
    for (const auto& [endpoint, no_proxy, token] : std::vector<std::tuple<std::string, std::string, bool>>{
             {"http://127.0.0.1:8080", "", false},          // the proxy would read it
             {"http://127.0.0.1:8080", "127.0.0.1", true},  // exempt: straight to this computer
             {"https://huggingface.co", "", true},          // a tunnel: the proxy sees ciphertext
         }) {
        HubEnv env = env_for(endpoint, cache.string());
        env.http_proxy = {"http://127.0.0.1:3128", "http_proxy"};
        env.https_proxy = {"http://127.0.0.1:3128", "HTTPS_PROXY"};
        env.no_proxy = no_proxy;
        FakeHub hub;
        HttpResponse needs_token;
        needs_token.status = 401;
        hub.fallback = [&needs_token](const HttpRequest&) { return needs_token; };
        const HubModel m = load_hub_model("gated/m", "", env, hub.get(), {});
        ASSERT_FALSE(hub.sent.empty());
        EXPECT_EQ(hub.sent[0].token, token) << endpoint << " NO_PROXY=" << no_proxy;
        EXPECT_EQ(hub.sent[0].proxy, no_proxy.empty() ? "http://127.0.0.1:3128" : "");
        if (!token) {
            EXPECT_NE(m.error.find("was not sent: HF_ENDPOINT is plain http through the proxy in http_proxy"),
                      std::string::npos)
                << m.error;
        }
        EXPECT_EQ(m.error.find("3128"), std::string::npos)
            << "the proxy's address (it may hold a password) is not shown";
    }
    fs::remove_all(cache);
}

TEST(CliHub, OnlySafetensorsTotalIsReadFromTheModelInfo) {
    const std::string config_url = "https://huggingface.co/a/b/resolve/main/config.json";
    const std::string info_url = "https://huggingface.co/api/models/a/b?expand=safetensors";
    const std::map<std::string, std::string> meta = {{"x-repo-commit", std::string(40, 'c')},
                                                     {"etag", "\"" + std::string(40, 'e') + "\""}};
    auto load = [&](const HttpResponse& info) {
        FakeHub hub;
        hub.routes[config_url] = ok(kConfig, meta);
        hub.routes[info_url] = info;
        const HubModel m =
            load_hub_model("a/b", "", env_for("https://huggingface.co", temp_dir("info").string()), hub.get(), {});
        EXPECT_TRUE(m.ok) << m.error;
        return m;
    };
    // Decoys: a deeper safetensors.total, a string total, an array; the real one at the top level.
    std::string wide = "{";
    for (int i = 0; i < 20000; i++) wide += "\"k" + std::to_string(i) + "\":{\"safetensors\":{\"total\":1}},";
    wide += R"("x":[{"safetensors":{"total":2}}],"safetensors":{"parameters":{"F32":3},"total":124439808}})";
    EXPECT_EQ(load(ok(wide)).published_total, 124439808u);
    EXPECT_EQ(load(ok(R"({"safetensors":{"total":"5"}})")).published_total, 0u);
    EXPECT_EQ(load(ok(R"([{"safetensors":{"total":5}}])")).published_total, 0u);

    const HubModel deep = load(ok(std::string(100000, '[') + std::string(100000, ']')));
    EXPECT_EQ(deep.published_total, 0u);
    ASSERT_FALSE(deep.notes.empty());
    EXPECT_NE(deep.notes.back().find("nested deeper than 64 levels"), std::string::npos) << deep.notes.back();
    HttpResponse huge;
    huge.failure = HttpResponse::Failure::TooLarge;
    const HubModel big = load(huge);
    ASSERT_FALSE(big.notes.empty());
    EXPECT_NE(big.notes.back().find("larger than 1 MiB"), std::string::npos);
    const HubModel bad = load(ok("{\"safetensors\": nope"));
    ASSERT_FALSE(bad.notes.empty());
    EXPECT_NE(bad.notes.back().find("is not JSON"), std::string::npos);
}

TEST(CliHub, TheCacheTakesTheCommitAndEtagFromTheEndpointsOwnAnswer) {
    // As an LFS file: the Hub's 302 names the commit and the file's sha256 (X-Linked-Etag); the CDN
    // it points at answers with an ETag of its own.
    const fs::path cache = temp_dir("lfs");
    const std::string commit(40, 'a'), sha256(64, 'b');
    FakeHub hub;
    HttpResponse hop = redirect("https://cdn.example.org/blob");
    hop.status = 302;
    hop.headers["x-repo-commit"] = commit;
    hop.headers["x-linked-etag"] = "\"" + sha256 + "\"";
    hop.headers["etag"] = "\"redirect-etag\"";
    hub.routes["https://huggingface.co/a/b/resolve/main/config.json"] = hop;
    hub.routes["https://cdn.example.org/blob"] = ok(kConfig, {{"etag", "\"cdn-etag-0123456789\""}});
    const HubModel m = load_hub_model("a/b", "", env_for("https://huggingface.co", cache.string()), hub.get(), {});
    ASSERT_TRUE(m.ok) << m.error;
    EXPECT_TRUE(m.notes.empty()) << m.notes.front();
    EXPECT_EQ(fs::read_symlink(cache / "models--a--b" / "snapshots" / commit / "config.json"),
              fs::path("../../blobs") / sha256);
    EXPECT_TRUE(fs::is_regular_file(cache / "models--a--b" / "blobs" / sha256));

    // A hostile commit or ETag writes nothing.
    for (const auto& [c, etag] :
         std::vector<std::pair<std::string, std::string>>{{"../../../outside", "\"" + std::string(40, 'e') + "\""},
                                                          {commit, "\"../../../../outside\""},
                                                          {commit, "\"a/b/c/d/e/f/g/h\""}}) {
        const fs::path evil_cache = temp_dir("evil");
        FakeHub evil;
        evil.routes["https://huggingface.co/a/b/resolve/main/config.json"] =
            ok(kConfig, {{"x-repo-commit", c}, {"etag", etag}});
        const HubModel e =
            load_hub_model("a/b", "", env_for("https://huggingface.co", evil_cache.string()), evil.get(), {});
        EXPECT_TRUE(e.ok);
        ASSERT_FALSE(e.notes.empty());
        EXPECT_EQ(e.notes[0].rfind("HF cache not written", 0), 0u) << e.notes[0];
        EXPECT_FALSE(fs::exists(evil_cache)) << c << " " << etag;
    }
    fs::remove_all(cache);
}

TEST(CliHub, AModelTheHubLacksNamesTheClosestBundledOnes) {
    FakeHub hub;
    HubModel m = load_hub_model("qwen/qwen2.5-7b-instruct", "", env_for("https://huggingface.co", "/nonexistent"),
                                hub.get(), [](const std::string& id) { return gpumem::nearest_presets(id); });
    EXPECT_FALSE(m.ok);
    EXPECT_NE(m.error.find("similar name: Qwen/Qwen2.5-7B"), std::string::npos) << m.error;
}

// A Hub config's model_type reaches the core's warnings (and from there every front end) through
// display_text: on one line, controls escaped.
TEST(CliHub, AConfigsModelTypeIsQuotedEscapedInTheCoresWarnings) {
    const nlohmann::json config = {{"model_type", "x\x1b[2J\nNOTICE: verified"},
                                   {"hidden_size", 512},
                                   {"intermediate_size", 1024},
                                   {"num_hidden_layers", 2},
                                   {"num_attention_heads", 8},
                                   {"vocab_size", 1000}};
    const nlohmann::json r = nlohmann::json::parse(gpumem::params_json(config.dump()));
    ASSERT_TRUE(r.value("ok", false)) << r.dump();
    const std::string warning = r["warnings"][0].get<std::string>();
    EXPECT_EQ(warning.rfind("model_type 'x\\x1b[2J\\nNOTICE: verified' is not a known family", 0), 0u) << warning;
    EXPECT_EQ(warning.find_first_of("\x1b\n"), std::string::npos);
}
