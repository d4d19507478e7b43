// Small readers of the core's result documents for the code that turns them into typed views
// (planner.cpp, decisions.cpp): a missing key or a value of another type reads as empty or 0,
// never as an exception. Header-only.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace gpumem::ui {

// j[key], or null when j is not an object or has no such key (const operator[] would be UB).
inline const nlohmann::json& At(const nlohmann::json& j, const char* key)
{
    static const nlohmann::json null_value;
    return j.is_object() && j.contains(key) ? j[key] : null_value;
}

// A string as it is, anything else as its JSON text.
inline std::string Text(const nlohmann::json& j)
{
    return j.is_string() ? j.get<std::string>() : j.dump();
}

// j[key] as a count: 0 when absent, negative or not a number.
inline std::uint64_t Count(const nlohmann::json& j, const char* key)
{
    const nlohmann::json& v = At(j, key);
    return v.is_number() ? static_cast<std::uint64_t>(std::max(0.0, v.get<double>())) : 0;
}

// j[key] as a number: 0 when absent or not a number.
inline double Number(const nlohmann::json& j, const char* key)
{
    const nlohmann::json& v = At(j, key);
    return v.is_number() ? v.get<double>() : 0.0;
}

}  // namespace gpumem::ui
