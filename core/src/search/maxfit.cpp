// The max-fit solvers (gpumem.h, maxfit()): the largest batch and length at which a scenario fits,
// each by the search's solver (search.h) on the scenario read once.

#include "search/search.h"

namespace gpumem {

using detail::json;

json maxfit(const json& scenario) {
    detail::ScenarioRead read = detail::read_scenario(scenario);
    if (!read.issues.empty()) return detail::error_document(read.issues);
    detail::Scenario s = read.scenario;
    s.details = false;
    detail::Layout base = detail::layout_of(s);
    int evaluations = 0;
    const bool training = s.mode == detail::Mode::Training;
    // The reader's limits (scenario.cpp): batch sizes up to 10^6, lengths up to 10^8.
    const detail::Solver solvers[] = {
        {training ? "training.batch_size" : "inference.batch_size", 1000000, false},
        {training ? "training.seq_len" : "inference.context_len", 100000000, true},
    };
    json list = json::array();
    for (const detail::Solver& solver : solvers) {
        json r = detail::solve(s, base, solver, evaluations);
        std::uint64_t max_pos = s.model.max_position_embeddings;
        if (solver.is_length && max_pos && r["value"].get<std::uint64_t>() > max_pos)
            r["note"] = "longer than the model's max_position_embeddings (" + std::to_string(max_pos) + ")";
        if (solver.is_length && training && base.cp > 1)
            r["note"] = "memory only: context_parallel_size must also divide the sequence length";
        list.push_back(r);
    }
    return {{"ok", true},
            {"mode", training ? "training" : "inference"},
            {"capacity_bytes", s.hardware.gpu_memory_bytes},
            {"solvers", list},
            {"evaluations", evaluations}};
}

}  // namespace gpumem
