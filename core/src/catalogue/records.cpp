// find_preset (gpumem.h): a bundled model's whole record, its file and the notes for people the
// catalogue keeps apart from it (cmake/embed_presets.cmake: where its count and config come from,
// its checkpoint). In a source of its own, with those notes, so that a module that never asks for a
// whole record (the page: issue #29) links neither.

#include <cstddef>

#include "catalogue/presets.h"
#include "gpumem/gpumem.h"

namespace gpumem {

using json = nlohmann::json;

namespace detail {

struct EmbeddedFile {
    const char* path;
    const char* text;
};
extern const EmbeddedFile kPresetNotes[];  // by path, sorted as the files are (cmake/embed_presets.cmake)
extern const std::size_t kPresetNoteCount;

}  // namespace detail

std::optional<json> find_preset(const std::string& id_or_alias) {
    std::string path;
    const json* file = detail::preset_file(id_or_alias, &path);
    if (!file) return std::nullopt;
    json record = *file;
    for (std::size_t i = 0; i < detail::kPresetNoteCount; ++i) {
        if (path != detail::kPresetNotes[i].path) continue;
        const json notes = json::parse(detail::kPresetNotes[i].text, nullptr, false);
        if (notes.is_object() && record.is_object())
            for (const auto& [key, value] : notes.items()) record[key] = value;
        break;
    }
    return record;
}

}  // namespace gpumem
