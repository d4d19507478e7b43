// The planner (gpumem.h, plan()): the plan request read, the search (search.h) run over every
// layout of the cluster with every engine, and the fastest fitting candidates written as rows, each
// with its scenario and full estimate.

#include "search/search.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <map>

#include "memory/model_cache.h"

namespace gpumem {

using detail::json;
using detail::Layout;
using detail::Mode;
using detail::Scenario;
using detail::Checkpointing;
using detail::EngineType;
using detail::FsdpSharding;
using detail::InferenceEngine;
using detail::Method;
using detail::Offload;
using detail::Precision;
using detail::name;
using detail::Candidate;
using detail::Cluster;
using detail::before;
using detail::default_constants;
using detail::Constant;
using detail::EngineVariant;
using detail::Search;
using detail::engine_json;
using detail::kCheckpointing;
using detail::round_bytes;

namespace {

//-----------------------------------------------------------------------------
// The plan request
//-----------------------------------------------------------------------------

// The cluster of the search, and what the plan's rows show.
struct PlanRequest : detail::SearchRequest {
    std::uint64_t top = 10;
    std::string gpu;
    bool gpu_given = false;  // plan.gpu named (else the scenario's hardware, as read)
    std::vector<std::string> defaults_applied, warnings;
};

PlanRequest read_plan(const json& doc, const Scenario& s, std::vector<Issue>& issues) {
    PlanRequest r;
    static const json empty = json::object();
    const json* p = &empty;
    if (doc.contains("plan") && !doc["plan"].is_null()) {
        if (!doc["plan"].is_object()) issues.push_back({"plan", "must be an object", detail::show(doc["plan"])});
        else p = &doc["plan"];
    }
    detail::FieldReader pr(*p, "plan", issues);
    auto gpus = pr.uint("num_gpus", 1, 1 << 20);
    if (!gpus && !pr.has("num_gpus"))
        issues.push_back({"plan.num_gpus", "is required: the GPUs in the cluster (a positive integer)", ""});
    r.num_gpus = gpus.value_or(1);
    auto per_node = pr.uint("gpus_per_node", 1, 1024);
    r.gpus_per_node = per_node.value_or(std::min<std::uint64_t>(r.num_gpus, 8));
    if (!per_node) r.defaults_applied.push_back("plan.gpus_per_node = " + std::to_string(r.gpus_per_node));
    if (auto ram = pr.number("host_ram_gb", 0, 1e9)) r.host_ram_bytes = *ram * kGB;
    auto top = pr.uint("top", 1, 1000);
    r.top = top.value_or(10);
    if (auto g = pr.string("gpu")) {
        auto found = detail::find_gpu(*g);
        if (!found) {
            std::string ids;
            for (const json& c : list_gpus()) ids += (ids.empty() ? "" : ", ") + c["id"].get<std::string>();
            pr.fail("gpu", "is not in the GPU catalogue (" + ids + ")", pr.get("gpu"));
        } else {
            r.gpu = (*found)["id"].get<std::string>();
            r.gpu_given = true;
        }
    } else {
        r.gpu = s.hardware.gpu;
        r.defaults_applied.push_back("plan.gpu = \"" + r.gpu + "\" (the scenario's)");
    }
    if (s.mode == Mode::Training) {
        auto gb = pr.uint("global_batch_size", 1, 1ull << 40);
        std::uint64_t fallback = r.num_gpus * s.training.batch_size * s.training.gradient_accumulation_steps;
        r.global_batch = gb.value_or(fallback);
        if (!gb)
            r.defaults_applied.push_back("plan.global_batch_size = " + std::to_string(r.global_batch) +
                                         " (num_gpus x training.batch_size x gradient_accumulation_steps)");
    }
    r.constants = default_constants(r.gpu, r.warnings);
    if (const json* st = pr.get("step_time")) {
        if (!st->is_object()) {
            pr.fail("step_time", "must be an object of step-time constant to number", st);
        } else {
            detail::FieldReader sr(*st, "plan.step_time", issues);
            for (auto it = st->begin(); it != st->end(); ++it) {
                Constant* c = nullptr;
                for (Constant& x : r.constants.list)
                    if (it.key() == x.name) c = &x;
                if (!c) {
                    std::string names;
                    for (const Constant& x : r.constants.list)
                        names += (names.empty() ? "" : ", ") + std::string(x.name);
                    sr.fail(it.key(), "is not a step-time constant (known: " + names + ")", &*it);
                } else if (auto v = sr.number(it.key(), std::strcmp(c->name, "collective_latency_us") == 0 ? 0 : 1e-9,
                                              std::strcmp(c->name, "mfu") == 0 ? 1 : 1e9)) {
                    c->value = *v;
                    c->about = "given in plan.step_time";
                }
            }
        }
    }
    static const char* const known[] = {"num_gpus", "gpus_per_node",     "host_ram_gb", "top",
                                        "gpu",      "global_batch_size", "step_time"};
    for (auto it = p->begin(); it != p->end(); ++it)
        if (std::none_of(std::begin(known), std::end(known), [&](const char* k) { return it.key() == k; }))
            issues.push_back({"plan." + it.key(),
                              "is not a plan field (num_gpus, gpu, gpus_per_node, host_ram_gb, "
                              "global_batch_size, top, step_time)",
                              detail::show(it.value())});
    return r;
}

// The scenario document of one plan row: the user's, with the row's layout written in.
json row_scenario(const json& doc, const Candidate& c, const detail::Variant& v, const PlanRequest& r) {
    json out = doc;
    out.erase("plan");
    // The plan's GPU; or, when the plan names none, the scenario's own hardware section (its gpu_memory_gb too).
    json hw =
        r.gpu_given || !doc.contains("hardware") || !doc["hardware"].is_object() ? json::object() : doc["hardware"];
    if (r.gpu_given) hw["gpu"] = r.gpu;
    out["hardware"] = hw;
    return detail::with_layout(std::move(out), c, v);
}

json layout_json(const Candidate& c, const EngineVariant* v, bool training) {
    const Layout& l = c.layout;
    json j = {{"data_parallel_size", l.dp},     {"tensor_parallel_size", l.tp},
              {"pipeline_parallel_size", l.pp}, {"context_parallel_size", l.cp},
              {"expert_parallel_size", l.ep},   {"sequence_parallel", l.sequence_parallel}};
    if (training) {
        j["engine"] = name(v->type);
        j["zero_stage"] = v->zero;
        j["fsdp_sharding"] = name(v->fsdp);
        j["offload_optimizer"] = name(v->offload_optimizer);
        j["offload_param"] = name(v->offload_param);
        j["activation_checkpointing"] = name(kCheckpointing[c.checkpointing]);
        j["micro_batch_size"] = l.batch_size;
        j["gradient_accumulation_steps"] = l.grad_accum;
    } else {
        j["batch_size"] = l.batch_size;
        j["max_concurrent_sequences"] = static_cast<std::uint64_t>(c.max_sequences);
    }
    return j;
}

// The best `top` candidates as rows, each with its scenario and full estimate.
json plan_rows(const json& doc, const Search& search, const PlanRequest& req, std::size_t top) {
    const bool training = search.training;
    const Cluster& k = search.k;
    json plans = json::array();
    for (std::size_t i = 0; i < top; ++i) {
        const Candidate& c = search.fitting[i];
        const detail::Variant& variant = search.variants[c.variant];
        const EngineVariant* v = variant.engine ? &*variant.engine : nullptr;
        json row_doc = row_scenario(doc, c, variant, req);
        double tokens = training ? static_cast<double>(req.global_batch * search.seq)
                                 : static_cast<double>(c.layout.dp * c.layout.batch_size);
        json row = {
            {"rank", i + 1},
            {"layout", layout_json(c, v, training)},
            {"step_time_s", c.time},
            {"step_time", step_json(c.step, training)},
            {"tokens_per_s", c.time > 0 ? tokens / c.time : 0.0},
            {"mfu", c.time > 0 ? c.step.model_flops / c.time /
                                     (k.peak * (training ? k.gpus : static_cast<double>(c.layout.tp * c.layout.pp)))
                               : 0.0},
            {"device_total_bytes", round_bytes(c.device)},
            {"host_bytes_per_node", round_bytes(c.host_per_node)},
            {"scenario", row_doc},
            {"estimate", estimate(row_doc)}};
        plans.push_back(row);
    }
    return plans;
}

// Why layouts were skipped or none fits.
void search_warnings(const Search& search, const PlanRequest& req, std::vector<std::string>& warnings) {
    const std::string N = std::to_string(search.N);
    if (search.candidates == 0 && search.batch_indivisible == 0 && search.batch_unsplittable == 0)
        warnings.push_back("no layout of " + N +
                           " GPUs meets the divisibility rules (attention and kv heads "
                           "by TP within a node, layers by PP, sequence by CP, experts by EP, global batch by DP)");
    else if (search.candidates > 0 && search.fitting.empty())
        warnings.push_back("no layout of " + N + " x " + req.gpu + " fits this scenario" +
                           (search.host_limited
                                ? " (" + std::to_string(search.host_limited) + " fit the GPUs but not plan.host_ram_gb)"
                                : ""));
    if (search.batch_indivisible)
        warnings.push_back(std::to_string(search.batch_indivisible) +
                           " layouts skipped: their data-parallel size does not divide "
                           "plan.global_batch_size (" +
                           std::to_string(req.global_batch) + ")");
    if (search.batch_unsplittable)
        warnings.push_back(std::to_string(search.batch_unsplittable) +
                           " layouts skipped: no micro-batch of at most 1000000 sequences "
                           "with at most 1000000 accumulation steps makes up their share of plan.global_batch_size (" +
                           std::to_string(req.global_batch) + ")");
}

}  // namespace

// Reads the scenario and the plan, tries every layout of the cluster with every engine that
// applies, and returns the fastest that fit.
json plan(const json& doc) {
    auto started = std::chrono::steady_clock::now();
    json scenario_doc = doc;
    if (scenario_doc.is_object()) scenario_doc.erase("plan");
    detail::ScenarioRead read = detail::read_scenario(scenario_doc);
    if (!read.issues.empty()) return detail::error_document(read.issues);
    Scenario base = read.scenario;
    std::vector<Issue> issues;
    PlanRequest req = read_plan(doc, base, issues);
    if (!issues.empty()) return detail::error_document(issues);
    if (req.gpu_given) {
        base.hardware.gpu_memory_bytes = (*detail::find_gpu(req.gpu))["memory_bytes"].get<std::uint64_t>();
        base.hardware.gpu = req.gpu;
    }
    base.hardware.gpus_per_node = req.gpus_per_node;  // the cluster's nodes (hybrid_shard's shard group)
    detail::cache_of(base);
    Search search(req, base);
    search.add_variants(doc, 0);

    auto searching = std::chrono::steady_clock::now();
    double setup_ms = std::chrono::duration<double, std::milli>(searching - started).count();
    search.run();
    std::size_t top = std::min<std::size_t>(req.top, search.fitting.size());
    std::partial_sort(search.fitting.begin(), search.fitting.begin() + static_cast<std::ptrdiff_t>(top),
                      search.fitting.end(), before);
    double search_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - searching).count();

