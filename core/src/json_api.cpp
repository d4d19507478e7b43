// Strings in, strings out: the surface the WebAssembly module exports one-to-one. Nothing throws
// past this file.

#include <exception>

#include "fields.h"

namespace gpumem {

using detail::json;

const char* version() {
    return GPUMEM_VERSION;
}

namespace {

std::string failure(const std::string& problem) {
    Issue issue{"", problem, ""};
    return json{{"ok", false},
                {"errors", json::array({{{"field", ""}, {"problem", problem}, {"value", ""}, {"message", issue.message()}}})}}
        .dump();
}

// Parses `text` and runs `fn` on it; malformed JSON and any unexpected exception become an error object.
template <typename Fn>
std::string guarded(const std::string& text, Fn fn) {
    try {
        json doc = json::parse(text, nullptr, false);
        if (doc.is_discarded()) {
            // Parse again with exceptions for the position of the problem.
            try {
                json again = json::parse(text);
                (void)again;
            } catch (const json::parse_error& e) {
                return failure(std::string("malformed JSON: ") + e.what());
            }
            return failure("malformed JSON");
        }
        return fn(doc).dump(-1, ' ', false, json::error_handler_t::replace);
    } catch (const std::exception& e) {
        return failure(std::string("internal error: ") + e.what());
    } catch (...) {
        return failure("internal error");
    }
}

}  // namespace

std::string estimate_json(const std::string& scenario_text) {
    return guarded(scenario_text, [](const json& doc) { return estimate(doc); });
}

std::string params_json(const std::string& hf_config_text) {
    return guarded(hf_config_text, [](const json& doc) { return params(doc); });
}

std::string presets_json() {
    try {
        return json{{"models", list_presets()}, {"gpus", list_gpus()}}.dump();
    } catch (...) {
        return failure("internal error");
    }
}

}  // namespace gpumem
