// The bundled presets: presets/models/*.json (real config.json files with their published
// parameter counts), presets/aliases.json and presets/gpus.json, compiled in by
// cmake/embed_presets.cmake.

#include <algorithm>
#include <cctype>
#include <cstring>
#include <functional>
#include <map>
#include <optional>

#include "catalogue/presets.h"

namespace gpumem::detail {

extern const EmbeddedFile kPresetFiles[];
extern const std::size_t kPresetFileCount;
extern const char* const kPresetIndex[];  // the models' ids and summaries (cmake/embed_presets.cmake)
extern const std::size_t kPresetIndexCount;

namespace {

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
    return s;
}

// A GPU name as users type it, for matching: lower case, letters and digits only, without a
// leading vendor or brand ("NVIDIA GeForce RTX 3090", "rtx-3090" and "RTX 3090" are all "rtx3090";
// "Tesla T4" is "t4").
std::string gpu_key(const std::string& name) {
    std::string key;
    for (unsigned char c : name)
        if (std::isalnum(c)) key += static_cast<char>(std::tolower(c));
    for (bool again = true; again;) {
        again = false;
        for (const char* brand : {"nvidia", "tesla", "geforce", "amd", "instinct", "intel", "radeon"})
            if (key.size() > std::strlen(brand) && key.rfind(brand, 0) == 0) {
                key.erase(0, std::strlen(brand));
                again = true;
            }
    }
    return key;
}

// One bundled model: its summary from the index (path, model_id, model_type, total_params, gated), and
// its file (without its notes: records.cpp), parsed the first time it is asked for and kept.
struct Model {
    json summary;
    const char* text = nullptr;
    mutable std::optional<json> record;
    mutable std::optional<PresetModel> read;  // preset_model(): the record read and counted
    std::string id() const { return summary["model_id"].get<std::string>(); }
    const json& full() const {
        if (!record) {
            record = json::parse(text, nullptr, false);
            if (record->is_discarded()) record = json::object();  // the preset tests check every file
        }
        return *record;
    }
    const PresetModel& model() const {
        if (!read) {
            const json& r = full();
            PresetModel p{id(), read_hf_config(r.contains("config") ? r["config"] : json(), "model.preset"), {}};
            if (p.read.model) {
                p.read.model->name = p.model_id;
                p.params = count_parameters(*p.read.model);
            }
            read = std::move(p);
        }
        return *read;
    }
};

// Parsed once, on first use; the embedded text is checked by the preset tests, so a parse failure
// here means a broken build, reported as an empty catalogue rather than a crash. The models are
// listed from the build's index and each file is parsed only when that model is used: start-up
// (the page's first frame) does not parse all of them.
struct Catalogue {
    std::vector<Model> models;                       // sorted by model_id
    std::map<std::string, std::string> alias_to_id;  // lower-cased alias → model_id
    json gpus = json::array();
    json gpu_families = json::object();  // normalised family name -> {"gpu", "why"}
    json formats_json = json::array();
    std::vector<Format> formats;
    json error_bands;  // presets/error_bands.json

