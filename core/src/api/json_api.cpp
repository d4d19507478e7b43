// Strings in, strings out: the surface the WebAssembly module exports one-to-one. Nothing throws
// past this file.

#include <exception>
#include <optional>
#include <string>

#include "scenario/fields.h"

namespace gpumem {

using detail::json;

const char* version() { return GPUMEM_VERSION; }

namespace {

// A linear first pass over the text (nlohmann's SAX interface: no document is built) that stops at
// the first syntax error or at the first container opened past kMaxJsonDepth. The DOM parse
// that follows then needs no callback: nlohmann's callback parser rescans the parent container at
// every closing brace or bracket, which made wide documents ([{}, {}, ...]) quadratic.
class DepthCheck : public nlohmann::json_sax<json> {
public:
    bool too_deep = false;
    std::string syntax_error;  // nlohmann's message for the first error, "" when none

    bool null() override { return true; }
    bool boolean(bool) override { return true; }
    bool number_integer(number_integer_t) override { return true; }
    bool number_unsigned(number_unsigned_t) override { return true; }
    bool number_float(number_float_t, const string_t&) override { return true; }
    bool string(string_t&) override { return true; }
    bool binary(binary_t&) override { return true; }
    bool key(string_t&) override { return true; }
    bool start_object(std::size_t) override { return enter(); }
    bool end_object() override { return leave(); }
    bool start_array(std::size_t) override { return enter(); }
    bool end_array() override { return leave(); }
    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
        syntax_error = e.what();  // parse errors, and numbers out of range (1e400)
        return false;
    }

private:
    int depth_ = 0;
    // At most kMaxJsonDepth containers open at once.
    bool enter() {
        too_deep = ++depth_ > kMaxJsonDepth;
        return !too_deep;
    }
    bool leave() {
        --depth_;
        return true;
    }
};

}  // namespace

std::optional<json> parse_json(const std::string& text, std::string& error) {
    if (text.size() > kMaxJsonBytes) {
        error = "JSON text of " + std::to_string(text.size()) + " bytes is larger than the limit of " +
                std::to_string(kMaxJsonBytes) + " bytes (" + std::to_string(kMaxJsonBytes >> 20) + " MiB)";
        return std::nullopt;
    }
    try {
        DepthCheck check;
        json::sax_parse(text, &check);
        if (check.too_deep) {
            error = "JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels";
            return std::nullopt;
        }
        if (!check.syntax_error.empty()) {
            error = "malformed JSON: " + check.syntax_error;
            return std::nullopt;
        }
        return json::parse(text);         // well-formed and shallow: the parser is iterative, each value once
    } catch (const json::exception& e) {  // not expected after the check; still a value, never a throw
        error = std::string("malformed JSON: ") + e.what();
        return std::nullopt;
    }
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

std::string read_configs_json(const std::string& request_text) {
    return guarded(request_text, [](const json& doc) { return read_configs(doc); });
}

std::string presets_json() {
    try {
        return json{{"models", list_presets()}, {"gpus", list_gpus()}, {"formats", list_formats()}}.dump();
    } catch (...) {
        return failure("internal error");
    }
}

}  // namespace gpumem
