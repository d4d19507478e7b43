// Where the CLI's --model comes from (core/cli/hub.h): Hub ids and URLs, where the token may go,
// redirects, the HF cache's layout, and the closest bundled ids. HTTP is a fake that records every
// request. Native only (the CLI has no WebAssembly build). The subprocess tests against a mock Hub
// are tests/cli/hub.test.mjs.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>

#include <gpumem/gpumem.h>

#include "cli/hub.h"

using namespace gpumem::cli;
namespace fs = std::filesystem;

namespace {

struct Sent {
    std::string url;
    bool token = false;
};

// Answers each URL from `routes` (404 otherwise) and records what was sent.
struct FakeHub {
    std::map<std::string, HttpResponse> routes;
    std::vector<Sent> sent;
    HttpGet get() {
        return [this](const std::string& url, const std::vector<std::string>& headers, long) {
            bool token = false;
            for (const std::string& h : headers) token = token || h.rfind("Authorization: Bearer ", 0) == 0;
            sent.push_back({url, token});
            auto it = routes.find(url);
            if (it != routes.end()) return it->second;
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

TEST(CliHub, AModelTheHubLacksNamesTheClosestBundledOnes) {
    FakeHub hub;
    HubModel m = load_hub_model("qwen/qwen2.5-7b-instruct", "", env_for("https://huggingface.co", "/nonexistent"),
                                hub.get(), [](const std::string& id) { return gpumem::nearest_presets(id); });
    EXPECT_FALSE(m.ok);
    EXPECT_NE(m.error.find("similar name: Qwen/Qwen2.5-7B"), std::string::npos) << m.error;
}
