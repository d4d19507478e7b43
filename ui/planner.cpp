// The planner's requests and answers: see planner.h. gpumem::maxfit and gpumem::plan do the work;
// this file builds their requests from the calculator's scenario and the panel's cluster, and
// reads each answer once into the views panel_planner.cpp draws.

#include "planner.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "app.h"
#include "imgui.h"
#include "share.h"
#include "tools.h"

#include <gpumem/gpumem.h>

#include "json_read.h"

namespace gpumem::ui {

namespace {

using nlohmann::json;

// The request gpumem::plan reads: the calculator's scenario plus the panel's cluster.
json PlanRequest(const AppState& state)
{
    const PlannerState& p = state.planner;
    json request = state.scenario_json;
    if (!request.is_object())
        return json();
    json plan = {{"num_gpus", p.gpus}, {"gpus_per_node", std::min(p.gpus, p.gpus_per_node)}, {"top", p.top}};
    if (p.gpu_index >= 0 && p.gpu_index < static_cast<int>(state.gpus.size()))
        plan["gpu"] = state.gpus[p.gpu_index].id;
    if (p.host_ram_gb > 0.0f)
        plan["host_ram_gb"] = p.host_ram_gb;
    if (!state.scenario.IsInference() && p.global_batch > 0)
        plan["global_batch_size"] = p.global_batch;
    request["plan"] = std::move(plan);
    return request;
}

// "ZeRO-3, optimizer on CPU", "FSDP full_shard", "Megatron", ...
std::string EngineLabel(const json& layout)
{
    const std::string type = Text(At(layout, "engine"));
    std::string label = type;
    if (type == "deepspeed")
        label = "ZeRO-" + Text(At(layout, "zero_stage"));
    else if (type == "fsdp")
        label = "FSDP " + Text(At(layout, "fsdp_sharding"));
    else if (type == "megatron")
        label = "Megatron";
    else if (type == "ddp")
        label = "DDP";
    else if (type == "none")
        label = "single GPU";
    const std::string opt = Text(At(layout, "offload_optimizer")), param = Text(At(layout, "offload_param"));
    if (At(layout, "offload_optimizer").is_string() && opt != "none")
        label += ", optimizer on " + opt;
    if (At(layout, "offload_param").is_string() && param != "none")
        label += ", params on " + param;
    return label;
}

PlanRow ReadPlanRow(const json& row, bool training)
{
    PlanRow out;
    const json& l = At(row, "layout");
    out.rank = At(row, "rank").is_number() ? At(row, "rank").get<int>() : 0;
    const char* const training_keys[] = {"data_parallel_size", "tensor_parallel_size", "pipeline_parallel_size",
                                         "context_parallel_size", "expert_parallel_size"};
    const char* const inference_keys[] = {"data_parallel_size", "tensor_parallel_size", "pipeline_parallel_size",
                                          "batch_size", "max_concurrent_sequences"};
    for (const char* key : training ? training_keys : inference_keys)
        out.cells.push_back(Text(At(l, key)));
    if (training)
    {
        out.cells.push_back(EngineLabel(l));
        out.cells.push_back(Text(At(l, "activation_checkpointing")));
        out.cells.push_back(Text(At(l, "micro_batch_size")) + " x " + Text(At(l, "gradient_accumulation_steps")));
    }
    out.step_time_s = Number(row, "step_time_s");
    out.tokens_per_s = Number(row, "tokens_per_s");
    out.mfu = Number(row, "mfu");
    if (At(row, "step_time").is_object())
        for (const auto& [name, value] : At(row, "step_time").items())
            if (value.is_number() && value.get<double>() > 0)
                out.step_parts.emplace_back(value.get<double>(), name);
    std::sort(out.step_parts.rbegin(), out.step_parts.rend());
    out.host_bytes_per_node = Count(row, "host_bytes_per_node");
    out.device_total_bytes = Count(row, "device_total_bytes");
    out.scenario = At(row, "scenario");
    return out;
}

PlanView ReadPlan(const json& plan, bool training)
{
    PlanView view;
    view.ok = plan.is_object() && plan.value("ok", false);
    if (!view.ok)
    {
        view.error = ErrorText(plan);
        return view;
    }
    view.candidates = Count(At(plan, "search"), "candidates");
    view.fitting = Count(At(plan, "search"), "fitting");
    view.gpu_memory_bytes = Count(At(plan, "cluster"), "gpu_memory_bytes");
    if (At(plan, "warnings").is_array())
        for (const json& w : At(plan, "warnings"))
            view.warnings.push_back(Text(w));
    if (At(plan, "plans").is_array())
        for (const json& row : At(plan, "plans"))
            view.rows.push_back(ReadPlanRow(row, training));
    return view;
}

MaxFitView ReadMaxFit(const json& maxfit)
{
    MaxFitView view;
    view.ok = maxfit.is_object() && maxfit.value("ok", false);
    if (!view.ok)
    {
        view.error = ErrorText(maxfit);
        return view;
    }
    if (At(maxfit, "solvers").is_array())
        for (const json& s : At(maxfit, "solvers"))
            view.solvers.push_back({Text(At(s, "field")), Count(s, "value"), Text(At(s, "limited_by")),
                                    Count(s, "device_total_bytes"), Count(s, "next_device_total_bytes"),
                                    At(s, "note").is_string() ? Text(At(s, "note")) : ""});
    return view;
}

}  // namespace

bool UpdateMaxFit(AppState& state)
{
    PlannerState& p = state.planner;
    if (p.maxfit_for == state.scenario_text)
        return true;
    if (!ToolDecisionTurn(state))  // decisions.h: the schedule
        return false;
    p.maxfit = AnswerOrFailure(CallTool(Tool::MaxFit, state.scenario_json));  // now: ToolDecisionTurn waited
    p.maxfit_view = ReadMaxFit(p.maxfit);
    p.maxfit_for = state.scenario_text;
    return true;
}

bool UpdatePlan(AppState& state)
{
    PlannerState& p = state.planner;
    // What the plan depends on: the scenario and the panel's fields (the request is built only when they change).
    char inputs[96];
    std::snprintf(inputs, sizeof inputs, "|%d|%d|%d|%g|%d|%d", p.gpus, p.gpu_index, p.gpus_per_node,
                  static_cast<double>(p.host_ram_gb), p.global_batch, p.top);
    const std::string key = state.scenario_text + inputs;
    if (p.plan_for == key)
        return true;
    if (!ToolDecisionTurn(state))
        return false;
    const json request = PlanRequest(state);
    const auto start = std::chrono::steady_clock::now();
    p.plan = AnswerOrFailure(CallTool(Tool::Plan, request));
    p.plan_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    p.plan_view = ReadPlan(p.plan, !state.scenario.IsInference());
    p.plan_for = key;
    ++p.plan_count;
    return true;
}

void LoadPlanRow(AppState& state, const PlanRow& row)
{
    json scenario = WithoutCalibration(state, row.scenario);
    // The model stays the calculator's own (a Hub or pasted model is not a preset the import knows).
    if (scenario.is_object())
        scenario.erase("model");
    PlannerState& p = state.planner;
    p.message_for.clear();
    if (ImportScenario(state, scenario))
        p.message = "Plan " + std::to_string(row.rank) + " is in the calculator.";
    else
        p.message = "Plan " + std::to_string(row.rank) + " " + state.import_message;
}

}  // namespace gpumem::ui
