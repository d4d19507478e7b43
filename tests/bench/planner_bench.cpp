// Native speed of the planner's inner loop: scenario evaluations per second through the same
// evaluate() the estimate uses (details off), over a spread of layouts of one read scenario, and
// the time of whole plans. Prints one JSON line per case; tests/bench/planner.mjs runs it.
//
//   gpumem_planner_bench [ROUNDS]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <gpumem/gpumem.h>

#include "search/search.h"

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

double quantile(std::vector<double> xs, double q) {
    std::sort(xs.begin(), xs.end());
    return xs[std::min(xs.size() - 1, static_cast<std::size_t>((static_cast<double>(xs.size()) - 1) * q + 0.5))];
}

// Evaluations per second over `layouts`, `rounds` times (the first pass warms the model's memo).
void evaluations(const char* name, const json& doc, int rounds) {
    auto read = gpumem::detail::read_scenario(doc);
    if (!read.issues.empty()) {
        std::printf("{\"case\": \"%s\", \"error\": \"%s\"}\n", name, read.issues[0].message().c_str());
        return;
    }
    gpumem::detail::Scenario s = read.scenario;
    s.details = false;
    std::vector<gpumem::detail::Layout> layouts;
    for (std::uint64_t tp : {1, 2, 4, 8})
        for (std::uint64_t pp : {1, 2, 4})
            for (std::uint64_t mb : {1, 2, 4, 8}) {
                gpumem::detail::Layout l;
                l.tp = tp, l.pp = pp, l.dp = 64 / (tp * pp), l.batch_size = mb, l.grad_accum = 4;
                l.sequence_parallel = tp > 1;
                l.checkpointing = mb > 2 ? gpumem::detail::Checkpointing::Full : gpumem::detail::Checkpointing::None;
                if (gpumem::detail::layout_problem(s.model, l, 4096).empty()) layouts.push_back(l);
            }
    std::vector<double> rate;
    double sink = 0;
    for (int r = 0; r < rounds; ++r) {
        const int reps = 200;
        auto t0 = Clock::now();
        for (int i = 0; i < reps; ++i)
            for (const auto& l : layouts) {
                gpumem::detail::apply_layout(s, l);
                sink += gpumem::detail::evaluate(s).device;
            }
        double sec = std::chrono::duration<double>(Clock::now() - t0).count();
        rate.push_back(static_cast<double>(reps * layouts.size()) / sec);
    }
    std::printf(
        "{\"case\": \"%s\", \"kind\": \"evaluations\", \"layouts\": %zu, \"evaluations_per_s_median\": %.0f, "
        "\"evaluations_per_s_p90\": %.0f, \"checksum\": %.6g}\n",
        name, layouts.size(), quantile(rate, 0.5), quantile(rate, 0.1), sink);
}

void plans(const char* name, const json& request, int rounds) {
    std::vector<double> ms, rate;
    json r;
    for (int i = 0; i < rounds; ++i) {
        auto t0 = Clock::now();
        r = gpumem::plan(request);
        ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
        if (!r.value("ok", false)) {
            std::printf("{\"case\": \"%s\", \"error\": %s}\n", name, r["errors"].dump().c_str());
            return;
        }
        rate.push_back(r["search"]["evaluations_per_s"].get<double>());
    }
    std::printf(
        "{\"case\": \"%s\", \"kind\": \"plan\", \"evaluations\": %llu, \"fitting\": %llu, \"plan_ms_median\": %.2f, "
        "\"plan_ms_p90\": %.2f, \"search_evaluations_per_s_median\": %.0f}\n",
        name, static_cast<unsigned long long>(r["search"]["evaluations"].get<std::uint64_t>()),
        static_cast<unsigned long long>(r["search"]["fitting"].get<std::uint64_t>()), quantile(ms, 0.5),
        quantile(ms, 0.9), quantile(rate, 0.5));
}

