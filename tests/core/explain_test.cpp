// The explanation of every figure (result "explain", core/src/memory/explain.h) against the figures
// themselves: each component of each phase is the sum of the figures its explanation names, each
// figure is its factors' product (or its parts' sum), and the peak's components, overheads
// included, add up to per_gpu.components. Run over every validation case, every test scenario and
// the engines and training setups they may not cover.

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gpumem/gpumem.h"

namespace {

using nlohmann::json;
namespace fs = std::filesystem;

bool close(double a, double b, double slack = 0) {
    return std::fabs(a - b) <= slack + 1e-9 * std::max(std::fabs(a), std::fabs(b));
}

double product(const json& factors, double start, bool first_is_value) {
    double v = start;
    bool first = first_is_value;
    for (const json& f : factors) {
        const double x = f["value"].get<double>();
        if (first && !f.value("divides", false)) v = x;
        else v = f.value("divides", false) ? v / x : v * x;
        first = false;
    }
    return v;
}

// A figure's value from its own factors or parts; false when it cannot be recomputed (a rule).
bool recompute(const json& figure, double& value) {
    const std::string kind = figure["kind"];
    if (kind == "product") {
        value = product(figure["factors"], 1, true);
        return true;
    }
    if (kind == "sum") {
        value = 0;
        for (const json& part : figure["parts"]) value += product(part["factors"], 1, true);
        if (figure.contains("scaled_by")) value = product(figure["scaled_by"], value, false);
        return true;
    }
    return false;
}

// Checks one estimate's explanation; `what` names the case in failures.
void check(const json& r, const std::string& what) {
    ASSERT_TRUE(r.value("ok", false)) << what << ": " << r.dump().substr(0, 400);
    const json& e = r["explain"];
    ASSERT_TRUE(e.is_object()) << what;
    const json& figures = e["figures"];
    for (const auto& [key, f] : figures.items()) {
        EXPECT_FALSE(f.value("what", "").empty()) << what << ": " << key;
        EXPECT_FALSE(f.value("formula", "").empty()) << what << ": " << key;
        EXPECT_TRUE(std::isfinite(f["value"].get<double>())) << what << ": " << key;
        double v = 0;
        if (recompute(f, v)) {
            EXPECT_TRUE(close(v, f["value"].get<double>())) << what << ": " << key << " " << f.dump();
        }
    }
    auto terms_sum = [&](const json& terms, const std::string& where) {
        double sum = 0;
        for (const json& t : terms) {
            const std::string key = t["figure"];
            EXPECT_TRUE(figures.contains(key))
                << what << ": " << where << " names " << key << ", which is not recorded";
            if (figures.contains(key)) {
                EXPECT_TRUE(close(figures[key]["value"].get<double>(), t["bytes"].get<double>()))
                    << what << ": " << where << " " << key;
            }
            sum += t["bytes"].get<double>();
        }
        return sum;
    };
    for (const json& phase : r["per_gpu"]["timeline"]) {
        const std::string name = phase["phase"];
        ASSERT_TRUE(e["phases"].contains(name)) << what << ": phase " << name;
        for (const auto& [component, bytes] : phase["components"].items()) {
            ASSERT_TRUE(e["phases"][name].contains(component)) << what << ": " << name << "." << component;
            EXPECT_TRUE(close(terms_sum(e["phases"][name][component], name + "." + component), bytes.get<double>(), 1))
                << what << ": " << name << "." << component;
        }
    }
    EXPECT_EQ(e["peak_phase"], r["per_gpu"]["peak_phase"]) << what;
    for (const auto& [component, bytes] : r["per_gpu"]["components"].items()) {
        const double sum = e["peak"].contains(component) ? terms_sum(e["peak"][component], "peak." + component) : 0;
        EXPECT_TRUE(close(sum, bytes.get<double>(), 2))
            << what << ": peak " << component << " " << sum << " vs " << bytes;
    }
}

std::string read(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

TEST(Explain, EveryValidationCaseAndTestScenario) {
    const fs::path root = GPUMEM_SOURCE_DIR;
    std::size_t checked = 0;
    for (const auto& entry : fs::directory_iterator(root / "tests/data/validation/cases")) {
        const json c = json::parse(read(entry.path()));
        if (!c.contains("scenario") || !c["scenario"].is_object()) continue;  // a record without a scenario
        json scenario = c["scenario"];
        scenario["explain"] = true;
        const json r = gpumem::estimate(scenario);
        if (!r.value("ok", false)) continue;  // a case the estimator refuses has nothing to explain
        check(r, entry.path().filename().string());
        ++checked;
    }
    for (const auto& entry : fs::directory_iterator(root / "tests/data/scenarios")) {
        json doc = json::parse(read(entry.path()), nullptr, false);
        if (doc.is_discarded() || !doc.is_object()) continue;  // the malformed-input fixtures
        doc["explain"] = true;
        const json r = gpumem::estimate(doc);
        if (!r.value("ok", false)) continue;  // the invalid-input fixtures
        check(r, entry.path().filename().string());
        ++checked;
    }
    EXPECT_GE(checked, 100u) << "the validation cases and scenarios were not found under " << root;
}

TEST(Explain, EachEngineAndTrainingSetup) {
    const json model = {{"preset", "meta-llama/Llama-3.1-8B"}};
    std::vector<json> scenarios;
    for (const char* engine : {"transformers", "vllm", "sglang", "tgi", "tensorrt_llm", "llama.cpp"})
        scenarios.push_back({{"model", model},
                             {"mode", "inference"},
                             {"inference", {{"engine", engine}, {"context_len", 8192}, {"batch_size", 4}}}});
    scenarios.push_back({{"model", model},
                         {"mode", "inference"},
                         {"inference", {{"engine", "llama.cpp"}, {"weight_format", "q4_k_m"}, {"gpu_layers", 20}}}});
    const json training[] = {
        {{"method", "lora"}},
        {{"method", "qlora"}, {"framework", "litgpt"}, {"gradient_accumulation_steps", 2}},
        {{"optimizer", "paged_adamw_8bit"}, {"loss", "chunked"}},
        {{"activation_checkpointing", "selective"}, {"compile", "layers_and_loss"}},
        {{"activation_checkpointing", "full"}, {"activation_offloading", true}, {"optimizer_in_backward", true}},
        {{"method", "frozen"}, {"trainable_layers", 4}},
        {{"loss", "fused"}, {"attention", "eager"}}};
    for (const json& t : training) scenarios.push_back({{"model", model}, {"training", t}});
    const json engines[] = {
        {{"type", "deepspeed"}, {"zero_stage", 3}, {"offload_optimizer", "cpu"}, {"offload_param", "cpu"}},
        {{"type", "deepspeed"}, {"zero_stage", 2}},
        {{"type", "fsdp"}},
        {{"type", "ddp"}},
        {{"type", "megatron"}}};
    for (const json& engine : engines)
        scenarios.push_back({{"model", model}, {"engine", engine}, {"parallelism", {{"data_parallel_size", 8}}}});
    scenarios.push_back({{"model", model},
                         {"training", {{"framework", "torchtitan"}}},
                         {"engine", {{"type", "fsdp"}}},
                         {"parallelism", {{"data_parallel_size", 8}}}});
    scenarios.push_back({{"model", model},
                         {"training", {{"framework", "litgpt"}, {"gradient_accumulation_steps", 4}}},
                         {"engine", {{"type", "fsdp"}}},
                         {"parallelism", {{"data_parallel_size", 4}}}});
    scenarios.push_back({{"model", model},
                         {"engine", {{"type", "fsdp"}}},
                         {"parallelism", {{"data_parallel_size", 2}, {"pipeline_parallel_size", 4}}}});
    for (json s : scenarios) {
        s["explain"] = true;
        check(gpumem::estimate(s), s.dump());
    }
}

// The words a user reads: a product names its factors and shows them with this scenario's numbers.
TEST(Explain, TheWeightsOfLlama3_8B) {
    const json r = gpumem::estimate({{"model", {{"preset", "meta-llama/Llama-3.1-8B"}}},
                                     {"training", {{"precision", "pure"}, {"dtype", "bf16"}}},
                                     {"explain", true}});
    ASSERT_TRUE(r["ok"].get<bool>());
    const json& w = r["explain"]["figures"]["weights"];
    EXPECT_EQ(w["kind"], "product");
    // 8,030,261,248 parameters x 2 bytes (bf16, pure recipe).
    EXPECT_EQ(w["with"], "8,030,261,248 params × 2 B");
    EXPECT_EQ(w["value"].get<double>(), 16060522496.0);
    EXPECT_FALSE(w.value("source", "").empty());
}

// Asked for only: an estimate without "explain" records nothing (the figures cost the same either way).
TEST(Explain, OnlyWhenAsked) {
    const json s = {{"model", {{"preset", "meta-llama/Llama-3.1-8B"}}}};
    const json plain = gpumem::estimate(s);
    ASSERT_TRUE(plain["ok"].get<bool>());
    EXPECT_FALSE(plain.contains("explain"));
    json asked = s;
    asked["explain"] = true;
    const json explained = gpumem::estimate(asked);
    EXPECT_TRUE(explained["explain"].is_object());
    EXPECT_EQ(explained["per_gpu"], plain["per_gpu"]) << "the same figures";
    EXPECT_FALSE(explained["scenario"].contains("explain")) << "an output option, not part of the resolved scenario";
    json bad = s;
    bad["explain"] = "yes";
    const json refused = gpumem::estimate(bad);
    EXPECT_FALSE(refused["ok"].get<bool>());
    EXPECT_EQ(refused["errors"][0]["field"], "explain");
}

}  // namespace
