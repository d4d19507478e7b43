// Calibration (gpumem.h, calibrate()): the runtime overheads fitted to measured peaks. Only terms
// that are overheads of the runtime, not physics, are fitted, and each enters a peak linearly (an
// added constant, or a share of what is allocated), so the fit works on each record's exact linear
// response, measured by estimate() itself, and every figure it reports is a real estimate.

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <string>
#include <vector>

#include "calibrate/calibration.h"
#include "gpumem/gpumem.h"

namespace gpumem {

namespace {

using json = nlohmann::json;

// The overheads a calibration fits, with the range a fit may move them in. Each enters a peak as an
// added constant (the CUDA context, NCCL's and CUDA graphs' buffers) or as a share of what is
// allocated (the caching allocator's slack).
struct Fittable {
    const char* name;
    double low, high;
};
const Fittable kFittable[] = {
    {"cuda_context_gib", 0.0, 4.0},
    {"allocator_fragmentation", 0.0, 0.5},
    {"nccl_buffers_gib", 0.0, 4.0},
    {"vllm_cuda_graph_gib", 0.0, 4.0},
};

// The estimate's figure a record measured.
const char* figure_of(const std::string& metric) {
    if (metric == "reserved") return "peak_reserved_bytes";
    if (metric == "device_total") return "device_total_bytes";
    return "peak_allocated_bytes";  // "allocated", and "unknown": the smallest of a source's peaks
}

// The class a record is scored in, as the validation benchmark groups them.
std::string class_of(const json& resolved) {
    if (resolved["mode"] == "inference") return "inference";
    if (resolved["hardware"]["num_gpus"].get<std::uint64_t>() > 1) return "sharded";
    const std::string method = resolved["training"]["method"];
    return method == "qlora" || method == "lora" ? method : "full";
}

struct Record {
    std::string id, source, cls;
    json scenario;        // as given
    double measured = 0;  // bytes
    const char* figure = "";
    double base = 0;            // the estimate with the fitted overheads at 0
    std::vector<double> slope;  // d figure / d overhead, per fittable
};

// The scenario with these overheads, where it does not give its own (a record that measured its
// CUDA context keeps it: the fit does not move it for that record).
json scenario_with(const json& scenario, const std::map<std::string, double>& overheads) {
    json s = scenario;
    if (!s["overheads"].is_object()) s["overheads"] = json::object();
    for (const auto& [k, v] : overheads)
        if (!scenario.contains("overheads") || !scenario["overheads"].is_object() || !scenario["overheads"].contains(k))
            s["overheads"][k] = v;
    return s;
}

// The figure a record's estimate gives with these overheads; NaN when the estimate fails.
double predict(const Record& r, const std::map<std::string, double>& overheads) {
    json e = estimate(scenario_with(r.scenario, overheads));
    if (!e.value("ok", false)) return std::nan("");
    return e["per_gpu"][r.figure].get<double>();
}

double linear(const Record& r, const std::vector<double>& theta) {
    double v = r.base;
    for (std::size_t k = 0; k < theta.size(); ++k) v += r.slope[k] * theta[k];
    return v;
}

// The value of theta[k] in [low, high] that minimises sum |linear(r) / measured - 1| with the
// others held: a weighted median of each record's zero point (exact for one coordinate of an L1 fit).
double best_coordinate(const std::vector<const Record*>& rs, std::vector<double> theta, std::size_t k, double low,
                       double high) {
    std::vector<std::pair<double, double>> points;  // (zero point, weight)
    for (const Record* r : rs) {
        const double a = r->slope[k] / r->measured;
        if (a == 0) continue;
        theta[k] = 0;
        const double rest = linear(*r, theta) / r->measured - 1;
        points.push_back({-rest / a, std::fabs(a)});
    }
    if (points.empty()) return std::clamp(0.0, low, high);
    std::sort(points.begin(), points.end());
    const double total =
        std::accumulate(points.begin(), points.end(), 0.0, [](double s, auto& p) { return s + p.second; });
    double run = 0;
    for (const auto& [x, w] : points) {
        run += w;
        if (run >= total / 2) return std::clamp(x, low, high);
    }
    return std::clamp(points.back().first, low, high);
}

// Coordinate descent to the L1 fit over the records (a few sweeps reach the fixed point: each
// coordinate's step is exact).
std::vector<double> fit_overheads(const std::vector<const Record*>& rs, const std::vector<std::size_t>& which,
                                  std::vector<double> theta) {
    for (int sweep = 0; sweep < 20; ++sweep) {
        std::vector<double> before = theta;
        for (std::size_t k : which) theta[k] = best_coordinate(rs, theta, k, kFittable[k].low, kFittable[k].high);
        if (before == theta) break;
    }
    return theta;
}

double quantile(std::vector<double> xs, double q) {
    if (xs.empty()) return std::nan("");
    std::sort(xs.begin(), xs.end());
    const double pos = (static_cast<double>(xs.size()) - 1) * q;
    const std::size_t lo = static_cast<std::size_t>(std::floor(pos)), hi = static_cast<std::size_t>(std::ceil(pos));
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo);
}

// {"n", "median_pct", "p90_pct", "within_10_pct"} of absolute percentage errors.
json summary(const std::vector<double>& errors) {
    if (errors.empty()) return {{"n", 0}};
    const auto within = std::count_if(errors.begin(), errors.end(), [](double e) { return e <= 10; });
    return {{"n", errors.size()},
            {"median_pct", quantile(errors, 0.5)},
            {"p90_pct", quantile(errors, 0.9)},
            {"within_10", within}};
}

json summaries(const std::vector<Record>& records, const std::vector<double>& errors) {
    std::map<std::string, std::vector<double>> by_class;
    for (std::size_t i = 0; i < records.size(); ++i) {
        by_class[records[i].cls].push_back(errors[i]);
        by_class["all"].push_back(errors[i]);
    }
    json out = json::object();
    for (const auto& [cls, es] : by_class) out[cls] = summary(es);
    return out;
}

// Reads the records; an issue per record that cannot be used, with its index ("index") and id.
std::vector<Record> read_records(const json& list, json& errors) {
    std::vector<Record> out;
    for (std::size_t i = 0; i < list.size(); ++i) {
        const json& r = list[i];
        const std::string where = "records[" + std::to_string(i) + "]";
        auto refuse = [&](const std::string& field, const std::string& problem) {
            json issue = {{"field", where + (field.empty() ? "" : "." + field)},
                          {"problem", problem},
                          {"value", ""},
                          {"message", where + (field.empty() ? "" : "." + field) + ": " + problem},
                          {"index", i}};
            if (r.is_object() && r.contains("id") && r["id"].is_string()) issue["id"] = r["id"];
            errors.push_back(std::move(issue));
        };
        if (!r.is_object()) {
            refuse("", "must be an object: {\"id\", \"scenario\", \"measured\": {\"metric\", \"gib\"}}");
            continue;
        }
        if (!r.contains("scenario") || !r["scenario"].is_object()) {
            refuse("scenario", "is required (an object)");
            continue;
        }
        const json& m = r.value("measured", json());
        if (!m.is_object() || !m.contains("gib") || !m["gib"].is_number() || m["gib"].get<double>() <= 0) {
            refuse("measured.gib", "is required: the measured peak in GiB, a positive number");
            continue;
        }
        const std::string metric = m.value("metric", std::string("unknown"));
        if (metric != "allocated" && metric != "reserved" && metric != "device_total" && metric != "unknown") {
            refuse("measured.metric", "must be one of allocated, reserved, device_total, unknown");
            continue;
        }
        json e = estimate(r["scenario"]);
        if (!e.value("ok", false)) {
            refuse("scenario", "is not a valid scenario: " + e["errors"][0]["message"].get<std::string>());
            continue;
        }
        Record rec;
        rec.id = r.value("id", where);
        rec.source = r.value("source", std::string());
        rec.cls = class_of(e["scenario"]);
        rec.scenario = r["scenario"];
        rec.measured = m["gib"].get<double>() * 1073741824.0;
        rec.figure = figure_of(metric);
        out.push_back(std::move(rec));
    }
    return out;
}

// Each record's figure at zero overheads and its exact slope in each (estimate() at 0 and at 1 unit).
void measure_response(std::vector<Record>& records) {
    std::map<std::string, double> zero;
    for (const Fittable& f : kFittable) zero[f.name] = 0;
    for (Record& r : records) {
        r.base = predict(r, zero);
        for (const Fittable& f : kFittable) {
            auto one = zero;
            one[f.name] = f.high / 4;  // inside the range: linear there
            r.slope.push_back((predict(r, one) - r.base) / (f.high / 4));
        }
    }
}

// The records' errors with the defaults and with a calibration's overheads (no fit): how a
// calibration made elsewhere does on these records.
json score(const std::vector<Record>& records, const json& calibration) {
    json check = apply_calibration(json::object(), calibration);
    if (!check.value("ok", false)) return check;
    std::map<std::string, double> overheads;
    for (auto& [k, v] : calibration["overheads"].items())
        if (v.is_number()) overheads[k] = v.get<double>();
    std::vector<double> before, with;
    for (const Record& r : records) {
        before.push_back(std::fabs(predict(r, {}) / r.measured - 1) * 100);
        with.push_back(std::fabs(predict(r, overheads) / r.measured - 1) * 100);
    }
    return {{"ok", true},
            {"calibration", check["calibration"]},
            {"report", {{"before", summaries(records, before)}, {"with_calibration", summaries(records, with)}}}};
}

// The fit over usable records: the calibration and its report (calibrate()'s result without "skipped").
json fit_calibration(std::vector<Record>& records, const json& request) {
    measure_response(records);

    // The overheads to fit: those some record's figure depends on.
    std::vector<std::size_t> which;
    for (std::size_t k = 0; k < std::size(kFittable); ++k)
        if (std::any_of(records.begin(), records.end(), [k](const Record& r) { return r.slope[k] != 0; }))
            which.push_back(k);

    // The defaults, as the scenarios resolve them (the first record's: they are the same for all).
    json first = estimate(records[0].scenario)["scenario"]["overheads"];
    std::vector<double> defaults;
    for (const Fittable& f : kFittable) defaults.push_back(first[f.name].get<double>());

    std::vector<const Record*> all;
    for (const Record& r : records) all.push_back(&r);
    const std::vector<double> theta = fit_overheads(all, which, defaults);
    std::map<std::string, double> fitted;
    for (std::size_t k : which) fitted[kFittable[k].name] = theta[k];

    // Errors before (the defaults), in-sample after, and leave-one-out: each record predicted by a
    // fit on the others. Every figure is a real estimate.
    std::vector<double> before, after, loo;
    json residuals = json::array();  // the band's runs: measured / the leave-one-out estimate, by class
    for (std::size_t i = 0; i < records.size(); ++i) {
        const Record& r = records[i];
        auto err = [&](double predicted) { return std::fabs(predicted / r.measured - 1) * 100; };
        before.push_back(err(predict(r, {})));
        after.push_back(err(predict(r, fitted)));
        std::vector<const Record*> others;
        for (std::size_t j = 0; j < records.size(); ++j)
            if (j != i) others.push_back(&records[j]);
        const std::vector<double> t = fit_overheads(others, which, defaults);
        std::map<std::string, double> without;
        for (std::size_t k : which) without[kFittable[k].name] = t[k];
        const double predicted = predict(r, without);
        loo.push_back(err(predicted));
        // The class and key as the estimate with this calibration gives them (apply_calibration's scenario).
        const json e = estimate(scenario_with(r.scenario, fitted));
        if (e.value("ok", false) && predicted > 0 && std::isfinite(predicted)) {
            const json& band = e["per_gpu"]["band"];
            json run = band["class"];
            run["id"] = r.id;
            run["ratio"] = std::round(r.measured / predicted * 1e4) / 1e4;
            run["key"] = e["scenario_key"];
            residuals.push_back(run);
        }
    }

    json provenance = json::array();
    for (const Record& r : records) provenance.push_back({{"id", r.id}, {"source", r.source}, {"class", r.cls}});
    json overheads = json::object();
    for (const auto& [k, v] : fitted) overheads[k] = v;
    json calibration = {{"gpumem_calibration", detail::kCalibrationFormat},
                        {"gpumem_version", version()},
                        {"name", request.value("name", std::string("calibration"))},
                        {"overheads", overheads},
                        {"records", provenance},
                        {"residuals", residuals}};
    return {{"ok", true},
            {"calibration", calibration},
            {"report",
             {{"before", summaries(records, before)},
              {"after", summaries(records, after)},
              {"leave_one_out", summaries(records, loo)}}}};
}

}  // namespace

json calibrate(const json& request) {
    json errors = json::array();
    if (!request.is_object() || !request.contains("records") || !request["records"].is_array() ||
        request["records"].empty())
        return {{"ok", false},
                {"errors",
                 {{{"field", "records"},
                   {"problem", "is required: a list of measurement records"},
                   {"value", ""},
                   {"message", "records: is required: a list of measurement records"}}}}};
    // A record that cannot be used is skipped and reported, the rest calibrate; with "strict" any
    // such record fails the request, and so does a request with no usable record left.
    std::vector<Record> records = read_records(request["records"], errors);
    const bool strict = request.contains("strict") && request["strict"].is_boolean() && request["strict"].get<bool>();
    if (!errors.empty() && (strict || records.empty())) {
        if (!strict)
            errors.push_back({{"field", "records"},
                              {"problem", "no record can be used (each is listed above)"},
                              {"value", ""},
                              {"message", "records: no record can be used (each is listed above)"}});
        return {{"ok", false}, {"errors", errors}};
    }
    json result =
        request.contains("calibration") ? score(records, request["calibration"]) : fit_calibration(records, request);
    if (result.value("ok", false)) result["skipped"] = errors;
    return result;
}

}  // namespace gpumem
