// The error band on an estimate: the interval that held 80 % of the measured runs of its class
// (docs/memory-model.md, "Error band"), and the three-state verdict it gives.
#pragma once

#include <string>
#include <vector>

#include "scenario/scenario.h"

namespace gpumem::detail {

// The fewest runs a class needs for its own band. With n runs sorted, a new run of the same class falls
// between the k-th smallest and the k-th largest with probability (n + 1 - 2k) / (n + 1) (order statistics of
// exchangeable values: each of the n + 1 ranks is equally likely), so the widest interval, min to max,
// holds 80 % only from n = 9: (9 - 1) / (9 + 1) = 0.8. With fewer the class has no 80 % interval at all.
constexpr std::size_t kMinBandRuns = 9;
constexpr double kBandCoverage = 0.8;

// The bundled runs: presets/error_bands.json (tests/bench/bands.mjs --write makes it from the validation set).
const std::vector<BandRun>& bundled_band_runs();

// A run's class for this scenario: mode, framework (training) or engine (inference), method, single or multi GPU.
BandRun band_class(const Scenario& s);

// A resolved scenario's identity, 16 hex digits of FNV-1a over its JSON without "calibration": a validation
// case's estimate has the key its run carries, so the band leaves that run out (leave-one-out).
std::string scenario_key(const json& resolved);

// The band: which runs (the calibration's when the scenario has one, else the bundled), the class they fall in
// (the most specific level with kMinBandRuns, then mode x method, mode, all), the order statistics that hold
// kBandCoverage, and the interval over `point` (the device total), widened to contain it. `capacity`: the
// card; the share of the class's runs that would have run out of memory is the share with ratio x point over it.
struct Band {
    double low = 0, high = 0;              // bytes
    double ratio_low = 1, ratio_high = 1;  // measured / estimated at the interval's ends (before widening)
    double expected_coverage = 0;          // (n + 1 - 2k) / (n + 1), 0 with fewer than 2 runs
    double oom_share = 0;                  // of the runs used
    std::size_t runs = 0;                  // runs used
    std::size_t class_runs = 0;            // runs of the most specific class
    std::size_t excluded = 0;              // runs left out because they are this scenario (leave-one-out)
    std::string level;                     // "class", "mode_method", "mode", "all", "none"
    std::string label;                     // the class as text: "training, torchtune, lora, 1 GPU"
    std::string origin;                    // "validation" | "calibration"
    std::string note;                      // why a coarser class, or no band
    bool engine_claim = false;             // pinned to an engine\'s claim (pin_to_claim)
};
Band error_band(const Scenario& s, const std::vector<BandRun>& runs, const std::string& key, double point,
                double capacity);

// The same from the runs the scenario draws on (its calibration's when it carries some, else the bundled), with
// origin set and nothing left out: what a search over candidate scenarios calls (fit keeps a change whose
// band's top, `high`, fits). Cheap: no JSON, a pass over the runs.
Band error_band(const Scenario& s, double point, double capacity);
// An engine that claims its share of the card at start-up (vLLM, SGLang, TGI, TensorRT-LLM: Breakdown::claimed)
// shows that claim in nvidia-smi whatever the model's error, which moves its KV pool instead: the band on its
// device total is the point (ratios 1), said in the note; the point's fit decides.
void pin_to_claim(Band& b, double point, double capacity);
// The runs a scenario's band is drawn from, and their origin ("calibration" | "validation").
const std::vector<BandRun>& band_runs(const Scenario& s, std::string* origin = nullptr);

// The result's "per_gpu.band" and "verdict" ("fits": the band's top fits; "borderline": the point fits, the top
// does not; "does_not_fit"). `point_fits`: the point's
// verdict (the card and the engine's own budget).
json band_json(const Band& b, const BandRun& cls, double point);
std::string verdict(const Band& b, double capacity, bool point_fits);

}  // namespace gpumem::detail
