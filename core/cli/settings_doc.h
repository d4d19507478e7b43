// gpumem settings: the core's settings tables (gpumem::settings()) as a reader sees them. Pure:
// text in memory, nothing printed. `gpumem settings --markdown` writes docs/scenario.md.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace gpumem::cli {

// One line per field: "training.optimizer (default adamw): sgd, sgd_momentum, ...".
std::string settings_text(const nlohmann::json& settings);

// The scenario reference, docs/scenario.md: every enumerated field with its default, help and
// values (name, aliases, label, help), in the scenario's order (mode, training, inference, engine, formats).
std::string settings_markdown(const nlohmann::json& settings);

}  // namespace gpumem::cli
