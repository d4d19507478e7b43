// The error band on every estimate (core/src/band/): the interval of measured / estimated of the runs of the
// scenario's class, its fallback to coarser classes, leave-one-out, the calibration's own runs, the verdict.
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "band/band.h"
#include "gpumem/gpumem.h"

#include "estimate_helpers.h"

namespace {

using json = nlohmann::json;

using gpumem::test::kLlama8B;
using gpumem::test::run;

// A run of the class a single-GPU LoRA run with torchtune falls in, with this ratio.
json lora_run(const std::string& id, double ratio, const std::string& key = "") {
    return {{"id", id},       {"mode", "training"}, {"stack", "torchtune"}, {"method", "lora"}, {"gpus", "single"},
            {"ratio", ratio}, {"key", key}};
}
json inference_run(const std::string& id, double ratio) {
    return {{"id", id},
            {"mode", "inference"},
            {"stack", "transformers"},
            {"method", "inference"},
            {"gpus", "single"},
            {"ratio", ratio},
            {"key", ""}};
}
const json kLora = {{"model", kLlama8B},
                    {"training", {{"method", "lora"}, {"framework", "torchtune"}, {"batch_size", 2}}},
                    {"hardware", {{"gpu", "A100-80GB"}}}};

json with_runs(json scenario, const json& runs) {
    scenario["calibration"] = {{"name", "mine"}, {"hash", "0123456789abcdef"}, {"residuals", runs}};
    return scenario;
}

void expect_sane(const json& r, const std::string& what) {
    const json& b = r["per_gpu"]["band"];
    const double point = r["per_gpu"]["device_total_bytes"].get<double>();
    EXPECT_LE(b["low_bytes"].get<double>(), point) << what;
    EXPECT_GE(b["high_bytes"].get<double>(), point) << what;
    for (const char* k : {"ratio_low", "ratio_high", "oom_share", "expected_coverage"})
        EXPECT_TRUE(b[k].is_number() && std::isfinite(b[k].get<double>())) << what << " " << k;
    EXPECT_GE(b["oom_share"].get<double>(), 0) << what;
    EXPECT_LE(b["oom_share"].get<double>(), 1) << what;
    const std::string v = r["verdict"];
    EXPECT_TRUE(v == "fits" || v == "borderline" || v == "does_not_fit") << what;
    EXPECT_EQ(v == "does_not_fit", !r["fits"].get<bool>()) << what;
}

TEST(Band, ContainsThePointOnEveryKindOfEstimate) {
    const json scenarios[] = {
        kLora,
        {{"model", kLlama8B}, {"training", {{"method", "full"}}}},
        {{"model", kLlama8B}, {"training", {{"method", "qlora"}}}, {"hardware", {{"gpu", "RTX-4090-24GB"}}}},
        {{"model", kLlama8B},
         {"engine", {{"type", "fsdp"}}},
         {"parallelism", {{"data_parallel_size", 8}}},
         {"hardware", {{"num_gpus", 8}}}},
        {{"model", kLlama8B}, {"mode", "inference"}},
        {{"model", kLlama8B}, {"mode", "inference"}, {"inference", {{"engine", "vllm"}}}},
    };
    for (const json& s : scenarios) {
        json r = run(s);
        expect_sane(r, s.dump());
        EXPECT_EQ(r["per_gpu"]["band"]["origin"], "validation");
        EXPECT_GT(r["per_gpu"]["band"]["runs"].get<int>(), 0) << s.dump();
    }
}

TEST(Band, TheShippedRunsAllRead) {
    const auto& doc = gpumem::detail::error_bands_document();
    ASSERT_TRUE(doc.is_object()) << "presets/error_bands.json is not embedded";
    std::vector<gpumem::Issue> issues;
    const auto runs = gpumem::detail::read_band_runs(doc["runs"], "runs", issues);
    EXPECT_TRUE(issues.empty()) << issues.front().field << ": " << issues.front().problem;
    EXPECT_EQ(runs.size(), doc["runs"].size());
    EXPECT_GE(runs.size(), gpumem::detail::kMinBandRuns);
    EXPECT_EQ(gpumem::detail::bundled_band_runs().size(), runs.size());
}

TEST(Band, OrderStatisticsHoldEightyPercent) {
    // 9 runs: min to max holds (9 - 1) / (9 + 1) = 80 %; 19 runs: the 2nd to the 18th, 16 / 20.
    json nine = json::array(), nineteen = json::array();
    for (int i = 0; i < 9; ++i) nine.push_back(lora_run("n" + std::to_string(i), 0.9 + 0.05 * i));
    for (int i = 0; i < 19; ++i) nineteen.push_back(lora_run("m" + std::to_string(i), 0.81 + 0.02 * i));
    json a = run(with_runs(kLora, nine))["per_gpu"]["band"];
    EXPECT_EQ(a["level"], "class");
    EXPECT_EQ(a["runs"], 9);
    EXPECT_DOUBLE_EQ(a["ratio_low"].get<double>(), 0.9);
    EXPECT_DOUBLE_EQ(a["ratio_high"].get<double>(), 1.3);
    EXPECT_DOUBLE_EQ(a["expected_coverage"].get<double>(), 0.8);
    json b = run(with_runs(kLora, nineteen))["per_gpu"]["band"];
    EXPECT_DOUBLE_EQ(b["ratio_low"].get<double>(), 0.83);
    EXPECT_DOUBLE_EQ(b["ratio_high"].get<double>(), 1.15);
    EXPECT_DOUBLE_EQ(b["expected_coverage"].get<double>(), 0.8);
    EXPECT_EQ(b["origin"], "calibration");
    EXPECT_FALSE(b["too_few_runs"].get<bool>());
    EXPECT_EQ(b["note"], "");
}

TEST(Band, AClassWithTooFewRunsSaysSoAndFallsBack) {
    json runs = json::array();
    for (int i = 0; i < 3; ++i) runs.push_back(lora_run("own" + std::to_string(i), 1.0));
    // Other training runs of the same method under another framework: the mode x method level.
    for (int i = 0; i < 8; ++i) {
        json r = lora_run("lit" + std::to_string(i), 1.1 + 0.01 * i);
        r["stack"] = "litgpt";
        runs.push_back(r);
    }
    json r = run(with_runs(kLora, runs));
    const json& b = r["per_gpu"]["band"];
    EXPECT_EQ(b["class_runs"], 3);
    EXPECT_EQ(b["level"], "mode_method");
    EXPECT_EQ(b["runs"], 11);
    EXPECT_TRUE(b["too_few_runs"].get<bool>());
    EXPECT_NE(b["note"].get<std::string>().find("too few measured runs like this (3"), std::string::npos) << b["note"];
    expect_sane(r, "fallback");
    // Only inference runs: training falls to all runs, fewer than 9: their whole range, said so.
    json few = json::array({inference_run("i0", 0.9), inference_run("i1", 1.2)});
    json f = run(with_runs(kLora, few))["per_gpu"]["band"];
    EXPECT_EQ(f["level"], "all");
    EXPECT_DOUBLE_EQ(f["ratio_low"].get<double>(), 0.9);
    EXPECT_DOUBLE_EQ(f["ratio_high"].get<double>(), 1.2);
    EXPECT_NE(f["note"].get<std::string>().find("less than 80 %"), std::string::npos) << f["note"];
}

TEST(Band, NoRunsIsSaidAndNeverNaN) {
    gpumem::detail::ScenarioRead read = gpumem::detail::read_scenario(kLora);
    ASSERT_TRUE(read.issues.empty());
    gpumem::detail::Band b = gpumem::detail::error_band(read.scenario, {}, "", 40e9, 80e9);
    EXPECT_EQ(b.level, "none");
    EXPECT_EQ(b.runs, 0u);
    EXPECT_DOUBLE_EQ(b.low, 40e9);
    EXPECT_DOUBLE_EQ(b.high, 40e9);
    EXPECT_DOUBLE_EQ(b.oom_share, 0);
    EXPECT_FALSE(b.note.empty());
    json j = gpumem::detail::band_json(b, gpumem::detail::band_class(read.scenario), 40e9);
    EXPECT_FALSE(j.dump().find("NaN") != std::string::npos || j.dump().find("null") != std::string::npos) << j.dump();
    // A point of zero bytes (nothing to hold) gives a zero band, not a division.
    gpumem::detail::Band z =
        gpumem::detail::error_band(read.scenario, gpumem::detail::bundled_band_runs(), "", 0, 80e9);
    EXPECT_DOUBLE_EQ(z.low, 0);
    EXPECT_DOUBLE_EQ(z.high, 0);
}

TEST(Band, ACaseNeverVouchesForItself) {
    const std::string key = run(kLora)["scenario_key"];
    EXPECT_EQ(key.size(), 16u);
    json runs = json::array();
    for (int i = 0; i < 9; ++i) runs.push_back(lora_run("r" + std::to_string(i), 1.0 + 0.01 * i));
    runs.push_back(lora_run("self", 3.0, key));  // this very scenario, measured far off
    json r = run(with_runs(kLora, runs));
    json b = r["per_gpu"]["band"];
    EXPECT_EQ(b["excluded_self"], 1);
    EXPECT_EQ(b["runs"], 9);
    EXPECT_DOUBLE_EQ(b["ratio_high"].get<double>(), 1.08);
    // The key does not depend on the calibration the scenario carries.
    EXPECT_EQ(r["scenario_key"], key);
}

TEST(Band, ACalibrationNarrowsTheBandToTheUsersRuns) {
    json plain = run(kLora);
    json runs = json::array();
    for (int i = 0; i < 12; ++i) runs.push_back(lora_run("u" + std::to_string(i), 0.99 + 0.002 * i));
    json own = run(with_runs(kLora, runs));
    auto width = [](const json& r) {
        return r["per_gpu"]["band"]["high_bytes"].get<double>() - r["per_gpu"]["band"]["low_bytes"].get<double>();
    };
    EXPECT_LT(width(own), width(plain));
    EXPECT_EQ(own["per_gpu"]["band"]["origin"], "calibration");
    EXPECT_EQ(own["per_gpu"]["device_total_bytes"], plain["per_gpu"]["device_total_bytes"]);
    // The resolved scenario carries the runs: it runs again to the same band.
    json again = run(own["scenario"]);
    EXPECT_EQ(again["per_gpu"]["band"], own["per_gpu"]["band"]);
}

TEST(Band, AppliedCalibrationCarriesItsResiduals) {
    json cal = {{"gpumem_calibration", 1},
                {"gpumem_version", gpumem::version()},
                {"name", "lab"},
                {"overheads", {{"cuda_context_gib", 0.6}}},
                {"records", json::array()},
                {"residuals", json::array({lora_run("a", 1.01)})}};
    json applied = gpumem::apply_calibration(kLora, cal);
    ASSERT_TRUE(applied["ok"].get<bool>()) << applied.dump();
    EXPECT_EQ(applied["scenario"]["calibration"]["residuals"].size(), 1u);
    EXPECT_EQ(applied["scenario"]["calibration"]["hash"], gpumem::calibration_hash(cal));
    json r = run(applied["scenario"]);
    EXPECT_EQ(r["per_gpu"]["band"]["origin"], "calibration");
    EXPECT_EQ(r["per_gpu"]["band"]["runs"], 1);
    // A calibration from before residuals were recorded: the bundled runs.
    cal.erase("residuals");
    json older = run(gpumem::apply_calibration(kLora, cal)["scenario"]);
    EXPECT_EQ(older["per_gpu"]["band"]["origin"], "validation");
}

TEST(Band, CalibrateRecordsLeaveOneOutResiduals) {
    json records = json::array();
    for (int i = 0; i < 3; ++i) {
        json s = kLora;
        s["training"]["batch_size"] = 1 + i;
        json e = run(s);
        const double gib = e["per_gpu"]["peak_allocated_bytes"].get<double>() / 1073741824.0 * (1.0 + 0.02 * i);
        records.push_back(
            {{"id", "r" + std::to_string(i)}, {"scenario", s}, {"measured", {{"metric", "allocated"}, {"gib", gib}}}});
    }
    json c = gpumem::calibrate({{"records", records}});
    ASSERT_TRUE(c["ok"].get<bool>()) << c.dump();
    const json& res = c["calibration"]["residuals"];
    ASSERT_EQ(res.size(), 3u);
    for (const json& r : res) {
        EXPECT_EQ(r["mode"], "training");
        EXPECT_EQ(r["stack"], "torchtune");
        EXPECT_EQ(r["method"], "lora");
        EXPECT_GT(r["ratio"].get<double>(), 0.5);
        EXPECT_LT(r["ratio"].get<double>(), 2);
    }
}

TEST(Band, BadResidualsNameTheField) {
    json bad = gpumem::estimate(with_runs(kLora, json::array({lora_run("x", -1)})));
    ASSERT_FALSE(bad["ok"].get<bool>());
    EXPECT_EQ(bad["errors"][0]["field"], "calibration.residuals[0].ratio");
    json missing = lora_run("y", 1);
    missing.erase("gpus");
    json bad2 = gpumem::estimate(with_runs(kLora, json::array({missing})));
    ASSERT_FALSE(bad2["ok"].get<bool>());
    EXPECT_EQ(bad2["errors"][0]["field"], "calibration.residuals[0].gpus");
    json bad3 = gpumem::estimate(with_runs(kLora, "all of them"));
    ASSERT_FALSE(bad3["ok"].get<bool>());
    EXPECT_EQ(bad3["errors"][0]["field"], "calibration.residuals");
}

TEST(Band, TheSearchFacingBandMatchesTheEstimates) {
    // error_band(s, point, capacity), for a search over candidates: the estimate's band when no run is its own.
    json r = run(kLora);
    gpumem::detail::ScenarioRead read = gpumem::detail::read_scenario(kLora);
    ASSERT_TRUE(read.issues.empty());
    const double point = r["per_gpu"]["device_total_bytes"].get<double>();
    gpumem::detail::Band b =
        gpumem::detail::error_band(read.scenario, point, r["per_gpu"]["capacity_bytes"].get<double>());
    EXPECT_EQ(b.origin, "validation");
    EXPECT_EQ(b.runs, r["per_gpu"]["band"]["runs"].get<std::size_t>());
    EXPECT_NEAR(b.high, r["per_gpu"]["band"]["high_bytes"].get<double>(), 1.0);
}

TEST(Band, AnEngineThatClaimsTheCardIsJudgedByItsClaim) {
    // vLLM claims gpu_memory_utilization of the card: nvidia-smi shows that, the model's error moves the KV pool.
    json r = run({{"model", kLlama8B}, {"mode", "inference"}, {"inference", {{"engine", "vllm"}}}});
    const json& b = r["per_gpu"]["band"];
    EXPECT_EQ(b["low_bytes"], r["per_gpu"]["device_total_bytes"]);
    EXPECT_EQ(b["high_bytes"], r["per_gpu"]["device_total_bytes"]);
    EXPECT_EQ(r["verdict"], "fits");
    EXPECT_TRUE(b["engine_claim"].get<bool>());
    EXPECT_NE(b["note"].get<std::string>().find("claims this share of the card"), std::string::npos) << b["note"];
}

TEST(Band, VerdictHasThreeStates) {
    gpumem::detail::Band b;
    b.low = 70e9;
    b.high = 90e9;
    EXPECT_EQ(gpumem::detail::verdict(b, 80e9, true), "borderline");
    EXPECT_EQ(gpumem::detail::verdict(b, 100e9, true), "fits");
    EXPECT_EQ(gpumem::detail::verdict(b, 60e9, false), "does_not_fit");
    // Through the estimate: runs measured 1.5x the estimate on a card the point fits with 30 % to spare.
    json runs = json::array();
    for (int i = 0; i < 9; ++i) runs.push_back(lora_run("o" + std::to_string(i), 1.5));
    json s = kLora;
    json point = run(s);
    const double gib = point["per_gpu"]["device_total_bytes"].get<double>() / 1073741824.0 / 0.7;
    s["hardware"] = {{"gpu_memory_gb", gib}};
    json r = run(with_runs(s, runs));
    EXPECT_TRUE(r["fits"].get<bool>());
    EXPECT_EQ(r["verdict"], "borderline");
    EXPECT_DOUBLE_EQ(r["per_gpu"]["band"]["oom_share"].get<double>(), 1.0);
}

// The cli fuzzer's find: a custom GPU whose name is not UTF-8 ("H200-8\xd3GB" with a size) made the
// scenario key's JSON dump throw. The key hashes such a name with U+FFFD in its place.
TEST(Band, AGpuNameThatIsNotUtf8StillGetsAKey) {
    json s = kLora;
    s["hardware"] = {{"gpu", "H200-8\xd3GB"}, {"gpu_memory_gb", 48}};
    json r = run(s);
    ASSERT_TRUE(r.value("ok", false)) << r.dump(-1, ' ', false, json::error_handler_t::replace);
    EXPECT_EQ(r["scenario_key"].get<std::string>().size(), 16u);
}

}  // namespace
