// What would make a scenario fit (gpumem.h, fit()): the search (search.h) run on the user's own
// cluster over every layout, engine, checkpointing mode and micro-batch at the same global batch,
// with the scenario's other knobs (loss, attention, optimizer, precision, method; for serving the
// KV-cache and weight formats) set in levels of how much they change the run. Every fitting
// candidate is timed by the step-time model; the answer is the Pareto set: the fastest run that fits
// in each tier, and the least change that fits, each estimated again on its own by estimate(). The
// data (shorter sequences) and hardware (more or bigger cards) tiers come from the max-fit solvers and
// estimate(). No second model of memory.

#include <algorithm>
#include <chrono>
#include <tuple>
#include <cmath>
#include <string>
#include <vector>

#include "gpumem/gpumem.h"
#include "memory/model_cache.h"
#include "search/search.h"

namespace gpumem {

namespace {

using json = nlohmann::json;

using detail::Tier;
using detail::tier_name;

struct Change {
    std::string what;  // one line: "activation checkpointing: full"
    std::string cost;  // what it costs, in words
    Tier tier;
    json set;  // dotted field -> value
};

// scenario with `field` (dotted) set to `value`.
void set_field(json& scenario, const std::string& field, const json& value) {
    json* at = &scenario;
    std::size_t start = 0;
    for (std::size_t dot; (dot = field.find('.', start)) != std::string::npos; start = dot + 1) {
        json& next = (*at)[field.substr(start, dot - start)];
        if (!next.is_object()) next = json::object();
        at = &next;
    }
    (*at)[field.substr(start)] = value;
}

// Whether an estimate counts as fitting: its error band's top fits (the verdict "fits"), or, when the
// request asks for borderline runs too, its point.
bool counts(const json& estimate, bool include_borderline) {
    if (!estimate.value("ok", false)) return false;
    return include_borderline ? estimate["fits"] == true : estimate.value("verdict", "") == "fits";
}

json with_changes(const json& scenario, const json& set) {
    json s = scenario;
    for (auto& [field, value] : set.items()) set_field(s, field, value);
    return s;
}

double device_total(const json& result) { return result["per_gpu"]["device_total_bytes"].get<double>(); }

std::string gib(double bytes) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f GiB", bytes / 1073741824.0);
    return text;
}

// The changes worth trying on a training scenario, from its resolved form `r`.
std::vector<Change> training_changes(const json& r) {
    const json& t = r["training"];
    const json& e = r["engine"];
    const json& p = r["parallelism"];
    const std::string method = t["method"], optimizer = t["optimizer"], engine = e["type"];
    const std::uint64_t dp = p["data_parallel_size"], b = t["batch_size"], ga = t["gradient_accumulation_steps"];
    std::vector<Change> out;
    if (t["loss"] == "standard") {
        out.push_back({"loss: chunked cross-entropy",
                       "same result; the logits are upcast one chunk at a time",
                       Tier::SameMath,
                       {{"training.loss", "chunked"}}});
        out.push_back({"loss: fused head + cross-entropy (Liger, CCE)",
                       "same result; needs the fused kernel installed",
                       Tier::SameMath,
                       {{"training.loss", "fused"}}});
    }
    if (t["attention"] == "eager")
        out.push_back(
            {"attention: SDPA", "same result, no s x s scores kept", Tier::SameMath, {{"training.attention", "sdpa"}}});
    if (t["activation_checkpointing"] == "none")
        out.push_back({"activation checkpointing: selective",
                       "recomputes the attention's intermediates: a few % slower",
                       Tier::Slower,
                       {{"training.activation_checkpointing", "selective"}}});
    if (t["activation_checkpointing"] != "full")
        out.push_back({"activation checkpointing: full",
                       "recomputes each layer's forward in the backward: about 30 % slower",
                       Tier::Slower,
                       {{"training.activation_checkpointing", "full"}}});
    const bool sharded = engine == "fsdp" || (engine == "deepspeed" && e["zero_stage"].get<int>() >= 1) ||
                         engine == "megatron" || engine == "megatron_deepspeed";
    if (dp > 1 && (engine == "none" || engine == "ddp" || engine == "deepspeed")) {
        for (int stage : {1, 2, 3})
            if (engine != "deepspeed" || e["zero_stage"].get<int>() < stage)
                out.push_back({"DeepSpeed ZeRO-" + std::to_string(stage) + " over the " + std::to_string(dp) + " GPUs",
                               "shards the " +
                                   std::string(stage == 1   ? "optimizer states"
                                               : stage == 2 ? "optimizer states and gradients"
                                                            : "whole model state") +
                                   ": more communication per step",
                               Tier::Slower,
                               {{"engine.type", "deepspeed"}, {"engine.zero_stage", stage}}});
    }
    if (dp > 1 && (engine == "none" || engine == "ddp"))
        out.push_back({"FSDP FULL_SHARD over the " + std::to_string(dp) + " GPUs",
                       "shards the whole model state: more communication per step",
                       Tier::Slower,
                       {{"engine.type", "fsdp"}, {"engine.fsdp_sharding", "full_shard"}}});
    if (sharded && e["offload_optimizer"] == "none" && engine != "megatron") {
        out.push_back({"offload the optimizer states to CPU",
                       "the optimizer step runs on the CPU: much slower; needs host RAM",
                       Tier::Slower,
                       {{"engine.offload_optimizer", "cpu"}}});
        if (engine == "fsdp" || (engine == "deepspeed" && e["zero_stage"] == 3))
            out.push_back({"offload the weights and optimizer states to CPU",
                           "weights stream from host RAM every step: much slower",
                           Tier::Slower,
                           {{"engine.offload_optimizer", "cpu"}, {"engine.offload_param", "cpu"}}});
    }
    if (method != "qlora" && (optimizer == "adamw" || optimizer == "adam" || optimizer == "adamw_fused")) {
        out.push_back({"optimizer: AdamW 8-bit (bitsandbytes)",
                       "8-bit moments: usually the same loss curve, a small risk",
                       Tier::Numerics,
                       {{"training.optimizer", "adamw_8bit"}}});
        out.push_back({"optimizer: paged AdamW 8-bit",
                       "8-bit moments in host-evictable memory",
                       Tier::Numerics,
                       {{"training.optimizer", "paged_adamw_8bit"}}});
    }
    if (method == "full" && t["precision"] != "pure")
        out.push_back({"precision: pure bf16 weights (no fp32 master copy)",
                       "weights updated in bf16: small updates can round away on long runs",
                       Tier::Numerics,
                       {{"training.precision", "pure"}}});
    if (b > 1) {
        // The same global batch from smaller micro-batches: the largest divisor of b that fits.
        for (std::uint64_t smaller = b / 2; smaller >= 1; smaller = smaller / 2) {
            if (b % smaller) continue;
            out.push_back(
                {"micro-batch " + std::to_string(smaller) + " with " + std::to_string(ga * (b / smaller)) +
                     " accumulation steps",
                 "the same global batch in more, smaller steps: slower",
                 Tier::Slower,
                 {{"training.batch_size", smaller}, {"training.gradient_accumulation_steps", ga * (b / smaller)}}});
            if (smaller == 1) break;
        }
    }
    if (method == "full") {
        out.push_back({"LoRA (rank " + std::to_string(t.contains("lora") ? t["lora"]["rank"].get<int>() : 8) + ")",
                       "trains adapters only: a different fine-tune, usually close for instruction tuning",
                       Tier::Method,
                       {{"training.method", "lora"}}});
        out.push_back({"QLoRA (4-bit NF4 base)",
                       "adapters over a 4-bit base: a different fine-tune, some quality cost",
                       Tier::Method,
                       {{"training.method", "qlora"}}});
    }
    if (method == "lora")
        out.push_back({"QLoRA (4-bit NF4 base)",
                       "the frozen base in 4 bits: some quality cost",
                       Tier::Method,
                       {{"training.method", "qlora"}}});
    return out;
}

std::vector<Change> inference_changes(const json& r) {
    const json& i = r["inference"];
    const std::string format = i["weight_format"], kv = i["kv_cache_dtype"], engine = i["engine"];
    std::vector<Change> out;
    // Smaller weight formats than the current one, each with its quality cost in words.
    const json formats = list_formats();
    double current = 2;
    for (const json& f : formats)
        if (f["id"] == format) current = f["bytes_per_param"];
    struct Candidate {
        const char* id;
        const char* cost;
    };
    const Candidate kFormats[] = {
        {"fp8", "fp8 weights: near-lossless on most models"},
        {"int8", "int8 weights (LLM.int8): near-lossless, slower"},
        {"int4", "4-bit GPTQ/AWQ weights: a small quality loss; needs a quantized checkpoint"},
        {"q4_k_m", "GGUF Q4_K_M: a small quality loss (llama.cpp)"}};
    for (const Candidate& c : kFormats) {
        bool llama = engine == "llama.cpp";
        if ((std::string(c.id) == "q4_k_m") != llama) continue;  // GGUF formats are llama.cpp's, the others are not
        for (const json& f : formats)
            if (f["id"] == c.id && f["bytes_per_param"].get<double>() < current)
                out.push_back(
                    {std::string("weights: ") + c.id, c.cost, Tier::Method, {{"inference.weight_format", c.id}}});
    }
    if (i["kv_cache"] == true && kv != "fp8" && kv != "int8" && kv != "int4" && engine != "llama.cpp")
        out.push_back({"KV cache: fp8",
                       "half the cache: a small quality risk at long contexts",
                       Tier::Numerics,
                       {{"inference.kv_cache_dtype", "fp8"}}});
    if (i["kv_cache"] == true && engine == "llama.cpp" && kv != "int8" && kv != "int4")
        out.push_back({"KV cache: q8_0",
                       "half the cache: a small quality risk",
                       Tier::Numerics,
                       {{"inference.kv_cache_dtype", "int8"}}});
    if (engine == "vllm") {
        // vLLM claims a share of the card up front: a lower share fits when something else shares the GPU.
        out.push_back({"vLLM: gpu_memory_utilization 0.8",
                       "a smaller KV pool: fewer tokens cached at once",
                       Tier::Data,
                       {{"inference.gpu_memory_utilization", 0.8}}});
    }
    return out;
}

struct Tried {
    Change change;
    json scenario;
    json estimate;
};

// An engine that fills its budget (the result's serving.fills_budget: vLLM, SGLang, TGI, TensorRT-LLM) claims
// the same share of the card whatever it is asked to hold: its runs are compared by the tokens and sequences its
// KV pool holds, not by the budget they all fill.
bool fills_budget(const json& e) { return e["serving"].is_object() && e["serving"].value("fills_budget", false); }
double pool_tokens(const json& e) { return e["serving"].value("kv_cache_tokens", 0.0); }

json suggestion(const Tried& t, double base_total) {
    const double total = device_total(t.estimate);
    return {{"change", t.change.what},
            {"cost", t.change.cost},
            {"tier", tier_name(t.change.tier)},
            {"set", t.change.set},
            {"fits", t.estimate["fits"]},
            {"verdict", t.estimate["verdict"]},
            {"device_total_bytes", total},
            {"saves_bytes", base_total - total},
            {"host_bytes", t.estimate["host_bytes"]},
            {"serving", t.estimate["serving"]},
            {"scenario", t.scenario},
            {"estimate", t.estimate}};
}

// The largest value of a max-fit field, as a suggestion; none when it is 0 (nothing fits) or unchanged.
// The largest value of a size field below the scenario's that fits (its band's top, by the factor
// `top`: search.h solve()), as a suggestion; none when not even 1 fits.
void size_suggestion(const json& scenario, detail::Scenario s, const detail::Solver& solver, std::uint64_t current,
                     const char* what, const char* cost, double top, std::vector<Tried>& out) {
    int evaluations = 0;
    const json solved = detail::solve(s, detail::layout_of(s), solver, evaluations, top);
    const std::uint64_t v = solved["value"];
    if (v == 0 || v >= current) return;
    Change c{std::string(what) + " " + std::to_string(v), cost, Tier::Data, {{solver.field, v}}};
    json changed = with_changes(scenario, c.set);
    out.push_back({c, changed, estimate(changed)});
}

// The fewest GPUs of the same kind that fit, doubling the data-parallel replicas (training: with the
// state sharded over them, by the scenario's own sharding engine or else ZeRO-3) or the tensor
// parallelism (inference), up to 1024 GPUs.
void more_gpus(const json& scenario, const json& r, bool training, bool borderline, std::vector<Tried>& out) {
    const json& p = r["parallelism"];
    const std::uint64_t dp = p["data_parallel_size"], tp = p["tensor_parallel_size"], pp = p["pipeline_parallel_size"],
                        cp = p["context_parallel_size"];
    const std::string engine = r["engine"]["type"];
    const bool sharded = engine == "fsdp" || engine == "megatron" || engine == "megatron_deepspeed" ||
                         (engine == "deepspeed" && r["engine"]["zero_stage"] == 3);
    for (std::uint64_t k = 2; k <= 1024; k *= 2) {
        const std::uint64_t n = training ? dp * k * tp * pp * cp : tp * k * pp * dp;
        if (n > 1024) return;
        json set = training ? json{{"parallelism.data_parallel_size", dp * k}, {"hardware.num_gpus", n}}
                            : json{{"parallelism.tensor_parallel_size", tp * k}, {"hardware.num_gpus", n}};
        if (training && !sharded) {
            set["engine.type"] = "deepspeed";
            set["engine.zero_stage"] = 3;
        }
        json changed = with_changes(scenario, set);
        json e = estimate(changed);
        if (!e.value("ok", false)) return;  // e.g. TP past the head count: no layout with more GPUs of this shape
        if (counts(e, borderline)) {
            Change c{std::to_string(n) + " GPUs" +
                         (training ? (sharded ? " (more data-parallel replicas)" : " with ZeRO-3")
                                   : " with tensor parallelism"),
                     training ? "more hardware; the state sharded over all of them"
                              : "more hardware; each GPU holds 1/" + std::to_string(tp * k) + " of the weights",
                     Tier::Hardware, set};
            out.push_back({c, changed, e});
            return;
        }
    }
}

// The smallest card of the catalogue (more memory than this one) that fits as it stands.
void bigger_card(const json& scenario, const json& r, bool borderline, std::vector<Tried>& out) {
    json gpus = list_gpus();
    // Smallest first; equal sizes by id, so every build lists them in one order.
    std::sort(gpus.begin(), gpus.end(), [](const json& a, const json& b) {
        if (a["memory_bytes"] != b["memory_bytes"]) return a["memory_bytes"] < b["memory_bytes"];
        return a["id"] < b["id"];
    });
    const double capacity = r["hardware"]["gpu_memory_gb"].get<double>() * 1073741824.0;
    for (const json& g : gpus) {
        if (g["memory_bytes"].get<double>() <= capacity) continue;
        json changed = with_changes(scenario, {{"hardware.gpu", g["id"]}});
        if (changed["hardware"].is_object()) changed["hardware"].erase("gpu_memory_gb");
        json e = estimate(changed);
        if (counts(e, borderline)) {
            Change c{"GPU: " + g["name"].get<std::string>() + " (" + gib(g["memory_bytes"].get<double>()) + ")",
                     "other hardware",
                     Tier::Hardware,
                     {{"hardware.gpu", g["id"]}}};
            out.push_back({c, changed, e});
            return;
        }
    }
}

// ---- The search's knobs: the scenario's own fields, turned in levels of how much they change.

struct Knob {
    std::string field;  // dotted
    json value;
    std::string what, cost;
    Tier tier;
};

// The knobs worth turning on a resolved scenario `r`: the one-field changes of the same-math,
// numerics and method tiers from the lists of single changes, the first per field (chunked before
// fused loss, 8-bit before paged 8-bit AdamW). The search varies layout, engine, checkpointing and
// micro-batch itself.
std::vector<Knob> knobs_of(const json& r, bool training) {
    std::vector<Knob> out;
    for (const Change& c : training ? training_changes(r) : inference_changes(r)) {
        if (c.set.size() != 1 || (c.tier != Tier::SameMath && c.tier != Tier::Numerics && c.tier != Tier::Method))
            continue;
        const std::string field = c.set.begin().key();
        const bool taken = std::any_of(out.begin(), out.end(), [&](const Knob& k) { return k.field == field; });
        if (!taken || field == "training.method" || field == "inference.weight_format")  // methods exclude each other
            out.push_back({field, c.set.begin().value(), c.what, c.cost, c.tier});
    }
    return out;
}

// The levels the search reads: the scenario as given; every same-math knob; and every numerics
// knob on top; then each method knob on top of those (the method knobs exclude each other). A
// level turns on every knob of its tier at once: those knobs only lower memory and leave the step
// time as it is, so the fastest run of a tier is found with all of them on, and the ones it does
// not need are taken off again afterwards (minimal()).
std::vector<std::vector<std::size_t>> levels_of(const std::vector<Knob>& knobs) {
    std::vector<std::vector<std::size_t>> levels{{}};
    std::vector<std::size_t> below;
    for (Tier tier : {Tier::SameMath, Tier::Numerics}) {
        bool any = false;
        for (std::size_t i = 0; i < knobs.size(); ++i)
            if (knobs[i].tier == tier) below.push_back(i), any = true;
        if (any) levels.push_back(below);
    }
    for (std::size_t i = 0; i < knobs.size(); ++i)
        if (knobs[i].tier == Tier::Method) {
            levels.push_back(below);
            levels.back().push_back(i);
        }
    return levels;
}

json knob_set(const std::vector<Knob>& knobs, const std::vector<std::size_t>& on) {
    json set = json::object();
    for (std::size_t i : on) set[knobs[i].field] = knobs[i].value;
    return set;
}

// One run the search found, described against the scenario as given.
struct Found {
    const detail::Candidate* c = nullptr;
    std::size_t level = 0;                  // its level of knobs (levels_of(): least change first)
    std::vector<std::size_t> knobs;         // the knobs it turns
    std::vector<std::string> layout;        // its changes of layout, engine, checkpointing and micro-batch, in words
    std::vector<std::string> layout_costs;  // what each costs, in words
    Tier tier = Tier::SameMath;
    std::size_t changes() const { return knobs.size() + layout.size(); }
};

std::string engine_words(const detail::EngineVariant& v) {
    using detail::EngineType;
    std::string w;
    if (v.type == EngineType::None) w = "no data-parallel engine";
    else if (v.type == EngineType::Ddp) w = "DDP";
    else if (v.type == EngineType::DeepSpeed) w = "DeepSpeed ZeRO-" + std::to_string(v.zero);
    else if (v.type == EngineType::Fsdp) w = std::string("FSDP ") + detail::name(v.fsdp);
    else w = detail::name(v.type);
    if (v.offload_param != detail::Offload::None) w += ", weights and optimizer states offloaded to CPU";
    else if (v.offload_optimizer != detail::Offload::None) w += ", optimizer states offloaded to CPU";
    return w;
}

Found describe(const detail::Search& search, const detail::Candidate& c,
               const std::vector<std::vector<std::size_t>>& levels, const std::vector<Knob>& knobs) {
    const detail::Scenario& s = search.base;
    const detail::Variant& v = search.variants[c.variant];
    Found f;
    f.c = &c;
    f.level = v.knobs;
    f.knobs = levels[v.knobs];
    for (std::size_t i : f.knobs) f.tier = std::max(f.tier, knobs[i].tier);
    const detail::Layout& l = c.layout;
    if (l.dp != s.parallel.dp || l.tp != s.parallel.tp || l.pp != s.parallel.pp || l.cp != s.parallel.cp ||
        l.ep != s.parallel.ep) {
        f.layout.push_back("layout: DP " + std::to_string(l.dp) + " x TP " + std::to_string(l.tp) + " x PP " +
                           std::to_string(l.pp) + (l.cp > 1 ? " x CP " + std::to_string(l.cp) : "") +
                           (l.ep > 1 ? " x EP " + std::to_string(l.ep) : ""));
        f.layout_costs.push_back("the model split another way: more communication per step");
    }
    if (v.engine) {
        if (!detail::same_engine(*v.engine, detail::engine_of(s))) {
            f.layout.push_back("engine: " + engine_words(*v.engine));
            f.layout_costs.push_back(v.engine->offload_optimizer != detail::Offload::None
                                         ? "the optimizer step runs on the CPU: slower; needs host RAM"
                                         : "the model state sharded: more communication per step");
        }
        const detail::Checkpointing ckpt = detail::kCheckpointing[c.checkpointing];
        if (ckpt != s.training.activation_checkpointing) {
            f.layout.push_back(std::string("activation checkpointing: ") + detail::name(ckpt));
            f.layout_costs.push_back(ckpt == detail::Checkpointing::Full ? "recomputes each layer's forward: slower"
                                     : ckpt == detail::Checkpointing::Selective
                                         ? "recomputes the attention's intermediates: a few % slower"
                                         : "keeps every activation: faster, more memory");
        }
        if (l.batch_size != s.training.batch_size) {
            f.layout.push_back("micro-batch " + std::to_string(l.batch_size) + " with " + std::to_string(l.grad_accum) +
                               " accumulation steps");
            f.layout_costs.push_back(
                "the same global batch in " +
                std::string(l.batch_size < s.training.batch_size ? "more, smaller" : "fewer, larger") + " steps");
        }
    }
    if (!f.layout.empty()) f.tier = std::max(f.tier, Tier::Slower);
    return f;
}

// Whether `doc` fits, through the search's fast path (read, evaluate with the notes off): its
// estimate, and with `band` the top of its error band too (as the search counted it).
bool fits_as(const json& doc, const detail::Scenario& base, bool band) {
    detail::ScenarioRead read = detail::read_scenario(doc);
    if (!read.issues.empty()) return false;
    read.scenario.details = false;
    read.scenario.cache = base.cache;
    const detail::Figures f = detail::evaluate(read.scenario);
    const double top = band ? detail::band_top_factor(read.scenario) : 1.0;
    return f.fits && f.device * top <= static_cast<double>(read.scenario.hardware.gpu_memory_bytes);
}

// The run's knobs less every one it fits without (the highest tier tried first); `doc_of` builds
// the run's document from a knob list.
template <class DocOf>
void minimal(Found& f, const std::vector<Knob>& knobs, const detail::Scenario& base, bool band, const DocOf& doc_of) {
    std::vector<std::size_t> order = f.knobs;
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return knobs[a].tier > knobs[b].tier; });
    for (std::size_t drop : order) {
        if (knobs[drop].tier == Tier::Method) continue;  // the method is what the level is about
        std::vector<std::size_t> fewer;
        for (std::size_t i : f.knobs)
            if (i != drop) fewer.push_back(i);
        if (fits_as(doc_of(fewer), base, band)) f.knobs = fewer;
    }
    Tier tier = f.layout.empty() ? Tier::SameMath : Tier::Slower;
    for (std::size_t i : f.knobs) tier = std::max(tier, knobs[i].tier);
    f.tier = tier;
}

