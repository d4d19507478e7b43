// gpumem: the command-line face of the estimation core.
//
//   gpumem estimate --scenario FILE [--json] [--gb]   breakdown table, or the result JSON
//   gpumem estimate --jsonl                            one scenario per stdin line -> one result per line
//   gpumem estimate --model ID [flags...]              a scenario built from flags
//   gpumem params --hf-config FILE | --model ID [--json]
//   gpumem quick SIZE_B --gpus N [--engine E] [--gpu-mem GB] [--json]
//   gpumem maxfit --scenario FILE [--json]             largest batch / sequence / concurrency that fits
//   gpumem plan --scenario FILE --gpus N [--gpu ID] [--host-ram-gb X] [--gpus-per-node N]
//               [--global-batch N] [--top K] [--mfu X] [--json] [--bench [ROUNDS]]
//   gpumem validate FILE
//   gpumem presets [--json]
//   gpumem version
//
// Exit codes: 0 ok, 1 invalid input, 2 usage.

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <gpumem/gpumem.h>

namespace {

using nlohmann::json;

constexpr int kOk = 0, kInvalid = 1, kUsage = 2;

const char* const kUsageText = R"(usage: gpumem <command> [options]

commands:
  estimate   estimate per-GPU memory for a scenario
             --scenario FILE|-   read a scenario JSON (see README.md, "Scenario")
             --jsonl             read one scenario per stdin line, write one result per line
             --json              print the result JSON instead of the table
             --gb                print GB (10^9 bytes) instead of GiB (2^30)
             model:     --model ID (preset id or alias) | --hf-config FILE
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
  params     exact parameter count: --hf-config FILE | --model ID  [--json]
  quick      seed 001's quick look from a size: quick SIZE_IN_BILLIONS --gpus N [--engine E] [--zero N]
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
  version    print the version

exit codes: 0 ok, 1 invalid input, 2 usage
)";

struct UsageError {
    std::string message;
};

// Reads a whole file ("-" is stdin); nullopt-like empty flag on failure.
bool read_file(const std::string& path, std::string& out) {
    if (path == "-") {
        std::stringstream ss;
        ss << std::cin.rdbuf();
        out = ss.str();
        return true;
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) return false;
    std::stringstream ss;
    ss << in.rdbuf();
    out = ss.str();
    return true;
}

// Parses with the core's limits (nesting depth); reports a failure on stderr.
bool parse_input(const std::string& text, const std::string& what, json& doc, std::string& error) {
    std::optional<json> parsed = gpumem::parse_json(text, error);
    if (!parsed) {
        error = what + ": " + error;
        return false;
    }
    doc = std::move(*parsed);
    return true;
}

// A config.json file, or a preset record ({"config": {...}}) which works as well.
bool read_config(const std::string& path, json& config, std::string& error) {
    std::string text;
    if (!read_file(path, text)) {
        error = "cannot read config file " + path;
        return false;
    }
    if (!parse_input(text, path, config, error)) return false;
    if (config.is_object() && config.contains("config") && config["config"].is_object()) config = config["config"];
    return true;
}

void print_errors(const json& result) {
    for (const json& e : result["errors"]) std::cerr << "error: " << e["message"].get<std::string>() << "\n";
}

std::string with_commas(std::uint64_t n) {
    std::string s = std::to_string(n);
    for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<std::size_t>(i), ",");
    return s;
}

std::string amount(std::uint64_t bytes, bool gb) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%10.2f", static_cast<double>(bytes) / (gb ? gpumem::kGB : static_cast<double>(gpumem::kGiB)));
    return buf;
}