    const bool training = search.training;
    json plans = plan_rows(doc, search, req, top);
    std::vector<std::string> warnings = req.warnings;
    search_warnings(search, req, warnings);
    json constants = json::object();
    for (const Constant& c : req.constants.list)
        constants[c.name] = {{"value", c.value}, {"unit", c.unit}, {"about", c.about}};
    json cluster = {{"gpu", req.gpu},
                    {"num_gpus", search.N},
                    {"gpus_per_node", search.G},
                    {"gpu_memory_bytes", base.hardware.gpu_memory_bytes},
                    {"host_ram_bytes_per_node", round_bytes(req.host_ram_bytes)}};
    if (training) cluster["global_batch_size"] = req.global_batch;
    double total_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
    return {{"ok", true},
            {"mode", training ? "training" : "inference"},
            {"cluster", cluster},
            {"constants", constants},
            {"search",
             {{"candidates", search.candidates},
              {"evaluations", search.evaluations},
              {"fitting", search.fitting.size()},
              {"host_ram_limited", search.host_limited},
              {"global_batch_indivisible", search.batch_indivisible},
              {"setup_ms", setup_ms},
              {"search_ms", search_ms},
              {"evaluations_per_s", search_ms > 0 ? static_cast<double>(search.evaluations) / search_ms * 1000 : 0.0},
              {"elapsed_ms", total_ms}}},
            {"plans", plans},
            {"warnings", warnings},
            {"defaults_applied", req.defaults_applied}};
}

}  // namespace gpumem
