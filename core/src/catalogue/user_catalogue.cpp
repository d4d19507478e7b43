// A user's data_types.json and gpu_types.json: see user_catalogue.h.

#include "gpumem/user_catalogue.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include <gpumem/gpumem.h>

namespace gpumem::detail {

using nlohmann::json;

namespace {

// A member that should be text: "" when absent or not a string (never an exception).
std::string text_of(const json& object, const char* key) {
    return object.is_object() && object.contains(key) && object[key].is_string() ? object[key].get<std::string>() : "";
}

// A member that should be a number: 0 when absent or not a number.
double number_of(const json& object, const char* key) {
    return object.is_object() && object.contains(key) && object[key].is_number() ? object[key].get<double>() : 0.0;
}

// A name as the catalogue ids are written: "RTX 5090" -> "RTX-5090".
std::string as_id(std::string name) {
    std::replace(name.begin(), name.end(), ' ', '-');
    return name;
}

// The largest card gpu_types.json may describe: the scenario's own bound on gpu_memory_gb
// (scenario.cpp, read_gpu), so every row the file gives can be estimated on.
constexpr double kMaxMemoryGb = 100000;

// Why a GPU entry is unusable ("" when it is not): the first field missing or wrong.
std::string gpu_problem(const json& g) {
    if (!g.is_object()) return "an entry is not an object";
    if (text_of(g, "name").empty() && text_of(g, "id").empty()) return "\"name\" is missing";
    if (!g.contains("memory_gb")) return "\"memory_gb\" is missing";
    if (!g["memory_gb"].is_number()) return "\"memory_gb\" is not a number";
    const double gb = g["memory_gb"].get<double>();
    if (!(gb > 0 && gb <= kMaxMemoryGb)) return "\"memory_gb\" must be above 0 and at most 100000";
    return "";
}

}  // namespace

bool read_user_dtypes(const json& doc, const std::string& file, json& rows, std::vector<std::string>& notes,
                      std::string& error) {
    rows = json::array();
    json entries = json::array();
    if (doc.is_object() && doc.contains("formats") && doc["formats"].is_array()) {
        // presets/dtypes.json's shape: bits, or bytes_per_param when given.
        const json& formats = doc["formats"];
        for (std::size_t i = 0; i < formats.size(); ++i) {
            const json& f = formats[i];
            if (text_of(f, "id").empty()) {
                error = file + ": formats[" + std::to_string(i) + "].id: each needs an \"id\"";
                return false;
            }
            const double bytes =
                f.contains("bytes_per_param") ? number_of(f, "bytes_per_param") : number_of(f, "bits") / 8;
            entries.push_back({{"id", f["id"]}, {"bytes_per_param", bytes}, {"about", text_of(f, "about")}});
        }
    } else if (doc.is_object()) {
        // vram_calculator.py's shape: {"name": {"bytes_per_param", "description"}}.
        for (auto it = doc.begin(); it != doc.end(); ++it) {
            if (!it->is_object()) continue;  // "about" and other remarks
            entries.push_back({{"id", it.key()},
                               {"bytes_per_param", number_of(*it, "bytes_per_param")},
                               {"about", text_of(*it, "description")}});
        }
    } else {
        error = file + ": must be a JSON object of {\"name\": {\"bytes_per_param\", \"description\"}}";
        return false;
    }

    json known = json::object();
    for (const json& f : gpumem::list_formats()) known[f["id"].get<std::string>()] = f["bytes_per_param"];
    json added = json::array();
    for (const json& e : entries) {
        const std::string id = e["id"];
        const double bytes = e["bytes_per_param"];
        if (!(bytes > 0 && bytes <= 8)) {
            error = file + ": " + id + ".bytes_per_param: must be a number of bytes above 0 and at most 8";
            return false;
        }
        if (known.contains(id)) {
            if (std::abs(known[id].get<double>() - bytes) > 0.125)
                notes.push_back(file + ": " + id + " is a catalogue format (" + known[id].dump() +
                                " bytes per parameter with its scales); the catalogue's is used");
            continue;
        }
        added.push_back(e);
    }
    rows = std::move(added);
    notes.push_back(file + ": " + std::to_string(rows.size()) + " dtype(s) added");
    return true;
}

bool read_user_gpus(const json& doc, const std::string& file, json& rows, std::vector<std::string>& notes,
                    std::string& error) {
    rows = json::array();
    const json list = doc.is_array()                                                      ? doc
                      : doc.is_object() && doc.contains("gpus") && doc["gpus"].is_array() ? doc["gpus"]
                      : doc.is_object() && doc.contains("gpu_types") && doc["gpu_types"].is_array()
                          ? doc["gpu_types"]
                          : json::array({doc});
    json added = json::array();
    for (std::size_t i = 0; i < list.size(); ++i) {
        const json& g = list[i];
        if (const std::string why = gpu_problem(g); !why.empty()) {
            // Which entry, where the file has several.
            const std::string where = list.size() > 1 ? " (entry " + std::to_string(i) + ")" : "";
            error =
                file + ": each GPU needs a \"name\" and a positive \"memory_gb\", got " + g.dump() + where + ": " + why;
            return false;
        }
        const std::string name = text_of(g, "name").empty() ? text_of(g, "id") : text_of(g, "name");
        const double gb = g["memory_gb"].get<double>();
        // memory_gb as the catalogue reads it: the marketed size, x 1024 MiB (HBM and GDDR are sold in GiB).
        added.push_back({{"id", text_of(g, "id").empty() ? as_id(name) : text_of(g, "id")},
                         {"name", name},
                         {"memory_gb", g["memory_gb"]},
                         {"memory_bytes", static_cast<std::uint64_t>(gb * 1024) << 20}});
    }
    rows = std::move(added);
    notes.push_back(file + ": " + std::to_string(rows.size()) + " GPU(s) added");
    return true;
}

std::string user_catalogue_kind(const json& doc) {
    auto gpu_like = [](const json& g) { return g.is_object() && g.contains("memory_gb") && g.contains("name"); };
    auto all_gpus = [&](const json& list) {
        return list.is_array() && !list.empty() && std::all_of(list.begin(), list.end(), gpu_like);
    };
    if (all_gpus(doc) || gpu_like(doc)) return "gpu_types.json";
    if (!doc.is_object()) return "";
    if ((doc.contains("gpus") && all_gpus(doc["gpus"])) || (doc.contains("gpu_types") && all_gpus(doc["gpu_types"])))
        return "gpu_types.json";
    // A scenario may carry "formats" too: it says so by its version, model or mode.
    if (doc.contains("version") || doc.contains("model") || doc.contains("mode")) return "";
    if (doc.contains("formats") && doc["formats"].is_array()) return "data_types.json";
    bool any = false;
    for (const json& member : doc) {
        if (!member.is_object()) continue;  // remarks
        if (!member.contains("bytes_per_param")) return "";
        any = true;
    }
    return any ? "data_types.json" : "";
}

json user_format(const json& dtype_row) {
    return {{"id", dtype_row["id"]},
            {"bits", dtype_row["bytes_per_param"].get<double>() * 8},
            {"scope", "all"},
            {"about", dtype_row.value("about", "")}};
}

}  // namespace gpumem::detail
