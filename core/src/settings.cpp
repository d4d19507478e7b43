// The settings tables' helpers and their JSON listing (settings.h; gpumem.h: settings()).

#include "gpumem/settings.h"

#include <algorithm>
#include <cctype>

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

template <typename E>
void add(json& out, const Field<E>& field, json fallback = nullptr) {
    json values = json::array();
    for (const Setting<E>& row : rows(E{}))
        values.push_back(
            {{"name", row.name}, {"aliases", aliases_json(row.aliases)}, {"label", row.label}, {"help", row.help}});
    out[field.path] = {{"default", fallback.is_null() ? json(name(field.fallback)) : fallback},
                       {"help", field.help},
                       {"values", values}};
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