void print_table(const json& r, bool gb) {
    const char* unit = gb ? "GB" : "GiB";
    const json& sc = r["scenario"];
    const json& pg = r["per_gpu"];
    std::cout << "gpumem " << r["version"].get<std::string>() << ": " << r["model"]["name"].get<std::string>() << " ("
              << r["model"]["model_type"].get<std::string>() << ", " << with_commas(r["parameters"]["total"])
              << (r["parameters"]["exact"].get<bool>() ? "" : " declared") << " parameters)\n";
    if (sc["mode"] == "training") {
        const json& t = sc["training"];
        std::cout << "training " << t["method"].get<std::string>() << " | " << t["dtype"].get<std::string>() << " "
                  << t["precision"].get<std::string>() << " | " << t["optimizer"].get<std::string>() << " | batch "
                  << t["batch_size"] << " x " << t["seq_len"] << " tokens | checkpointing "
                  << t["activation_checkpointing"].get<std::string>() << " | attention " << t["attention"].get<std::string>()
                  << "\n";
    } else {
        const json& i = sc["inference"];
        std::cout << "inference " << i["engine"].get<std::string>() << " | weights " << i["weight_format"].get<std::string>()
                  << " | batch " << i["batch_size"] << " x " << i["context_len"] << " tokens | kv cache "
                  << (i["kv_cache"].get<bool>() ? i["kv_cache_dtype"].get<std::string>() : std::string("off")) << "\n";
    }
    const json& p = sc["parallelism"];
    std::cout << sc["hardware"]["num_gpus"] << " x " << sc["hardware"]["gpu"].get<std::string>() << " | engine "
              << sc["engine"]["type"].get<std::string>();
    if (sc["engine"]["zero_stage"].get<int>() > 0) std::cout << " ZeRO-" << sc["engine"]["zero_stage"];
    std::cout << " | dp " << p["data_parallel_size"] << " tp " << p["tensor_parallel_size"] << " pp "
              << p["pipeline_parallel_size"] << "\n\n";

    std::cout << "per GPU, at the peak (" << pg["peak_phase"].get<std::string>() << ")" << std::string(14, ' ') << unit << "\n";
    for (const char* name : {"weights", "gradients", "optimizer_states", "activations", "logits", "kv_cache",
                             "temporaries", "overheads"}) {
        std::uint64_t b = pg["components"].value(name, std::uint64_t{0});
        if (b == 0) continue;
        std::string n = name;
        std::cout << "  " << n << std::string(n.size() < 28 ? 28 - n.size() : 1, ' ') << amount(b, gb) << "\n";
    }
    std::cout << "  " << std::string(38, '-') << "\n";
    std::cout << "  allocated (max_memory_allocated)" << amount(pg["peak_allocated_bytes"], gb) << "\n";
    std::cout << "  reserved (max_memory_reserved) " << amount(pg["peak_reserved_bytes"], gb) << "\n";
    std::cout << "  device total (nvidia-smi)      " << amount(pg["device_total_bytes"], gb) << "\n";
    std::cout << "  capacity                       " << amount(pg["capacity_bytes"], gb) << "\n";
    if (r["host_bytes"].get<std::uint64_t>() > 0) std::cout << "  host RAM (offload)             " << amount(r["host_bytes"], gb) << "\n";
    char util[16];
    std::snprintf(util, sizeof util, "%.1f%%", r["utilization"].get<double>() * 100);
    std::cout << "\nfits: " << (r["fits"].get<bool>() ? "yes" : "NO") << " (" << util << " of the card)";
    if (!r["gpus_needed"].is_null()) std::cout << ", GPUs needed: " << r["gpus_needed"];
    std::cout << "\n";
    if (!r["warnings"].empty()) {
        std::cout << "\nwarnings:\n";
        for (const json& w : r["warnings"]) std::cout << "  - " << w.get<std::string>() << "\n";
    }
    if (!r["defaults_applied"].empty()) {
        std::cout << "\ndefaults applied:\n";
        for (const json& d : r["defaults_applied"]) std::cout << "  - " << d.get<std::string>() << "\n";
    }
}

