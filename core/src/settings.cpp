// The settings tables' helpers and their JSON listing (settings.h; gpumem.h: settings()).

#include "gpumem/settings.h"

#include <algorithm>
#include <cctype>
#include <vector>

#include "scenario/fields.h"

namespace gpumem::detail {

std::string normalize_setting(std::string_view text) {
    std::string out(text);
    for (char& c : out) {
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        if (c == '-') c = '_';
    }
    return out;
}

bool setting_matches(std::string_view key, const char* name, const char* aliases) {
    if (key == name) return true;
    std::string_view rest(aliases);
    while (!rest.empty()) {
        std::size_t comma = rest.find(',');
        if (rest.substr(0, comma) == key) return true;
        if (comma == std::string_view::npos) break;
        rest.remove_prefix(comma + 1);
    }
    return false;
}

std::string field_key(const char* path) {
    std::string_view p(path);
    std::size_t dot = p.rfind('.');
    return std::string(dot == std::string_view::npos ? p : p.substr(dot + 1));
}

namespace {

json aliases_json(const char* aliases) {
    json out = json::array();
    std::string_view rest(aliases);
    while (!rest.empty()) {
        std::size_t comma = rest.find(',');
        out.push_back(std::string(rest.substr(0, comma)));
        if (comma == std::string_view::npos) break;
        rest.remove_prefix(comma + 1);
    }
    return out;
}

// One field's listing. Not a template: the JSON is built once here, not once per setting's enum
// (23 of them), which kept 74 kB of WebAssembly for this listing alone (issue #29).
struct RowText {
    const char* name;
    const char* aliases;
    const char* label;
    const char* help;
};

void add_rows(json& out, const char* path, const char* help, json fallback, const std::vector<RowText>& rows) {
    json values = json::array();
    for (const RowText& row : rows)
        values.push_back(
            {{"name", row.name}, {"aliases", aliases_json(row.aliases)}, {"label", row.label}, {"help", row.help}});
    out[path] = {{"default", std::move(fallback)}, {"help", help}, {"values", std::move(values)}};
}

template <typename E>
void add(json& out, const Field<E>& field, json fallback = nullptr) {
    std::vector<RowText> texts;
    for (const Setting<E>& row : rows(E{})) texts.push_back({row.name, row.aliases, row.label, row.help});
    add_rows(out, field.path, field.help, fallback.is_null() ? json(name(field.fallback)) : std::move(fallback), texts);
}

}  // namespace

json settings_document() {
    json out = json::object();
    add(out, kModeField);
    add(out, kMethodField);
    add(out, kDtypeField);
    add(out, kPrecisionField);
    add(out, kOptimizerField);
    add(out, kStateDtypeField);
    add(out, kCheckpointingField);
    add(out, kTrainingAttentionField);
    add(out, kLossField);
    add(out, kQuantizationField);
    add(out, kFrameworkField);
    add(out, kFrameworkVersionField);
    add(out, kCompileField);
    add(out, kLoraTargetsField, json::array({"q_proj", "v_proj"}));
    add(out, kWeightFormatField);
    add(out, kKvCacheDtypeField);
    add(out, kInferenceEngineField);
    add(out, kInferenceAttentionField);
    add(out, kEngineTypeField);
    add(out, kFsdpShardingField);
    add(out, kOffloadOptimizerField);
    add(out, kOffloadParamField);
    add(out, kFormatScopeField);
    return out;
}

}  // namespace gpumem::detail

namespace gpumem {

nlohmann::json settings() { return detail::settings_document(); }

std::string settings_json() { return settings().dump(); }

}  // namespace gpumem