// The fields a run's document `doc` sets to other values than the resolved scenario `r`, dotted.
json changed_fields(const json& doc, const json& r) {
    static const char* const kFields[] = {"parallelism.data_parallel_size",
                                          "parallelism.tensor_parallel_size",
                                          "parallelism.pipeline_parallel_size",
                                          "parallelism.context_parallel_size",
                                          "parallelism.expert_parallel_size",
                                          "parallelism.sequence_parallel",
                                          "hardware.num_gpus",
                                          "engine.type",
                                          "engine.zero_stage",
                                          "engine.fsdp_sharding",
                                          "engine.offload_optimizer",
                                          "engine.offload_param",
                                          "training.batch_size",
                                          "training.gradient_accumulation_steps",
                                          "training.activation_checkpointing",
                                          "training.loss",
                                          "training.attention",
                                          "training.optimizer",
                                          "training.precision",
                                          "training.method",
                                          "inference.kv_cache_dtype",
                                          "inference.weight_format",
                                          "inference.batch_size"};
    json set = json::object();
    for (const char* field : kFields) {
        const json::json_pointer at("/" + std::string(field).replace(std::string(field).find('.'), 1, "/"));
        if (doc.contains(at) && (!r.contains(at) || r[at] != doc[at])) set[field] = doc[at];
    }
    return set;
}