// One command-line flag and the scenario field it sets.
struct Flag {
    const char* name;
    const char* pointer;  // JSON pointer into the scenario ("" for flags handled apart)
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
json flag_value(const Flag& f, const std::string& text) {
    if (f.kind == Flag::List) {
        json list = json::array();
        std::stringstream ss(text);
        std::string item;
        while (std::getline(ss, item, ',')) if (!item.empty()) list.push_back(item);
        return list;
    }
    if (f.kind == Flag::Int || f.kind == Flag::Number) {
        json v = json::parse(text, nullptr, false);
        if (!v.is_discarded() && v.is_number()) return v;
        return text;
    }
    return text;
}

struct Options {
    std::vector<std::string> positional;
    std::string scenario_file, hf_config_file, model;
    bool json_out = false, jsonl = false, gb = false;
    std::uint64_t batch_size = 0;
    std::string batch_size_text;
    json overrides = json::array();  // [pointer, value] pairs, applied in order
    json plan = json::object();      // plan flags: num_gpus, gpu, ...
    int bench_rounds = 0;
};

Options parse_options(const std::vector<std::string>& args) {
    Options o;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= args.size()) throw UsageError{a + " needs a value"};
            return args[++i];
        };
        if (a == "--json") o.json_out = true;
        else if (a == "--jsonl") o.jsonl = true;
        else if (a == "--gb") o.gb = true;
        else if (a == "--scenario") o.scenario_file = value();
        else if (a == "--hf-config") o.hf_config_file = value();
        else if (a == "--model") o.model = value();
        else if (a == "--batch-size") o.batch_size_text = value();
        else if (a == "--host-ram-gb") o.plan["host_ram_gb"] = flag_value(Flag{a.c_str(), "", Flag::Number}, value());
        else if (a == "--gpus-per-node") o.plan["gpus_per_node"] = flag_value(Flag{a.c_str(), "", Flag::Int}, value());
        else if (a == "--global-batch") o.plan["global_batch_size"] = flag_value(Flag{a.c_str(), "", Flag::Int}, value());
        else if (a == "--top") o.plan["top"] = flag_value(Flag{a.c_str(), "", Flag::Int}, value());
        else if (a == "--mfu") o.plan["step_time"]["mfu"] = flag_value(Flag{a.c_str(), "", Flag::Number}, value());
        else if (a == "--bench") {
            o.bench_rounds = 20;
            if (i + 1 < args.size() && !args[i + 1].empty() && std::isdigit(static_cast<unsigned char>(args[i + 1][0])))
                o.bench_rounds = std::max(1, std::min(10000, std::atoi(args[++i].c_str())));
        }
        else if (const Flag* f = find_flag(a)) {
            json v = f->kind == Flag::Switch ? json::parse(f->switch_value) : flag_value(*f, value());
            o.overrides.push_back({f->pointer, v});
        } else if (a.rfind("--", 0) == 0) {
            throw UsageError{"unknown option " + a};
        } else {
            o.positional.push_back(a);
        }
    }
    return o;
}

// Builds the scenario from --scenario, --model / --hf-config and the flags. On unreadable input
// returns false with `error` saying what and why.
bool build_scenario(const Options& o, json& scenario, std::string& error) {
    scenario = json::object();
    if (!o.scenario_file.empty()) {
        std::string text;
        if (!read_file(o.scenario_file, text)) {
            error = "cannot read scenario file " + o.scenario_file;
            return false;
        }
        if (!parse_input(text, o.scenario_file, scenario, error)) return false;
        if (!scenario.is_object()) {
            error = o.scenario_file + ": a scenario must be a JSON object";
            return false;
        }
    }
    if (!o.model.empty()) scenario["model"] = {{"preset", o.model}};
    if (!o.hf_config_file.empty()) {
        json config;
        if (!read_config(o.hf_config_file, config, error)) return false;
        scenario["model"] = {{"hf_config", config}};
    }
    for (const json& ov : o.overrides) {
        json::json_pointer ptr(ov[0].get<std::string>());
        scenario[ptr] = ov[1];
    }
    if (!o.batch_size_text.empty()) {
        std::string mode = scenario.value("mode", "training");
        Flag f{"--batch-size", "", Flag::Int};
        scenario[mode == "inference" ? "inference" : "training"]["batch_size"] = flag_value(f, o.batch_size_text);
    }
    return true;
}

