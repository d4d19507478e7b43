// libFuzzer target: any bytes as a scenario document. The JSON API must return a JSON object with
// "ok" for every input: no crash, no sanitizer report, no exception, no NaN in a result.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include <gpumem/gpumem.h>

namespace {

// A finite number everywhere (nlohmann writes NaN/Inf as null, which the API never returns in numbers).
void check_finite(const nlohmann::json& j) {
    if (j.is_number_float() && !std::isfinite(j.get<double>())) std::abort();
    if (j.is_structured())
        for (const auto& v : j) check_finite(v);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string text(reinterpret_cast<const char*>(data), size);
    nlohmann::json out = nlohmann::json::parse(gpumem::estimate_json(text), nullptr, false);
    if (out.is_discarded() || !out.is_object() || !out.contains("ok")) std::abort();
    if (!out["ok"].get<bool>() && out["errors"].empty()) std::abort();
    check_finite(out);
    return 0;
}
