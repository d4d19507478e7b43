#pragma once

#include <optional>
#include <string>
#include <vector>

#include "fields.h"

namespace gpumem::detail {

// A catalogue GPU by id or name (case-insensitive), with "memory_bytes" filled in.
std::optional<json> find_gpu(const std::string& id);
// A weight format: bytes per weight = bits / 8 + scale_bytes / group_size.
struct Format {
    std::string id;
    double bits = 16, group_size = 0, scale_bytes = 0;
    std::string scope = "all";  // all | layers | matrices (see presets/dtypes.json)
    double bytes_per_param() const { return bits / 8 + (group_size > 0 ? scale_bytes / group_size : 0); }
};
// Reads one format record; issues name `prefix` fields. nullopt when invalid.
std::optional<Format> read_format(const json& record, const std::string& prefix, std::vector<Issue>& issues);
// The catalogue's formats (built in).
const std::vector<Format>& builtin_formats();

// The `n` preset ids whose names (or aliases) are closest to `id`, for "did you mean".
std::vector<std::string> nearest_presets(const std::string& id, std::size_t n);

}  // namespace gpumem::detail
