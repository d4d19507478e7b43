// The one search behind plan(), fit() and maxfit(): see search.h.

#include "search/search.h"

#include "band/band.h"

#include <algorithm>
#include <cmath>
#include <tuple>

namespace gpumem::detail {

const char* tier_name(Tier t) {
    switch (t) {
        case Tier::SameMath:
            return "same_math";
        case Tier::Slower:
            return "slower";
        case Tier::Numerics:
            return "numerics";
        case Tier::Data:
            return "data";
        case Tier::Hardware:
            return "hardware";
        case Tier::Method:
            return "method";
    }
    return "";
}

const std::vector<EngineVariant>& engine_variants() {
    static const std::vector<EngineVariant> kVariants = {
        {EngineType::None, 0, FsdpSharding::FullShard, Offload::None, Offload::None},  // one GPU of data parallelism
        {EngineType::Ddp, 0, FsdpSharding::FullShard, Offload::None, Offload::None},
        {EngineType::DeepSpeed, 1, FsdpSharding::FullShard, Offload::None, Offload::None},
        {EngineType::DeepSpeed, 2, FsdpSharding::FullShard, Offload::None, Offload::None},
        {EngineType::DeepSpeed, 3, FsdpSharding::FullShard, Offload::None, Offload::None},
        {EngineType::DeepSpeed, 2, FsdpSharding::FullShard, Offload::Cpu, Offload::None},
        {EngineType::DeepSpeed, 3, FsdpSharding::FullShard, Offload::Cpu, Offload::None},
        {EngineType::DeepSpeed, 3, FsdpSharding::FullShard, Offload::Cpu, Offload::Cpu},
        {EngineType::Fsdp, 0, FsdpSharding::FullShard, Offload::None, Offload::None},
        {EngineType::Fsdp, 0, FsdpSharding::ShardGradOp, Offload::None, Offload::None},
        {EngineType::Fsdp, 0, FsdpSharding::HybridShard, Offload::None, Offload::None},
        {EngineType::Fsdp, 0, FsdpSharding::FullShard, Offload::Cpu,
         Offload::Cpu},  // CPUOffload(offload_params=True): both
        {EngineType::Megatron, 0, FsdpSharding::FullShard, Offload::None,
         Offload::None},  // distributed optimizer; the only one with TP/PP/CP/EP
    };
    return kVariants;
}

// The scenario's engine section of a variant.
json engine_json(const EngineVariant& v) {
    return {{"type", name(v.type)},
            {"zero_stage", v.zero},
            {"fsdp_sharding", name(v.fsdp)},
            {"offload_optimizer", name(v.offload_optimizer)},
            {"offload_param", name(v.offload_param)}};
}

EngineVariant engine_of(const Scenario& s) {
    return {s.engine.type, s.engine.zero_stage, s.engine.fsdp_sharding, s.engine.offload_optimizer,
            s.engine.offload_param};
}

bool same_engine(const EngineVariant& a, const EngineVariant& b) {
    return a.type == b.type && a.zero == b.zero && a.fsdp == b.fsdp && a.offload_optimizer == b.offload_optimizer &&
           a.offload_param == b.offload_param;
}

// The divisors of n up to cap, ascending: pairs (d, n / d) for d up to sqrt(n), so a global batch
// of 2^40 sequences costs 2^20 steps, not 2^40.
std::vector<std::uint64_t> divisors(std::uint64_t n, std::uint64_t cap) {
    std::vector<std::uint64_t> low, high;
    for (std::uint64_t d = 1; d <= n / d && d <= cap; ++d) {
        if (n % d) continue;
        low.push_back(d);
        if (d != n / d && n / d <= cap) high.push_back(n / d);
    }
    low.insert(low.end(), high.rbegin(), high.rend());
    return low;
}

std::uint64_t round_bytes(double b) {
    return b <= 0 || !std::isfinite(b) ? 0 : static_cast<std::uint64_t>(std::llround(std::min(b, 1.8e19)));
}

// The largest value in [1, maximum] at which the scenario fits, the boundary checked both sides.
json solve(Scenario& s, const Layout& base, const Solver& solver, int& evaluations, double top) {
    auto device_at = [&](std::uint64_t v, bool& fits) {
        Layout l = base;
        (solver.is_length ? l.seq_len : l.batch_size) = v;
        detail::apply_layout(s, l);
        detail::Figures f = detail::evaluate(s);
        ++evaluations;
        fits = f.fits && f.device * top <= static_cast<double>(s.hardware.gpu_memory_bytes);
        return f.device;
    };
    bool fits = false;
    double device_one = device_at(1, fits);
    json out = {{"field", solver.field}, {"field_maximum", solver.maximum}};
    if (!fits) {
        out["value"] = 0;
        out["device_total_bytes"] = nullptr;
        out["next_device_total_bytes"] = round_bytes(device_one);
        out["limited_by"] = "does_not_fit";
        detail::apply_layout(s, base);
        return out;
    }
    // Memory grows with every size field: double until it no longer fits, then bisect.
    std::uint64_t lo = 1, hi = 2;
    while (hi <= solver.maximum && (device_at(hi, fits), fits)) {
        lo = hi;
        hi *= 2;
    }
    hi = std::min(hi, solver.maximum + 1);
    while (hi - lo > 1) {
        std::uint64_t mid = lo + (hi - lo) / 2;
        device_at(mid, fits);
        (fits ? lo : hi) = mid;
    }
    double at = device_at(lo, fits);
    out["value"] = lo;
    out["device_total_bytes"] = round_bytes(at);
    if (lo >= solver.maximum) {
        out["next_device_total_bytes"] = nullptr;
        out["limited_by"] = "field_maximum";
    } else {
        double next = device_at(lo + 1, fits);
        out["next_device_total_bytes"] = round_bytes(next);
        out["limited_by"] = "memory";
    }
    detail::apply_layout(s, base);
    return out;
}

// Deterministic order: step time, then the layout's fields (smaller first).
bool before(const Candidate& x, const Candidate& y) {
    if (x.time != y.time) return x.time < y.time;
    // Equal step times (communication hidden behind compute): the layout that splits the model
    // least first (plain data parallelism is the simplest to run), then the one with more memory left.
    auto key = [](const Candidate& c) {
        return std::make_tuple(c.layout.tp * c.layout.pp * c.layout.cp * c.layout.ep, c.device, c.layout.dp,
                               c.layout.tp, c.layout.pp, c.layout.cp, c.layout.ep, c.variant, c.checkpointing,
                               c.layout.batch_size, c.layout.grad_accum);
    };
    return key(x) < key(y);
}

json with_layout(json doc, const Candidate& c, const Variant& v) {
    const Layout& l = c.layout;
    doc["parallelism"] = {{"data_parallel_size", l.dp},     {"tensor_parallel_size", l.tp},
                          {"pipeline_parallel_size", l.pp}, {"context_parallel_size", l.cp},
                          {"expert_parallel_size", l.ep},   {"sequence_parallel", l.sequence_parallel}};
    if (!doc.contains("hardware") || !doc["hardware"].is_object()) doc["hardware"] = json::object();
    doc["hardware"]["num_gpus"] = l.dp * l.tp * l.pp * l.cp;
    const char* section = v.engine ? "training" : "inference";
    if (!doc.contains(section) || !doc[section].is_object()) doc[section] = json::object();
    doc[section]["batch_size"] = l.batch_size;
    if (v.engine) {
        doc["engine"] = engine_json(*v.engine);
        doc["training"]["gradient_accumulation_steps"] = l.grad_accum;
        doc["training"]["activation_checkpointing"] = name(kCheckpointing[c.checkpointing]);
    }
    return doc;
}

Search::Search(const SearchRequest& r, const Scenario& s)
    : req(r),
      base(s),
      k(cluster_of(r.num_gpus, r.gpus_per_node, r.constants)),
      mf(model_figures(s)),
      training(s.mode == Mode::Training),
      N(r.num_gpus),
      G(r.gpus_per_node),
      seq(training ? s.training.seq_len : s.inference.context_len) {}

namespace {

// Reads the scenario with the search's own parallelism and, for training, an engine section (the
// reader resolves the precision from it).
std::optional<Scenario> read_variant(const json& doc, const EngineVariant* v, const Scenario& base) {
    json d = doc;
    d.erase("plan");
    d.erase("parallelism");
    if (d.contains("hardware") && d["hardware"].is_object()) d["hardware"].erase("num_gpus");
    if (v) d["engine"] = engine_json(*v);
    ScenarioRead read = read_scenario(d);
    if (!read.issues.empty()) return std::nullopt;
    read.scenario.details = false;
    read.scenario.cache = base.cache;
    read.scenario.hardware = base.hardware;
    return std::move(read.scenario);
}

}  // namespace

double band_top_factor(const Scenario& s) {
    Scenario probe = s;
    probe.details = false;
    const Figures f = evaluate(probe);
    Band b = error_band(probe, 1.0, static_cast<double>(probe.hardware.gpu_memory_bytes));
    if (f.breakdown.claimed > 0) pin_to_claim(b, 1.0, static_cast<double>(probe.hardware.gpu_memory_bytes));
    return std::max(1.0, b.ratio_high);
}

bool Search::add_variants(const json& doc, std::size_t knobs) {
    const std::size_t before_count = variants.size();
    if (training) {
        for (const EngineVariant& v : engine_variants()) {
            // On one GPU only no engine or an offloading one applies (try_training_layout): not read.
            const bool offloads = v.offload_optimizer != Offload::None || v.offload_param != Offload::None;
            if (N == 1 && v.type != EngineType::None && !offloads) continue;
            if (auto s = read_variant(doc, &v, base)) variants.push_back({v, knobs, std::move(*s)});
        }
    } else if (auto s = read_variant(doc, nullptr, base)) {
        variants.push_back({std::nullopt, knobs, std::move(*s)});
    }
    if (req.band_top)
        for (std::size_t i = before_count; i < variants.size(); ++i) variants[i].top = band_top_factor(variants[i].s);
    return variants.size() > before_count;
}

bool Search::fits(const Scenario& s, const Figures& f, double top) const {
    return f.fits && f.device * top <= static_cast<double>(s.hardware.gpu_memory_bytes);
}

// Micro-batches dividing a rank's share of the global batch, up to the reader's limits
// (batch_size and gradient_accumulation_steps up to 10^6 each).
const std::vector<std::uint64_t>& Search::micro_batches(std::uint64_t share) {
    auto it = micro_cache_.find(share);
    if (it == micro_cache_.end()) {
        std::vector<std::uint64_t> mbs = divisors(share, 1000000);
        mbs.erase(std::remove_if(mbs.begin(), mbs.end(), [share](std::uint64_t mb) { return share / mb > 1000000; }),
                  mbs.end());
        it = micro_cache_.emplace(share, std::move(mbs)).first;
    }
    return it->second;
}

// An inference layout with each variant: fits or not, and the most sequences it holds (for the row,
// and vLLM's share of its pool).
void Search::try_inference_layout(Layout l) {
    for (std::size_t vi = 0; vi < variants.size(); ++vi) {
        Scenario& s = variants[vi].s;
        // llama.cpp splits a model its own way (layers to devices), not Megatron's: replicas only.
        if (s.inference.engine == InferenceEngine::LlamaCpp && l.tp * l.pp > 1) continue;
        l.sequence_parallel = false;
        l.batch_size = s.inference.batch_size;
        ++candidates;
        apply_layout(s, l);
        Figures f = evaluate(s);
        ++evaluations;
        if (!fits(s, f, variants[vi].top)) continue;
        int n = 0;
        json solved = solve(s, l, Solver{"inference.batch_size", 1000000, false}, n, variants[vi].top);
        evaluations += static_cast<std::uint64_t>(n);
        apply_layout(s, l);
        f = evaluate(s);
        Candidate c;
        c.layout = l;
        c.variant = vi;
        c.max_sequences = solved["value"].get<double>();
        c.step = inference_step(s, f, l, mf, k, c.max_sequences);
        c.time = c.step.total;
        c.device = f.device;
        fitting.push_back(c);
    }
}

// One variant on a training layout: every checkpointing and micro-batch, each search stopping at
// the first micro-batch that does not fit (memory grows with it).
void Search::try_training_variant(Layout l, std::size_t vi, const std::vector<std::uint64_t>& micro) {
    const EngineVariant& v = *variants[vi].engine;
    Scenario& s = variants[vi].s;
    for (std::size_t ci = 0; ci < 3; ++ci) {
        l.checkpointing = kCheckpointing[ci];
        for (std::uint64_t mb : micro) {
            l.batch_size = mb;
            l.grad_accum = req.global_batch / (l.dp * mb);
            ++candidates;
            apply_layout(s, l);
            Figures f = evaluate(s);
            ++evaluations;
            if (!fits(s, f, variants[vi].top)) break;
            double host_node = f.breakdown.host_bytes * static_cast<double>(std::min(G, N));
            if (req.host_ram_bytes > 0 && host_node > req.host_ram_bytes) {
                ++host_limited;
                continue;
            }
            Candidate c;
            c.layout = l;
            c.variant = vi;
            c.checkpointing = ci;
            c.device = f.device;
            c.host_per_node = host_node;
            c.step = training_step(s, f, l, v, mf, k, static_cast<double>(req.global_batch));
            c.time = c.step.total;
            fitting.push_back(c);
        }
    }
}

// A training layout: the global batch split over its data-parallel ranks, then every variant whose
// engine applies.
void Search::try_training_layout(const Layout& l) {
    if (req.global_batch % l.dp) {
        ++batch_indivisible;
        return;
    }
    const bool model_parallel = l.tp * l.pp * l.cp > 1 || l.ep > 1;
    const std::vector<std::uint64_t>& micro = micro_batches(req.global_batch / l.dp);
    if (micro.empty()) {
        ++batch_unsplittable;
        return;
    }
    for (std::size_t vi = 0; vi < variants.size(); ++vi) {
        const EngineVariant& v = *variants[vi].engine;
        bool megatron = v.type == EngineType::Megatron;
        if (model_parallel && !megatron) continue;
        // One data-parallel rank: no engine, or one that offloads (ZeRO-Offload on one GPU);
        // sharding over one rank changes nothing.
        bool offloads = v.offload_optimizer != Offload::None || v.offload_param != Offload::None;
        if (l.dp * l.cp == 1 ? !(v.type == EngineType::None || offloads) : v.type == EngineType::None) continue;
        try_training_variant(l, vi, micro);
    }
}

// Every layout of N GPUs the divisibility rules allow: TP within a node, then PP, CP (training) and
// EP (MoE training).
void Search::run() {
    const ModelSpec& m = base.model;
    std::vector<std::uint64_t> ep_options{1};
    if (m.num_experts) ep_options = divisors(m.num_experts, N);
    for (std::uint64_t tp : divisors(N, G)) {
        for (std::uint64_t pp : divisors(N / tp, m.num_layers ? m.num_layers : 1)) {
            for (std::uint64_t cp : training ? divisors(N / (tp * pp), 16) : std::vector<std::uint64_t>{1}) {
                if ((N / (tp * pp)) % cp) continue;
                std::uint64_t dp = N / (tp * pp * cp);
                for (std::uint64_t ep : training ? ep_options : std::vector<std::uint64_t>{1}) {
                    Layout l;
                    l.dp = dp, l.tp = tp, l.pp = pp, l.cp = cp, l.ep = ep;
                    l.sequence_parallel = tp > 1;
                    if (!layout_problem(m, l, seq).empty()) continue;
                    if (training) try_training_layout(l);
                    else try_inference_layout(l);
                }
            }
        }
    }
}

}  // namespace gpumem::detail
