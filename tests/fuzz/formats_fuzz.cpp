// libFuzzer target: any bytes as a tool's config file and as a command line (gpumem check's
// readers, core/src/formats). Every input must come back as an object with "ok"; a reading that
// succeeds is estimated with a bundled model, which must also answer.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include <gpumem/gpumem.h>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    for (const nlohmann::json& request :
         {nlohmann::json{{"files", {{{"name", "config.yaml"}, {"text", text}}}}}, nlohmann::json{{"command", text}}}) {
        nlohmann::json out = gpumem::read_configs(request);
        if (!out.is_object() || !out.contains("ok")) std::abort();
        if (!out["ok"].get<bool>()) continue;
        nlohmann::json scenario = out["scenario"];
        scenario["model"] = "Qwen/Qwen2.5-0.5B";
        if (!gpumem::estimate(scenario).contains("ok")) std::abort();
    }
    return 0;
}