// Unreadable input: the message on stderr, and under --json the same error document the API gives.
int input_error(const Options& o, const std::string& message) {
    if (o.json_out) {
        json doc = {{"ok", false},
                    {"errors", json::array({{{"field", ""}, {"problem", message}, {"value", ""}, {"message", message}}})}};
        std::cout << doc.dump(2) << "\n";
    }
    std::cerr << "gpumem: " << message << "\n";
    return kInvalid;
}

int emit(const json& result, const Options& o) {
    if (!result.value("ok", false)) {
        if (o.json_out) std::cout << result.dump(2) << "\n";
        print_errors(result);
        return kInvalid;
    }
    if (o.json_out) std::cout << result.dump(2) << "\n";
    else print_table(result, o.gb);
    return kOk;
}

int cmd_estimate(const Options& o) {
    if (o.jsonl) {
        int rc = kOk;
        std::string line;
        while (std::getline(std::cin, line)) {
            if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
            std::string out = gpumem::estimate_json(line);
            if (out.rfind("{\"ok\":false", 0) == 0 || out.find("\"ok\":false") != std::string::npos) rc = kInvalid;
            std::cout << out << "\n";
        }
        return rc;
    }
    if (o.scenario_file.empty() && o.model.empty() && o.hf_config_file.empty())
        throw UsageError{"estimate needs --scenario FILE, --jsonl, --model ID or --hf-config FILE"};
    json scenario;
    std::string error;
    if (!build_scenario(o, scenario, error)) return input_error(o, error);
    return emit(gpumem::estimate(scenario), o);
}

int cmd_params(const Options& o) {
    json config;
    if (!o.hf_config_file.empty()) {
        std::string error;
        if (!read_config(o.hf_config_file, config, error)) return input_error(o, error);
    } else if (!o.model.empty()) {
        auto preset = gpumem::find_preset(o.model);
        if (!preset) {
            std::cerr << "error: model.preset: is not a bundled preset, got \"" << o.model << "\"\n";
            return kInvalid;
        }
        config = (*preset)["config"];
    } else {
        throw UsageError{"params needs --hf-config FILE or --model ID"};
    }
    json r = gpumem::params(config);
    if (!r["ok"].get<bool>()) {
        if (o.json_out) std::cout << r.dump(2) << "\n";
        print_errors(r);
        return kInvalid;
    }
    if (o.json_out) {
        std::cout << r.dump(2) << "\n";
        return kOk;
    }
    std::cout << "total parameters: " << with_commas(r["total"]) << "\n";
    for (auto it = r["components"].begin(); it != r["components"].end(); ++it)
        std::cout << "  " << it.key() << std::string(14 - std::min<std::size_t>(13, it.key().size()), ' ')
                  << with_commas(*it) << "\n";
    for (const json& w : r["warnings"]) std::cout << "warning: " << w.get<std::string>() << "\n";
    return kOk;
}

int cmd_quick(Options o) {
    if (o.positional.size() != 1) throw UsageError{"quick needs one size in billions of parameters, e.g. quick 7 --gpus 8"};
    json size = json::parse(o.positional[0], nullptr, false);
    json scenario;
    std::string error;
    if (!build_scenario(o, scenario, error)) return input_error(o, error);
    if (size.is_discarded() || !size.is_number()) {
        scenario["model"] = {{"num_parameters", o.positional[0]}};  // the core names the field and what is allowed
    } else {
        scenario["model"] = {{"name", o.positional[0] + "B model"}, {"num_parameters", size.get<double>() * 1e9}};
    }
    // seed 001's quick look shards with ZeRO-3 when DeepSpeed is named without a stage.
    if (scenario.contains("engine") && scenario["engine"].value("type", "") == "deepspeed" &&
        !scenario["engine"].contains("zero_stage"))
        scenario["engine"]["zero_stage"] = 3;
    return emit(gpumem::estimate(scenario), o);
}

