#include "scenario/fields.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string_view>

namespace gpumem {

std::string Issue::message() const {
    std::string out = field.empty() ? problem : field + ": " + problem;
    if (!value.empty()) out += ", got " + value;
    return out;
}

}  // namespace gpumem

namespace gpumem::detail {

json error_document(const std::vector<Issue>& issues) {
    json errors = json::array();
    for (const Issue& i : issues)
        errors.push_back({{"field", i.field}, {"problem", i.problem}, {"value", i.value}, {"message", i.message()}});
    return {{"ok", false}, {"errors", errors}};
}

// Whether `value` nests at most `levels` deep (bounded recursion).
static bool shallow(const json& value, int levels) {
    if (!value.is_structured()) return true;
    if (levels == 0 || value.size() > 64) return false;
    for (const json& v : value)
        if (!shallow(v, levels - 1)) return false;
    return true;
}

std::string show(const json& value) {
    if (!shallow(value, 4)) return value.is_array() ? "[...]" : "{...}";
    // JSON text escapes the controls; display_text also escapes the characters that reorder or hide
    // text, and cuts at a character, never inside one.
    return display_text(value.dump(-1, ' ', false, json::error_handler_t::replace), 77);
}

bool FieldReader::has(const std::string& key) const { return get(key) != nullptr; }

const json* FieldReader::get(const std::string& key) const {
    if (!object_.is_object()) return nullptr;
    auto it = object_.find(key);
    if (it == object_.end() || it->is_null()) return nullptr;
    return &*it;
}

void FieldReader::fail(const std::string& key, const std::string& problem, const json* value) const {
    issues_.push_back({path(key), problem, value ? show(*value) : std::string()});
}

// No iostreams in the core: they bring libc++'s locales into every WebAssembly link (~90 kB of code).
static std::string range_text(std::uint64_t min, std::uint64_t max) {
    return "must be an integer from " + std::to_string(min) + " to " + std::to_string(max);
}

// A double as an ostream writes it by default (%g, 6 significant digits).
static std::string shortest(double d) {
    char text[32];
    std::snprintf(text, sizeof(text), "%g", d);
    return text;
}

std::optional<std::uint64_t> FieldReader::uint(const std::string& key, std::uint64_t min, std::uint64_t max) {
    const json* v = get(key);
    if (!v) return std::nullopt;
    double d = 0;
    if (v->is_number_unsigned()) {
        std::uint64_t u = v->get<std::uint64_t>();
        if (u < min || u > max) {
            fail(key, range_text(min, max), v);
            return std::nullopt;
        }
        return u;
    }
    if (v->is_number()) d = v->get<double>();
    if (!v->is_number() || !std::isfinite(d) || d != std::floor(d)) {
        fail(key, min >= 1 ? "must be a positive integer" : "must be a non-negative integer", v);
        return std::nullopt;
    }
    if (d < static_cast<double>(min) || d > static_cast<double>(max)) {
        fail(key, d < 1 && min >= 1 ? "must be a positive integer" : range_text(min, max), v);
        return std::nullopt;
    }
    return static_cast<std::uint64_t>(d);
}

std::optional<double> FieldReader::number(const std::string& key, double min, double max) {
    const json* v = get(key);
    if (!v) return std::nullopt;
    if (!v->is_number() || !std::isfinite(v->get<double>())) {
        fail(key, "must be a number", v);
        return std::nullopt;
    }
    double d = v->get<double>();
    if (d < min || d > max) {
        fail(key, "must be a number from " + shortest(min) + " to " + shortest(max), v);
        return std::nullopt;
    }
    return d;
}

std::optional<bool> FieldReader::boolean(const std::string& key) {
    const json* v = get(key);
    if (!v) return std::nullopt;
    if (v->is_boolean()) return v->get<bool>();
    if (v->is_number_integer() && (v->get<std::int64_t>() == 0 || v->get<std::int64_t>() == 1))
        return v->get<std::int64_t>() == 1;
    fail(key, "must be true or false", v);
    return std::nullopt;
}

static std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
    return s;
}

