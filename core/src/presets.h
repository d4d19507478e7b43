#pragma once

#include <optional>
#include <string>
#include <vector>

#include "fields.h"

namespace gpumem::detail {

// A catalogue GPU by id or name (case-insensitive), with "memory_bytes" filled in.
std::optional<json> find_gpu(const std::string& id);
// The `n` preset ids whose names (or aliases) are closest to `id`, for "did you mean".
std::vector<std::string> nearest_presets(const std::string& id, std::size_t n);

}  // namespace gpumem::detail