// Builds the scenario for maxfit / plan as estimate does; false on a usage or input problem.
bool scenario_for(const Options& o, const char* command, json& scenario, int& rc) {
    if (o.scenario_file.empty() && o.model.empty() && o.hf_config_file.empty())
        throw UsageError{std::string(command) + " needs --scenario FILE, --model ID or --hf-config FILE"};
    std::string error;
    if (!build_scenario(o, scenario, error)) {
        rc = input_error(o, error);
        return false;
    }
    return true;
}

std::string gib(std::uint64_t bytes) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f GiB", static_cast<double>(bytes) / static_cast<double>(gpumem::kGiB));
    return buf;
}

int cmd_maxfit(const Options& o) {
    json scenario;
    int rc = kOk;
    if (!scenario_for(o, "maxfit", scenario, rc)) return rc;
    json r = gpumem::maxfit(scenario);
    if (!r.value("ok", false) || o.json_out) {
        if (o.json_out) std::cout << r.dump(2) << "\n";
        if (!r.value("ok", false)) print_errors(r);
        return r.value("ok", false) ? kOk : kInvalid;
    }
    std::cout << "largest values that fit (" << r["mode"].get<std::string>() << ", capacity " << gib(r["capacity_bytes"])
              << " per GPU), each with the other fields as given:\n";
    for (const json& x : r["solvers"]) {
        std::cout << "  " << x["field"].get<std::string>() << std::string(24 - std::min<std::size_t>(23, x["field"].get<std::string>().size()), ' ')
                  << x["value"];
        std::string by = x["limited_by"];
        if (by == "memory")
            std::cout << "  (" << gib(x["device_total_bytes"]) << "; " << x["value"].get<std::uint64_t>() + 1 << " needs "
                      << gib(x["next_device_total_bytes"]) << ")";
        else if (by == "does_not_fit")
            std::cout << "  (1 already needs " << gib(x["next_device_total_bytes"]) << ")";
        else
            std::cout << "  (the field's maximum)";
        if (x.contains("note")) std::cout << "  note: " << x["note"].get<std::string>();
        std::cout << "\n";
    }
    return kOk;
}

double quantile(std::vector<double> xs, double q) {
    std::sort(xs.begin(), xs.end());
    return xs[std::min(xs.size() - 1, static_cast<std::size_t>((static_cast<double>(xs.size()) - 1) * q + 0.5))];
}

