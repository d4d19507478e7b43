// A calibration file applied to a scenario, and the name it goes by (gpumem.h: apply_calibration,
// calibration_hash). Apart from calibrate.cpp's fit: the page applies calibrations and links this
// alone (issue #29).

#include <cstdint>
#include <cstdio>
#include <string>

#include "calibrate/calibration.h"
#include "gpumem/gpumem.h"

namespace gpumem {

namespace {

using json = nlohmann::json;

std::string hex64(std::uint64_t v) {
    char text[17];
    std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(v));
    return text;
}

}  // namespace

json apply_calibration(const json& scenario, const json& calibration) {
    auto refuse = [](const std::string& field, const std::string& problem) {
        return json{
            {"ok", false},
            {"errors", {{{"field", field}, {"problem", problem}, {"value", ""}, {"message", field + ": " + problem}}}}};
    };
    if (!calibration.is_object() || calibration.value("gpumem_calibration", 0) != detail::kCalibrationFormat)
        return refuse("calibration", "is not a gpumem calibration file (version " +
                                         std::to_string(detail::kCalibrationFormat) +
                                         "): make one with gpumem calibrate");
    const std::string made_by = calibration.value("gpumem_version", std::string());
    if (made_by != version())
        return refuse("calibration.gpumem_version", "the file was fitted by gpumem " + made_by + ", this is gpumem " +
                                                        version() +
                                                        ": its overheads belong to that version's memory "
                                                        "model; fit it again with this version's gpumem calibrate");
    if (!calibration.contains("overheads") || !calibration["overheads"].is_object())
        return refuse("calibration.overheads", "is required: an object of overhead values");
    json s = scenario;
    if (!s.is_object()) return refuse("", "the scenario must be an object");
    if (!s["overheads"].is_object()) s["overheads"] = json::object();
    for (auto& [k, v] : calibration["overheads"].items())
        if (!s["overheads"].contains(k)) s["overheads"][k] = v;  // the scenario's own values win
    // Its residuals (a file from before they were recorded has none): the runs the error band is drawn from.
    if (calibration.contains("residuals"))
        s["calibration"] = {{"name", calibration.value("name", std::string())},
                            {"hash", calibration_hash(calibration)},
                            {"residuals", calibration["residuals"]}};
    return {
        {"ok", true},
        {"scenario", s},
        {"calibration", {{"name", calibration.value("name", std::string())}, {"hash", calibration_hash(calibration)}}}};
}

std::string calibration_hash(const json& calibration) {
    // FNV-1a (64-bit) of the compact JSON text: the same file names itself the same everywhere.
    std::uint64_t h = 1469598103934665603ull;
    for (unsigned char c : calibration.dump()) {
        h ^= c;
        h *= 1099511628211ull;
    }
    return hex64(h);
}

}  // namespace gpumem
