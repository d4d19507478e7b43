// From a scenario to the result document: the peak phase, the three figures, fit and GPUs needed.

#include <algorithm>
#include <cmath>

#include "band/band.h"
#include "memory/memory.h"

namespace gpumem {

using detail::json;

namespace detail {

Figures evaluate(const Scenario& s) {
    Figures f;
    f.breakdown = s.mode == Mode::Training ? training_memory(s) : inference_memory(s);
    const auto& tl = f.breakdown.timeline;
    for (std::size_t i = 0; i < tl.size(); ++i)
        if (tl[i].allocated() > tl[f.peak].allocated()) f.peak = i;
    f.allocated = tl.empty() ? 0 : tl[f.peak].allocated();
    // Slack on what the caching allocator hands out piecemeal; a preallocated KV pool is one block, and so
    // are the weights vLLM loads before it profiles (it counts their allocated bytes and empties the cache).
    double pooled = 0;
    if (f.breakdown.claimed > 0 && !tl.empty() && tl[f.peak].bytes.has(Component::KvCache)) {
        pooled = tl[f.peak].bytes[Component::KvCache];
        if (s.mode == Mode::Inference && s.inference.engine == InferenceEngine::Vllm)
            pooled += tl[f.peak].bytes[Component::Weights];
    }
    Explanation& ex = f.breakdown.explain;
    const Factor per_gib{"bytes per GiB", static_cast<double>(kGiB)};
    f.slack = ex.product("allocator_slack", "the caching allocator's slack on what it hands out piecemeal",
                         {{"allocated at the peak, less what an engine preallocates (KV pool; vLLM: and weights)",
                           f.allocated - pooled, "bytes"},
                          {"allocator_fragmentation (tunable)", s.tunable(Tunable::AllocatorFragmentation)}},
                         "PyTorch CUDACachingAllocator: reserved exceeds allocated (block rounding, splits); fitted to "
                         "the published reserved-vs-allocated pairs");
    f.reserved = f.allocated + f.slack;
    // A load-time peak the allocator kept cached (reserved_floor) replaces the slack when it is the larger.
    if (f.breakdown.reserved_floor > f.reserved) {
        f.slack = ex.rule("reserved_at_load", "the segments cached while the model loaded, beyond the step's peak",
                          f.breakdown.reserved_floor - f.allocated, "the load-time peak - allocated at the peak",
                          {{"load-time peak kept cached", f.breakdown.reserved_floor, "bytes"},
                           {"allocated at the peak", f.allocated, "bytes"},
                           {"allocator_slack it replaces", f.slack, "bytes"}},
                          "PyTorch CUDACachingAllocator keeps freed segments until empty_cache()");
        f.reserved = f.allocated + f.slack;
    }
    f.context = ex.product("cuda_context", "the CUDA context and kernels, outside the allocator",
                           {{"cuda_context_gib (tunable)", s.tunable(Tunable::CudaContextGib), "GiB"}, per_gib},
                           "nvidia-smi minus torch.cuda.memory_reserved on an idle process (docs/memory-model.md)");
    if (s.hardware.num_gpus > 1)
        f.context += ex.product("nccl_buffers", "NCCL's communication buffers, outside the allocator",
                                {{"nccl_buffers_gib (tunable)", s.tunable(Tunable::NcclBuffersGib), "GiB"}, per_gib},
                                "NCCL_BUFFSIZE x channels x peers (docs/memory-model.md)");
    f.device = f.reserved + f.context + f.breakdown.outside_allocator;
    // An engine that claims a share of the card up front (vLLM) shows that share in nvidia-smi; a phase whose
    // reserved memory and context go past the claim (images encoded beside a full KV pool) shows that instead:
    // nvidia-smi never shows less than what the process reserved.
    if (f.breakdown.claimed > 0) {
        const double held = f.device;  // reserved + CUDA context (+ NCCL) + outside the allocator, at the peak
        f.context = ex.rule("engine_claim_rest", "the rest of the engine's claim (context, graphs, unused pool)",
                            std::max(0.0, std::max(f.breakdown.claimed, held) - f.reserved),
                            "max(the engine's claim, reserved + context at the peak) - reserved at the peak",
                            {{"the engine's claim", f.breakdown.claimed, "bytes"},
                             {"reserved", f.reserved, "bytes"},
                             {"reserved + context at the peak", held, "bytes"}},
                            "the engine preallocates its share at start-up (nvidia-smi shows it)");
        f.device = std::max(f.breakdown.claimed, held);
    }
    f.fits = f.device <= static_cast<double>(s.hardware.gpu_memory_bytes) && f.breakdown.engine_fits;
    return f;
}

}  // namespace detail

namespace {

using detail::evaluate;
using detail::Figures;

// Beyond this a per-GPU figure is a sign of absurd input, not a plan: 2^62 bytes (4 EiB).
constexpr double kMaxBytes = 4.6e18;

std::uint64_t bytes(double b) { return b <= 0 ? 0 : static_cast<std::uint64_t>(std::llround(b)); }

// Parameters by component, as the estimate's "parameters.per_component" and params()' "components".
json component_counts(const ParamCount& c) {
    return {{"embedding", c.embedding}, {"attention", c.attention}, {"mlp", c.mlp},       {"norms", c.norms},
            {"lm_head", c.lm_head},     {"experts", c.experts},     {"vision", c.vision}, {"projector", c.projector}};
}

// The smallest number of GPUs on which this scenario fits, growing the data-parallel size for a
// training engine that shards state, or the pipeline (layers across cards, as device_map="auto"
// does) for inference. Null when more GPUs of this kind would not help.
json gpus_needed(const detail::Scenario& s, const Figures& f, std::vector<std::string>& notes) {
    if (f.fits) return s.hardware.num_gpus;
    detail::Scenario trial = s;
    if (s.mode == detail::Mode::Inference) {
        const auto engine = s.inference.engine;
        if (engine != detail::InferenceEngine::Transformers && engine != detail::InferenceEngine::LlamaCpp) {
            // The serving engines (vLLM, SGLang, TGI, TensorRT-LLM) grow tensor parallelism over the heads.
            for (std::uint64_t tp = s.parallel.tp + 1; tp <= s.model.num_attention_heads; ++tp) {
                if (s.model.num_attention_heads % tp ||
                    (s.model.num_key_value_heads % tp && tp % s.model.num_key_value_heads))
                    continue;
                trial.parallel.tp = tp;
                trial.hardware.num_gpus = trial.parallel.world();
                if (evaluate(trial).fits) return trial.hardware.num_gpus;
            }
            notes.push_back("does not fit at any tensor-parallel size the heads allow");
            return nullptr;
        }
        for (std::uint64_t pp = s.parallel.pp + 1; pp <= s.model.num_layers; ++pp) {
            trial.parallel.pp = pp;
            trial.hardware.num_gpus = trial.parallel.world();
            if (evaluate(trial).fits) return trial.hardware.num_gpus;
        }
        notes.push_back("does not fit even with one layer per GPU: use a smaller weight format or context");
        return nullptr;
    }
    // Memory falls as dp grows; the first dp that fits, by doubling then bisecting (0: none up to
    // a million GPUs).
    auto first_fitting_dp = [](detail::Scenario trial) -> std::uint64_t {
        auto fits_at = [&trial](std::uint64_t dp) {
            trial.parallel.dp = dp;
            trial.hardware.num_gpus = trial.parallel.world();
            return evaluate(trial).fits;
        };
        std::uint64_t lo = trial.parallel.dp, hi = trial.parallel.dp;
        while (!fits_at(hi)) {
            lo = hi;
            hi *= 2;
            if (hi > (1u << 20)) return 0;
        }
        while (hi - lo > 1) {
            std::uint64_t mid = lo + (hi - lo) / 2;
            (fits_at(mid) ? hi : lo) = mid;
        }
        return hi;
    };
    const auto& e = s.engine;
    bool shards = (e.type == detail::EngineType::DeepSpeed || e.type == detail::EngineType::MegatronDeepSpeed)
                      ? e.zero_stage > 0
                  : e.type == detail::EngineType::Fsdp ? e.fsdp_sharding != detail::FsdpSharding::NoShard
                                                       : e.type == detail::EngineType::Megatron;
    const std::uint64_t model_parallel = s.parallel.tp * s.parallel.pp * s.parallel.cp;
    if (!shards) {
        // Every GPU of this engine holds the whole model state: more of them alone do not help, but
        // the same run sharded with ZeRO-3 may fit, and on how many GPUs is what the user needs next.
        trial.engine.type = detail::EngineType::DeepSpeed;
        trial.engine.zero_stage = 3;
        const std::uint64_t dp = first_fitting_dp(trial);
        const std::string engine =
            std::string(detail::name(e.type)) + (e.type == detail::EngineType::Fsdp ? " (no_shard)" : "");
        notes.push_back(
            "with engine " + engine + " every GPU holds the whole model state, so more GPUs alone do not help; " +
            (dp > 0 ? "sharded with DeepSpeed ZeRO-3 (engine.type \"deepspeed\", engine.zero_stage 3) it fits on " +
                          std::to_string(dp * model_parallel) + " GPUs"
                    : std::string("it does not fit even sharded with ZeRO-3: the unsharded part (activations, "
                                  "gathered layers) alone exceeds the card")));
        return nullptr;
    }
    const std::uint64_t dp = first_fitting_dp(trial);
    if (dp == 0) {
        notes.push_back(
            "does not fit on up to a million GPUs: the unsharded part (activations, gathered layers) "
            "alone exceeds the card");
        return nullptr;
    }
    return dp * model_parallel;
}

// The components a phase lists, by name, as whole bytes.
void listed_components(const detail::ComponentBytes& b, json& out) {
    for (std::size_t i = 0; i < detail::kComponents; ++i) {
        const auto c = static_cast<detail::Component>(i);
        if (b.has(c)) out[detail::name(c)] = bytes(b[c]);
    }
}

// Every component at the peak (zero when the peak phase has none), the slack and context as overheads.
json peak_components(const Figures& f) {
    json components = json::object();
    for (const char* name : detail::kComponentNames) components[name] = 0;
    listed_components(f.breakdown.timeline[f.peak].bytes, components);
    // Paged optimizer state is on the GPU but outside the allocator; it shows under its own name too.
    if (f.breakdown.outside_allocator > 0)
        components["optimizer_states"] =
            components["optimizer_states"].get<std::uint64_t>() + bytes(f.breakdown.outside_allocator);
    components["overheads"] = bytes(f.slack + f.context);
    return components;
}

// Why each figure is what it is: the recorded figures, each phase's components as sums of them, and
// the peak's components, overheads included (slack + context, or the rest of an engine's claim).
json explain_json(const detail::Scenario& s, const Figures& f) {
    json doc = f.breakdown.explain.doc();
    if (doc.is_null()) return nullptr;
    const char* peak_name = f.breakdown.timeline[f.peak].name;
    json peak = doc["phases"].contains(peak_name) ? doc["phases"][peak_name] : json::object();
    if (f.breakdown.outside_allocator > 0) {
        if (!peak.contains("optimizer_states")) peak["optimizer_states"] = json::array();
        peak["optimizer_states"].push_back(
            {{"figure", "paged_optimizer_state"}, {"bytes", f.breakdown.outside_allocator}});
    }
    // The overheads' terms: the figures evaluate() recorded, in the order it added them.
    json overheads = json::array();
    const char* slack = doc["figures"].contains("reserved_at_load") ? "reserved_at_load" : "allocator_slack";
    const char* terms[] = {slack, f.breakdown.claimed > 0 ? "engine_claim_rest" : "cuda_context",
                           f.breakdown.claimed > 0 || s.hardware.num_gpus == 1 ? nullptr : "nccl_buffers"};
    for (const char* key : terms)
        if (key != nullptr) overheads.push_back({{"figure", key}, {"bytes", doc["figures"][key]["value"]}});
    peak["overheads"] = overheads;
    doc["peak_phase"] = peak_name;
    doc["peak"] = peak;
    return doc;
}

json timeline_json(const Figures& f) {
    json timeline = json::array();
    for (const auto& p : f.breakdown.timeline) {
        json c = json::object();
        listed_components(p.bytes, c);
        timeline.push_back({{"phase", p.name}, {"allocated_bytes", bytes(p.allocated())}, {"components", c}});
    }
    return timeline;
}

// The figures behind the components, with every tunable's value, unit and doc.
json assumptions_json(const detail::Scenario& s, const Figures& f) {
    json overheads = json::object();
    for (const detail::TunableRow& t : detail::kTunables)
        overheads[t.name] = {{"value", s.overheads[t.id]}, {"unit", t.unit}, {"about", t.doc}};
    json assumptions = f.breakdown.assumptions.doc().is_null() ? json::object() : f.breakdown.assumptions.doc();
    assumptions["overheads"] = overheads;
    return assumptions;
}

json parameters_json(const detail::Scenario& s, const json& assumptions) {
    json params = {{"total", s.params.total},
                   {"active", s.params.active},
                   {"exact", s.params.exact},
                   {"embedding", s.params.embedding},
                   {"per_component", component_counts(s.params)},
                   {"language_model", s.params.language_model},
                   {"mtp_not_in_total", s.params.mtp}};
    if (s.mode == detail::Mode::Training) {
        double lora = assumptions.value("lora_parameters_per_gpu", -1.0);
        double partial = assumptions.value("trainable_parameters_total", -1.0);  // method frozen
        params["trainable"] = lora >= 0      ? bytes(lora * static_cast<double>(s.parallel.tp * s.parallel.pp))
                              : partial >= 0 ? bytes(partial)
                                             : s.params.total;
    } else {
        params["trainable"] = 0;
    }
    return params;
}

// The layout in words, so that a GPU count never silently means replicas: how many copies of the model run
// and over how many GPUs each is split, and how.
json layout_json(const detail::Scenario& s) {
    const auto& x = s.parallel;
    const std::uint64_t per_replica = x.tp * x.pp * x.cp;
    std::string split;
    auto add = [&split](std::uint64_t n, const char* how) {
        if (n > 1) split += (split.empty() ? "" : " x ") + std::string(how) + " " + std::to_string(n);
    };
    add(x.tp, "tensor parallel");
    add(x.pp, "pipeline parallel");
    add(x.cp, "context parallel");
    const bool serving = s.mode == detail::Mode::Inference;
    const auto engine = s.inference.engine;
    const bool server = engine != detail::InferenceEngine::Transformers && engine != detail::InferenceEngine::LlamaCpp;
    const std::string what =
        serving ? std::string(detail::name(engine)) + (server ? " server" : " process") : "model copy";
    std::string text;
    if (x.dp == 1 && per_replica == 1) text = "one GPU";
    else if (x.dp == 1) text = "one " + what + " split over " + std::to_string(per_replica) + " GPUs (" + split + ")";
    else if (per_replica == 1)
        text = std::to_string(x.dp) + (serving ? " replicas, one GPU each: every GPU holds the whole model"
                                               : " data-parallel ranks, one GPU each");
    else
        text = std::to_string(x.dp) + (serving ? " replicas" : " data-parallel ranks") + " of " +
               std::to_string(per_replica) + " GPUs each (" + split + ")";
    if (!serving && x.ep > 1) text += ", expert parallel " + std::to_string(x.ep);
    return {{"replicas", x.dp}, {"gpus_per_replica", per_replica}, {"text", text}};
}

json model_json(const detail::Scenario& s) {
    return {{"name", s.model.name},
            {"model_type", s.model.model_type},
            {"source", s.model_source},
            {"num_layers", s.model.num_layers},
            {"hidden_size", s.model.hidden_size},
            {"num_attention_heads", s.model.num_attention_heads},
            {"num_key_value_heads", s.model.num_key_value_heads},
            {"head_dim", s.model.head_dim},
            {"intermediate_size", s.model.intermediate_size},
            {"vocab_size", s.model.vocab_size},
            {"max_position_embeddings", s.model.max_position_embeddings},
            {"checkpoint_dtype", s.model.checkpoint_dtype}};
}

}  // namespace

// One evaluation with the details on, then the document: model, parameters, per-GPU figures at the
// peak and over the timeline, fit and GPUs needed, and what the figures rest on.
json detail::estimate_result(const Scenario& scenario, Figures* figures) {
    Scenario with_details = scenario;
    with_details.details = true;
    const Scenario& s = with_details;
    Figures f = evaluate(s);
    if (figures) *figures = f;
    const auto& tl = f.breakdown.timeline;
    if (!std::isfinite(f.device) || f.device > kMaxBytes)
        return detail::error_document(
            {{"", "the estimate exceeds 4 EiB per GPU: check the model and batch sizes", ""}});
    json components = peak_components(f);
    json timeline = timeline_json(f);
    std::vector<std::string> warnings = s.warnings;
    warnings.insert(warnings.end(), f.breakdown.warnings.begin(), f.breakdown.warnings.end());
    json needed = gpus_needed(s, f, warnings);
    double cap = static_cast<double>(s.hardware.gpu_memory_bytes);
    json assumptions = assumptions_json(s, f);
    json params = parameters_json(s, assumptions);
    // The error band from the calibration's runs when it has some, else the bundled validation set's.
    json resolved = s.to_json();
    const std::string key = detail::scenario_key(resolved);
    std::string origin;
    const std::vector<detail::BandRun>& runs = detail::band_runs(s, &origin);
    detail::Band band = detail::error_band(s, runs, key, f.device, cap);
    band.origin = origin;
    if (f.breakdown.claimed > 0) detail::pin_to_claim(band, f.device, cap);
    json result = {{"ok", true},
                   {"version", version()},
                   {"model", model_json(s)},
                   {"parameters", params},
                   {"per_gpu",
                    {{"peak_allocated_bytes", bytes(f.allocated)},
                     {"peak_reserved_bytes", bytes(f.reserved)},
                     {"device_total_bytes", bytes(f.device)},
                     {"capacity_bytes", s.hardware.gpu_memory_bytes},
                     {"band", detail::band_json(band, detail::band_class(s), f.device)},
                     {"components", components},
                     {"peak_phase", tl[f.peak].name},
                     {"timeline", timeline}}},
                   {"host_bytes", bytes(f.breakdown.host_bytes)},
                   {"nvme_bytes", bytes(f.breakdown.nvme_bytes)},
                   {"fits", f.fits},
                   {"verdict", detail::verdict(band, cap, f.fits)},
                   {"serving", f.breakdown.serving.doc()},
                   {"utilization", cap > 0 ? std::round(f.device / cap * 10000) / 10000 : 0.0},
                   {"gpus_needed", needed},
                   {"layout", layout_json(s)},
                   {"warnings", warnings},
                   {"defaults_applied", s.defaults_applied},
                   {"assumptions", assumptions},
                   {"scenario", resolved},
                   {"scenario_key", key}};
    if (s.explain) result["explain"] = explain_json(s, f);
    return result;
}

json params(const json& hf_config) {
    ModelRead read = read_hf_config(hf_config, "");
    if (!read.model) return detail::error_document(read.issues);
    ParamCount c = count_parameters(*read.model);
    return {{"ok", true},
            {"total", c.total},
            {"active", c.active},
            {"trainable", c.total},
            {"components", component_counts(c)},
            {"language_model", c.language_model},
            {"mtp", c.mtp},
            {"per_layer", c.per_layer},
            {"checkpoint_bytes", c.checkpoint_bytes},
            {"checkpoint_bytes_exact", c.checkpoint_bytes_exact},
            {"model",
             {{"model_type", read.model->model_type},
              {"architecture", read.model->architecture},
              {"quantization_method", read.model->quantization ? read.model->quantization->method : ""},
              {"quantization_format", read.model->quantization ? read.model->quantization->format : ""},
              {"num_layers", read.model->num_layers},
              {"hidden_size", read.model->hidden_size},
              {"vocab_size", read.model->vocab_size},
              {"tie_word_embeddings", read.model->tie_word_embeddings},
              {"checkpoint_dtype", read.model->checkpoint_dtype}}},
            {"warnings", read.warnings}};
}

}  // namespace gpumem
