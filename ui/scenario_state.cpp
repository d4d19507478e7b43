// The typed scenario <-> the scenario document, and the core's answer read once. See
// scenario_state.h.

#include "scenario_state.h"

#include <cstdio>
#include <cstdlib>

#include "app.h"

#include <gpumem/gpumem.h>

namespace gpumem::ui {

namespace {

// A float control's value as the decimal it was given (0.85f is 0.8500000238...: a float holds 7
// significant digits), so that a fraction typed, linked or imported as 0.85 is sent as 0.85.
double Decimal(float value)
{
    char text[32];
    std::snprintf(text, sizeof(text), "%.7g", static_cast<double>(value));
    return std::strtod(text, nullptr);
}

using nlohmann::json;
using gpumem::detail::name;
using gpumem::detail::parse_setting;

// j[a][b] when both levels exist, else nullptr.
const json* Find(const json& j, const char* a, const char* b)
{
    if (!j.is_object() || !j.contains(a) || !j[a].is_object() || !j[a].contains(b))
        return nullptr;
    return &j[a][b];
}

// j[key] when j is an object that has it, else nullptr.
const json* Find(const json& j, const char* key)
{
    return j.is_object() && j.contains(key) ? &j[key] : nullptr;
}

std::uint64_t Bytes(const json& j, const char* key)
{
    const json* v = Find(j, key);
    return v != nullptr && v->is_number() ? v->get<std::uint64_t>() : 0;
}

std::string Text(const json& j)
{
    return j.is_string() ? j.get<std::string>() : j.dump();
}

// The messages of a list (errors, warnings, defaults), each on one line: they may quote what a
// config or a link said (a model_type, a field's value), which is shown through display_text.
std::vector<std::string> Texts(const json* list)
{
    std::vector<std::string> out;
    if (list != nullptr && list->is_array())
        for (const json& item : *list)
        {
            const json* message = Find(item, "message");
            const std::string text = message != nullptr ? Text(*message) : item.is_object() ? item.dump() : Text(item);
            out.push_back(gpumem::display_text(text, kMessageChars));
        }
    return out;
}

ComponentBytes Components(const json* components)
{
    ComponentBytes out{};
    for (int i = 0; i < kComponentCount; i++)
        out[i] = components != nullptr ? Bytes(*components, kComponentKeys[i]) : 0;
    return out;
}

//-----------------------------------------------------------------------------
// Writing: an empty optional leaves the field out
//-----------------------------------------------------------------------------

template <typename E>
void SetOrErase(json& section, const char* key, const std::optional<E>& value)
{
    if (value)
        section[key] = name(*value);
    else if (section.is_object())
        section.erase(key);
}

template <typename T>
void SetUnless(json& section, const char* key, T value, T unset)
{
    if (value != unset)
        section[key] = value;
    else if (section.is_object())
        section.erase(key);
}

// The object at doc[key], created when missing or not an object.
json& Section(json& doc, const char* key)
{
    if (!doc.contains(key) || !doc[key].is_object())
        doc[key] = json::object();
    return doc[key];
}

// Removes doc[key] when it is an empty object (a section whose fields are all defaults).
void DropIfEmpty(json& doc, const char* key)
{
    if (doc.contains(key) && doc[key].is_object() && doc[key].empty())
        doc.erase(key);
}

void WriteLora(json& t, const TrainingSettings& tr)
{
    json& lora = Section(t, "lora");
    lora["rank"] = tr.lora_rank;
    SetUnless(lora, "alpha", static_cast<double>(tr.lora_alpha), 0.0);
    if (tr.lora_dropout)
        lora["dropout"] = *tr.lora_dropout;
    else
        lora.erase("dropout");
    if (tr.lora_targets && !tr.lora_targets->empty())
    {
        json modules = json::array();
        for (LoraTarget target : *tr.lora_targets)
            modules.push_back(name(target));
        lora["target_modules"] = modules;
    }
    else
        lora.erase("target_modules");
}

void WriteTraining(json& s, const ScenarioState& state)
{
    const TrainingSettings& tr = state.training;
    json& t = Section(s, "training");
    t["method"] = name(tr.method);
    if (state.IsLora())
        WriteLora(t, tr);
    else
        t.erase("lora");
    SetOrErase(t, "quantization", tr.method == Method::Qlora ? tr.quantization : std::nullopt);
    SetOrErase(t, "dtype", tr.dtype);
    SetOrErase(t, "precision", tr.precision);
    SetOrErase(t, "optimizer", tr.optimizer);
    SetOrErase(t, "optimizer_state_dtype", tr.optimizer_state_dtype);
    SetOrErase(t, "activation_checkpointing", tr.checkpointing);
    SetOrErase(t, "attention", tr.attention);
    SetOrErase(t, "loss", tr.loss);
    t["batch_size"] = tr.batch_size;
    t["seq_len"] = tr.seq_len;
    SetUnless(t, "gradient_accumulation_steps", tr.grad_accum, 1);
    SetOrErase(t, "framework", tr.framework);
    SetOrErase(t, "framework_version", tr.framework_version);
    SetOrErase(t, "compile", tr.compile);
    SetUnless(t, "images", state.images, 0);
    const bool frozen = tr.method == Method::Frozen;
    SetUnless(t, "trainable_layers", frozen ? tr.trainable_layers : 0, 0);
    SetUnless(t, "train_lm_head", frozen && tr.train_lm_head, false);
    SetUnless(t, "pipeline_microbatches", state.parallel.pipeline_parallel > 1 ? tr.pipeline_microbatches : 0, 0);
    const struct
    {
        const char* key;
        const std::optional<bool>& value;
        bool applies;
    } switches[] = {{"optimizer_in_backward", tr.optimizer_in_backward, true},
                    {"activation_offloading", tr.activation_offloading, true},
                    {"double_quant", tr.double_quant, tr.method == Method::Qlora},
                    {"untie_embeddings", tr.untie_embeddings, true},
                    {"retains_previous_step", tr.retains_previous_step, true}};
    for (const auto& sw : switches)
    {
        if (sw.applies && sw.value)
            t[sw.key] = *sw.value;
        else
            t.erase(sw.key);
    }

    const ParallelSettings& par = state.parallel;
    json& e = Section(s, "engine");
    SetOrErase(e, "type", par.engine);
    const bool deepspeed = state.IsDeepSpeed();
    if (deepspeed)
        e["zero_stage"] = par.zero_stage;
    else
        e.erase("zero_stage");
    SetOrErase(e, "offload_optimizer", deepspeed ? par.offload_optimizer : std::nullopt);
    SetOrErase(e, "offload_param", deepspeed && par.zero_stage == 3 ? par.offload_param : std::nullopt);
    SetOrErase(e, "fsdp_sharding", par.engine == EngineType::Fsdp ? par.fsdp_sharding : std::nullopt);
    DropIfEmpty(s, "engine");
}

void WriteInference(json& s, const ScenarioState& state)
{
    const InferenceSettings& in = state.inference;
    json& inf = Section(s, "inference");
    inf["batch_size"] = in.concurrent_sequences;
    inf["context_len"] = in.context_len;
    if (!in.own_weight_format.empty())
        inf["weight_format"] = in.own_weight_format;
    else
        SetOrErase(inf, "weight_format", in.weight_format);
    SetOrErase(inf, "kv_cache_dtype", in.kv_cache ? in.kv_cache_dtype : std::nullopt);
    SetOrErase(inf, "engine", in.engine);
    SetUnless(inf, "kv_cache", in.kv_cache, true);
    const bool vllm = in.engine == InferenceEngine::Vllm;
    SetUnless(inf, "gpu_memory_utilization", vllm ? Decimal(in.gpu_memory_utilization) : 0.0, 0.0);
    SetUnless(inf, "gpu_layers", in.engine == InferenceEngine::LlamaCpp ? in.gpu_layers : -1, -1);
    SetUnless(inf, "max_num_batched_tokens", vllm ? in.max_num_batched_tokens : 0, 0);
    SetUnless(inf, "images", state.images, 0);
}

//-----------------------------------------------------------------------------
// Reading: the resolved value of each field the raw document gives
//-----------------------------------------------------------------------------

// The resolved value of section.key, when the raw document gives the field.
const json* Given(const json& raw, const json& resolved, const char* section, const char* key)
{
    const json* r = Find(raw, section, key);
    const json* v = Find(resolved, section, key);
    return r != nullptr && !r->is_null() && v != nullptr && !v->is_null() ? v : nullptr;
}

template <typename E>
void Take(std::optional<E>& out, const json& raw, const json& resolved, const char* section, const char* key)
{
    const json* v = Given(raw, resolved, section, key);
    out = v != nullptr && v->is_string() ? parse_setting<E>(v->get<std::string>()) : std::nullopt;
}

void Take(std::optional<bool>& out, const json& raw, const json& resolved, const char* section, const char* key)
{
    const json* v = Given(raw, resolved, section, key);
    out = v != nullptr && v->is_boolean() ? std::optional<bool>(v->get<bool>()) : std::nullopt;
}

// A number the resolved scenario holds, else `fallback`.
template <typename T>
T Number(const json& resolved, const char* section, const char* key, T fallback)
{
    const json* v = Find(resolved, section, key);
    return v != nullptr && v->is_number() ? v->get<T>() : fallback;
}

// A number the raw document gives (as resolved), else `unset`.
template <typename T>
T GivenNumber(const json& raw, const json& resolved, const char* section, const char* key, T unset)
{
    return Find(raw, section, key) != nullptr ? Number(resolved, section, key, unset) : unset;
}

void ReadLora(TrainingSettings& tr, const json& raw, const json& lora)
{
    tr.lora_rank = lora.value("rank", tr.lora_rank);
    const json* raw_lora = Find(raw, "training", "lora");
    const bool given = raw_lora != nullptr && raw_lora->is_object();
    tr.lora_alpha = given && raw_lora->contains("alpha") ? lora.value("alpha", 0.0f) : 0.0f;
    const json* dropout = Find(lora, "dropout");
    tr.lora_dropout.reset();
    if (given && raw_lora->contains("dropout") && dropout != nullptr && dropout->is_number())
        tr.lora_dropout = dropout->get<double>();
    tr.lora_targets.reset();
    const json* targets = given ? Find(*raw_lora, "target_modules") : nullptr;
    if (targets == nullptr)
        return;
    std::vector<LoraTarget> list;
    const json names = targets->is_string() ? json::array({*targets}) : *targets;
    if (names.is_array())
        for (const json& n : names)
            if (std::optional<LoraTarget> t =
                    n.is_string() ? parse_setting<LoraTarget>(n.get<std::string>()) : std::nullopt)
                list.push_back(*t);
    if (!list.empty())
        tr.lora_targets = list;
}

void ReadTraining(TrainingSettings& tr, const json& raw, const json& f)
{
    const json* method = Find(f, "training", "method");
    tr.method = method != nullptr && method->is_string()
                    ? parse_setting<Method>(method->get<std::string>()).value_or(Method::Full)
                    : Method::Full;
    if (const json* lora = Find(f, "training", "lora"); lora != nullptr && lora->is_object())
        ReadLora(tr, raw, *lora);
    Take(tr.quantization, raw, f, "training", "quantization");
    Take(tr.dtype, raw, f, "training", "dtype");
    Take(tr.precision, raw, f, "training", "precision");
    Take(tr.optimizer, raw, f, "training", "optimizer");
    Take(tr.optimizer_state_dtype, raw, f, "training", "optimizer_state_dtype");
    Take(tr.checkpointing, raw, f, "training", "activation_checkpointing");
    Take(tr.attention, raw, f, "training", "attention");
    Take(tr.loss, raw, f, "training", "loss");
    tr.batch_size = Number(f, "training", "batch_size", tr.batch_size);
    tr.seq_len = Number(f, "training", "seq_len", tr.seq_len);
    tr.grad_accum = Number(f, "training", "gradient_accumulation_steps", 1);
    Take(tr.framework, raw, f, "training", "framework");
    Take(tr.framework_version, raw, f, "training", "framework_version");
    tr.trainable_layers = GivenNumber(raw, f, "training", "trainable_layers", 0);
    const json* head = Find(raw, "training", "train_lm_head");
    tr.train_lm_head = head != nullptr && head->is_boolean() && head->get<bool>();
    tr.pipeline_microbatches = GivenNumber(raw, f, "training", "pipeline_microbatches", 0);
    Take(tr.optimizer_in_backward, raw, f, "training", "optimizer_in_backward");
    Take(tr.activation_offloading, raw, f, "training", "activation_offloading");
    Take(tr.compile, raw, f, "training", "compile");
    Take(tr.double_quant, raw, f, "training", "double_quant");
    Take(tr.untie_embeddings, raw, f, "training", "untie_embeddings");
    Take(tr.retains_previous_step, raw, f, "training", "retains_previous_step");
}

void ReadInference(InferenceSettings& in, const json& raw, const json& f)
{
    in.concurrent_sequences = Number(f, "inference", "batch_size", in.concurrent_sequences);
    in.context_len = Number(f, "inference", "context_len", in.context_len);
    const json* format = Given(raw, f, "inference", "weight_format");
    const std::string format_name = format != nullptr && format->is_string() ? format->get<std::string>() : "";
    in.weight_format = parse_setting<WeightFormat>(format_name);
    in.own_weight_format = in.weight_format || format_name.empty() ? "" : format_name;
    Take(in.kv_cache_dtype, raw, f, "inference", "kv_cache_dtype");
    Take(in.engine, raw, f, "inference", "engine");
    const json* kv = Find(f, "inference", "kv_cache");
    in.kv_cache = kv == nullptr || !kv->is_boolean() || kv->get<bool>();
    in.gpu_memory_utilization = GivenNumber(raw, f, "inference", "gpu_memory_utilization", 0.0f);
    in.gpu_layers = GivenNumber(raw, f, "inference", "gpu_layers", -1);
    in.max_num_batched_tokens = GivenNumber(raw, f, "inference", "max_num_batched_tokens", 0);
}

void ReadParallel(ParallelSettings& par, const json& raw, const json& f)
{
    Take(par.engine, raw, f, "engine", "type");
    par.zero_stage = Number(f, "engine", "zero_stage", par.zero_stage);
    Take(par.fsdp_sharding, raw, f, "engine", "fsdp_sharding");
    Take(par.offload_optimizer, raw, f, "engine", "offload_optimizer");
    Take(par.offload_param, raw, f, "engine", "offload_param");
    par.tensor_parallel = Number(f, "parallelism", "tensor_parallel_size", 1);
    par.pipeline_parallel = Number(f, "parallelism", "pipeline_parallel_size", 1);
    par.expert_parallel = Number(f, "parallelism", "expert_parallel_size", 1);
    par.context_parallel = Number(f, "parallelism", "context_parallel_size", 1);
    const json* sp = Find(f, "parallelism", "sequence_parallel");
    par.sequence_parallel = sp != nullptr && sp->is_boolean() && sp->get<bool>();
}

void ReadPerGpu(ResultView& view, const json& per_gpu)
{
    view.peak_allocated_bytes = Bytes(per_gpu, "peak_allocated_bytes");
    view.peak_reserved_bytes = Bytes(per_gpu, "peak_reserved_bytes");
    view.device_total_bytes = Bytes(per_gpu, "device_total_bytes");
    view.capacity_bytes = Bytes(per_gpu, "capacity_bytes");
    if (const json* phase = Find(per_gpu, "peak_phase"); phase != nullptr && phase->is_string())
        view.peak_phase = phase->get<std::string>();
    view.components = Components(Find(per_gpu, "components"));
    if (const json* band = Find(per_gpu, "band"); band != nullptr && band->is_object())
    {
        view.band_low_bytes = Bytes(*band, "low_bytes");
        view.band_high_bytes = Bytes(*band, "high_bytes");
        view.band_runs = Bytes(*band, "runs");
        view.band_class_runs = Bytes(*band, "class_runs");
        view.band_level = Text(band->value("level", json("")));
        view.band_origin = Text(band->value("origin", json("")));
        view.band_note = Text(band->value("note", json("")));
        const json* share = Find(*band, "oom_share");
        view.band_oom_share = share != nullptr && share->is_number() ? share->get<double>() : 0.0;
    }
    if (const json* timeline = Find(per_gpu, "timeline"); timeline != nullptr && timeline->is_array())
        for (const json& p : *timeline)
        {
            const json* phase = Find(p, "phase");
            view.timeline.push_back(
                {phase != nullptr ? Text(*phase) : "", Bytes(p, "allocated_bytes"), Components(Find(p, "components"))});
        }
}

void ReadAssumptions(ResultView& view, const json& assumptions)
{
    if (!assumptions.is_object())
        return;
    for (const auto& [key, value] : assumptions.items())
        view.factors.emplace_back(key, value.dump());
    if (const json* overheads = Find(assumptions, "overheads"); overheads != nullptr && overheads->is_object())
        for (const auto& [key, info] : overheads->items())
        {
            const json* value = Find(info, "value");
            const json* about = Find(info, "about");
            const json* unit = Find(info, "unit");
            view.overhead_factors.push_back({key, value != nullptr && value->is_number() ? value->get<double>() : 0.0,
                                             about != nullptr ? Text(*about) : "null",
                                             unit != nullptr ? Text(*unit) : "null"});
        }
}

}  // namespace

std::string ErrorText(const json& result)
{
    std::string text;
    for (const std::string& message : Texts(Find(result, "errors")))
        text += (text.empty() ? "" : "; ") + message;
    return text;
}

ResultView ReadResult(const json& r)
{
    ResultView view;
    view.ok = r.is_object() && r.value("ok", false);
    if (!view.ok)
    {
        view.errors = Texts(Find(r, "errors"));
        return view;
    }
    if (const json* per_gpu = Find(r, "per_gpu"))
        ReadPerGpu(view, *per_gpu);
    const json* u = Find(r, "utilization");
    view.utilization = u != nullptr && u->is_number() ? u->get<double>() : 0.0;
    const json* fits = Find(r, "fits");
    view.fits = fits != nullptr && fits->is_boolean() && fits->get<bool>();
    const json* verdict = Find(r, "verdict");
    view.verdict = verdict != nullptr && verdict->is_string() ? verdict->get<std::string>()
                                                              : (view.fits ? "fits" : "does_not_fit");
    if (const json* needed = Find(r, "gpus_needed"); needed != nullptr && needed->is_number())
        view.gpus_needed = needed->get<std::uint64_t>();
    view.host_bytes = Bytes(r, "host_bytes");
    if (const json* p = Find(r, "parameters"); p != nullptr && p->is_object())
    {
        view.has_parameters = true;
        view.params_total = Bytes(*p, "total");
        view.params_trainable = Bytes(*p, "trainable");
        if (const json* per = Find(*p, "per_component"))
        {
            view.params_vision = Bytes(*per, "vision");
            view.params_experts = Bytes(*per, "experts");
        }
    }
    if (const json* sv = Find(r, "serving"); sv != nullptr && sv->is_object())
    {
        view.has_serving = true;
        view.kv_cache_tokens = Bytes(*sv, "kv_cache_tokens");
        view.kv_cache_blocks = Bytes(*sv, "kv_cache_blocks");
        view.max_concurrent_sequences = Bytes(*sv, "max_concurrent_sequences");
        view.at_context_len = Bytes(*sv, "at_context_len");
        view.requested_sequences = Bytes(*sv, "requested_sequences");
        view.kv_cache_bytes = Bytes(*sv, "kv_cache_bytes");
        view.fills_budget = Find(*sv, "fills_budget") != nullptr && (*sv)["fills_budget"] == true;
    }
    if (const json* layout = Find(r, "layout"); layout != nullptr && Find(*layout, "text") != nullptr)
        view.layout_text = Text((*layout)["text"]);
    view.warnings = Texts(Find(r, "warnings"));
    view.defaults_applied = Texts(Find(r, "defaults_applied"));
    if (const json* e = Find(r, "explain"); e != nullptr && e->is_object())
        view.explain = *e;
    if (const json* a = Find(r, "assumptions"))
        ReadAssumptions(view, *a);
    if (const json* model = Find(r, "model"); model != nullptr && Find(*model, "name") != nullptr)
        view.model_name = gpumem::display_text(Text((*model)["name"]), kNameChars);
    else
        view.model_name = "null";
    if (const json* s = Find(r, "scenario"); s != nullptr && s->is_object())
    {
        view.resolved_json = *s;
        ReadScenario(view.resolved, *s, *s);
        const json* gpu = Find(*s, "hardware", "gpu");
        view.resolved_gpu = gpu != nullptr && gpu->is_string() ? gpu->get<std::string>() : "";
        const json* format = Find(*s, "inference", "weight_format");
        view.resolved_weight_format = format != nullptr && format->is_string() ? format->get<std::string>() : "";
    }
    return view;
}

json ModelJson(const AppState& state)
{
    const ModelChoice& model = state.scenario.model;
    switch (model.source)
    {
    case ModelSource::Preset:
        if (state.presets.empty())
            return nullptr;
        return {{"preset", state.presets[model.preset_index].id}};
    case ModelSource::Hub:
        if (state.hub.config.is_null())
            return nullptr;
        return {{"hf_config", state.hub.config}, {"name", state.hub.id}};
    case ModelSource::Config:
        if (model.config.is_null())
            return nullptr;
        return {{"hf_config", model.config}, {"name", model.config_name}};
    case ModelSource::Manual:
    {
        const ManualModel& m = model.manual;
        return {{"num_parameters", m.num_parameters},
                {"num_layers", m.num_layers},
                {"hidden_size", m.hidden_size},
                {"num_attention_heads", m.num_attention_heads},
                {"num_key_value_heads", m.num_key_value_heads},
                {"intermediate_size", m.intermediate_size},
                {"vocab_size", m.vocab_size},
                {"tie_word_embeddings", m.tie_word_embeddings}};
    }
    }
    return nullptr;
}

json BuildScenario(const AppState& state)
{
    const ScenarioState& sc = state.scenario;
    json s = sc.extra.is_object() ? sc.extra : json::object();
    s["version"] = 1;
    s["model"] = ModelJson(state);
    if (s["model"].is_null())
        s.erase("model");
    s["mode"] = name(sc.mode);
    if (sc.IsInference())
        WriteInference(s, sc);
    else
        WriteTraining(s, sc);

    const ParallelSettings& par = sc.parallel;
    const bool inference = sc.IsInference();
    json& p = Section(s, "parallelism");
    SetUnless(p, "tensor_parallel_size", par.tensor_parallel, 1);
    SetUnless(p, "pipeline_parallel_size", inference ? 1 : par.pipeline_parallel, 1);
    SetUnless(p, "expert_parallel_size", par.expert_parallel, 1);
    SetUnless(p, "context_parallel_size", inference ? 1 : par.context_parallel, 1);
    SetUnless(p, "sequence_parallel", !inference && par.tensor_parallel > 1 && par.sequence_parallel, false);
    DropIfEmpty(s, "parallelism");

    const HardwareSettings& hws = sc.hardware;
    json& hw = Section(s, "hardware");
    hw["num_gpus"] = hws.num_gpus;
    SetUnless(hw, "gpu_memory_gb", static_cast<double>(hws.custom_gpu_gb), 0.0);
    // The card: a catalogue id, or an imported card's name and size (a custom size above wins).
    if (!state.gpus.empty())
    {
        const GpuEntry& gpu = state.gpus[hws.gpu_index];
        hw["gpu"] = gpu.id;
        if (gpu.imported && hws.custom_gpu_gb <= 0.0f)
            hw["gpu_memory_gb"] = gpu.memory_gb;
    }

    // The factors are the Advanced panel's (an imported document's are read into it): a factor put
    // back to its default leaves the document.
    s.erase("overheads");
    if (sc.overheads.is_object() && !sc.overheads.empty())
    {
        json& o = Section(s, "overheads");
        for (const auto& [key, value] : sc.overheads.items())
            o[key] = value;
    }
    return s;
}

void ReadScenario(ScenarioState& s, const json& raw, const json& f)
{
    s.mode = f.value("mode", "training") == "inference" ? Mode::Inference : Mode::Training;
    ReadTraining(s.training, raw, f);
    ReadInference(s.inference, raw, f);
    ReadParallel(s.parallel, raw, f);
    s.images =
        s.IsInference() ? GivenNumber(raw, f, "inference", "images", 0) : GivenNumber(raw, f, "training", "images", 0);
    s.hardware.num_gpus = Number(f, "hardware", "num_gpus", s.hardware.num_gpus);
    s.hardware.custom_gpu_gb =
        Find(raw, "hardware", "gpu") == nullptr || Find(raw, "hardware", "gpu_memory_gb") != nullptr
            ? GivenNumber(raw, f, "hardware", "gpu_memory_gb", 0.0f)
            : 0.0f;
    s.overheads = json::object();
    if (const json* o = Find(raw, "overheads"); o != nullptr && o->is_object())
        for (const auto& [key, value] : o->items())
            if (value.is_number())
                s.overheads[key] = value;
}

}  // namespace gpumem::ui