// The fit() cases of the issue's target (a 70B model on 8 GPUs) and its example (8B full
// fine-tuning at 4 x 4096 on one H100); tests/bench/planner.mjs runs the same through the module.
std::vector<std::pair<std::string, json>> fit_cases() {
    return {{"fit Llama-3.1-70B full fine-tuning, 8 x H100-80GB",
             {{"model", {{"preset", "meta-llama/Llama-3.1-70B"}}},
              {"training", {{"method", "full"}, {"batch_size", 2}, {"seq_len", 4096}}},
              {"engine", {{"type", "fsdp"}}},
              {"hardware", {{"gpu", "H100-80GB"}, {"num_gpus", 8}}}}},
            {"fit Llama-3.1-8B full fine-tuning 4 x 4096, 1 x H100-80GB",
             {{"model", {{"preset", "meta-llama/Llama-3.1-8B"}}},
              {"training", {{"method", "full"}, {"batch_size", 4}, {"seq_len", 4096}}},
              {"hardware", {{"gpu", "H100-80GB"}, {"num_gpus", 1}}}}}};
}

// The whole fit() search: every layout, engine, checkpointing, micro-batch and knob level of the
// scenario's own cluster, the suggestions estimated again.
void fits(const char* name, const json& scenario, int rounds) {
    std::vector<double> ms;
    json r;
    for (int i = 0; i < rounds; ++i) {
        auto t0 = Clock::now();
        r = gpumem::fit(scenario);
        ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
        if (!r.value("ok", false)) {
            std::printf("{\"case\": \"%s\", \"error\": %s}\n", name, r["errors"].dump().c_str());
            return;
        }
    }
    std::printf(
        "{\"case\": \"%s\", \"kind\": \"fit\", \"candidates\": %llu, \"variants\": %llu, \"fitting\": %llu, "
        "\"suggestions\": %zu, \"fit_ms_median\": %.2f, \"fit_ms_p90\": %.2f}\n",
        name, static_cast<unsigned long long>(r["search"]["candidates"].get<std::uint64_t>()),
        static_cast<unsigned long long>(r["search"]["variants"].get<std::uint64_t>()),
        static_cast<unsigned long long>(r["search"]["fitting"].get<std::uint64_t>()), r["suggestions"].size(),
        quantile(ms, 0.5), quantile(ms, 0.9));
}

}  // namespace

int main(int argc, char** argv) {
    int rounds = argc > 1 ? std::max(3, std::atoi(argv[1])) : 15;
    json llama70 = {{"model", {{"preset", "meta-llama/Llama-3.1-70B"}}},
                    {"training", {{"seq_len", 4096}}},
                    {"engine", {{"type", "megatron"}}}};
    json dsv3 = {{"model", {{"preset", "deepseek-ai/DeepSeek-V3"}}},
                 {"training", {{"seq_len", 4096}}},
                 {"engine", {{"type", "megatron"}}}};
    json serve = {{"model", {{"preset", "meta-llama/Llama-3.1-8B"}}},
                  {"mode", "inference"},
                  {"inference", {{"engine", "vllm"}, {"context_len", 8192}, {"batch_size", 32}}}};
    evaluations("Llama-3.1-70B training (megatron)", llama70, rounds);
    evaluations("DeepSeek-V3 training (megatron)", dsv3, rounds);
    evaluations("Llama-3.1-8B vLLM serving", serve, rounds);
    json p70 = {{"model", {{"preset", "meta-llama/Llama-3.1-70B"}}},
                {"training", {{"seq_len", 4096}}},
                {"plan", {{"num_gpus", 64}, {"gpu", "H100-80GB"}, {"global_batch_size", 512}}}};
    json pds = {{"model", {{"preset", "deepseek-ai/DeepSeek-V3"}}},
                {"training", {{"seq_len", 4096}}},
                {"plan", {{"num_gpus", 256}, {"gpu", "H100-80GB"}, {"global_batch_size", 1024}}}};
    plans("plan Llama-3.1-70B on 64 x H100-80GB", p70, rounds);
    plans("plan DeepSeek-V3 on 256 x H100-80GB", pds, rounds);
    for (const auto& [name, doc] : fit_cases()) fits(name.c_str(), doc, rounds);
    return 0;
}
