// The application layer: state → scenario → estimate, and the page layout. See app.h.

#include "app.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstdio>
#include <optional>

#include "imgui.h"
#include "panel_helpers.h"
#include "panels.h"

#include <gpumem/gpumem.h>

namespace gpumem::ui {

namespace {

// The model the page opens on when the catalogue has it.
constexpr const char* kPreferredPreset = "meta-llama/Llama-3.1-8B";

// j[a][b] when both levels exist, else nullptr.
const nlohmann::json* Find(const nlohmann::json& j, const char* a, const char* b)
{
    if (!j.is_object() || !j.contains(a) || !j[a].is_object() || !j[a].contains(b))
        return nullptr;
    return &j[a][b];
}

std::string FilledString(const nlohmann::json& j, const char* a, const char* b, const char* fallback)
{
    const nlohmann::json* v = Find(j, a, b);
    return v != nullptr && v->is_string() ? v->get<std::string>() : fallback;
}

int FindInt(const nlohmann::json& j, const char* a, const char* b, int fallback)
{
    const nlohmann::json* v = Find(j, a, b);
    return v != nullptr && v->is_number_integer() ? v->get<int>() : fallback;
}

}  // namespace

//-----------------------------------------------------------------------------
// [SECTION] State → scenario → estimate
//-----------------------------------------------------------------------------

void AppInit(AppState& state)
{
    state.version = gpumem::version();
    state.settings = gpumem::settings();

    for (const nlohmann::json& p : gpumem::list_presets())
    {
        PresetEntry entry;
        entry.id = p.value("id", "");
        entry.model_type = p.value("model_type", "");
        entry.total_params = p.value("total_params", std::uint64_t{0});
        entry.gated = p.value("gated", false);
        state.presets.push_back(entry);
    }
    for (const nlohmann::json& g : gpumem::list_gpus())
    {
        GpuEntry entry;
        entry.id = g.value("id", "");
        entry.name = g.value("name", entry.id);
        entry.memory_bytes = g.value("memory_bytes", std::uint64_t{0});
        state.gpus.push_back(entry);
    }

    state.preset_index = 0;
    for (int i = 0; i < static_cast<int>(state.presets.size()); i++)
        if (state.presets[i].id == kPreferredPreset)
            state.preset_index = i;

    // Ask the core what it assumes for a bare scenario, and start the controls from there:
    // the page then opens on exactly the defaults the CLI would use.
    nlohmann::json bare = {{"version", 1}};
    if (!state.presets.empty())
        bare["model"]["preset"] = state.presets[state.preset_index].id;
    const nlohmann::json first = gpumem::estimate(bare);
    if (first.value("ok", false) && first.contains("scenario"))
    {
        const nlohmann::json& filled = first["scenario"];
        state.batch_size = FindInt(filled, "training", "batch_size", state.batch_size);
        state.seq_len = FindInt(filled, "training", "seq_len", state.seq_len);
        state.concurrent_sequences = FindInt(filled, "inference", "batch_size", state.concurrent_sequences);
        state.context_len = FindInt(filled, "inference", "context_len", state.context_len);
        state.num_gpus = FindInt(filled, "hardware", "num_gpus", state.num_gpus);
        if (const nlohmann::json* gpu = Find(filled, "hardware", "gpu"); gpu != nullptr && gpu->is_string())
            for (int i = 0; i < static_cast<int>(state.gpus.size()); i++)
                if (state.gpus[i].id == gpu->get<std::string>())
                    state.gpu_index = i;
    }
    UpdateEstimate(state);
}

namespace {

// Sets section[key] to `value`, or removes the key when the control says "default" ("").
void SetOrErase(nlohmann::json& section, const char* key, const std::string& value)
{
    if (!value.empty())
        section[key] = value;
    else if (section.is_object())
        section.erase(key);
}

template <typename T>
void SetUnless(nlohmann::json& section, const char* key, T value, T unset)
{
    if (value != unset)
        section[key] = value;
    else if (section.is_object())
        section.erase(key);
}

// The object at doc[key], created when missing or not an object.
nlohmann::json& Section(nlohmann::json& doc, const char* key)
{
    if (!doc.contains(key) || !doc[key].is_object())
        doc[key] = nlohmann::json::object();
    return doc[key];
}

// Removes doc[key] when it is an empty object (a section whose fields are all defaults).
void DropIfEmpty(nlohmann::json& doc, const char* key)
{
    if (doc.contains(key) && doc[key].is_object() && doc[key].empty())
        doc.erase(key);
}

std::string Lower(std::string s)
{
    for (char& c : s)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

// The index of the bundled preset `id` answers to (its own id or an alias), or -1.
int PresetIndexOf(const AppState& state, const std::string& id)
{
    const std::optional<nlohmann::json> preset = gpumem::find_preset(id);
    if (!preset || !preset->contains("model_id"))
        return -1;
    const std::string model_id = Lower((*preset)["model_id"].get<std::string>());
    for (int i = 0; i < static_cast<int>(state.presets.size()); i++)
        if (Lower(state.presets[i].id) == model_id)
            return i;
    return -1;
}

nlohmann::json ModelJson(const AppState& state)
{
    switch (state.source)
    {
    case ModelSource::Preset:
        if (state.presets.empty())
            return nullptr;
        return {{"preset", state.presets[state.preset_index].id}};
    case ModelSource::Hub:
        if (state.hub.config.is_null())
            return nullptr;
        return {{"hf_config", state.hub.config}, {"name", state.hub.id}};
    case ModelSource::Config:
        if (state.config.is_null())
            return nullptr;
        return {{"hf_config", state.config}, {"name", state.config_name}};
    case ModelSource::Manual:
    {
        const ManualModel& m = state.manual;
        return {{"num_parameters", m.num_parameters}, {"num_layers", m.num_layers}, {"hidden_size", m.hidden_size},
                {"num_attention_heads", m.num_attention_heads}, {"num_key_value_heads", m.num_key_value_heads},
                {"intermediate_size", m.intermediate_size}, {"vocab_size", m.vocab_size},
                {"tie_word_embeddings", m.tie_word_embeddings}};
    }
    }
    return nullptr;
}

// The filled-in scenario's value for section.key as text, when the raw document set it.
std::string Chosen(const nlohmann::json& raw, const nlohmann::json& filled, const char* section, const char* key)
{
    const nlohmann::json* r = Find(raw, section, key);
    const nlohmann::json* f = Find(filled, section, key);
    if (r == nullptr || r->is_null() || f == nullptr || f->is_null())
        return "";
    return f->is_string() ? f->get<std::string>() : f->dump();
}

template <typename T>
T FilledNumber(const nlohmann::json& filled, const char* section, const char* key, T fallback)
{
    const nlohmann::json* v = Find(filled, section, key);
    return v != nullptr && v->is_number() ? v->get<T>() : fallback;
}

template <typename T>
T RawNumber(const nlohmann::json& raw, const nlohmann::json& filled, const char* section, const char* key, T unset)
{
    return Find(raw, section, key) != nullptr ? FilledNumber(filled, section, key, unset) : unset;
}

// Takes the model part of an imported scenario. False when it names a preset this build lacks.
bool ImportModel(AppState& state, const nlohmann::json& model)
{
    if (model.is_string())
        return ImportModel(state, nlohmann::json{{"preset", model}});
    if (!model.is_object())
        return false;
    if (model.contains("preset") && model["preset"].is_string())
    {
        const int index = PresetIndexOf(state, model["preset"].get<std::string>());
        if (index < 0)
            return false;
        state.source = ModelSource::Preset;
        state.preset_index = index;
        return true;
    }
    if (model.contains("hf_config") && model["hf_config"].is_object())
    {
        state.source = ModelSource::Config;
        state.config = model["hf_config"];
        state.config_name = model.value("name", std::string("config.json"));
        return true;
    }
    ManualModel m;
    const std::string size = model.contains("num_parameters") ? (model["num_parameters"].is_string()
                                                                     ? model["num_parameters"].get<std::string>()
                                                                     : model["num_parameters"].dump())
                                                              : std::string(m.num_parameters);
    std::snprintf(m.num_parameters, sizeof(m.num_parameters), "%s", size.c_str());
    auto take = [&](const char* key, int& field) {
        if (model.contains(key) && model[key].is_number_integer())
            field = model[key].get<int>();
    };
    take("num_layers", m.num_layers);
    take("hidden_size", m.hidden_size);
    take("num_attention_heads", m.num_attention_heads);
    take("num_key_value_heads", m.num_key_value_heads);
    take("intermediate_size", m.intermediate_size);
    take("vocab_size", m.vocab_size);
    if (model.contains("tie_word_embeddings") && model["tie_word_embeddings"].is_boolean())
        m.tie_word_embeddings = model["tie_word_embeddings"].get<bool>();
    state.manual = m;
    state.source = ModelSource::Manual;
    return true;
}

}  // namespace

nlohmann::json BuildScenario(const AppState& state)
{
    nlohmann::json s = state.extra.is_object() ? state.extra : nlohmann::json::object();
    s["version"] = 1;
    s["model"] = ModelJson(state);
    if (s["model"].is_null())
        s.erase("model");
    s["mode"] = state.inference ? "inference" : "training";

    if (!state.inference)
    {
        nlohmann::json& t = Section(s, "training");
        t["method"] = state.method;
        if (state.method == "lora" || state.method == "qlora")
        {
            nlohmann::json& lora = Section(t, "lora");
            lora["rank"] = state.lora_rank;
            SetUnless(lora, "alpha", static_cast<double>(state.lora_alpha), 0.0);
            if (!state.lora_dropout.empty())
                lora["dropout"] = std::strtod(state.lora_dropout.c_str(), nullptr);
            else if (lora.is_object())
                lora.erase("dropout");
            if (!state.lora_targets.empty())
            {
                nlohmann::json modules = nlohmann::json::array();
                std::size_t begin = 0;
                while (begin <= state.lora_targets.size())
                {
                    const std::size_t comma = std::min(state.lora_targets.find(',', begin), state.lora_targets.size());
                    if (comma > begin)
                        modules.push_back(state.lora_targets.substr(begin, comma - begin));
                    begin = comma + 1;
                }
                lora["target_modules"] = modules;
            }
            else
                lora.erase("target_modules");
        }
        else
            t.erase("lora");
        SetOrErase(t, "quantization", state.method == "qlora" ? state.quantization : "");
        SetOrErase(t, "dtype", state.dtype);
        SetOrErase(t, "precision", state.precision);
        SetOrErase(t, "optimizer", state.optimizer);
        SetOrErase(t, "optimizer_state_dtype", state.optimizer_state_dtype);
        SetOrErase(t, "activation_checkpointing", state.checkpointing);
        SetOrErase(t, "attention", state.attention);
        SetOrErase(t, "loss", state.loss);
        t["batch_size"] = state.batch_size;
        t["seq_len"] = state.seq_len;
        SetUnless(t, "gradient_accumulation_steps", state.grad_accum, 1);
        SetOrErase(t, "framework", state.framework);
        SetOrErase(t, "compile", state.compile);
        SetUnless(t, "images", state.images, 0);
        SetUnless(t, "trainable_layers", state.method == "frozen" ? state.trainable_layers : 0, 0);
        SetUnless(t, "train_lm_head", state.method == "frozen" && state.train_lm_head, false);
        SetUnless(t, "pipeline_microbatches", state.pipeline_parallel > 1 ? state.pipeline_microbatches : 0, 0);
        const struct { const char* key; const std::string& value; bool applies; } switches[] = {
            {"optimizer_in_backward", state.optimizer_in_backward, true},
            {"activation_offloading", state.activation_offloading, true},
            {"double_quant", state.double_quant, state.method == "qlora"},
            {"untie_embeddings", state.untie_embeddings, true},
            {"retains_previous_step", state.retains_previous_step, true}};
        for (const auto& sw : switches)
        {
            if (sw.applies && !sw.value.empty())
                t[sw.key] = sw.value == "true";
            else
                t.erase(sw.key);
        }

        nlohmann::json& e = Section(s, "engine");
        SetOrErase(e, "type", state.engine);
        const bool deepspeed = state.engine == "deepspeed" || state.engine == "megatron_deepspeed";
        if (deepspeed)
            e["zero_stage"] = state.zero_stage;
        else
            e.erase("zero_stage");
        SetOrErase(e, "offload_optimizer", deepspeed ? state.offload_optimizer : "");
        SetOrErase(e, "offload_param", deepspeed && state.zero_stage == 3 ? state.offload_param : "");
        SetOrErase(e, "fsdp_sharding", state.engine == "fsdp" ? state.fsdp_sharding : "");
        DropIfEmpty(s, "engine");
    }
    else
    {
        nlohmann::json& inf = Section(s, "inference");
        inf["batch_size"] = state.concurrent_sequences;
        inf["context_len"] = state.context_len;
        SetOrErase(inf, "weight_format", state.weight_format);
        SetOrErase(inf, "kv_cache_dtype", state.kv_cache ? state.kv_cache_dtype : "");
        SetOrErase(inf, "engine", state.serving_engine);
        SetUnless(inf, "kv_cache", state.kv_cache, true);
        SetUnless(inf, "gpu_memory_utilization",
                  state.serving_engine == "vllm" ? static_cast<double>(state.gpu_memory_utilization) : 0.0, 0.0);
        SetUnless(inf, "gpu_layers", state.serving_engine == "llama.cpp" ? state.gpu_layers : -1, -1);
        SetUnless(inf, "max_num_batched_tokens", state.serving_engine == "vllm" ? state.max_num_batched_tokens : 0, 0);
        SetUnless(inf, "images", state.images, 0);
    }

    nlohmann::json& par = Section(s, "parallelism");
    SetUnless(par, "tensor_parallel_size", state.tensor_parallel, 1);
    SetUnless(par, "pipeline_parallel_size", state.inference ? 1 : state.pipeline_parallel, 1);
    SetUnless(par, "expert_parallel_size", state.expert_parallel, 1);
    SetUnless(par, "context_parallel_size", state.inference ? 1 : state.context_parallel, 1);
    SetUnless(par, "sequence_parallel", !state.inference && state.tensor_parallel > 1 && state.sequence_parallel, false);
    DropIfEmpty(s, "parallelism");

    nlohmann::json& hw = Section(s, "hardware");
    if (!state.gpus.empty())
        hw["gpu"] = state.gpus[state.gpu_index].id;
    hw["num_gpus"] = state.num_gpus;
    SetUnless(hw, "gpu_memory_gb", static_cast<double>(state.custom_gpu_gb), 0.0);

    if (state.overheads.is_object() && !state.overheads.empty())
    {
        nlohmann::json& o = Section(s, "overheads");
        for (const auto& [key, value] : state.overheads.items())
            o[key] = value;
    }
    return s;
}

bool UpdateEstimate(AppState& state)
{
    const nlohmann::json scenario = BuildScenario(state);
    std::string text = scenario.dump();
    if (text == state.scenario_text)
        return false;
    state.scenario_text = std::move(text);
    state.result = gpumem::estimate(scenario);
    state.estimate_count++;
    if (state.result.value("ok", false) && state.result.contains("scenario"))
        state.filled = state.result["scenario"];
    if (state.page.set_summary != nullptr)
        state.page.set_summary(ResultSummary(state));

    // The link and the saved settings follow the scenario (not while a link's model is loading:
    // the link it came from stays until the model is there).
    if (state.page.save_state != nullptr && state.link_applied && state.hub.status != HubState::Status::Loading)
    {
        std::string share = ShareState(state).dump();
        if (share != state.share_text)
        {
            state.share_text = std::move(share);
            state.page.save_state(state.share_text);
        }
    }
    return true;
}

//-----------------------------------------------------------------------------
// [SECTION] Import, links and the Hub
//-----------------------------------------------------------------------------

bool ImportScenario(AppState& state, const nlohmann::json& doc)
{
    if (!doc.is_object())
    {
        state.import_message = "a scenario is a JSON object";
        return false;
    }
    // Without a model the current one is used, so a link or file can carry only settings.
    nlohmann::json probe = doc;
    if (!probe.contains("model"))
    {
        const nlohmann::json model = ModelJson(state);
        if (!model.is_null())
            probe["model"] = model;
    }
    const nlohmann::json result = gpumem::estimate(probe);
    if (!result.value("ok", false) || !result.contains("scenario"))
    {
        const std::string why = ErrorText(result);
        state.import_message = "not loaded: " + (why.empty() ? std::string("the estimator refused it") : why);
        return false;
    }
    if (doc.contains("model") && !ImportModel(state, doc["model"]))
    {
        state.import_message = "not loaded: model: this page has no such bundled preset";
        return false;
    }

    const nlohmann::json& f = result["scenario"];
    // A v1 document keeps its own shape; gpu-mem-calculator's config format is replaced by its v1 reading.
    const bool v1 = doc.contains("version");
    const nlohmann::json& raw = v1 ? doc : f;
    state.extra = raw;
    state.extra.erase("model");

    state.inference = f.value("mode", "training") == "inference";
    state.method = FilledString(f, "training", "method", "full");
    if (const nlohmann::json* lora = Find(f, "training", "lora"); lora != nullptr && lora->is_object())
    {
        state.lora_rank = lora->value("rank", state.lora_rank);
        const nlohmann::json* raw_lora = Find(raw, "training", "lora");
        const bool raw_alpha = raw_lora != nullptr && raw_lora->is_object() && raw_lora->contains("alpha");
        state.lora_alpha = raw_alpha ? lora->value("alpha", 0.0f) : 0.0f;
        const bool raw_dropout = raw_lora != nullptr && raw_lora->is_object() && raw_lora->contains("dropout");
        state.lora_dropout = raw_dropout && lora->contains("dropout") ? NumberText((*lora)["dropout"]) : "";
        state.lora_targets.clear();
        if (raw_lora != nullptr && raw_lora->is_object() && raw_lora->contains("target_modules"))
        {
            const nlohmann::json& t = (*raw_lora)["target_modules"];
            if (t.is_string())
                state.lora_targets = t.get<std::string>();
            else if (t.is_array())
                for (const nlohmann::json& m : t)
                    if (m.is_string())
                        state.lora_targets += (state.lora_targets.empty() ? "" : ",") + m.get<std::string>();
        }
    }
    state.quantization = Chosen(raw, f, "training", "quantization");
    state.dtype = Chosen(raw, f, "training", "dtype");
    state.precision = Chosen(raw, f, "training", "precision");
    state.optimizer = Chosen(raw, f, "training", "optimizer");
    state.optimizer_state_dtype = Chosen(raw, f, "training", "optimizer_state_dtype");
    state.checkpointing = Chosen(raw, f, "training", "activation_checkpointing");
    state.attention = Chosen(raw, f, "training", "attention");
    state.loss = Chosen(raw, f, "training", "loss");
    state.batch_size = FilledNumber(f, "training", "batch_size", state.batch_size);
    state.seq_len = FilledNumber(f, "training", "seq_len", state.seq_len);
    state.grad_accum = FilledNumber(f, "training", "gradient_accumulation_steps", 1);
    state.framework = Chosen(raw, f, "training", "framework");
    state.trainable_layers = RawNumber(raw, f, "training", "trainable_layers", 0);
    const nlohmann::json* head = Find(raw, "training", "train_lm_head");
    state.train_lm_head = head != nullptr && head->is_boolean() && head->get<bool>();
    state.pipeline_microbatches = RawNumber(raw, f, "training", "pipeline_microbatches", 0);
    state.optimizer_in_backward = Chosen(raw, f, "training", "optimizer_in_backward");
    state.activation_offloading = Chosen(raw, f, "training", "activation_offloading");
    state.compile = Chosen(raw, f, "training", "compile");
    state.double_quant = Chosen(raw, f, "training", "double_quant");
    state.untie_embeddings = Chosen(raw, f, "training", "untie_embeddings");
    state.retains_previous_step = Chosen(raw, f, "training", "retains_previous_step");

    state.concurrent_sequences = FilledNumber(f, "inference", "batch_size", state.concurrent_sequences);
    state.context_len = FilledNumber(f, "inference", "context_len", state.context_len);
    state.weight_format = Chosen(raw, f, "inference", "weight_format");
    state.kv_cache_dtype = Chosen(raw, f, "inference", "kv_cache_dtype");
    state.serving_engine = Chosen(raw, f, "inference", "engine");
    const nlohmann::json* kv = Find(f, "inference", "kv_cache");
    state.kv_cache = kv == nullptr || !kv->is_boolean() || kv->get<bool>();
    state.gpu_memory_utilization = RawNumber(raw, f, "inference", "gpu_memory_utilization", 0.0f);
    state.gpu_layers = RawNumber(raw, f, "inference", "gpu_layers", -1);
    state.max_num_batched_tokens = RawNumber(raw, f, "inference", "max_num_batched_tokens", 0);
    state.images = state.inference ? RawNumber(raw, f, "inference", "images", 0) : RawNumber(raw, f, "training", "images", 0);

    state.engine = Chosen(raw, f, "engine", "type");
    state.zero_stage = FilledNumber(f, "engine", "zero_stage", state.zero_stage);
    state.fsdp_sharding = Chosen(raw, f, "engine", "fsdp_sharding");
    state.offload_optimizer = Chosen(raw, f, "engine", "offload_optimizer");
    state.offload_param = Chosen(raw, f, "engine", "offload_param");
    state.tensor_parallel = FilledNumber(f, "parallelism", "tensor_parallel_size", 1);
    state.pipeline_parallel = FilledNumber(f, "parallelism", "pipeline_parallel_size", 1);
    state.expert_parallel = FilledNumber(f, "parallelism", "expert_parallel_size", 1);
    state.context_parallel = FilledNumber(f, "parallelism", "context_parallel_size", 1);
    const nlohmann::json* sp = Find(f, "parallelism", "sequence_parallel");
    state.sequence_parallel = sp != nullptr && sp->is_boolean() && sp->get<bool>();

    state.num_gpus = FilledNumber(f, "hardware", "num_gpus", state.num_gpus);
    if (const nlohmann::json* gpu = Find(f, "hardware", "gpu"); gpu != nullptr && gpu->is_string())
        for (int i = 0; i < static_cast<int>(state.gpus.size()); i++)
            if (Lower(state.gpus[i].id) == Lower(gpu->get<std::string>()))
                state.gpu_index = i;
    state.custom_gpu_gb = Find(raw, "hardware", "gpu") == nullptr || Find(raw, "hardware", "gpu_memory_gb") != nullptr
                              ? RawNumber(raw, f, "hardware", "gpu_memory_gb", 0.0f)
                              : 0.0f;
    state.overheads = nlohmann::json::object();
    if (raw.contains("overheads") && raw["overheads"].is_object())
        for (const auto& [key, value] : raw["overheads"].items())
            if (value.is_number())
                state.overheads[key] = value;
    state.import_message.clear();
    return true;
}

bool LoadText(AppState& state, const std::string& text, const std::string& name)
{
    std::string error;
    std::optional<nlohmann::json> parsed = gpumem::parse_json(text, error);
    if (!parsed)
    {
        state.import_message = name + ": not valid JSON (" + error + ")";
        return false;
    }
    nlohmann::json doc = std::move(*parsed);
    if (!doc.is_object())
    {
        state.import_message = name + ": not a JSON object (a scenario or a model's config.json was expected)";
        return false;
    }
    // A config.json names its architecture; a scenario has a model, a mode or a version.
    if (doc.contains("model_type") || doc.contains("architectures"))
    {
        const nlohmann::json counted = gpumem::params(doc);
        if (!counted.value("ok", false))
        {
            state.import_message = name + ": " + ErrorText(counted);
            return false;
        }
        state.source = ModelSource::Config;
        state.config = std::move(doc);
        state.config_name = name;
        state.import_message.clear();
        return true;
    }
    return ImportScenario(state, doc);
}

void RequestHubModel(AppState& state)
{
    HubState& hub = state.hub;
    hub.serial++;
    hub.status = HubState::Status::Loading;
    hub.message.clear();
    hub.error_kind.clear();
    hub.bundled_twin.clear();
    const nlohmann::json request = {{"serial", hub.serial}, {"base", hub.base}, {"id", hub.input},
                                    {"revision", hub.revision}};
    if (state.page.hub_fetch == nullptr)
    {
        ReceiveHubResponse(state, {{"serial", hub.serial}, {"ok", false}, {"kind", "offline"},
                                   {"message", "this build has no network access"}});
        return;
    }
    state.page.hub_fetch(request.dump(), hub.token);
}

void ReceiveHubResponse(AppState& state, const nlohmann::json& response)
{
    HubState& hub = state.hub;
    if (!response.is_object() || response.value("serial", -1) != hub.serial)
        return;  // an answer to a request the user has since replaced
    const std::string id = response.value("id", std::string(hub.input));
    hub.token_withheld = response.value("token_withheld", false);
    const int twin = PresetIndexOf(state, id);
    hub.bundled_twin = twin >= 0 ? state.presets[twin].id : "";
    if (!response.value("ok", false))
    {
        hub.status = HubState::Status::Failed;
        hub.error_kind = response.value("kind", "error");
        hub.message = response.value("message", "the Hub request failed");
        hub.retryable = response.value("retryable", false);
        hub.pending_scenario = nullptr;
        return;
    }
    const nlohmann::json& config = response.contains("config") ? response["config"] : nlohmann::json();
    const nlohmann::json counted = gpumem::params(config);
    if (!counted.value("ok", false))
    {
        hub.status = HubState::Status::Failed;
        hub.error_kind = "unsupported";
        hub.message = id + "'s config.json cannot be read: " + ErrorText(counted);
        hub.retryable = false;
        hub.pending_scenario = nullptr;
        return;
    }
    hub.status = HubState::Status::Ready;
    hub.id = id;
    hub.loaded_revision = response.value("revision", std::string("main"));
    hub.config = config;
    hub.api_total = 0;
    if (const nlohmann::json* total = Find(response, "api", "safetensors_total"); total != nullptr && total->is_number_unsigned())
        hub.api_total = total->get<std::uint64_t>();
    state.source = ModelSource::Hub;
    if (!hub.pending_scenario.is_null())
    {
        if (!ImportScenario(state, hub.pending_scenario))
            state.link_message = "this link's settings (s=) were ignored: " + state.import_message;
        hub.pending_scenario = nullptr;
    }
}

void OpenFromPage(AppState& state, const nlohmann::json& request)
{
    state.link_applied = true;
    state.scenario_text.clear();  // estimate (and save) again on the next frame, whatever was asked
    if (!request.is_object())
        return;
    HubState& hub = state.hub;
    if (request.contains("hub") && request["hub"].is_string() && !request["hub"].get<std::string>().empty())
    {
        std::snprintf(hub.base, sizeof(hub.base), "%s", request["hub"].get<std::string>().c_str());
        hub.base_from_link = true;
    }
    if (request.contains("token") && request["token"].is_string())
    {
        std::snprintf(hub.token, sizeof(hub.token), "%s", request["token"].get<std::string>().c_str());
        hub.remember_token = request.value("remember_token", false);
    }
    // The link's settings: read by the core's parser (its depth limit and its messages).
    nlohmann::json scenario;
    const std::string ignored = "this link's settings (s=) were ignored: ";
    if (request.contains("link_problem") && request["link_problem"].is_string())
        state.link_message = ignored + request["link_problem"].get<std::string>();
    else if (request.contains("scenario_text") && request["scenario_text"].is_string())
    {
        std::string error;
        std::optional<nlohmann::json> parsed = gpumem::parse_json(request["scenario_text"].get<std::string>(), error);
        if (!parsed)
            state.link_message = ignored + "they are not valid JSON (" + error + ")";
        else if (!parsed->is_object())
            state.link_message = ignored + "they are not a JSON object";
        else
            scenario = std::move(*parsed);
    }
    const std::string model = request.contains("model") && request["model"].is_string() ? request["model"].get<std::string>() : "";
    const std::string revision = request.contains("revision") && request["revision"].is_string()
                                     ? request["revision"].get<std::string>() : "main";
    const bool pinned_revision = revision != "main";
    if (!model.empty())
    {
        const int index = pinned_revision ? -1 : PresetIndexOf(state, model);
        if (index >= 0)
        {
            state.source = ModelSource::Preset;
            state.preset_index = index;
        }
        else
        {
            std::snprintf(hub.input, sizeof(hub.input), "%s", model.c_str());
            std::snprintf(hub.revision, sizeof(hub.revision), "%s", revision.c_str());
            state.source = ModelSource::Hub;
            hub.config = nullptr;
            hub.pending_scenario = scenario;
            RequestHubModel(state);
            return;
        }
    }
    if (scenario.is_object() && !ImportScenario(state, scenario))
        state.link_message = ignored + state.import_message;
}

nlohmann::json ShareState(const AppState& state)
{
    nlohmann::json share = nlohmann::json::object();
    nlohmann::json scenario = BuildScenario(state);
    if (state.source == ModelSource::Preset && !state.presets.empty())
    {
        share["model"] = state.presets[state.preset_index].id;
        scenario.erase("model");
    }
    else if (state.source == ModelSource::Hub)
    {
        // The model loaded, or the one asked for while it loads or after it failed: a link to a
        // model that is temporarily unreachable still names it.
        const bool ready = state.hub.status == HubState::Status::Ready;
        const std::string id = ready ? state.hub.id : state.hub.input;
        const std::string revision = ready ? state.hub.loaded_revision : state.hub.revision;
        if (!id.empty())
            share["model"] = id;
        if (!revision.empty() && revision != "main")
            share["revision"] = revision;
        scenario.erase("model");
    }
    if (std::string(state.hub.base) != "https://huggingface.co")
        share["hub"] = state.hub.base;
    share["scenario"] = scenario;
    return share;
}

//-----------------------------------------------------------------------------
// [SECTION] Page layout
//-----------------------------------------------------------------------------

namespace {

void ShowControls(AppState& state)
{
    ShowModelPanel(state);
    if (state.inference)
        ShowInferencePanel(state);
    else
        ShowTrainingPanel(state);
    ShowParallelismPanel(state);
    ShowHardwarePanel(state);
    ShowAdvancedPanel(state);
}

void ShowResults(AppState& state)
{
    if (!state.result.value("ok", false))
    {
        ShowErrorsPanel(state);
        ShowSharePanel(state);
        return;
    }
    ShowSummaryPanel(state);
    ShowBreakdownPanel(state);
    ShowTimelinePanel(state);
    ShowComparePanel(state);
    ShowGpuTablePanel(state);
    ShowLayoutTablePanel(state);
    ShowPlannerPanel(state);
    ShowAssumptionsPanel(state);
    ShowSharePanel(state);
    ShowScenarioPanel(state);
}

}  // namespace

void ShowApp(AppState& state)
{
    const ImGuiViewport* viewport = ImGui::GetMainViewport();
    ImGui::SetNextWindowPos(viewport->WorkPos);
    ImGui::SetNextWindowSize(viewport->WorkSize);
    const ImGuiWindowFlags page_flags = ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove |
                                        ImGuiWindowFlags_NoSavedSettings |
                                        ImGuiWindowFlags_NoBringToFrontOnFocus;
    // Keyboard first: the page window has focus from the start, so the arrow keys work without a
    // click. Each column is a scrolling child window: the arrow keys pick a column, Space enters
    // it, the arrow keys move between its controls, Space or Enter uses one, Escape leaves it.
    // (ImGui 1.86's NavFlattened would let the arrows cross columns, but not in scrolling children.)
    if (ImGui::GetFrameCount() <= 1)
        ImGui::SetNextWindowFocus();
    ImGui::Begin("gpumem", nullptr, page_flags);

    ImGui::Text("gpumem %s", state.version.c_str());
    ImGui::SameLine();
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    ImGui::TextWrapped("How much GPU memory will this run take, and what is taking it?");
    ImGui::PopStyleColor();
    ShowLinkNotices(state);
    ImGui::Separator();

    // Side by side when there is room for both columns, one scrolling column on a phone.
    const float font = ImGui::GetFontSize();
    const float avail = ImGui::GetContentRegionAvail().x;
    if (avail >= 56.0f * font)
    {
        const float controls_w = std::clamp(avail * 0.36f, 30.0f * font, 40.0f * font);
        ImGui::BeginChild("controls", ImVec2(controls_w, 0.0f), true);
        ShowControls(state);
        ImGui::EndChild();

        UpdateEstimate(state);  // this frame's edits show in this frame's results

        ImGui::SameLine();
        ImGui::BeginChild("results", ImVec2(0.0f, 0.0f), true);
        ShowResults(state);
        ImGui::EndChild();
    }
    else
    {
        ImGui::BeginChild("page", ImVec2(0.0f, 0.0f), false);
        ShowControls(state);
        UpdateEstimate(state);
        ImGui::Spacing();
        ShowResults(state);
        ImGui::EndChild();
    }

    ImGui::End();
}

}  // namespace gpumem::ui
