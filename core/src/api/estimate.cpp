// estimate() (gpumem.h): the scenario read, the memory model's document (memory/estimate.cpp), and
// the layers above it laid in: the throughput of the scenario's own layout (throughput/).

#include "memory/memory.h"
#include "throughput/throughput.h"

namespace gpumem {

using detail::json;

json estimate(const json& scenario) {
    detail::ScenarioRead read = detail::read_scenario(scenario);
    if (!read.issues.empty()) return detail::error_document(read.issues);
    detail::Figures f;
    json result = detail::estimate_result(read.scenario, &f);
    if (result.value("ok", false)) result["throughput"] = detail::throughput_json(read.scenario, f);
    return result;
}

}  // namespace gpumem