    Catalogue() {
        json aliases;
        std::map<std::string, const char*> model_files;
        for (std::size_t i = 0; i < kPresetFileCount; ++i) {
            std::string path = kPresetFiles[i].path;
            if (path.rfind("models/", 0) == 0) {
                model_files[path] = kPresetFiles[i].text;
                continue;
            }
            json doc = json::parse(kPresetFiles[i].text, nullptr, false);
            if (doc.is_discarded()) continue;
            if (path == "gpus.json") {
                gpus = doc.value("gpus", json::array());
                const json families = doc.value("families", json::object());
                for (const auto& [name, family] : families.items())
                    if (family.is_object()) gpu_families[gpu_key(name)] = family;
            } else if (path == "aliases.json") aliases = doc;
            else if (path == "dtypes.json") formats_json = doc.value("formats", json::array());
            else if (path == "error_bands.json") error_bands = doc;
        }
        for (std::size_t i = 0; i < kPresetIndexCount; ++i) {
            json entry = json::parse(kPresetIndex[i], nullptr, false);
            if (!entry.is_object()) continue;
            auto file = model_files.find(entry.value("path", ""));
            if (file != model_files.end() && entry.contains("model_id") && entry["model_id"].is_string())
                models.push_back({std::move(entry), file->second, std::nullopt, std::nullopt});
        }
        std::sort(models.begin(), models.end(), [](const Model& a, const Model& b) { return a.id() < b.id(); });
        for (const Model& m : models) alias_to_id[lower(m.id())] = m.id();
        // Aliases of models that are not bundled (yet) are left out: they would resolve to nothing.
        std::map<std::string, std::string> bundled = alias_to_id;
        for (const char* kind : {"short", "twins"})
            if (aliases.contains(kind))
                for (auto it = aliases[kind].begin(); it != aliases[kind].end(); ++it)
                    if (it->is_string() && bundled.count(lower(it->get<std::string>())))
                        alias_to_id.emplace(lower(it.key()), bundled[lower(it->get<std::string>())]);
        for (json& f : formats_json) {
            std::vector<Issue> ignored;  // the shipped catalogue is checked by the tests
            if (auto fmt = read_format(f, "formats", ignored)) {
                fmt->builtin = parse_setting<WeightFormat>(fmt->id);
                formats.push_back(*fmt);
                f["bytes_per_param"] = fmt->bytes_per_param();
            }
        }
        for (json& g : gpus) {
            double mib = g.contains("memory_mib") ? g["memory_mib"].get<double>() : g.value("memory_gb", 0.0) * 1024;
            g["memory_bytes"] = static_cast<std::uint64_t>(mib * 1024 * 1024);
            // What CUDA reports as the total (cudaMemGetInfo), where published; else the size above.
            g["cuda_total_bytes"] = g.contains("cuda_total_gib")
                                        ? static_cast<std::uint64_t>(g["cuda_total_gib"].get<double>() * 1073741824.0)
                                        : g["memory_bytes"].get<std::uint64_t>();
        }
    }
};

const Catalogue& catalogue() {
    static const Catalogue c;
    return c;
}

}  // namespace

const json& error_bands_document() { return catalogue().error_bands; }

std::optional<Format> read_format(const json& record, const std::string& prefix, std::vector<Issue>& issues) {
    std::size_t before = issues.size();
    FieldReader r(record, prefix, issues);
    if (!record.is_object()) {
        issues.push_back({prefix,
                          "must be a format object {\"id\", \"bits\", \"group_size\", \"scale_bytes\", \"scope\"}",
                          show(record)});
        return std::nullopt;
    }
    Format f;
    auto id = r.string("id");
    if (!id || id->empty()) r.fail("id", "is required: the name weight_format uses", r.get("id"));
    f.bits = r.number("bits", 0.5, 64).value_or(0);
    if (!r.has("bits")) r.fail("bits", "is required: bits per weight (e.g. 4)", nullptr);
    f.group_size = r.number("group_size", 0, 1e9).value_or(0);
    f.scale_bytes = r.number("scale_bytes", 0, 1e6).value_or(0);
    f.scope = r.setting<FormatScope>("scope").value_or(kFormatScopeField.fallback);
    if (issues.size() != before) return std::nullopt;
    f.id = *id;
    return f;
}

const std::vector<Format>& builtin_formats() { return catalogue().formats; }

namespace {

// A typed name in a note: quoted, on one line and bounded (display_text).
std::string quoted_name(const std::string& typed) { return "\"" + display_text(typed, 80) + "\""; }

// A board name split into its words: the model's words, joined as gpu_key writes them, and the memory
// size in GB ("80GB", "40G"; 0 when none is given). Form factors (SXM2/4/5, PCIe) are dropped: a
// board's memory, not its connector, is what the estimate needs, and the catalogue keeps a separate
// card only where the memory or the clocks differ (H100 PCIe, matched by its own name before this).
std::optional<json> by_board_name(const std::string& typed, const json& gpus,
                                  const std::function<std::vector<std::string>(const json&)>& names) {
    std::string model, word;
    double memory_gb = 0;
    auto take = [&]() {
        const std::string w = lower(word);
        word.clear();
        if (w.empty() || w == "sxm" || w == "sxm2" || w == "sxm3" || w == "sxm4" || w == "sxm5" || w == "pcie") return;
        std::size_t digits = 0;
        while (digits < w.size() && std::isdigit(static_cast<unsigned char>(w[digits]))) digits++;
        if (digits > 0 && digits <= 4 && (w.substr(digits) == "gb" || w.substr(digits) == "g")) {
            memory_gb = std::stod(w.substr(0, digits));
            return;
        }
        model += w;
    };
    for (unsigned char c : typed) {
        if (std::isalnum(c)) word += static_cast<char>(c);
        else take();
    }
    take();
    model = gpu_key(model);
    if (model.size() < 2 || memory_gb == 0) return std::nullopt;
    std::optional<json> found;
    for (const json& g : gpus) {
        bool named = false;
        for (const std::string& k : names(g)) named = named || k.rfind(model, 0) == 0;
        if (!named || g.value("memory_gb", 0.0) != memory_gb) continue;
        if (found) return std::nullopt;  // two cards of that model and size: not this rule's to pick
        found = g;
    }
    return found;
}

}  // namespace

