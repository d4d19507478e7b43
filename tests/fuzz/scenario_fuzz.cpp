// libFuzzer target: any bytes as a scenario document, through estimate and the max-fit solvers.
// The JSON API must return a JSON object with "ok" for every input: no crash, no sanitizer report,
// no escaped exception, no NaN in a result.
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

// An answer of the JSON API: an object with "ok"; a refusal lists its errors, none of them an
// exception that escaped the core ("internal error: ..." is the API's last line of defence, not an answer).
void check_answer(const std::string& text) {
    nlohmann::json out = nlohmann::json::parse(text, nullptr, false);
    if (out.is_discarded() || !out.is_object() || !out.contains("ok")) std::abort();
    if (!out["ok"].get<bool>()) {
        if (!out.contains("errors") || !out["errors"].is_array() || out["errors"].empty()) std::abort();
        for (const auto& e : out["errors"])
            if (e.value("problem", "").rfind("internal error", 0) == 0) std::abort();
    }
    check_finite(out);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string text(reinterpret_cast<const char*>(data), size);
    check_answer(gpumem::estimate_json(text));
    // The max-fit solvers read the same document and evaluate it some fifty times (doubling, then bisection).
    check_answer(gpumem::maxfit_json(text));
    return 0;
}
