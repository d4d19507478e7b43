// Strings in, strings out: the surface the WebAssembly module exports one-to-one. Nothing throws
// past this file.

#include <exception>
#include <optional>
#include <string>
#include <utility>

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

// The code point of the UTF-8 sequence at text[i] and its length, or length 0 when the bytes there
// are not well-formed UTF-8 (a stray continuation byte, a truncated or overlong sequence, a
// surrogate, past U+10FFFF).
std::pair<char32_t, std::size_t> decode_utf8(const std::string& text, std::size_t i) {
    const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
    const unsigned char lead = byte(i);
    if (lead < 0x80) return {lead, 1};
    std::size_t n = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 0;
    if (n == 0 || lead > 0xF4 || i + n > text.size()) return {0, 0};
    char32_t cp = lead & (0x7F >> n);
    for (std::size_t k = 1; k < n; k++) {
        if ((byte(i + k) & 0xC0) != 0x80) return {0, 0};
        cp = (cp << 6) | (byte(i + k) & 0x3F);
    }
    const char32_t least[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < least[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return {0, 0};
    return {cp, n};
}

// Characters that move, hide or break the text around them when shown: the controls, and the
// format characters of bidirectional text and zero-width joining.
bool hides_or_moves_text(char32_t cp) {
    return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F) || cp == 0x061C || (cp >= 0x200B && cp <= 0x200F) ||
           (cp >= 0x2028 && cp <= 0x202E) || (cp >= 0x2060 && cp <= 0x2069) || cp == 0xFEFF;
}

}  // namespace

std::string display_text(const std::string& text, std::size_t max_chars) {
    static const char* const hex = "0123456789abcdef";
    std::string out;
    std::size_t shown = 0;  // characters written so far
    for (std::size_t i = 0; i < text.size();) {
        const auto [cp, length] = decode_utf8(text, i);
        std::string piece;
        if (length == 0) {
            const unsigned char b = static_cast<unsigned char>(text[i]);
            piece = std::string("\\x") + hex[b >> 4] + hex[b & 15];
        } else if (cp == '\n') {
            piece = "\\n";
        } else if (cp == '\r') {
            piece = "\\r";
        } else if (cp == '\t') {
            piece = "\\t";
        } else if (cp < 0x80 && hides_or_moves_text(cp)) {
            piece = std::string("\\x") + hex[cp >> 4] + hex[cp & 15];
        } else if (hides_or_moves_text(cp)) {
            piece = "\\u";
            for (int shift = 12; shift >= 0; shift -= 4) piece += hex[(cp >> shift) & 15];
        } else {
            piece = text.substr(i, length);
        }
        const std::size_t width = length == 0 || hides_or_moves_text(cp) ? piece.size() : 1;
        if (shown + width > max_chars) return out + "...";
        out += piece;
        shown += width;
        i += length == 0 ? 1 : length;
    }
    return out;
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