std::optional<json> find_gpu(const std::string& id, std::string* note) {
    const std::string key = gpu_key(id);
    if (key.empty()) return std::nullopt;
    const json& gpus = catalogue().gpus;
    auto names = [](const json& g) {
        std::vector<std::string> keys = {gpu_key(g.value("id", "")), gpu_key(g.value("name", ""))};
        for (const json& a : g.value("aliases", json::array()))
            if (a.is_string()) keys.push_back(gpu_key(a.get<std::string>()));
        return keys;
    };
    auto by_id = [&gpus](const std::string& gpu_id) -> std::optional<json> {
        for (const json& g : gpus)
            if (g.value("id", "") == gpu_id) return g;
        return std::nullopt;
    };
    // 1. The id, the name or an alias, exactly.
    for (const json& g : gpus)
        for (const std::string& k : names(g))
            if (k == key) return g;
    // 2. A name as nvidia-smi prints it ("NVIDIA A100-SXM4-40GB", "Tesla V100-PCIE-32GB", "NVIDIA A100 80GB
    //    PCIe"): the model, a board form factor that does not change the memory, and the memory size. The card
    //    whose id, name or alias holds the model and whose memory is that size.
    if (std::optional<json> g = by_board_name(id, gpus, names)) {
        if (note != nullptr) *note = quoted_name(id) + " read as " + (*g)["id"].get<std::string>();
        return g;
    }
    // 3. A family name that covers several cards: its documented default.
    const json& families = catalogue().gpu_families;
    std::vector<std::string> covered;
    for (const json& g : gpus)
        for (const std::string& k : names(g))
            if (key.size() >= 2 && k.find(key) != std::string::npos) {
                covered.push_back(g.value("id", ""));
                break;
            }
    if (families.contains(key)) {
        const json& family = families[key];
        std::optional<json> g = by_id(family.value("gpu", ""));
        if (g && note != nullptr) {
            std::string others;
            for (const std::string& c : covered)
                if (c != (*g)["id"]) others += (others.empty() ? "" : ", ") + c;
            *note = quoted_name(id) + " names a family: read as " + (*g)["id"].get<std::string>() + " (" +
                    family.value("why", "") + ")" + (others.empty() ? "" : "; the family also has " + others);
        }
        if (g) return g;
    }
    // 4. Part of exactly one card's id, name or alias ("4090", "H100 PCIe").
    if (covered.size() == 1) {
        if (note != nullptr) *note = quoted_name(id) + " read as " + covered[0];
        return by_id(covered[0]);
    }
    if (note != nullptr && covered.size() > 1) {
        *note = quoted_name(id) + " could be any of ";
        for (std::size_t i = 0; i < covered.size(); i++) *note += (i ? ", " : "") + covered[i];
    }
    return std::nullopt;
}

namespace {

// How far `key` (lower case) is from a bundled id or alias (lower case), when at most `limit`
// (else more): the edit distance, or the name parts' plus one (a wrong organisation), or 2 when
// the key is a variant that starts with it ("qwen/qwen2.5-7b-instruct" for "qwen/qwen2.5-7b").
std::size_t preset_distance(const std::string& key, const std::string& alias, std::size_t limit) {
    std::size_t d = edit_distance(key, alias, limit);
    const std::size_t a = alias.find('/'), k = key.find('/');
    if (a != std::string::npos && k != std::string::npos && limit > 0)
        d = std::min(d, edit_distance(key.substr(k + 1), alias.substr(a + 1), limit - 1) + 1);
    if (key.size() > alias.size() && key.compare(0, alias.size(), alias) == 0 &&
        !std::isalnum(static_cast<unsigned char>(key[alias.size()])))
        d = std::min<std::size_t>(d, 2);
    return d;
}

}  // namespace

