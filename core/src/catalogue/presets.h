#pragma once

#include <optional>
#include <string>
#include <vector>

#include "scenario/fields.h"

namespace gpumem::detail {

// A catalogue GPU by id or name (case-insensitive), with "memory_bytes" filled in.
// A catalogue GPU by what a user typed: its id, name or an alias, without case, spaces, punctuation
// or a leading vendor ("rtx 4090", "a100 80gb", "H100 SXM"); a family name ("A100") as the family's
// documented default; a part of exactly one card's name ("4090"). `note`, when given, says how an
// inexact name was read, or which cards an ambiguous one could be (then nullopt).
std::optional<json> find_gpu(const std::string& id, std::string* note = nullptr);
// A weight format: bytes per weight = bits / 8 + scale_bytes / group_size.
struct Format {
    std::string id;
    double bits = 16, group_size = 0, scale_bytes = 0;
    FormatScope scope = FormatScope::All;  // which tensors it applies to (see presets/dtypes.json)
    std::optional<WeightFormat> builtin;   // its settings row for a catalogue format; none for a scenario's own
    double bytes_per_param() const { return bits / 8 + (group_size > 0 ? scale_bytes / group_size : 0); }
    // Bytes per element of the compute it dequantizes to: fp32 for fp32 weights, else 2 (settings.h).
    double compute_bytes() const {
        return detail::compute_bytes(builtin == WeightFormat::Fp32 ? Dtype::Fp32 : Dtype::Bf16);
    }
};
// bitsandbytes' double quantization (QLoRA paper §2) of its 4-bit formats (nf4, fp4; int8 has none):
// the fp32 absmax per 64 weights becomes an 8-bit one plus an fp32 scale per 256 of them.
inline void apply_double_quant(Format& f) {
    if (f.builtin == WeightFormat::Nf4 || f.builtin == WeightFormat::Fp4) f.scale_bytes = 1 + 4.0 / 256;
}
// Reads one format record; issues name `prefix` fields. nullopt when invalid.
std::optional<Format> read_format(const json& record, const std::string& prefix, std::vector<Issue>& issues);
// The catalogue's formats (built in).
const std::vector<Format>& builtin_formats();

// presets/error_bands.json as parsed (null when absent): the validation set's runs behind the error band.
const json& error_bands_document();

// A bundled model's config.json as the scenario reader reads it (read_hf_config, field prefix "model.preset",
// named by its model_id) and its parameter count, computed the first time it is asked for and kept with the
// catalogue: fit and the planner read one scenario per candidate, each naming the same preset.
struct PresetModel {
    std::string model_id;
    ModelRead read;
    ParamCount params;
};
// By Hub id, twin or alias as find_preset (gpumem.h); nullptr when none matches.
const PresetModel* preset_model(const std::string& id_or_alias);

// The bundled model's file as the catalogue embeds it, parsed: without the notes for people that
// find_preset puts back (records.cpp), which no estimate reads. By Hub id, twin or alias as
// find_preset; `path`, when given, gets its path under presets/. nullptr when none matches.
const json* preset_file(const std::string& id_or_alias, std::string* path = nullptr);
// Its path under presets/ alone ("" when none matches).
std::string preset_path(const std::string& id_or_alias);

// A file of presets/ as cmake/embed_presets.cmake compiles it into the core: its path and text.
struct EmbeddedFile {
    const char* path;
    const char* text;
};

// gpumem::nearest_presets (gpumem.h).
std::vector<std::string> nearest_presets(const std::string& id, std::size_t n);

// Typed names longer than this get no near-miss suggestion: no bundled id, alias or option is
// near that long, and the comparisons stay cheap whatever is typed.
constexpr std::size_t kMaxSuggestLength = 256;

// edit_distance(): gpumem/settings.h.

}  // namespace gpumem::detail
