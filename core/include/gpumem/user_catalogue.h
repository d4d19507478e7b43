// A user's own dtypes and GPUs: data_types.json and gpu_types.json, in the format of
// vram_calculator.py's --config-dir (and the catalogue's own presets/dtypes.json shape). One reader
// for both places that take them: `gpumem table --config-dir` (core/cli/table.cpp) and the page's
// file import (ui/share.cpp), so their rows and their messages are the same.
//
//     json rows; std::vector<std::string> notes; std::string error;
//     if (!read_user_dtypes(doc, "data_types.json", rows, notes, error)) ... error names the file and field
//     json format = user_format(rows[0]);   // {"id", "bits", "scope", "about"}: a scenario's "formats" entry
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpumem::detail {

// The dtypes of data_types.json (`file`: its name, as messages say it): {"name": {"bytes_per_param",
// "description"}} (vram_calculator.py's; members that are not objects are remarks), or {"formats":
// [{"id", "bits" | "bytes_per_param", "about"}]} (presets/dtypes.json's). `rows` gets
// {"id", "bytes_per_param", "about"} for each that the catalogue lacks; a catalogue id is skipped,
// with a note when its size differs; `notes` ends with "FILE: N dtype(s) added". False, with
// `error` naming the file and the field, when an entry is unusable (`rows` then holds nothing).
bool read_user_dtypes(const nlohmann::json& doc, const std::string& file, nlohmann::json& rows,
                      std::vector<std::string>& notes, std::string& error);

// The GPUs of gpu_types.json: one {"name", "memory_gb"} object, a list of them, {"gpus": [...]} or
// {"gpu_types": [...]}. `rows` gets {"id", "name", "memory_gb", "memory_bytes"} (id: the given one, or
// the name as catalogue ids are written, "RTX 5090" -> "RTX-5090"); `notes` ends with "FILE: N GPU(s)
// added". False, with `error` naming the file and the field, when a GPU lacks either.
bool read_user_gpus(const nlohmann::json& doc, const std::string& file, nlohmann::json& rows,
                    std::vector<std::string>& notes, std::string& error);

// Which of the two files a document looks like, for text that comes without a file name:
// "data_types.json", "gpu_types.json", or "" (neither: a scenario, a config.json, ...).
std::string user_catalogue_kind(const nlohmann::json& doc);

// A dtype row as a scenario's weight format ("formats": [{"id", "bits", "scope", "about"}]):
// bits = bytes_per_param x 8, applied to every weight (scales included in the size, as the file gives it).
nlohmann::json user_format(const nlohmann::json& dtype_row);

}  // namespace gpumem::detail