std::size_t edit_distance(const std::string& a, const std::string& b, std::size_t limit) {
    const std::size_t n = a.size(), m = b.size();
    limit = std::min(limit, std::max(n, m));  // never more than that; keeps limit + 1 from overflowing
    const std::size_t over = limit + 1;
    if ((n > m ? n - m : m - n) > limit) return over;
    // row[j]: the distance between a's first i characters and b's first j, capped at `over`; cells
    // farther than `limit` from the diagonal are at least that far apart and stay `over`.
    std::vector<std::size_t> row(m + 1, over);
    for (std::size_t j = 0; j <= std::min(m, limit); ++j) row[j] = j;
    for (std::size_t i = 1; i <= n; ++i) {
        const std::size_t from = i > limit ? i - limit : 1, to = std::min(m, i + limit);
        std::size_t diagonal = row[from - 1];
        row[from - 1] = from == 1 ? std::min(i, over) : over;
        std::size_t least = row[from - 1];
        for (std::size_t j = from; j <= to; ++j) {
            const std::size_t up = row[j];
            row[j] = std::min({up + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1), over});
            diagonal = up;
            least = std::min(least, row[j]);
        }
        if (least > limit) return over;  // every way on is already farther
    }
    return row[m];
}

std::vector<std::string> nearest_presets(const std::string& id, std::size_t n) {
    if (id.size() > kMaxSuggestLength) return {};
    const std::string key = lower(id);
    const std::size_t limit = std::max<std::size_t>(3, key.size() / 3);
    std::vector<std::pair<std::size_t, std::string>> scored;
    for (const auto& [alias, target] : catalogue().alias_to_id)
        if (const std::size_t d = preset_distance(key, alias, limit); d <= limit) scored.push_back({d, target});
    std::sort(scored.begin(), scored.end());
    std::vector<std::string> out;
    for (const auto& s : scored) {
        if (out.size() == n) break;
        if (std::find(out.begin(), out.end(), s.second) == out.end()) out.push_back(s.second);
    }
    return out;
}

}  // namespace gpumem::detail

namespace gpumem {

std::vector<std::string> nearest_presets(const std::string& id, std::size_t n) {
    return detail::nearest_presets(id, n);
}

using detail::catalogue;
using detail::json;
using detail::lower;

json list_presets_brief() {
    // Each model's aliases in one pass over the alias map (in its order), not one pass per model:
    // the page lists the presets before its first frame.
    std::map<std::string, json> aliases_of;
    for (const auto& [alias, target] : catalogue().alias_to_id)
        if (alias != lower(target)) aliases_of[target].push_back(alias);
    json out = json::array();
    for (const detail::Model& model : catalogue().models) {
        const json& m = model.summary;
        const auto found = aliases_of.find(model.id());
        json aliases = found != aliases_of.end() ? found->second : json::array();
        out.push_back({{"id", m["model_id"]},
                       {"aliases", aliases},
                       {"model_type", m.value("model_type", "")},
                       {"total_params", m.value("total_params", json())},
                       {"gated", m.value("gated", false)}});
    }
    return out;
}

namespace detail {
namespace {

// The bundled model a Hub id, twin or alias names (find_preset); nullptr when none.
const Model* preset_named(const std::string& id_or_alias) {
    std::string key = lower(id_or_alias);
    // A Hub URL or a "hf.co/" prefix names the same id.
    for (const char* prefix : {"https://huggingface.co/", "http://huggingface.co/", "huggingface.co/", "hf.co/"})
        if (key.rfind(prefix, 0) == 0) key = key.substr(std::string(prefix).size());
    auto it = catalogue().alias_to_id.find(key);
    if (it == catalogue().alias_to_id.end()) return nullptr;
    const std::vector<Model>& models = catalogue().models;  // sorted by model_id
    auto m = std::lower_bound(models.begin(), models.end(), it->second,
                              [](const Model& a, const std::string& id) { return a.id() < id; });
    return m != models.end() && m->id() == it->second ? &*m : nullptr;
}

}  // namespace

const PresetModel* preset_model(const std::string& id_or_alias) {
    const Model* m = preset_named(id_or_alias);
    return m ? &m->model() : nullptr;
}

std::string preset_path(const std::string& id_or_alias) {
    const Model* m = preset_named(id_or_alias);
    return m ? m->summary.value("path", "") : std::string();
}

const json* preset_file(const std::string& id_or_alias, std::string* path) {
    const Model* m = preset_named(id_or_alias);
    if (!m) return nullptr;
    if (path) *path = m->summary.value("path", "");
    return &m->full();
}

}  // namespace detail

std::optional<std::string> preset_id(const std::string& id_or_alias) {
    const detail::Model* m = detail::preset_named(id_or_alias);
    return m ? std::optional<std::string>(m->id()) : std::nullopt;
}

json list_gpus() { return catalogue().gpus; }

json list_formats() { return catalogue().formats_json; }

}  // namespace gpumem
