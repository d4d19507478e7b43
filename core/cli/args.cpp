// gpumem CLI: the command line turned into what a command runs (args.h).

#include "args.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <sstream>

#include <gpumem/gpumem.h>

namespace gpumem::cli {

using nlohmann::json;

namespace {

const char* const kUsageText = R"(usage: gpumem <command> [options]

commands:
  estimate   estimate per-GPU memory for a scenario
             --scenario FILE|-   read a scenario JSON (see README.md, "Scenario")
             --jsonl             read one scenario per stdin line, write one result per line
             --json              print the result JSON instead of the table
             --gb                print GB (10^9 bytes) instead of GiB (2^30)
             model:     --model ID (a bundled preset or alias, a Hub id or URL, a config.json or a
                        folder holding one) [--revision REV] | --hf-config FILE
                        A Hub model comes from the HF cache, else the Hub (HF_ENDPOINT, HF_TOKEN,
                        HF_HOME, HF_HUB_CACHE, HF_HUB_OFFLINE=1, HF_HUB_DOWNLOAD_TIMEOUT)
             mode:      --mode training|inference
             training:  --method full|lora|qlora  --lora  --qlora  --lora-rank N  --lora-alpha X
                        --lora-targets q_proj,v_proj,...  --quantization nf4|fp4|int8
                        --dtype fp32|fp16|bf16|fp8  --precision P  --optimizer NAME
                        --batch-size N  --seq-len N  --grad-accum N
                        --gradient-checkpointing  --activation-checkpointing none|full|selective
                        --attention eager|sdpa|flash  --loss standard|chunked|fused
             inference: --context-len N  --weight-format F  --group-size N  --kv-cache-dtype D  --no-kv-cache
                        --inference-engine transformers|vllm|llama.cpp  --gpu-memory-utilization X
                        --max-num-batched-tokens N  --gpu-layers N
                        (--batch-size applies to the chosen mode)
             layout:    --engine none|ddp|deepspeed|fsdp|megatron|megatron_deepspeed  --zero 0-3
                        --fsdp-sharding S  --offload-optimizer none|cpu|nvme  --offload-param none|cpu|nvme
                        --dp N --tp N --pp N --ep N --cp N  --sequence-parallel
             hardware:  --gpu ID  --num-gpus N  --gpu-mem GB
             flags override the same fields of --scenario.
  params     exact parameter count: --hf-config FILE | --model ID [--revision REV]  [--json]
  quick      a quick look from a size alone: quick SIZE_IN_BILLIONS --gpus N [--engine E] [--zero N]
             [--gpu-mem GB] [--json]
  maxfit     the largest batch_size and seq_len (training) or batch_size (concurrent sequences) and
             context_len (inference) that fit, each with the others as given; exact at the boundary
             (the value fits, one more does not). Takes the same model/scenario options as estimate.
             [--json]
  plan       the layouts of a cluster that fit, fastest first (README.md, "Planner")
             --gpus N             GPUs in the cluster (required)
             --gpu ID             catalogue GPU (default: the scenario's)
             --gpus-per-node N    default min(N, 8)
             --host-ram-gb X      CPU RAM per node, GB; limits offloading (default: unlimited)
             --global-batch N     sequences per optimizer step (training)
             --top K              rows to print (default 10)
             --mfu X              compute efficiency of the step-time model (default 0.45)
             --json               the plan JSON (every row with its estimate)
             --bench [ROUNDS]     time ROUNDS plans (default 20): evaluations/s and plan time, median and p90
             takes the same model/scenario options as estimate; plan.* fields of the scenario also work
  validate   check a scenario file: validate FILE
  presets    list bundled models and GPUs [--json]
  settings   every enumerated scenario field, its default and allowed values [--json | --markdown]
  version    print the version

exit codes: 0 ok, 1 invalid input, 2 usage
)";

// One command-line flag and the scenario field it sets.
struct Flag {
    const char* name;
    const char* pointer;  // JSON pointer into the scenario
    enum Kind { Int, Number, String, Switch, List } kind;
    const char* switch_value = nullptr;  // for Switch: the JSON text it sets
};

const Flag kFlags[] = {
    {"--mode", "/mode", Flag::String},
    {"--method", "/training/method", Flag::String},
    {"--lora", "/training/method", Flag::Switch, "\"lora\""},
    {"--qlora", "/training/method", Flag::Switch, "\"qlora\""},
    {"--lora-rank", "/training/lora/rank", Flag::Int},
    {"--lora-alpha", "/training/lora/alpha", Flag::Number},
    {"--lora-targets", "/training/lora/target_modules", Flag::List},
    {"--quantization", "/training/quantization", Flag::String},
    {"--dtype", "/training/dtype", Flag::String},
    {"--precision", "/training/precision", Flag::String},
    {"--optimizer", "/training/optimizer", Flag::String},
    {"--seq-len", "/training/seq_len", Flag::Int},
    {"--grad-accum", "/training/gradient_accumulation_steps", Flag::Int},
    {"--gradient-checkpointing", "/training/activation_checkpointing", Flag::Switch, "\"full\""},
    {"--activation-checkpointing", "/training/activation_checkpointing", Flag::String},
    {"--attention", "/training/attention", Flag::String},
    {"--loss", "/training/loss", Flag::String},
    {"--context-len", "/inference/context_len", Flag::Int},
    {"--weight-format", "/inference/weight_format", Flag::String},
    {"--kv-cache-dtype", "/inference/kv_cache_dtype", Flag::String},
    {"--no-kv-cache", "/inference/kv_cache", Flag::Switch, "false"},
    {"--inference-engine", "/inference/engine", Flag::String},
    {"--gpu-memory-utilization", "/inference/gpu_memory_utilization", Flag::Number},
    {"--max-num-batched-tokens", "/inference/max_num_batched_tokens", Flag::Int},
    {"--gpu-layers", "/inference/gpu_layers", Flag::Int},
    {"--group-size", "/inference/group_size", Flag::Int},
    {"--engine", "/engine/type", Flag::String},
    {"--zero", "/engine/zero_stage", Flag::Int},
    {"--fsdp-sharding", "/engine/fsdp_sharding", Flag::String},
    {"--offload-optimizer", "/engine/offload_optimizer", Flag::String},
    {"--offload-param", "/engine/offload_param", Flag::String},
    {"--dp", "/parallelism/data_parallel_size", Flag::Int},
    {"--tp", "/parallelism/tensor_parallel_size", Flag::Int},
    {"--pp", "/parallelism/pipeline_parallel_size", Flag::Int},
    {"--ep", "/parallelism/expert_parallel_size", Flag::Int},
    {"--cp", "/parallelism/context_parallel_size", Flag::Int},
    {"--sequence-parallel", "/parallelism/sequence_parallel", Flag::Switch, "true"},
    {"--gpu", "/hardware/gpu", Flag::String},
    {"--num-gpus", "/hardware/num_gpus", Flag::Int},
    {"--gpus", "/hardware/num_gpus", Flag::Int},
    {"--gpu-mem", "/hardware/gpu_memory_gb", Flag::Number},
};

const Flag* find_flag(const std::string& name) {
    for (const Flag& f : kFlags)
        if (name == f.name) return &f;
    return nullptr;
}

// A flag's value as JSON: numbers stay numbers when they parse, so the core's range checks name
// the field (a non-number is passed as a string and the core says what is allowed).
json flag_value(Flag::Kind kind, const std::string& text) {
    if (kind == Flag::List) {
        json list = json::array();
        std::stringstream ss(text);
        std::string item;
        while (std::getline(ss, item, ',')) if (!item.empty()) list.push_back(item);
        return list;
    }
    if (kind == Flag::Int || kind == Flag::Number) {
        json v = json::parse(text, nullptr, false);
        if (!v.is_discarded() && v.is_number()) return v;
        return text;
    }
    return text;
}

// The options after the command word. False with a.error set on a usage error.
bool parse_options(Args& a, const std::vector<std::string>& args) {
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& w = args[i];
        std::string v;
        auto value = [&]() {
            if (i + 1 >= args.size()) {
                a.error = w + " needs a value";
                return false;
            }
            v = args[++i];
            return true;
        };
        if (w == "--json") a.json_out = true;
        else if (w == "--jsonl") a.jsonl = true;
        else if (w == "--gb") a.gb = true;
        else if (w == "--markdown") a.markdown = true;
        else if (w == "--scenario") { if (!value()) return false; a.scenario_file = v; }
        else if (w == "--hf-config") { if (!value()) return false; a.hf_config_file = v; }
        else if (w == "--model") { if (!value()) return false; a.model = v; }
        else if (w == "--revision") { if (!value()) return false; a.revision = v; }
        else if (w == "--batch-size") { if (!value()) return false; a.batch_size = v; }
        else if (w == "--host-ram-gb") { if (!value()) return false; a.plan["host_ram_gb"] = flag_value(Flag::Number, v); }
        else if (w == "--gpus-per-node") { if (!value()) return false; a.plan["gpus_per_node"] = flag_value(Flag::Int, v); }
        else if (w == "--global-batch") { if (!value()) return false; a.plan["global_batch_size"] = flag_value(Flag::Int, v); }
        else if (w == "--top") { if (!value()) return false; a.plan["top"] = flag_value(Flag::Int, v); }
        else if (w == "--mfu") { if (!value()) return false; a.plan["step_time"]["mfu"] = flag_value(Flag::Number, v); }
        else if (w == "--bench") {
            // An optional round count: taken when the next word starts with a digit.
            a.bench_rounds = 20;
            if (i + 1 < args.size() && !args[i + 1].empty() && std::isdigit(static_cast<unsigned char>(args[i + 1][0])))
                a.bench_rounds = static_cast<int>(std::clamp(std::strtol(args[++i].c_str(), nullptr, 10), 1L, 10000L));
        }
        else if (const Flag* f = find_flag(w)) {
            json j;
            if (f->kind == Flag::Switch) j = json::parse(f->switch_value);
            else if (!value()) return false;
            else j = flag_value(f->kind, v);
            std::string pointer = f->pointer;
            // plan: --gpus / --num-gpus / --gpu name the cluster (plan.num_gpus, plan.gpu), not the
            // scenario's hardware.
            if (a.command == Command::Plan && pointer == "/hardware/num_gpus") a.plan["num_gpus"] = j;
            else if (a.command == Command::Plan && pointer == "/hardware/gpu") a.plan["gpu"] = j;
            else a.overrides.push_back({w, pointer, j});
        } else if (w.rfind("--", 0) == 0) {
            a.error = "unknown option " + w;
            return false;
        } else {
            a.positional.push_back(w);
        }
    }
    return true;
}

bool names_a_model(const Args& a) {
    return !a.scenario_file.empty() || !a.model.empty() || !a.hf_config_file.empty();
}

// Reads and parses a file the command line names; false with `error` saying which and why.
bool read_document(const ReadFile& read, const std::string& path, const std::string& what, json& doc,
                   std::string& error) {
    std::string why;
    std::optional<std::string> text = read(path, why);
    if (!text) {
        error = why.empty() ? "cannot read " + what + path : what + why;
        return false;
    }
    std::optional<json> parsed = gpumem::parse_json(*text, error);
    if (!parsed) {
        error = path + ": " + error;
        return false;
    }
    doc = std::move(*parsed);
    return true;
}

// A config.json file, or a preset record ({"config": {...}}) which works as well.
bool read_config(const ReadFile& read, const std::string& path, json& config, std::string& error) {
    if (!read_document(read, path, "config file ", config, error)) return false;
    if (config.is_object() && config.contains("config") && config["config"].is_object()) config = config["config"];
    return true;
}

// The scenario from --scenario, --model / --hf-config and the flags, in that order.
bool build_scenario(const Args& a, const ReadFile& read, json& scenario, std::string& error) {
    scenario = json::object();
    if (!a.scenario_file.empty()) {
        if (!read_document(read, a.scenario_file, "scenario file ", scenario, error)) return false;
        if (!scenario.is_object()) {
            error = a.scenario_file + ": a scenario must be a JSON object";
            return false;
        }
    }
    if (!a.model.empty()) scenario["model"] = {{"preset", a.model}};
    if (!a.hf_config_file.empty()) {
        json config;
        if (!read_config(read, a.hf_config_file, config, error)) return false;
        scenario["model"] = {{"hf_config", config}};
    }
    for (const Override& o : a.overrides) scenario[json::json_pointer(o.pointer)] = o.value;
    if (!a.batch_size.empty()) {
        std::string mode = scenario.value("mode", "training");
        scenario[mode == "inference" ? "inference" : "training"]["batch_size"] = flag_value(Flag::Int, a.batch_size);
    }
    return true;
}

// quick SIZE_B: the model is known only by its size in billions of parameters.
void quick_model(const Args& a, json& scenario) {
    json size = json::parse(a.positional[0], nullptr, false);
    double count = size.is_number() ? size.get<double>() * 1e9 : 0;
    if (!size.is_number() || !std::isfinite(count)) {
        // The core names the field and what is allowed, with the size as typed (not "null" for
        // a product past the largest double, as nlohmann prints an infinity).
        scenario["model"] = {{"num_parameters", a.positional[0]}};
    } else {
        scenario["model"] = {{"name", a.positional[0] + "B model"}, {"num_parameters", count}};
    }
    // The quick look (as gpu-mem-calculator's) shards with ZeRO-3 when DeepSpeed is named without a stage.
    if (scenario.contains("engine") && scenario["engine"].value("type", "") == "deepspeed" &&
        !scenario["engine"].contains("zero_stage"))
        scenario["engine"]["zero_stage"] = 3;
}

// plan: the request's "plan" section, the flags winning over the scenario's own.
bool plan_section(const Args& a, json& scenario) {
    json plan = scenario.contains("plan") && scenario["plan"].is_object() ? scenario["plan"] : json::object();
    if (scenario.contains("hardware") && scenario["hardware"].is_object()) scenario["hardware"].erase("num_gpus");
    for (auto it = a.plan.begin(); it != a.plan.end(); ++it) {
        if (it.key() == "step_time" && plan.contains("step_time") && plan["step_time"].is_object()) plan["step_time"].update(*it);
        else plan[it.key()] = *it;
    }
    if (!plan.contains("num_gpus")) return false;
    scenario["plan"] = plan;
    return true;
}

Request build(const Args& a, const ReadFile& read) {
    Request r;
    auto invalid = [&r](std::string message) {
        r.exit_code = kInvalid;
        r.error = std::move(message);
        r.error_document = true;
        return r;
    };
    switch (a.command) {
        case Command::Estimate:
        case Command::Quick:
        case Command::Maxfit:
        case Command::Plan: {
            if (a.command == Command::Estimate && a.jsonl) return r;
            std::string error;
            if (!build_scenario(a, read, r.document, error)) return invalid(error);
            if (a.command == Command::Quick) quick_model(a, r.document);
            if (a.command == Command::Plan && !plan_section(a, r.document)) {
                r.exit_code = kUsage;
                r.error = "plan needs --gpus N (the GPUs in the cluster)";
            }
            return r;
        }
        case Command::Params:
            if (!a.hf_config_file.empty()) {
                std::string error;
                if (!read_config(read, a.hf_config_file, r.document, error)) return invalid(error);
            }
            return r;
        default:
            return r;
    }
}

}  // namespace

