// libFuzzer target: any bytes as a config.json, counted by the params API, and (when it is an
// object) estimated as a model. Every input must come back as an object with "ok".
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include <gpumem/gpumem.h>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string text(reinterpret_cast<const char*>(data), size);
    nlohmann::json out = nlohmann::json::parse(gpumem::params_json(text), nullptr, false);
    if (out.is_discarded() || !out.contains("ok")) std::abort();
    std::string error;
    if (auto config = gpumem::parse_json(text, error); config && config->is_object()) {
        nlohmann::json scenario = {{"model", {{"hf_config", *config}}}, {"mode", size % 2 ? "inference" : "training"}};
        nlohmann::json est = gpumem::estimate(scenario);
        if (!est.contains("ok")) std::abort();
    }
    return 0;
}