int cmd_plan(Options o) {
    // --gpus / --gpu name the cluster here (plan.num_gpus, plan.gpu), not the scenario's hardware.
    json cluster = json::object();
    json kept = json::array();
    for (const json& ov : o.overrides) {
        std::string ptr = ov[0];
        if (ptr == "/hardware/num_gpus") cluster["num_gpus"] = ov[1];
        else if (ptr == "/hardware/gpu") cluster["gpu"] = ov[1];
        else kept.push_back(ov);
    }
    o.overrides = kept;
    json scenario;
    int rc = kOk;
    if (!scenario_for(o, "plan", scenario, rc)) return rc;
    // Flags win over the scenario's own "plan" section.
    json plan = scenario.contains("plan") && scenario["plan"].is_object() ? scenario["plan"] : json::object();
    plan.update(cluster);
    if (scenario.contains("hardware") && scenario["hardware"].is_object()) scenario["hardware"].erase("num_gpus");
    for (auto it = o.plan.begin(); it != o.plan.end(); ++it) {
        if (it.key() == "step_time" && plan.contains("step_time") && plan["step_time"].is_object()) plan["step_time"].update(*it);
        else plan[it.key()] = *it;
    }
    if (!plan.contains("num_gpus")) throw UsageError{"plan needs --gpus N (the GPUs in the cluster)"};
    scenario["plan"] = plan;
    if (o.bench_rounds > 0) {
        std::vector<double> ms, rate;
        json r;
        for (int i = 0; i < o.bench_rounds; ++i) {
            auto t0 = std::chrono::steady_clock::now();
            r = gpumem::plan(scenario);
            double took = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
            if (!r.value("ok", false)) {
                print_errors(r);
                return kInvalid;
            }
            ms.push_back(took);
            rate.push_back(r["search"]["evaluations"].get<double>() / (r["search"]["search_ms"].get<double>() / 1000));
        }
        char line[256];
        std::snprintf(line, sizeof line,
                      "{\"rounds\": %d, \"evaluations\": %llu, \"plan_ms_median\": %.3f, \"plan_ms_p90\": %.3f, "
                      "\"evaluations_per_s_median\": %.0f, \"evaluations_per_s_p90\": %.0f}",
                      o.bench_rounds, static_cast<unsigned long long>(r["search"]["evaluations"].get<std::uint64_t>()),
                      quantile(ms, 0.5), quantile(ms, 0.9), quantile(rate, 0.5), quantile(rate, 0.1));
        std::cout << line << "\n";
        return kOk;
    }
    json r = gpumem::plan(scenario);
    if (!r.value("ok", false) || o.json_out) {
        if (o.json_out) std::cout << r.dump(2) << "\n";
        if (!r.value("ok", false)) print_errors(r);
        return r.value("ok", false) ? kOk : kInvalid;
    }
    const json& c = r["cluster"];
    bool training = r["mode"] == "training";
    std::cout << "plan: " << c["num_gpus"] << " x " << c["gpu"].get<std::string>() << " (" << c["gpus_per_node"] << " per node)";
    if (training) std::cout << ", global batch " << c["global_batch_size"] << " sequences";
    std::cout << "\nsearched " << r["search"]["candidates"] << " layouts, " << r["search"]["fitting"] << " fit ("
              << r["search"]["elapsed_ms"].get<double>() << " ms)\n\n";
    std::cout << (training ? "rank  dp  tp  pp  cp  ep  engine            ckpt       mb   ga   step s   tok/s       MFU   GiB/GPU\n"
                           : "rank  dp  tp  pp  batch  max_seqs  step ms   tok/s       MFU   GiB/GPU\n");
    for (const json& p : r["plans"]) {
        const json& l = p["layout"];
        char buf[256];
        if (training) {
            std::string engine = l["engine"].get<std::string>();
            if (l["zero_stage"].get<int>() > 0) engine += " z" + std::to_string(l["zero_stage"].get<int>());
            if (engine == "fsdp") engine += " " + l["fsdp_sharding"].get<std::string>();
            if (l["offload_optimizer"] != "none") engine += " +off";
            if (l["offload_param"] != "none") engine += "+p";
            std::snprintf(buf, sizeof buf, "%4d %3d %3d %3d %3d %3d  %-17s %-9s %4d %4d  %7.3f  %9.0f  %5.1f%%  %7.2f\n",
                          p["rank"].get<int>(), l["data_parallel_size"].get<int>(), l["tensor_parallel_size"].get<int>(),
                          l["pipeline_parallel_size"].get<int>(), l["context_parallel_size"].get<int>(),
                          l["expert_parallel_size"].get<int>(), engine.c_str(), l["activation_checkpointing"].get<std::string>().c_str(),
                          l["micro_batch_size"].get<int>(), l["gradient_accumulation_steps"].get<int>(), p["step_time_s"].get<double>(),
                          p["tokens_per_s"].get<double>(), p["mfu"].get<double>() * 100,
                          p["device_total_bytes"].get<double>() / static_cast<double>(gpumem::kGiB));
        } else {
            std::snprintf(buf, sizeof buf, "%4d %3d %3d %3d  %5d  %8d  %7.2f  %9.0f  %5.1f%%  %7.2f\n", p["rank"].get<int>(),
                          l["data_parallel_size"].get<int>(), l["tensor_parallel_size"].get<int>(), l["pipeline_parallel_size"].get<int>(),
                          l["batch_size"].get<int>(), l["max_concurrent_sequences"].get<int>(), p["step_time_s"].get<double>() * 1000,
                          p["tokens_per_s"].get<double>(), p["mfu"].get<double>() * 100,
                          p["device_total_bytes"].get<double>() / static_cast<double>(gpumem::kGiB));
        }
        std::cout << buf;
    }
    for (const json& w : r["warnings"]) std::cout << "warning: " << w.get<std::string>() << "\n";
    if (!r["defaults_applied"].empty()) {
        std::cout << "\ndefaults applied:\n";
        for (const json& d : r["defaults_applied"]) std::cout << "  - " << d.get<std::string>() << "\n";
    }
    return kOk;
}

