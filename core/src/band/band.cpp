// The error band (band.h): measured / estimated of the runs of the scenario's class, their 80 % interval by
// order statistics, and the verdict against the card.

#include "band/band.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>

namespace gpumem::detail {

namespace {

std::uint64_t whole(double b) { return b <= 0 ? 0 : static_cast<std::uint64_t>(std::llround(b)); }
double rounded(double v, double per) { return std::round(v * per) / per; }

std::string class_label(const BandRun& c) {
    return c.mode + ", " + (c.stack.empty() ? "any stack" : c.stack) + ", " + (c.method.empty() ? "-" : c.method) +
           ", " + (c.gpus == "multi" ? "multi-GPU" : "1 GPU");
}

// The levels from the most specific: each a test of a run against the scenario's class.
struct Level {
    const char* name;
    const char* text;
    bool (*matches)(const BandRun& run, const BandRun& cls);
};
const Level kLevels[] = {
    {"class", "this class",
     [](const BandRun& r, const BandRun& c) {
         return r.mode == c.mode && r.stack == c.stack && r.method == c.method && r.gpus == c.gpus;
     }},
    {"mode_method", "the same mode and method",
     [](const BandRun& r, const BandRun& c) { return r.mode == c.mode && r.method == c.method; }},
    {"mode", "the same mode", [](const BandRun& r, const BandRun& c) { return r.mode == c.mode; }},
    {"all", "all runs", [](const BandRun&, const BandRun&) { return true; }},
};

}  // namespace

const std::vector<BandRun>& bundled_band_runs() {
    static const std::vector<BandRun> runs = [] {
        const json& doc = error_bands_document();
        std::vector<Issue> ignored;  // the shipped file is checked by the tests (band_test.cpp)
        return doc.is_object() && doc.contains("runs") ? read_band_runs(doc["runs"], "runs", ignored)
                                                       : std::vector<BandRun>{};
    }();
    return runs;
}

BandRun band_class(const Scenario& s) {
    BandRun c;
    c.mode = name(s.mode);
    if (s.mode == Mode::Training) {
        c.stack = name(s.training.framework);
        c.method = name(s.training.method);
    } else {
        c.stack = name(s.inference.engine);
        c.method = "inference";
    }
    c.gpus = s.hardware.num_gpus > 1 ? "multi" : "single";
    return c;
}

std::string scenario_key(const json& resolved) {
    json doc = resolved;
    if (doc.is_object()) doc.erase("calibration");
    std::uint64_t h = 1469598103934665603ull;  // FNV-1a, 64-bit
    // A name that is not UTF-8 (a custom GPU typed with stray bytes) is hashed with U+FFFD in its place.
    for (unsigned char c : doc.dump(-1, ' ', false, json::error_handler_t::replace)) {
        h ^= c;
        h *= 1099511628211ull;
    }
    char text[17];
    std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(h));
    return text;
}

Band error_band(const Scenario& s, const std::vector<BandRun>& runs, const std::string& key, double point,
                double capacity) {
    Band b;
    b.low = b.high = point;
    const BandRun cls = band_class(s);
    b.label = class_label(cls);
    std::vector<const BandRun*> usable;
    for (const BandRun& r : runs) {
        if (!key.empty() && r.key == key) ++b.excluded;  // this very scenario: it does not vouch for itself
        else usable.push_back(&r);
    }
    std::vector<double> ratios;
    const char* level_text = "";
    for (std::size_t i = 0; i < std::size(kLevels); ++i) {
        ratios.clear();
        for (const BandRun* r : usable)
            if (kLevels[i].matches(*r, cls)) ratios.push_back(r->ratio);
        if (i == 0) b.class_runs = ratios.size();
        b.level = kLevels[i].name;
        level_text = kLevels[i].text;
        if (ratios.size() >= kMinBandRuns) break;
    }
    b.runs = ratios.size();
    if (ratios.empty()) {
        b.level = "none";
        b.note = "no measured runs to draw a band from: the band is the point alone";
        return b;
    }
    if (b.level != std::string("class")) {
        b.note = "too few measured runs like this (" + std::to_string(b.class_runs) + "; " +
                 std::to_string(kMinBandRuns) + " make an 80 % interval): the band of " + level_text + " (" +
                 std::to_string(b.runs) + " runs)";
        if (b.runs < kMinBandRuns)
            b.note +=
                ", fewer than " + std::to_string(kMinBandRuns) + ": their whole range, which holds less than 80 %";
    }
    std::sort(ratios.begin(), ratios.end());
    const std::size_t n = ratios.size();
    // The k-th smallest to the k-th largest holds (n + 1 - 2k) / (n + 1) of new runs: the largest k that
    // keeps that at 80 % or more, k = floor((n + 1) / 10) (10 % left out at each end), and at least 1 (min to
    // max) when n is below kMinBandRuns. In integers: no rounding can move it.
    const std::size_t k = std::max<std::size_t>(1, (n + 1) / 10);
    b.ratio_low = ratios[k - 1];
    b.ratio_high = ratios[n - k];
    b.expected_coverage = n < 2 ? 0 : static_cast<double>(n + 1 - 2 * k) / static_cast<double>(n + 1);
    b.low = std::min(point, point * b.ratio_low);
    b.high = std::max(point, point * b.ratio_high);
    std::size_t over = 0;
    for (double r : ratios)
        if (r * point > capacity) ++over;
    b.oom_share = static_cast<double>(over) / static_cast<double>(n);
    return b;
}

const std::vector<BandRun>& band_runs(const Scenario& s, std::string* origin) {
    const bool own = s.calibration && !s.calibration->runs.empty();
    if (origin) *origin = own ? "calibration" : "validation";
    return own ? s.calibration->runs : bundled_band_runs();
}

Band error_band(const Scenario& s, double point, double capacity) {
    std::string origin;
    const std::vector<BandRun>& runs = band_runs(s, &origin);
    Band b = error_band(s, runs, "", point, capacity);
    b.origin = origin;
    return b;
}

void pin_to_claim(Band& b, double point, double capacity) {
    b.engine_claim = true;
    b.low = b.high = point;
    b.ratio_low = b.ratio_high = 1;
    b.oom_share = point > capacity ? 1 : 0;
    b.note =
        "the engine claims this share of the card at start-up: nvidia-smi shows the claim whatever the "
        "estimate's error, which moves its KV pool instead" +
        (b.note.empty() ? std::string() : "; " + b.note);
}

json band_json(const Band& b, const BandRun& cls, double point) {
    return {{"figure", "device_total_bytes"},
            {"point_bytes", whole(point)},
            {"low_bytes", whole(b.low)},
            {"high_bytes", whole(b.high)},
            {"ratio_low", b.ratio_low},
            {"ratio_high", b.ratio_high},
            {"coverage", kBandCoverage},
            {"expected_coverage", rounded(b.expected_coverage, 1e4)},
            {"runs", b.runs},
            {"class", {{"mode", cls.mode}, {"stack", cls.stack}, {"method", cls.method}, {"gpus", cls.gpus}}},
            {"class_label", b.label},
            {"class_runs", b.class_runs},
            {"level", b.level},
            {"too_few_runs", b.level != "class"},
            {"excluded_self", b.excluded},
            {"origin", b.origin},
            {"oom_share", rounded(b.oom_share, 1e4)},
            {"engine_claim", b.engine_claim},
            {"note", b.note}};
}

std::string verdict(const Band& b, double capacity, bool point_fits) {
    if (!point_fits) return "does_not_fit";
    return b.high > capacity ? "borderline" : "fits";
}

}  // namespace gpumem::detail
