// Strings in, strings out: the surface the WebAssembly module exports one-to-one. Nothing throws
// past this file.

#include <exception>
#include <optional>

#include "scenario/fields.h"

namespace gpumem {

using detail::json;

const char* version() { return GPUMEM_VERSION; }

std::optional<json> parse_json(const std::string& text, std::string& error) {
    // The parser itself is iterative; the callback sees each value's depth and stops deep input
    // before the document exists (printing or comparing it would recurse once per level).
    bool too_deep = false;
    auto limit = [&too_deep](int depth, json::parse_event_t, json&) {
        if (depth > kMaxJsonDepth) too_deep = true;
        return !too_deep;
    };
    json doc;
    try {
        doc = json::parse(text, limit, true);
    } catch (const json::exception& e) {  // parse errors, and numbers out of range (1e400)
        if (!too_deep) {
            error = std::string("malformed JSON: ") + e.what();
            return std::nullopt;
        }
    }
    if (too_deep) {
        error = "JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels";
        return std::nullopt;
    }
    return doc;
}

namespace {

// The refusal document. The problem may quote the input (the parser's "last read: ..."), bytes
// that are not UTF-8 included: they are written as U+FFFD rather than failing the dump.
std::string failure(const std::string& problem) {
    return detail::error_document({{"", problem, ""}}).dump(-1, ' ', false, json::error_handler_t::replace);
}

// Parses `text` and runs `fn` on it; malformed JSON and any unexpected exception become an error object.
template <typename Fn>
std::string guarded(const std::string& text, Fn fn) {
    try {
        std::string error;
        std::optional<json> doc = parse_json(text, error);
        if (!doc) return failure(error);
        return fn(*doc).dump(-1, ' ', false, json::error_handler_t::replace);
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

std::string maxfit_json(const std::string& scenario_text) {
    return guarded(scenario_text, [](const json& doc) { return maxfit(doc); });
}

std::string plan_json(const std::string& request_text) {
    return guarded(request_text, [](const json& doc) { return plan(doc); });
}

std::string fit_json(const std::string& scenario_text) {
    return guarded(scenario_text, [](const json& doc) { return fit(doc); });
}

std::string calibrate_json(const std::string& request_text) {
    return guarded(request_text, [](const json& doc) { return calibrate(doc); });
}

std::string sweep_json(const std::string& request_text) {
    return guarded(request_text, [](const json& doc) { return sweep(doc); });
}

std::string sweep_svg_text(const std::string& sweep_text) {
    try {
        std::string error;
        std::optional<json> doc = parse_json(sweep_text, error);
        if (!doc || !doc->is_object() || !doc->value("ok", false) || !doc->contains("points")) return "";
        return sweep_svg(*doc);
    } catch (...) {
        return "";  // not a sweep() result: no picture
    }
}

std::string export_json(const std::string& request_text) {
    return guarded(request_text, [](const json& doc) { return export_config(doc); });
}

std::string import_deepspeed_json(const std::string& ds_config_text) {
    return guarded(ds_config_text, [](const json& doc) { return import_deepspeed(doc); });
}

std::string presets_json() {
    try {
        return json{{"models", list_presets()}, {"gpus", list_gpus()}, {"formats", list_formats()}}.dump();
    } catch (...) {
        return failure("internal error");
    }
}

}  // namespace gpumem
