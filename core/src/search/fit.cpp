// What would make a scenario fit (gpumem.h, fit()). Every candidate is the scenario with a few
// fields changed, evaluated by estimate() and, for the sizes, by the max-fit solvers: no second
// model of memory. Candidates are ranked by how much of the run they change (the tiers below), then
// by the memory they leave free.

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "gpumem/gpumem.h"

namespace gpumem {

namespace {

using json = nlohmann::json;

// How much a change alters the run, least first. The order is a judgement, stated so users can
// weigh it: free rewrites of the same computation, then slower steps, then different numerics of
// the optimizer, then a different batch or data, then more or other hardware, then a different
// fine-tuning method or model precision.
enum class Tier { SameMath, Slower, Numerics, Data, Hardware, Method };

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
    if (b > 1) {
        // The same global batch from smaller micro-batches: the largest divisor of b that fits.
        for (std::uint64_t smaller = b / 2; smaller >= 1; smaller = smaller / 2) {
            if (b % smaller) continue;
            out.push_back(
                {"micro-batch " + std::to_string(smaller) + " with " + std::to_string(ga * (b / smaller)) +
                     " accumulation steps",
                 "the same global batch in more, smaller steps: slower",
                 Tier::Data,
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

json suggestion(const Tried& t, double base_total) {
    const double total = device_total(t.estimate);
    return {{"change", t.change.what},
            {"cost", t.change.cost},
            {"tier", tier_name(t.change.tier)},
            {"set", t.change.set},
            {"fits", t.estimate["fits"]},
            {"device_total_bytes", total},
            {"saves_bytes", base_total - total},
            {"host_bytes", t.estimate["host_bytes"]},
            {"scenario", t.scenario},
            {"estimate", t.estimate}};
}

// The largest value of a max-fit field, as a suggestion; none when it is 0 (nothing fits) or unchanged.
void size_suggestion(const json& scenario, const json& fit, const char* field, std::uint64_t current, const char* what,
                     const char* cost, std::vector<Tried>& out) {
    for (const json& s : fit["solvers"]) {
        if (s["field"] != field) continue;
        const std::uint64_t v = s["value"];
        if (v == 0 || v >= current) return;
        Change c{std::string(what) + " " + std::to_string(v), cost, Tier::Data, {{field, v}}};
        json changed = with_changes(scenario, c.set);
        out.push_back({c, changed, estimate(changed)});
    }
}

// The fewest GPUs of the same kind that fit, doubling the data-parallel replicas (training: with the
// state sharded over them, by the scenario's own sharding engine or else ZeRO-3) or the tensor
// parallelism (inference), up to 1024 GPUs.
void more_gpus(const json& scenario, const json& r, bool training, std::vector<Tried>& out) {
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
        if (e["fits"] == true) {
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
void bigger_card(const json& scenario, const json& r, std::vector<Tried>& out) {
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
        if (e.value("ok", false) && e["fits"] == true) {
            Change c{"GPU: " + g["name"].get<std::string>() + " (" + gib(g["memory_bytes"].get<double>()) + ")",
                     "other hardware",
                     Tier::Hardware,
                     {{"hardware.gpu", g["id"]}}};
            out.push_back({c, changed, e});
            return;
        }
    }
}

}  // namespace

json fit(const json& scenario) {
    json base = estimate(scenario);
    if (!base.value("ok", false)) return base;
    const json& r = base["scenario"];
    const bool training = r["mode"] == "training";
    const double base_total = device_total(base);
    const double capacity = base["per_gpu"]["capacity_bytes"];

    std::vector<Tried> tried;
    for (const Change& c : training ? training_changes(r) : inference_changes(r)) {
        json changed = with_changes(scenario, c.set);
        json e = estimate(changed);
        if (e.value("ok", false)) tried.push_back({c, changed, e});
    }
    // Shorter sizes from the max-fit solvers (exact at the boundary).
    json sizes = maxfit(scenario);
    if (sizes.value("ok", false)) {
        if (training) {
            size_suggestion(scenario, sizes, "training.seq_len", r["training"]["seq_len"], "sequence length",
                            "shorter samples: changes the data", tried);
        } else {
            size_suggestion(scenario, sizes, "inference.context_len", r["inference"]["context_len"], "context",
                            "a shorter context per sequence", tried);
            size_suggestion(scenario, sizes, "inference.batch_size", r["inference"]["batch_size"],
                            "concurrent sequences:", "fewer sequences at once: lower throughput", tried);
        }
    }
    more_gpus(scenario, r, training, tried);
    bigger_card(scenario, r, tried);

    // The ones that fit, least change first; within a tier the one closest to the scenario as given
    // (the smallest saving that fits). When the scenario fits already, every change that lowers its
    // peak, the largest saving first within a tier: what each buys.
    const bool fits = base["fits"] == true;
    std::vector<const Tried*> ranked;
    for (const Tried& t : tried)
        if (fits ? device_total(t.estimate) < base_total : t.estimate["fits"] == true) ranked.push_back(&t);
    std::stable_sort(ranked.begin(), ranked.end(), [fits](const Tried* a, const Tried* b) {
        if (a->change.tier != b->change.tier) return a->change.tier < b->change.tier;
        return fits ? device_total(a->estimate) < device_total(b->estimate)
                    : device_total(a->estimate) > device_total(b->estimate);
    });

    // Nothing alone fits: the changes that are not hardware or method, combined in the ranked order
    // until it fits, as one more suggestion.
    json combined = nullptr;
    if (!fits && std::none_of(tried.begin(), tried.end(), [](const Tried& t) {
            return t.change.tier < Tier::Hardware && t.estimate["fits"] == true;
        })) {
        std::vector<const Tried*> order;
        for (const Tried& t : tried)
            if (t.change.tier < Tier::Hardware && device_total(t.estimate) < base_total) order.push_back(&t);
        std::stable_sort(order.begin(), order.end(), [](const Tried* a, const Tried* b) {
            return device_total(a->estimate) < device_total(b->estimate);
        });
        json s = scenario, set = json::object();
        std::string what;
        Tier tier = Tier::SameMath;
        for (const Tried* t : order) {
            json next = with_changes(s, t->change.set);
            json e = estimate(next);
            if (!e.value("ok", false) || device_total(e) >= device_total(estimate(s))) continue;
            s = next;
            for (auto& [k, v] : t->change.set.items()) set[k] = v;
            what += (what.empty() ? "" : " + ") + t->change.what;
            tier = std::max(tier, t->change.tier);
            if (e["fits"] == true) {
                Tried together{{what, "the costs of each change together", tier, set}, s, e};
                combined = suggestion(together, base_total);
                break;
            }
        }
    }

    json suggestions = json::array();
    for (const Tried* t : ranked) suggestions.push_back(suggestion(*t, base_total));
    if (!combined.is_null()) suggestions.push_back(combined);
    return {{"ok", true},
            {"fits", base["fits"]},
            {"device_total_bytes", base_total},
            {"capacity_bytes", capacity},
            {"headroom_bytes", capacity - base_total},
            {"suggestions", suggestions},
            {"estimate", base}};
}

}  // namespace gpumem