std::optional<std::string> FieldReader::choice(const std::string& key, const std::vector<std::string>& allowed) {
    const json* v = get(key);
    if (!v) return std::nullopt;
    std::string joined;
    for (const auto& a : allowed) joined += (joined.empty() ? "" : ", ") + a;
    if (v->is_string()) {
        std::string s = lower(v->get<std::string>());
        std::replace(s.begin(), s.end(), '-', '_');
        if (std::find(allowed.begin(), allowed.end(), s) != allowed.end()) return s;
    }
    fail(key, "must be one of " + joined, v);
    return std::nullopt;
}

std::optional<std::string> FieldReader::string(const std::string& key) {
    const json* v = get(key);
    if (!v) return std::nullopt;
    if (!v->is_string()) {
        fail(key, "must be a string", v);
        return std::nullopt;
    }
    return v->get<std::string>();
}

std::optional<double> parse_count(const json& value) {
    if (value.is_number()) {
        double d = value.get<double>();
        return std::isfinite(d) ? std::optional<double>(d) : std::nullopt;
    }
    if (!value.is_string()) return std::nullopt;
    std::string s = value.get<std::string>();
    s.erase(std::remove_if(s.begin(), s.end(), [](unsigned char c) { return std::isspace(c) || c == '_' || c == ','; }),
            s.end());
    if (s.empty()) return std::nullopt;
    double scale = 1;
    switch (std::toupper(static_cast<unsigned char>(s.back()))) {
        case 'K':
            scale = 1e3;
            break;
        case 'M':
            scale = 1e6;
            break;
        case 'B':
        case 'G':
            scale = 1e9;
            break;
        case 'T':
            scale = 1e12;
            break;
        default:
            break;
    }
    if (scale != 1) s.pop_back();
    if (s.empty()) return std::nullopt;
    // The whole text is the number (the core never sets a locale: the decimal point is '.'); out of a
    // double's range is refused, as an overflow is.
    errno = 0;
    char* end = nullptr;
    const double d = std::strtod(s.c_str(), &end);
    if (end != s.c_str() + s.size() || errno == ERANGE || !std::isfinite(d)) return std::nullopt;
    return d * scale;
}

std::optional<std::uint64_t> FieldReader::count(const std::string& key, std::uint64_t min, std::uint64_t max) {
    const json* v = get(key);
    if (!v) return std::nullopt;
    auto d = parse_count(*v);
    if (!d || *d < static_cast<double>(min) || *d > static_cast<double>(max)) {
        fail(key,
             "must be a count from " + std::to_string(min) + " to " + shortest(static_cast<double>(max)) +
                 " (an integer, 7e9, or a string like \"7B\", \"350M\")",
             v);
        return std::nullopt;
    }
    return static_cast<std::uint64_t>(std::llround(*d));
}

std::string normalize_dtype(const std::string& dtype) {
    std::string s = lower(dtype);
    if (s.rfind("torch.", 0) == 0) s = s.substr(6);
    if (s == "bfloat16") return "bf16";
    if (s == "float16" || s == "half") return "fp16";
    if (s == "float32" || s == "float") return "fp32";
    if (s == "float8_e4m3fn" || s == "float8" || s == "f8") return "fp8";
    return s;
}

namespace {

// Bytes per element of our dtype names, from settings.h's table.
std::optional<double> own_dtype_bytes(std::string_view s) {
    for (const ElementSize& e : kElementSizes)
        if (s == e.name) return e.bytes;
    return std::nullopt;
}

}  // namespace

std::optional<double> dtype_bytes(const std::string& dtype) {
    // Our own names (what a resolved scenario holds) without a copy: this runs in every evaluation.
    if (auto b = own_dtype_bytes(dtype)) return b;
    return own_dtype_bytes(normalize_dtype(dtype));
}

}  // namespace gpumem::detail
