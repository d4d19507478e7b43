// Reading JSON fields with issues instead of exceptions: every reader reports the dotted field
// name, what is allowed and the value it got.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpumem/gpumem.h"
#include "gpumem/settings.h"

namespace gpumem::detail {

using json = nlohmann::json;

// JSON text of a value for messages, shortened to stay readable.
std::string show(const json& value);

class FieldReader {
public:
    FieldReader(const json& object, std::string prefix, std::vector<Issue>& issues)
        : object_(object), prefix_(std::move(prefix)), issues_(issues) {}

    std::string path(const std::string& key) const { return prefix_.empty() ? key : prefix_ + "." + key; }
    bool has(const std::string& key) const;
    const json* get(const std::string& key) const;

    // Positive integer in [min, max]; a float with no fraction is accepted (JSON "4.0").
    std::optional<std::uint64_t> uint(const std::string& key, std::uint64_t min, std::uint64_t max);
    std::optional<double> number(const std::string& key, double min, double max);
    std::optional<bool> boolean(const std::string& key);
    // One of `allowed` (compared exactly after lower-casing); the message lists them.
    std::optional<std::string> choice(const std::string& key, const std::vector<std::string>& allowed);
    std::optional<std::string> string(const std::string& key);
    // One of a settings table's rows, by name or alias (settings.h); the message lists the names.
    template <typename E>
    std::optional<E> setting(const std::string& key) {
        const json* v = get(key);
        if (!v) return std::nullopt;
        if (v->is_string())
            if (auto e = parse_setting<E>(v->get_ref<const std::string&>())) return e;
        fail(key, allowed_text<E>(), v);
        return std::nullopt;
    }
    // The same as the value's JSON name ("adam_8bit" -> "adamw_8bit").
    template <typename E>
    std::optional<std::string> setting_name(const std::string& key) {
        auto e = setting<E>(key);
        return e ? std::optional<std::string>(name(*e)) : std::nullopt;
    }
    // A count such as 7000000000, 7e9, "7B", "1.3e9", "350M" (gpu-mem-calculator's config format).
    std::optional<std::uint64_t> count(const std::string& key, std::uint64_t min, std::uint64_t max);

    void fail(const std::string& key, const std::string& problem, const json* value) const;

private:
    const json& object_;
    std::string prefix_;
    std::vector<Issue>& issues_;
};

// The result document of a refused input: {"ok": false, "errors": [{field, problem, value, message}]}.
json error_document(const std::vector<Issue>& issues);

// "7B" / "1.3e9" / 7e9 → elements; nullopt when not a count.
std::optional<double> parse_count(const json& value);

// Storage size of one element of a dtype name ("bf16", "fp32", ...); nullopt when unknown.
std::optional<double> dtype_bytes(const std::string& dtype);
// Normalises torch names ("bfloat16", "float32", "torch.float16") to ours ("bf16", "fp32", "fp16").
std::string normalize_dtype(const std::string& dtype);

}  // namespace gpumem::detail