json speed_json(const json& estimate, bool training) {
    const json& t = estimate["throughput"];
    return training ? json{{"step_time_s", t.value("step_time_s", 0.0)},
                           {"tokens_per_s", t.value("training_tokens_per_s", 0.0)}}
                    : json{{"step_time_s", t.value("decode_step_s", 0.0)},
                           {"tokens_per_s", t.value("decode_tokens_per_s", 0.0)}};
}

}  // namespace

json fit(const json& request) {
    auto started = std::chrono::steady_clock::now();
    // The request: a scenario, and optionally "fit": {"include_borderline": true}.
    json scenario = request;
    bool borderline = false;
    if (scenario.is_object() && scenario.contains("fit")) {
        std::vector<Issue> issues;
        const json& options = scenario["fit"];
        if (!options.is_object()) {
            issues.push_back(
                {"fit", "must be an object: {\"include_borderline\": true or false}", detail::show(options)});
        } else {
            for (auto it = options.begin(); it != options.end(); ++it) {
                if (it.key() != "include_borderline")
                    issues.push_back({"fit." + it.key(), "is not a fit field (include_borderline)", detail::show(*it)});
                else if (!it->is_boolean())
                    issues.push_back({"fit.include_borderline", "must be true or false", detail::show(*it)});
                else borderline = it->get<bool>();
            }
        }
        if (!issues.empty()) return detail::error_document(issues);
        scenario.erase("fit");
    }
    json base = estimate(scenario);
    if (!base.value("ok", false)) return base;
    const json& r = base["scenario"];
    const bool training = r["mode"] == "training";
    const double base_total = device_total(base);
    const double capacity = base["per_gpu"]["capacity_bytes"];
    // Whether the scenario counts as fitting already: its band's top fits (or, asked, its point).
    const bool fits = counts(base, borderline);
    const json base_speed = speed_json(base, training);
    const double base_step = base_speed["step_time_s"];

    // The search on the scenario's own cluster and global batch.
    detail::ScenarioRead read = detail::read_scenario(scenario);
    detail::Scenario s = read.scenario;
    s.details = false;
    detail::cache_of(s);
    detail::SearchRequest req;
    req.num_gpus = s.parallel.world();
    req.gpus_per_node = std::min<std::uint64_t>(req.num_gpus, s.hardware.gpus_per_node ? s.hardware.gpus_per_node : 8);
    req.global_batch = training ? s.parallel.dp * s.training.batch_size * s.training.gradient_accumulation_steps : 0;
    std::vector<std::string> step_warnings;
    req.constants = detail::default_constants(s.hardware.gpu, step_warnings);
    req.band_top = !borderline;
    const std::vector<Knob> knobs = knobs_of(r, training);
    const std::vector<std::vector<std::size_t>> levels = levels_of(knobs);
    detail::Search search(req, s);
    for (std::size_t li = 0; li < levels.size(); ++li)
        search.add_variants(with_changes(scenario, knob_set(knobs, levels[li])), li);
    search.run();

    // The least change that fits, and the fastest run that fits with changes up to each tier.
    std::vector<Found> found;
    found.reserve(search.fitting.size());
    for (const detail::Candidate& c : search.fitting) found.push_back(describe(search, c, levels, knobs));
    // Faster first; at equal step times the run with fewer changes.
    auto faster = [](const Found& a, const Found& b) {
        if (a.c->time != b.c->time) return a.c->time < b.c->time;
        if (a.changes() != b.changes()) return a.changes() < b.changes();
        if (a.level != b.level) return a.level < b.level;  // e.g. LoRA before QLoRA at one step time
        return detail::before(*a.c, *b.c);
    };
    std::vector<Found> picked;
    const Found* least = nullptr;
    for (const Found& f : found)
        if (!least || std::make_tuple(f.tier, f.changes()) < std::make_tuple(least->tier, least->changes()) ||
            (std::make_tuple(f.tier, f.changes()) == std::make_tuple(least->tier, least->changes()) &&
             faster(f, *least)))
            least = &f;
    if (least && !fits) picked.push_back(*least);
    for (Tier tier : {Tier::SameMath, Tier::Slower, Tier::Numerics, Tier::Method}) {
        const Found* best = nullptr;
        for (const Found& f : found)
            if (f.tier <= tier && (!best || faster(f, *best))) best = &f;
        if (!best || (fits && best->c->time >= base_step)) continue;
        if (std::any_of(picked.begin(), picked.end(), [&](const Found& p) { return p.c == best->c; })) continue;
        picked.push_back(*best);
    }

    // Each picked run as a suggestion: its knobs cut to those it needs, estimated on its own.
    std::vector<Tried> tried;
    std::vector<json> flags;
    for (std::size_t pi = 0; pi < picked.size(); ++pi) {
        Found f = picked[pi];
        const detail::Variant& v = search.variants[f.c->variant];
        auto doc_of = [&](const std::vector<std::size_t>& on) {
            return detail::with_layout(with_changes(scenario, knob_set(knobs, on)), *f.c, v);
        };
        minimal(f, knobs, s, !borderline, doc_of);
        std::vector<std::string> words = f.layout, costs = f.layout_costs;
        for (std::size_t i : f.knobs) words.push_back(knobs[i].what), costs.push_back(knobs[i].cost);
        std::string what, cost;
        for (const std::string& w : words) what += (what.empty() ? "" : " + ") + w;
        for (const std::string& c : costs) cost += (cost.empty() ? "" : "; ") + c;
        if (what.empty()) continue;  // the scenario as given
        // Two runs that differ only in knobs they did not need: one suggestion.
        if (std::any_of(tried.begin(), tried.end(), [&](const Tried& t) { return t.change.what == what; })) continue;
        json doc = doc_of(f.knobs);
        json e = estimate(doc);
        if (!e.value("ok", false)) continue;
        tried.push_back({{what, cost.empty() ? "none" : cost, f.tier, changed_fields(doc, r)}, doc, e});
        flags.push_back({{"least_change", !fits && pi == 0}, {"fastest", true}, {"changes", words}});
    }
    const std::size_t searched = tried.size();

    // Shorter sizes from the max-fit solver (exact at the boundary, under the band's top), more and
    // bigger cards.
    if (!fits) {
        const double top = borderline ? 1.0 : detail::band_top_factor(s);
        if (training) {
            size_suggestion(scenario, s, {"training.seq_len", 100000000, true}, r["training"]["seq_len"],
                            "sequence length", "shorter samples: changes the data", top, tried);
        } else if (base["serving"].is_object() && base["serving"].value("fills_budget", false)) {
            // An engine that fills its budget schedules sequences as they come: its settings are the sequences at
            // once (max-num-seqs) and the longest context (max-model-len). Fewer sequences of the asked context,
            // where one fits; where none does, the longest context the pool holds, one sequence at a time (vLLM
            // refuses a max-model-len its KV cache cannot hold, engine/arg checks). Shrinking every sequence so
            // that all of them fit at once ("context 80") is nothing a server is set to.
            size_suggestion(scenario, s, {"inference.batch_size", 1000000, false}, r["inference"]["batch_size"],
                            "concurrent sequences:", "fewer sequences at once: lower throughput", top, tried);
            if (base["serving"].value("max_concurrent_sequences", std::uint64_t{0}) == 0) {
                detail::Scenario one = s;
                one.inference.batch_size = 1;
                json one_doc = with_changes(scenario, {{"inference.batch_size", 1}});
                const std::size_t before = tried.size();
                size_suggestion(one_doc, one, {"inference.context_len", 100000000, true}, r["inference"]["context_len"],
                                "context", "a shorter context, one sequence at a time: lower throughput", top, tried);
                if (tried.size() > before) {
                    Tried& t = tried.back();
                    t.change.what += ", one sequence at a time";
                    t.change.set["inference.batch_size"] = 1;
                }
            }
        } else {
            size_suggestion(scenario, s, {"inference.context_len", 100000000, true}, r["inference"]["context_len"],
                            "context", "a shorter context per sequence", top, tried);
            size_suggestion(scenario, s, {"inference.batch_size", 1000000, false}, r["inference"]["batch_size"],
                            "concurrent sequences:", "fewer sequences at once: lower throughput", top, tried);
        }
        more_gpus(scenario, r, training, borderline, tried);
        bigger_card(scenario, r, borderline, tried);
    }

    json suggestions = json::array();
    for (std::size_t i = 0; i < tried.size(); ++i) {
        if (!counts(tried[i].estimate, borderline)) continue;
        json x = suggestion(tried[i], base_total);
        x.update(speed_json(tried[i].estimate, training));
        // Tokens per second against the scenario's: the step time's ratio at the same global batch, and
        // the work per step too where more GPUs take a larger one.
        const double base_rate = base_speed["tokens_per_s"];
        x["speed_vs_scenario"] = base_rate > 0 ? x["tokens_per_s"].get<double>() / base_rate : 0.0;
        if (i < searched) {
            x.update(flags[i]);
        } else {
            x["least_change"] = false;
            x["fastest"] = false;
            x["changes"] = json::array({tried[i].change.what});
        }
        suggestions.push_back(x);
    }
    // Least change first; then by tier, the fastest first within one.
    auto rank = [](const json& x) {
        int tier = 0;
        while (tier < 6 && x["tier"] != tier_name(static_cast<Tier>(tier))) ++tier;
        return std::make_tuple(x["least_change"] != true, tier, x["step_time_s"].get<double>());
    };
    std::stable_sort(suggestions.begin(), suggestions.end(),
                     [&](const json& a, const json& b) { return rank(a) < rank(b); });

    // What each single change saves, for a scenario that fits already.
    // An engine that fills its budget saves nothing on the card: what a change gives it is a larger KV pool.
    json savings = json::array();
    if (fits) {
        const bool fill = fills_budget(base);
        auto better = [&](const json& e) {
            return fill ? pool_tokens(e) > pool_tokens(base) : device_total(e) < base_total;
        };
        std::vector<Tried> singles;
        for (const Change& c : training ? training_changes(r) : inference_changes(r)) {
            json changed = with_changes(scenario, c.set);
            json e = estimate(changed);
            if (e.value("ok", false) && better(e)) singles.push_back({c, changed, e});
        }
        std::stable_sort(singles.begin(), singles.end(), [fill](const Tried& a, const Tried& b) {
            if (a.change.tier != b.change.tier) return a.change.tier < b.change.tier;
            return fill ? pool_tokens(a.estimate) > pool_tokens(b.estimate)
                        : device_total(a.estimate) < device_total(b.estimate);
        });
        for (const Tried& t : singles) savings.push_back(suggestion(t, base_total));
    }
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
    return {{"ok", true},
            {"fits", base["fits"]},
            {"verdict", base["verdict"]},
            {"include_borderline", borderline},
            {"device_total_bytes", base_total},
            {"capacity_bytes", capacity},
            {"headroom_bytes", capacity - base_total},
            {"serving", base["serving"]},
            {"step_time_s", base_step},
            {"tokens_per_s", base_speed["tokens_per_s"]},
            {"suggestions", suggestions},
            {"savings", savings},
            {"search",
             {{"candidates", search.candidates},
              {"evaluations", search.evaluations},
              {"fitting", search.fitting.size()},
              {"variants", search.variants.size()},
              {"elapsed_ms", ms}}},
            {"estimate", base}};
}

}  // namespace gpumem
