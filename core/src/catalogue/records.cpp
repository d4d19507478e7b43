// find_preset and list_presets (gpumem.h): a bundled model's whole record, its file and the notes for
// people the catalogue keeps apart from it (cmake/embed_presets.cmake: where its count and config come
// from, its checkpoint), and the model list with each one's params_source. In a source of their own,
// with those notes, so that a module that asks for neither (the page: issue #29) links none of them.

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "catalogue/presets.h"
#include "gpumem/gpumem.h"

namespace gpumem {

using json = nlohmann::json;

namespace detail {

extern const EmbeddedFile kPresetNotes[];  // by path, sorted as the files are (cmake/embed_presets.cmake)
extern const std::size_t kPresetNoteCount;

}  // namespace detail

namespace {

// The notes kept apart from the file at `path` (an empty object when none).
json notes_of(const std::string& path) {
    static const std::map<std::string, const char*> by_path = [] {
        std::map<std::string, const char*> m;
        for (std::size_t i = 0; i < detail::kPresetNoteCount; ++i)
            m[detail::kPresetNotes[i].path] = detail::kPresetNotes[i].text;
        return m;
    }();
    const auto it = by_path.find(path);
    json notes = it != by_path.end() ? json::parse(it->second, nullptr, false) : json::object();
    return notes.is_object() ? notes : json::object();
}

}  // namespace

std::optional<json> find_preset(const std::string& id_or_alias) {
    std::string path;
    const json* file = detail::preset_file(id_or_alias, &path);
    if (!file) return std::nullopt;
    json record = *file;
    json notes = notes_of(path);  // kept: a range-for would not keep a temporary alive under items()
    if (record.is_object())
        for (auto& [key, value] : notes.items()) record[key] = std::move(value);
    return record;
}

json list_presets() {
    json list = list_presets_brief();
    for (json& m : list) {
        const json notes = notes_of(detail::preset_path(m["id"].get<std::string>()));
        m["params_source"] = notes.value("params_source", "");
    }
    return list;
}

}  // namespace gpumem
