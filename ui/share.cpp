// Links, saved settings, imports and the result as text: see share.h.

#include "share.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <optional>
#include <vector>

#include "app.h"
#include "decisions.h"
#include "hub.h"
#include "tools.h"
#include "widgets.h"

#include <gpumem/gpumem.h>

namespace gpumem::ui {

namespace {

std::string Lower(std::string s)
{
    for (char& c : s)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

std::string StringOr(const nlohmann::json& j, const char* key, const std::string& fallback)
{
    return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : fallback;
}

ManualModel ReadManualModel(const nlohmann::json& model)
{
    ManualModel m;
    const std::string size = model.contains("num_parameters")
                                 ? (model["num_parameters"].is_string() ? model["num_parameters"].get<std::string>()
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
    return m;
}

// Takes the model part of an imported scenario. False when it names a preset this build lacks.
bool ImportModel(AppState& state, const nlohmann::json& model)
{
    ModelChoice& choice = state.scenario.model;
    if (model.is_string())
        return ImportModel(state, nlohmann::json{{"preset", model}});
    if (!model.is_object())
        return false;
    if (model.contains("preset") && model["preset"].is_string())
    {
        const int index = PresetIndexOf(state, model["preset"].get<std::string>());
        if (index < 0)
            return false;
        choice.source = ModelSource::Preset;
        choice.preset_index = index;
        return true;
    }
    if (model.contains("hf_config") && model["hf_config"].is_object())
    {
        choice.source = ModelSource::Config;
        choice.config = model["hf_config"];
        choice.config_name = model.value("name", std::string("config.json"));
        return true;
    }
    choice.manual = ReadManualModel(model);
    choice.source = ModelSource::Manual;
    return true;
}

// The link's settings, read by the core's parser (its depth limit and its messages); null when
// there are none or they cannot be read (then state.link_message says why).
nlohmann::json LinkScenario(AppState& state, const nlohmann::json& request, const std::string& ignored)
{
    if (request.contains("link_problem") && request["link_problem"].is_string())
    {
        state.link_message = ignored + request["link_problem"].get<std::string>();
        return nullptr;
    }
    if (!request.contains("scenario_text") || !request["scenario_text"].is_string())
        return nullptr;
    std::string error;
    std::optional<nlohmann::json> parsed = gpumem::parse_json(request["scenario_text"].get<std::string>(), error);
    if (!parsed)
        state.link_message = ignored + "they are not valid JSON (" + gpumem::display_text(error, kMessageChars) + ")";
    else if (!parsed->is_object())
        state.link_message = ignored + "they are not a JSON object";
    else
        return std::move(*parsed);
    return nullptr;
}

// The calibration a link names ({"calibration": {"name", "hash"}}): the browser's copy of that file
// when the page has one ("calibration_text"), else a notice asking for it.
void OpenCalibration(AppState& state, const nlohmann::json& request)
{
    const nlohmann::json* wanted = request.contains("calibration") ? &request["calibration"] : nullptr;
    if (wanted == nullptr || !wanted->is_object())
        return;
    CalibrationState& c = state.decisions.calibration;
    const std::string hash = StringOr(*wanted, "hash", "");
    if (hash.empty() || hash == c.hash)
        return;
    c.wanted_hash = hash;
    c.wanted_name = StringOr(*wanted, "name", "");
    std::string error;
    if (request.contains("calibration_text") && request["calibration_text"].is_string())
        if (std::optional<nlohmann::json> file =
                gpumem::parse_json(request["calibration_text"].get<std::string>(), error))
            if (gpumem::calibration_hash(*file) == hash && LoadCalibration(state, *file))
                state.link_values.calibration_hash = hash;
}

// The values of the link's scenario that change the verdict without being the run's own settings
// (LinkValues), read back from the state ImportScenario left.
void RecordLinkValues(AppState& state, const nlohmann::json& doc)
{
    LinkValues& v = state.link_values;
    const ScenarioState& s = state.scenario;
    v.custom_gpu_gb = s.hardware.custom_gpu_gb;
    // The factors the link itself gives (a document without "version" is read with every factor
    // filled in: the others are the defaults).
    v.overheads = nlohmann::json::object();
    if (doc.contains("overheads") && doc["overheads"].is_object() && s.overheads.is_object())
        for (const auto& [key, value] : doc["overheads"].items())
            if (s.overheads.contains(key))
                v.overheads[key] = s.overheads[key];
    v.formats.clear();
    if (doc.contains("formats") && doc["formats"].is_array())
        for (const nlohmann::json& f : doc["formats"])
            if (const std::string id = f.is_object() ? StringOr(f, "id", "") : ""; !id.empty())
                v.formats.push_back(id);
    v.imported_gpu.clear();
    const GpuEntry* gpu = state.gpus.empty() ? nullptr : &state.gpus[s.hardware.gpu_index];
    if (gpu != nullptr && gpu->imported && doc.contains("hardware") && doc["hardware"].is_object() &&
        StringOr(doc["hardware"], "gpu", "") == gpu->id)
    {
        v.imported_gpu = gpu->id;
        v.imported_gpu_gb = gpu->memory_gb;
    }
}

// The link's scenario into the controls; why not, when it is refused.
void ApplyLinkScenario(AppState& state, const nlohmann::json& scenario, const std::string& ignored)
{
    if (!ImportScenario(state, scenario))
        state.link_message = ignored + state.import_message;
    else
        RecordLinkValues(state, scenario);
}

bool EndsWith(const std::string& s, const std::string& tail)
{
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// A card the user brought (gpu_types.json, or a scenario naming a card the catalogue lacks) joins
// the GPU list, marked as imported; one of the same name is updated. Returns its index.
int AddImportedGpu(AppState& state, const std::string& name, double memory_gb, std::uint64_t memory_bytes)
{
    GpuEntry entry;
    entry.id = name;                                      // what the scenario names it by
    entry.name = gpumem::display_text(name, kNameChars);  // what the page shows
    entry.memory_bytes = memory_bytes;
    entry.imported = true;
    entry.memory_gb = memory_gb;
    for (int i = 0; i < static_cast<int>(state.gpus.size()); i++)
        if (state.gpus[i].imported && state.gpus[i].id == name)
        {
            state.gpus[i] = entry;
            return i;
        }
    state.gpus.push_back(entry);
    return static_cast<int>(state.gpus.size()) - 1;
}

// What an import added: shown where refusals are, but not as one.
void SetImportNote(AppState& state, const std::vector<std::string>& notes)
{
    std::string text;
    for (const std::string& note : notes)
        text += (text.empty() ? "" : "; ") + note;
    state.import_message = text;
    state.import_note = text;
}

// data_types.json: each dtype becomes one of the scenario's own weight formats ("formats"), which
// the weight-format combo lists; one already there under that id is replaced.
bool ImportDtypes(AppState& state, const nlohmann::json& doc, const std::string& name)
{
    nlohmann::json rows;
    std::vector<std::string> notes;
    std::string error;
    if (!gpumem::detail::read_user_dtypes(doc, name, rows, notes, error))
    {
        state.import_message = error;
        return false;
    }
    nlohmann::json& extra = state.scenario.extra;
    if (!extra.is_object())
        extra = nlohmann::json::object();
    if (!extra.contains("formats") || !extra["formats"].is_array())
        extra["formats"] = nlohmann::json::array();
    nlohmann::json& formats = extra["formats"];
    for (const nlohmann::json& row : rows)
    {
        const nlohmann::json format = gpumem::detail::user_format(row);
        // The core reads format ids without case (scenario.cpp, read_formats).
        auto same = std::find_if(formats.begin(), formats.end(), [&](const nlohmann::json& f) {
            return f.is_object() && Lower(StringOr(f, "id", "")) == Lower(format["id"].get<std::string>());
        });
        if (same != formats.end())
            *same = format;
        else
            formats.push_back(format);
    }
    SetImportNote(state, notes);
    return true;
}

// gpu_types.json: each card becomes a choice of the GPU combo, marked as imported.
bool ImportGpus(AppState& state, const nlohmann::json& doc, const std::string& name)
{
    nlohmann::json rows;
    std::vector<std::string> notes;
    std::string error;
    if (!gpumem::detail::read_user_gpus(doc, name, rows, notes, error))
    {
        state.import_message = error;
        return false;
    }
    for (const nlohmann::json& row : rows)
        AddImportedGpu(state, row["name"].get<std::string>(), row["memory_gb"].get<double>(),
                       row["memory_bytes"].get<std::uint64_t>());
    SetImportNote(state, notes);
    return true;
}

// The largest components of a result, biggest first, with their labels.
std::vector<std::pair<std::uint64_t, const char*>> LargestComponents(const ResultView& view)
{
    std::vector<std::pair<std::uint64_t, const char*>> parts;
    for (int i = 0; i < kComponentCount; i++)
        if (view.components[i] > 0)
            parts.push_back({view.components[i], kComponents[i].label});
    std::sort(parts.begin(), parts.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    return parts;
}

}  // namespace

//-----------------------------------------------------------------------------
// [SECTION] Links and saved settings
//-----------------------------------------------------------------------------

void OpenFromPage(AppState& state, const nlohmann::json& request)
{
    state.link_applied = true;
    state.link_values = LinkValues{};
    state.scenario_text.clear();  // estimate (and save) again on the next frame, whatever was asked
    if (!request.is_object())
        return;
    HubState& hub = state.hub;
    if (const std::string base = StringOr(request, "hub", ""); !base.empty())
    {
        std::snprintf(hub.base, sizeof(hub.base), "%s", base.c_str());
        hub.base_from_link = true;
    }
    if (request.contains("token") && request["token"].is_string())
    {
        std::snprintf(hub.token, sizeof(hub.token), "%s", request["token"].get<std::string>().c_str());
        hub.remember_token = request.value("remember_token", false);
    }
    const std::string ignored = "this link's settings (s=) were ignored: ";
    const nlohmann::json scenario = LinkScenario(state, request, ignored);
    const std::string model = StringOr(request, "model", "");
    const std::string revision = StringOr(request, "revision", "main");
    if (!model.empty())
    {
        const int index = revision != "main" ? -1 : PresetIndexOf(state, model);
        if (index < 0)
        {
            std::snprintf(hub.input, sizeof(hub.input), "%s", model.c_str());
            std::snprintf(hub.revision, sizeof(hub.revision), "%s", revision.c_str());
            state.scenario.model.source = ModelSource::Hub;
            hub.config = nullptr;
            hub.pending_scenario = scenario;
            RequestHubModel(state);
            OpenCalibration(state, request);
            return;
        }
        state.scenario.model.source = ModelSource::Preset;
        state.scenario.model.preset_index = index;
    }
    if (scenario.is_object())
        ApplyLinkScenario(state, scenario, ignored);
    OpenCalibration(state, request);
}

void ApplyPendingLinkScenario(AppState& state, const nlohmann::json& scenario)
{
    ApplyLinkScenario(state, scenario, "this link's settings (s=) were ignored: ");
}

std::string CapacityText(const AppState& state)
{
    const std::uint64_t capacity = state.view.capacity_bytes;
    const GpuEntry* gpu = CurrentGpu(state);
    const std::string card = gpu != nullptr ? gpumem::display_text(gpu->name, kNameChars) : std::string("card");
    const std::uint64_t card_bytes = gpu != nullptr ? gpu->memory_bytes : 0;
    const std::uint64_t diff = capacity > card_bytes ? capacity - card_bytes : card_bytes - capacity;
    if (gpu == nullptr || diff < (1u << 20))  // an imported card's GiB figure, rounded
        return "of " + FormatBytes(capacity) + " (" + card + ")";
    return "of " + FormatBytes(capacity) + ": a custom size (the " + card + " has " + FormatBytes(card_bytes) + ")";
}

std::vector<std::string> LinkValuesInEffect(const AppState& state)
{
    const LinkValues& v = state.link_values;
    const ScenarioState& s = state.scenario;
    std::vector<std::string> out;
    char buf[160];
    if (v.custom_gpu_gb > 0.0f && s.hardware.custom_gpu_gb == v.custom_gpu_gb)
    {
        const GpuEntry* gpu = state.gpus.empty() ? nullptr : &state.gpus[s.hardware.gpu_index];
        std::snprintf(buf, sizeof(buf), "GPU memory %g GiB", static_cast<double>(v.custom_gpu_gb));
        out.push_back(buf);
        if (gpu != nullptr && gpu->memory_bytes > 0)
            out.back() +=
                " (the " + gpumem::display_text(gpu->name, kNameChars) + " has " + FormatBytes(gpu->memory_bytes) + ")";
    }
    if (!v.imported_gpu.empty() && !state.gpus.empty() && state.gpus[s.hardware.gpu_index].id == v.imported_gpu &&
        s.hardware.custom_gpu_gb <= 0.0f)
    {
        std::snprintf(buf, sizeof(buf), " (%g GiB), a card the catalogue lacks", v.imported_gpu_gb);
        out.push_back("the card " + gpumem::display_text(v.imported_gpu, kNameChars) + buf);
    }
    if (s.overheads.is_object())
        for (const auto& [key, value] : v.overheads.items())
            if (s.overheads.contains(key) && s.overheads[key] == value)
                out.push_back("overhead " + gpumem::display_text(key, kNameChars) + " = " + value.dump());
    if (s.IsInference() && !s.inference.own_weight_format.empty())
        for (const std::string& id : v.formats)
            if (id == s.inference.own_weight_format)
                out.push_back("the weight format " + gpumem::display_text(id, kNameChars) + ", defined by the link");
    if (const CalibrationState& c = state.decisions.calibration;
        !v.calibration_hash.empty() && c.hash == v.calibration_hash)
        out.push_back("the calibration \"" + gpumem::display_text(c.name, kNameChars) + "\" (" + c.hash +
                      "), this browser's copy");
    return out;
}

void ClearLinkValues(AppState& state)
{
    LinkValues& v = state.link_values;
    ScenarioState& s = state.scenario;
    if (v.custom_gpu_gb > 0.0f && s.hardware.custom_gpu_gb == v.custom_gpu_gb)
        s.hardware.custom_gpu_gb = 0.0f;
    if (!v.imported_gpu.empty() && !state.gpus.empty() && state.gpus[s.hardware.gpu_index].id == v.imported_gpu)
        s.hardware.gpu_index = state.default_gpu_index;
    for (const auto& [key, value] : v.overheads.items())
        if (s.overheads.is_object() && s.overheads.contains(key) && s.overheads[key] == value)
            s.overheads.erase(key);
    for (const std::string& id : v.formats)
        if (s.inference.own_weight_format == id)
            s.inference.own_weight_format.clear();
    if (nlohmann::json& extra = s.extra; extra.is_object() && extra.contains("formats") && extra["formats"].is_array())
    {
        nlohmann::json kept = nlohmann::json::array();
        for (const nlohmann::json& f : extra["formats"])
            if (std::find(v.formats.begin(), v.formats.end(), f.is_object() ? StringOr(f, "id", "") : "") ==
                v.formats.end())
                kept.push_back(f);
        if (kept.empty())
            extra.erase("formats");
        else
            extra["formats"] = kept;
    }
    if (!v.calibration_hash.empty() && state.decisions.calibration.hash == v.calibration_hash)
        ClearCalibration(state);
    v = LinkValues{};
}

nlohmann::json ShareState(const AppState& state)
{
    nlohmann::json share = nlohmann::json::object();
    nlohmann::json scenario = BuildScenario(state);
    const ModelChoice& model = state.scenario.model;
    if (model.source == ModelSource::Preset && !state.presets.empty())
    {
        share["model"] = state.presets[model.preset_index].id;
        scenario.erase("model");
    }
    else if (model.source == ModelSource::Hub)
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
    // The calibration by name and hash only (the one in use, or the one a link asked for).
    const CalibrationState& c = state.decisions.calibration;
    if (!c.hash.empty())
        share["calibration"] = {{"name", c.name}, {"hash", c.hash}};
    else if (!c.wanted_hash.empty())
        share["calibration"] = {{"name", c.wanted_name}, {"hash", c.wanted_hash}};
    share["scenario"] = scenario;
    return share;
}

//-----------------------------------------------------------------------------
// [SECTION] Imports
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

    const nlohmann::json& resolved = result["scenario"];
    // A v1 document keeps its own shape; gpu-mem-calculator's config format is replaced by its v1 reading.
    const nlohmann::json& raw = doc.contains("version") ? doc : resolved;
    ScenarioState& s = state.scenario;
    s.extra = raw;
    s.extra.erase("model");
    ReadScenario(s, raw, resolved);
    if (resolved.contains("hardware") && resolved["hardware"].is_object())
    {
        const nlohmann::json& hardware = resolved["hardware"];
        const std::string gpu = StringOr(hardware, "gpu", "");
        int found = -1;
        for (int i = 0; i < static_cast<int>(state.gpus.size()); i++)
            if (Lower(state.gpus[i].id) == Lower(gpu))
                found = i;
        // A card the catalogue lacks, named with its size (an imported gpu_types.json's card in a
        // link or a file; the core keeps such a name as given): it joins the list.
        const bool named = doc.contains("hardware") && doc["hardware"].is_object() &&
                           StringOr(doc["hardware"], "gpu", "") == gpu && !gpu.empty();
        if (found < 0 && named && hardware.contains("gpu_memory_gb") && hardware["gpu_memory_gb"].is_number())
        {
            const double gb = hardware["gpu_memory_gb"].get<double>();
            found = AddImportedGpu(state, gpu, gb, static_cast<std::uint64_t>(gb * static_cast<double>(gpumem::kGiB)));
        }
        if (found >= 0)
        {
            s.hardware.gpu_index = found;
            // An imported card's own size is no custom size.
            const GpuEntry& entry = state.gpus[found];
            if (entry.imported && std::fabs(static_cast<double>(s.hardware.custom_gpu_gb) - entry.memory_gb) < 1e-3)
                s.hardware.custom_gpu_gb = 0.0f;
        }
    }
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
    // vram_calculator.py's data_types.json and gpu_types.json (what `gpumem table --config-dir` reads),
    // known by the file's name or, for pasted and dropped text, by their shape.
    const std::string lower = Lower(name);
    const std::string kind = EndsWith(lower, "data_types.json")  ? "data_types.json"
                             : EndsWith(lower, "gpu_types.json") ? "gpu_types.json"
                                                                 : gpumem::detail::user_catalogue_kind(doc);
    if (kind == "data_types.json")
        return ImportDtypes(state, doc, name);
    if (kind == "gpu_types.json")
        return ImportGpus(state, doc, name);
    if (!doc.is_object())
    {
        state.import_message = name + ": not a JSON object (a scenario or a model's config.json was expected)";
        return false;
    }
    // A calibration file (gpumem calibrate): its overheads apply to every estimate from now on.
    if (doc.contains("gpumem_calibration"))
    {
        if (!LoadCalibration(state, doc))
            return false;
        if (state.page.remember_calibration != nullptr)
            state.page.remember_calibration(state.decisions.calibration.hash, text);
        return true;
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
        ModelChoice& model = state.scenario.model;
        model.source = ModelSource::Config;
        model.config = std::move(doc);
        model.config_name = name;
        state.import_message.clear();
        return true;
    }
    return ImportScenario(state, doc);
}

// At most this many files are held back waiting for the one they name (an axolotl YAML, its
// DeepSpeed JSON, an accelerate YAML are three): more is not a config and its companions.
constexpr std::size_t kMaxHeldConfigFiles = 8;

namespace {

// The core's refusal of a group of configs, for the page: a file named but not given asks for that
// file to be dropped too (the core's own words speak of folders, which a page has none of).
struct ConfigRefusal
{
    std::string message;
    bool missing_file = false;  // only files named and not given: the group is worth holding
    bool not_a_config = false;  // the one text is no tool's config or command
};

ConfigRefusal ReadRefusal(const nlohmann::json& result)
{
    ConfigRefusal out;
    std::vector<std::string> parts;
    bool all_missing = true, all_not_config = true;
    if (result.contains("errors") && result["errors"].is_array())
        for (const nlohmann::json& e : result["errors"])
        {
            const std::string field = e.is_object() ? StringOr(e, "field", "") : "";
            const std::string problem = e.is_object() ? StringOr(e, "problem", "") : "";
            const std::size_t named =
                problem.rfind("is named by ", 0) == 0 ? problem.find(" but was not found") : std::string::npos;
            if (named != std::string::npos)
            {
                const std::string by = problem.substr(12, named - 12);
                parts.push_back(by + " names " + field + ", which was not given: drop or open " + field +
                                " too (Import a file... takes several files at once)");
            }
            else
            {
                all_missing = false;
                parts.push_back(field.empty() ? problem : field + " " + problem);
            }
            // No tool's config or command; or JSON that does not parse, which LoadText words as the page always has.
            if (problem.rfind("is not a config or command", 0) != 0 && problem.rfind("is not valid JSON", 0) != 0)
                all_not_config = false;
        }
    out.missing_file = !parts.empty() && all_missing;
    out.not_a_config = !parts.empty() && all_not_config;
    for (const std::string& p : parts)
        out.message += (out.message.empty() ? "" : "; ") + p;
    if (out.message.empty())
        out.message = "the configs could not be read";
    return out;
}

// "axolotl (qlora.yml, zero3.json): 14 settings read, 9 ignored; model NousResearch/...; 2 assumptions".
std::string ConfigSummary(const nlohmann::json& check, const std::string& model)
{
    auto count = [&](const char* key) {
        return check.contains(key) && (check[key].is_array() || check[key].is_object()) ? check[key].size()
                                                                                        : std::size_t{0};
    };
    std::string files;
    if (check.contains("files") && check["files"].is_array())
        for (const nlohmann::json& f : check["files"])
            if (f.is_string())
                files += (files.empty() ? "" : ", ") + f.get<std::string>();
    std::string formats;
    if (check.contains("formats") && check["formats"].is_array())
        for (const nlohmann::json& f : check["formats"])
            if (f.is_string() && formats.find(f.get<std::string>()) == std::string::npos)
                formats += (formats.empty() ? "" : " + ") + f.get<std::string>();
    std::string text = "Read " + formats + " (" + files + "): " + std::to_string(count("read")) + " settings, " +
                       std::to_string(count("ignored")) + " ignored (they do not change memory)";
    text += model.empty() ? "; they name no model: the page's model is kept" : "; model " + model;
    if (const std::size_t n = count("warnings"); n > 0)
        text += "; " + std::to_string(n) + (n == 1 ? " warning" : " warnings");
    if (const std::size_t n = count("assumptions"); n > 0)
        text += "; " + std::to_string(n) + (n == 1 ? " assumption" : " assumptions");
    return text + " (listed under Share, import and export)";
}

// The configs read: their model chosen as the model box would choose it, then their settings.
bool ImportConfigs(AppState& state, const nlohmann::json& read)
{
    const nlohmann::json scenario =
        read.contains("scenario") && read["scenario"].is_object() ? read["scenario"] : nlohmann::json::object();
    state.config_check = read.contains("check") ? read["check"] : nlohmann::json();
    state.config_model = StringOr(read, "model", "");
    const std::string& model = state.config_model;
    if (model.empty())
    {
        ApplyConfigScenario(state, scenario);
        return state.import_message == state.import_note;
    }
    if (const int index = PresetIndexOf(state, model); index >= 0)
    {
        const ModelChoice before = state.scenario.model;
        state.scenario.model.source = ModelSource::Preset;
        state.scenario.model.preset_index = index;
        ApplyConfigScenario(state, scenario);
        if (state.import_message != state.import_note)
        {
            state.scenario.model = before;  // refused: the page stays as it was
            return false;
        }
        return true;
    }
    // Not bundled: fetched from the Hub as a typed id is; the settings wait for it (hub.cpp).
    HubState& hub = state.hub;
    std::snprintf(hub.input, sizeof(hub.input), "%s", model.c_str());
    std::snprintf(hub.revision, sizeof(hub.revision), "%s", "main");
    state.scenario.model.source = ModelSource::Hub;
    hub.config = nullptr;
    hub.pending_scenario = nullptr;
    hub.pending_import = scenario;
    state.import_message = "Fetching " + gpumem::display_text(model, kNameChars) +
                           " from the Hub for the configs' settings (see Hub model)";
    state.import_note = state.import_message;
    RequestHubModel(state);
    return true;
}

}  // namespace

void ApplyConfigScenario(AppState& state, const nlohmann::json& scenario)
{
    nlohmann::json doc = scenario.is_object() ? scenario : nlohmann::json::object();
    // A v1 document: the controls take what the files set and their defaults for the rest (as gpumem
    // check does), not every resolved value (the card's own size would become a custom size).
    if (!doc.contains("version"))
        doc["version"] = 1;
    // A file rarely names the card: the one the page shows stays (an imported card with its size).
    if (!state.gpus.empty() &&
        !(doc.contains("hardware") && doc["hardware"].is_object() && doc["hardware"].contains("gpu")))
    {
        const GpuEntry& gpu = state.gpus[state.scenario.hardware.gpu_index];
        doc["hardware"]["gpu"] = gpu.id;
        if (gpu.imported)
            doc["hardware"]["gpu_memory_gb"] = gpu.memory_gb;
    }
    if (!ImportScenario(state, doc))
    {
        const std::string why =
            state.import_message.rfind("not loaded: ", 0) == 0 ? state.import_message.substr(12) : state.import_message;
        state.import_message = "configs not loaded: " + why;
        return;
    }
    SetImportNote(state, {ConfigSummary(state.config_check, state.config_model)});
}

bool LoadFiles(AppState& state, const nlohmann::json& files)
{
    state.hub.pending_import = nullptr;  // configs still waiting for their Hub model give way to these
    state.files_waiting_for_tools = nullptr;
    if (!files.is_array() || files.empty())
    {
        state.import_message = "nothing to load: the files could not be handed to the page (over 16 MiB as JSON?)";
        return false;
    }
    // The config readers may still be on their way (tools.h): then these files wait for them.
    auto wait = [&](const std::string& failure) {
        if (!failure.empty())
            return false;
        state.files_waiting_for_tools = files;
        SetImportNote(state, {"Reading " + std::to_string(files.size()) + (files.size() == 1 ? " file" : " files") +
                              ": fetching the config readers (the first time only)..."});
        return true;
    };
    // A group held for a file it names: read again with these files.
    if (!state.held_config_files.empty())
    {
        nlohmann::json group = state.held_config_files;
        for (const nlohmann::json& f : files)
            group.push_back(f);
        const ToolAnswer answer = CallTool(Tool::ReadConfigs, {{"files", group}});
        if (!answer.result && wait(answer.failure))
            return true;
        state.held_config_files = nlohmann::json::array();
        if (answer.result && answer.result->value("ok", false))
            return ImportConfigs(state, *answer.result);
    }
    const ToolAnswer answer = CallTool(Tool::ReadConfigs, {{"files", files}});
    if (!answer.result && wait(answer.failure))
        return true;
    if (answer.result && answer.result->value("ok", false))
        return ImportConfigs(state, *answer.result);
    // Without the readers (their module could not be fetched) a JSON text is still read below.
    const ConfigRefusal refusal =
        answer.result ? ReadRefusal(*answer.result)
                      : ConfigRefusal{"the config readers could not be fetched (" + answer.failure + ")", false, true};
    // One text that is no tool's config: a scenario, a config.json, a calibration, a catalogue file.
    if (files.size() == 1 && refusal.not_a_config && files[0].is_object())
    {
        const std::string text = StringOr(files[0], "text", "");
        const std::string name = StringOr(files[0], "name", "file");
        const std::size_t first = text.find_first_not_of(" \t\r\n");
        if (first != std::string::npos && (text[first] == '{' || text[first] == '['))
        {
            if (!LoadText(state, text, name))
                return false;
            state.config_check = nullptr;  // what is shown now is no tool's config
            state.config_model.clear();
            return true;
        }
        state.import_message = refusal.message + "; nor a scenario, a model's config.json or a calibration (JSON)";
        return false;
    }
    if (refusal.missing_file && files.size() <= kMaxHeldConfigFiles)
        state.held_config_files = files;
    state.import_message = refusal.message;
    return false;
}

void ToolsArrived(AppState& state)
{
    if (state.files_waiting_for_tools.is_null())
        return;
    const nlohmann::json files = std::move(state.files_waiting_for_tools);
    LoadFiles(state, files);  // and if the module could not be had, CallTool says why
}

//-----------------------------------------------------------------------------
// [SECTION] The result as text
//-----------------------------------------------------------------------------

std::string ResultLabel(const ResultView& view)
{
    const ScenarioState& r = view.resolved;
    std::string label = view.model_name;
    if (r.IsInference())
        label += ", serve " + std::to_string(r.inference.concurrent_sequences) + " x " +
                 std::to_string(r.inference.context_len);
    else
        label += std::string(", ") + gpumem::detail::name(r.training.method) + " bs " +
                 std::to_string(r.training.batch_size) + " x " + std::to_string(r.training.seq_len);
    label += ", " + std::to_string(r.hardware.num_gpus) + " x " +
             (view.resolved_gpu.empty() ? "null" : gpumem::display_text(view.resolved_gpu, kNameChars));
    return label;
}

namespace {

// "Error band: 33.9-37.9 GiB (80 % of 19 measured runs like this)." with the verdict when the band's
// top does not fit; empty without a band.
std::string BandSentence(const ResultView& r)
{
    if (r.band_high_bytes <= r.band_low_bytes)
        return "";
    char text[224];
    std::snprintf(text, sizeof(text), "Error band: %.2f-%.2f GiB (%s %llu measured runs like this)%s.",
                  ToGiB(r.band_low_bytes), ToGiB(r.band_high_bytes), r.band_runs < 9 ? "all" : "80 % of",
                  static_cast<unsigned long long>(r.band_runs),
                  r.verdict == "borderline" ? "; borderline: the estimate fits, the band's top does not" : "");
    return text;
}

}  // namespace

std::string ResultMarkdown(const AppState& state)
{
    const ResultView& r = state.view;
    if (!r.ok)
        return "";
    std::string md = "| " + ResultLabel(r) + " | GiB |\n|---|---:|\n";
    auto line = [&md](const std::string& name, std::uint64_t bytes) {
        char value[32];
        std::snprintf(value, sizeof(value), "%.2f", ToGiB(bytes));
        md += "| " + name + " | " + value + " |\n";
    };
    for (int i = 0; i < kComponentCount; i++)
        if (r.components[i] > 0)
            line(kComponents[i].label, r.components[i]);
    line("**Allocated peak** (" + (r.peak_phase.empty() ? std::string("null") : r.peak_phase) + ")",
         r.peak_allocated_bytes);
    line("**Reserved**", r.peak_reserved_bytes);
    line("**Device total**", r.device_total_bytes);
    char tail[96];
    std::snprintf(tail, sizeof(tail), "\n%s: %.0f %% ", r.fits ? "Fits" : "Does not fit", r.utilization * 100.0);
    md += tail + CapacityText(state) + " (gpumem " + state.version + ").\n";
    if (r.fills_budget)
        md += PoolText({true, r.max_concurrent_sequences, r.requested_sequences, r.at_context_len, r.kv_cache_tokens,
                        r.kv_cache_bytes}) +
              ".\n";
    md += BandSentence(r) + (BandSentence(r).empty() ? "" : "\n");
    if (const CalibrationState& c = state.decisions.calibration; !c.hash.empty())
        md += "Calibration: " + gpumem::display_text(c.name, kNameChars) + " (" + c.hash + ").\n";
    return md;
}

std::string ResultSummary(const AppState& state)
{
    const ResultView& r = state.view;
    if (!r.ok)
    {
        std::string text = "The scenario cannot be estimated:";
        for (const std::string& e : r.errors)
            text += " " + e + ".";
        return text;
    }
    char head[128];
    std::snprintf(head, sizeof(head), ": %.1f GiB per GPU at the peak (%s), %s: %.0f %% ", ToGiB(r.device_total_bytes),
                  r.peak_phase.empty() ? "null" : r.peak_phase.c_str(), r.fits ? "fits" : "does not fit",
                  r.utilization * 100.0);
    std::string text = ResultLabel(r) + head + CapacityText(state) + ".";
    // An engine that fills its budget claims that much whatever it serves: what fits is the sequences.
    if (r.fills_budget)
        text += " " +
                PoolText({true, r.max_concurrent_sequences, r.requested_sequences, r.at_context_len, r.kv_cache_tokens,
                          r.kv_cache_bytes}) +
                ".";
    if (const std::string band = BandSentence(r); !band.empty())
        text += " " + band;
    if (const std::vector<std::string> set = LinkValuesInEffect(state); !set.empty())
    {
        text += " Set by the link:";
        for (std::size_t i = 0; i < set.size(); i++)
            text += (i == 0 ? " " : "; ") + set[i];
        text += ".";
    }
    if (!r.fits && r.gpus_needed)
        text += " GPUs needed: " + std::to_string(*r.gpus_needed) + ".";
    const auto parts = LargestComponents(r);
    for (std::size_t i = 0; i < parts.size() && i < 3; i++)
    {
        char part[96];
        std::snprintf(part, sizeof(part), "%s %s %.1f GiB", i == 0 ? " Largest:" : ",", parts[i].second,
                      ToGiB(parts[i].first));
        text += part;
    }
    if (!parts.empty())
        text += ".";
    if (const CalibrationState& c = state.decisions.calibration; !c.hash.empty())
        text += " Calibrated with " + gpumem::display_text(c.name, kNameChars) + ".";
    for (const std::string& w : r.warnings)
        text += " Warning: " + w + ".";
    return text;
}

}  // namespace gpumem::ui
