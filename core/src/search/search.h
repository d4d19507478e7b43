// The one search behind plan(), fit() and maxfit() (gpumem.h): a scenario read once per variant
// (an engine section and the fields a caller changes), then every layout, checkpointing mode and
// micro-batch of a cluster set on it and evaluated by the memory model (evaluate() in
// memory/estimate.cpp, notes off) and, where it fits, timed by the step-time model
// (throughput/step_time.h). No second model of memory: tests/core/planner_test.cpp checks the
// search's figures against estimate() byte for byte.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "scenario/layout.h"
#include "throughput/step_time.h"

namespace gpumem::detail {

// How much a change alters the run, least first. The order is a judgement, stated so users can
// weigh it: free rewrites of the same computation, then slower steps (layout, sharding, offload,
// recomputation, smaller micro-batches), then different numerics of the optimizer or weights, then a
// different batch or data, then more or other hardware, then a different fine-tuning method or
// model precision.
enum class Tier { SameMath, Slower, Numerics, Data, Hardware, Method };
const char* tier_name(Tier t);

// The engines and sharding a training search tries (each read once) and the checkpointing modes.
const std::vector<EngineVariant>& engine_variants();
inline constexpr Checkpointing kCheckpointing[] = {Checkpointing::None, Checkpointing::Selective, Checkpointing::Full};
json engine_json(const EngineVariant& v);
EngineVariant engine_of(const Scenario& s);
bool same_engine(const EngineVariant& a, const EngineVariant& b);

// The divisors of n up to cap, ascending.
std::vector<std::uint64_t> divisors(std::uint64_t n, std::uint64_t cap);
// Bytes as a whole number (0 for a negative or non-finite figure).
std::uint64_t round_bytes(double b);

// The max-fit solver: the largest value in [1, maximum] of a size field at which the scenario fits,
// the boundary checked both sides. Memory grows with every size field.
struct Solver {
    const char* field;      // scenario field
    std::uint64_t maximum;  // the reader's upper limit for it (scenario.cpp)
    bool is_length;         // sets Layout::seq_len (else Layout::batch_size)
};
// `top`: a value fits when the device total times `top` fits (band_top_factor(); 1: the estimate).
json solve(Scenario& s, const Layout& base, const Solver& solver, int& evaluations, double top = 1);

// What a search covers: a cluster of `num_gpus` cards, the training global batch it keeps, and the
// host memory per node a candidate may use.
struct SearchRequest {
    std::uint64_t num_gpus = 1, gpus_per_node = 1, global_batch = 0;
    double host_ram_bytes = 0;  // per node; 0: not limited
    Constants constants;
    // A candidate fits only when the top of its error band does (band/band.h: the measured runs of its
    // class), not just its estimate: fit()'s default, so that what it suggests is not borderline.
    bool band_top = false;
};

// One read scenario of the search: an engine section (training) and the caller's set of changed
// fields (`knobs`, an index into the caller's own list; 0 = the scenario's fields as given).
struct Variant {
    std::optional<EngineVariant> engine;
    std::size_t knobs = 0;
    Scenario s;
    // The factor on a candidate's device total that must fit the card: the top of its class's error
    // band over the point (SearchRequest::band_top; 1 otherwise, and for an engine that claims its share
    // of the card). One class per variant: mode, framework or engine, method and GPU count.
    double top = 1;
};
// The factor of a scenario's error band's top over its point (at least 1; 1 for an engine that claims
// its share of the card up front).
double band_top_factor(const Scenario& s);

// One fitting candidate, small and without pointers into temporaries.
struct Candidate {
    double time = 0;
    Layout layout;
    std::size_t variant = 0;  // index into Search::variants
    std::size_t checkpointing = 0;
    double device = 0, host_per_node = 0, max_sequences = 0;
    StepTime step;
};
// Deterministic order: step time, then the layout that splits the model least, then more memory left.
bool before(const Candidate& x, const Candidate& y);

// `doc` (a scenario document) with a candidate's layout written in: parallelism, hardware.num_gpus,
// and for training the engine section, micro-batch, accumulation and checkpointing (inference: the
// batch).
json with_layout(json doc, const Candidate& c, const Variant& v);

class Search {
public:
    Search(const SearchRequest& r, const Scenario& base);

    // Reads `doc` (a scenario document with the caller's changes laid in) once per engine variant
    // (training; the reader resolves the precision from the engine) or once (inference), tagged
    // with `knobs`. The document's parallelism is the search's to set. False when the reader
    // refuses every read.
    bool add_variants(const json& doc, std::size_t knobs);
    // Every layout of the cluster the divisibility rules allow, with every variant, checkpointing
    // mode and micro-batch; the fitting ones land in `fitting`.
    void run();

    const SearchRequest& req;
    const Scenario& base;
    const Cluster k;
    const ModelFigures mf;
    const bool training;
    const std::uint64_t N, G, seq;
    std::vector<Variant> variants;
    std::vector<Candidate> fitting;
    std::uint64_t candidates = 0, evaluations = 0, host_limited = 0, batch_indivisible = 0, batch_unsplittable = 0;

private:
    // Whether a candidate's figures fit: the estimate, and its band's top by the variant's factor.
    bool fits(const Scenario& s, const Figures& f, double top) const;
    const std::vector<std::uint64_t>& micro_batches(std::uint64_t share);
    void try_inference_layout(Layout l);
    void try_training_variant(Layout l, std::size_t vi, const std::vector<std::uint64_t>& micro);
    void try_training_layout(const Layout& l);
    std::map<std::uint64_t, std::vector<std::uint64_t>> micro_cache_;  // per share of the global batch
};

}  // namespace gpumem::detail