Args parse_args(const std::vector<std::string>& words) {
    Args a;
    if (words.empty() || words[0] == "--help" || words[0] == "-h" || words[0] == "help") {
        a.exit_code = words.empty() ? kUsage : kOk;
        return a;
    }
    const std::string& name = words[0];
    struct Known { const char* name; Command command; };
    static const Known kCommands[] = {
        {"estimate", Command::Estimate}, {"params", Command::Params},   {"quick", Command::Quick},
        {"validate", Command::Validate}, {"maxfit", Command::Maxfit},   {"plan", Command::Plan},
        {"presets", Command::Presets},   {"version", Command::Version}, {"--version", Command::Version},
        {"settings", Command::Settings},
    };
    bool known = false;
    for (const Known& k : kCommands) {
        if (name == k.name) {
            a.command = k.command;
            known = true;
        }
    }
    // The options are read first, so a bad flag is reported before an unknown command.
    if (!parse_options(a, std::vector<std::string>(words.begin() + 1, words.end()))) {
        a.exit_code = kUsage;
        return a;
    }
    if (!known) a.error = "unknown command " + name;
    else if (a.command == Command::Estimate && !a.jsonl && !names_a_model(a))
        a.error = "estimate needs --scenario FILE, --jsonl, --model ID or --hf-config FILE";
    else if (a.command == Command::Params && a.hf_config_file.empty() && a.model.empty())
        a.error = "params needs --hf-config FILE or --model ID";
    else if (a.command == Command::Quick && a.positional.size() != 1)
        a.error = "quick needs one size in billions of parameters, e.g. quick 7 --gpus 8";
    else if (a.command == Command::Validate && a.positional.size() != 1)
        a.error = "validate needs one scenario file";
    else if ((a.command == Command::Maxfit || a.command == Command::Plan) && !names_a_model(a))
        a.error = name + " needs --scenario FILE, --model ID or --hf-config FILE";
    if (!a.error.empty()) {
        if (!known) a.command = Command::Help;
        a.exit_code = kUsage;
    }
    return a;
}

const char* usage_text() { return kUsageText; }

Request build_request(const Args& args, const ReadFile& read) {
    try {
        return build(args, read);
    } catch (const std::exception& e) {
        // The flags could not be applied to the document as read (e.g. --seq-len over "training": 5).
        Request r;
        r.exit_code = kInvalid;
        r.error = e.what();
        return r;
    }
}

json error_document(const std::string& message) {
    return {{"ok", false},
            {"errors", json::array({{{"field", ""}, {"problem", message}, {"value", ""}, {"message", message}}})}};
}

std::string to_json_text(const json& doc) { return doc.dump(2, ' ', false, json::error_handler_t::replace); }

}  // namespace gpumem::cli
