// gpumem estimate --explain: the result's "explain" (core/src/memory/explain.h) as text: each
// component at the peak as the sum of its figures, each figure's formula with this scenario's
// numbers and its source, the figures those rest on, and every phase's components by figure.
//
// Pure: takes a result document, returns the text.

#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace gpumem::cli {

// The explanation of an ok estimate result; "" when it has none.
std::string explain_text(const nlohmann::json& result);

}  // namespace gpumem::cli