int cmd_validate(const Options& o) {
    if (o.positional.size() != 1) throw UsageError{"validate needs one scenario file"};
    std::string text;
    if (!read_file(o.positional[0], text)) return input_error(o, "cannot read " + o.positional[0]);
    json r = json::parse(gpumem::estimate_json(text));
    if (!r["ok"].get<bool>()) {
        for (const json& e : r["errors"]) std::cout << "error: " << e["message"].get<std::string>() << "\n";
        return kInvalid;
    }
    std::cout << "valid\n";
    for (const json& w : r["warnings"]) std::cout << "warning: " << w.get<std::string>() << "\n";
    return kOk;
}

int cmd_presets(const Options& o) {
    json models = gpumem::list_presets(), gpus = gpumem::list_gpus(), formats = gpumem::list_formats();
    if (o.json_out) {
        std::cout << json{{"models", models}, {"gpus", gpus}, {"formats", formats}}.dump(2) << "\n";
        return kOk;
    }
    std::cout << "models:\n";
    for (const json& m : models) {
        std::cout << "  " << m["id"].get<std::string>();
        if (!m["aliases"].empty()) {
            std::cout << "  (";
            for (std::size_t i = 0; i < m["aliases"].size(); ++i) std::cout << (i ? ", " : "") << m["aliases"][i].get<std::string>();
            std::cout << ")";
        }
        std::cout << "\n";
    }
    std::cout << "gpus:\n";
    for (const json& g : gpus)
        std::cout << "  " << g["id"].get<std::string>() << "  " << g["name"].get<std::string>() << "\n";
    std::cout << "weight formats (bytes per weight):\n";
    for (const json& f : formats) {
        char bytes[32];
        std::snprintf(bytes, sizeof bytes, "%.4f", f["bytes_per_param"].get<double>());
        std::cout << "  " << f["id"].get<std::string>() << "  " << bytes << "  " << f.value("about", "") << "\n";
    }
    return kOk;
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
        std::cout << kUsageText;
        return args.empty() ? kUsage : kOk;
    }
    std::string command = args[0];
    args.erase(args.begin());
    try {
        Options o = parse_options(args);
        if (command == "estimate") return cmd_estimate(o);
        if (command == "params") return cmd_params(o);
        if (command == "quick") return cmd_quick(o);
        if (command == "validate") return cmd_validate(o);
        if (command == "maxfit") return cmd_maxfit(o);
        if (command == "plan") return cmd_plan(o);
        if (command == "presets") return cmd_presets(o);
        if (command == "version" || command == "--version") {
            std::cout << gpumem::version() << "\n";
            return kOk;
        }
        throw UsageError{"unknown command " + command};
    } catch (const UsageError& e) {
        std::cerr << "gpumem: " << e.message << "\n(see gpumem --help)\n";
        return kUsage;
    } catch (const std::exception& e) {
        std::cerr << "gpumem: " << e.what() << "\n";
        return kInvalid;
    }
}
