// gpumem CLI: the command line turned into what a command runs (args.h).

#include "args.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <map>
#include <sstream>

#include <CLI/CLI.hpp>
#include <gpumem/gpumem.h>

namespace gpumem::cli {

using nlohmann::json;

namespace {

// A word in quotes: "stray" (escaped and bounded), or "" (an empty word).
std::string quoted_word(const std::string& word) {
    return word.empty() ? shown_word(word) : "\"" + shown_word(word) + "\"";
}

//-----------------------------------------------------------------------------
// [SECTION] Enumerated values, from the settings tables
//-----------------------------------------------------------------------------

// A setting's table (settings.h) as a CLI11 transform: a name or an alias, in any case and with
// '-' for '_', becomes the table's name; anything else is refused with the names allowed, which
// CLI11 reports after the flag: "--dtype: must be one of fp32, fp16, bf16, fp8, got "int3"".
//   Values::List   a comma-separated list, each item checked (empty items are dropped)
//   Values::Open   an unknown value is kept as typed: a scenario file may add its own (weight
//                  formats); parse_args checks it when no --scenario is given
enum class Values { One, List, Open };

template <typename E>
CLI::Validator setting_values(Values kind) {
    auto check = [kind](std::string& text) -> std::string {
        std::vector<std::string> items;
        if (kind != Values::List) items.push_back(text);
        std::stringstream list(kind == Values::List ? text : std::string());
        for (std::string item; std::getline(list, item, ',');)
            if (!item.empty()) items.push_back(item);
        std::string out;
        for (const std::string& item : items) {
            std::optional<E> value = detail::parse_setting<E>(item);
            if (!value && kind == Values::Open) return std::string();  // kept as typed
            if (!value) return detail::allowed_text<E>() + ", got " + quoted_word(item);
            out += (out.empty() ? "" : ",") + std::string(detail::name(*value));
        }
        text = out;
        return std::string();
    };
    return CLI::Validator(check, "", "setting");
}

// The help of an enumerated flag, from its table: "training.dtype: the compute dtype. One of: fp32,
// fp16, bf16, fp8 (default bf16)".
template <typename E>
std::string setting_help(const detail::Field<E>& field, const char* fallback = nullptr) {
    return std::string(field.path) + ": " + field.help + ". One of: " + detail::names_text<E>() + " (default " +
           (fallback ? fallback : detail::name(field.fallback)) + ")";
}

//-----------------------------------------------------------------------------
// [SECTION] The scenario flags
//-----------------------------------------------------------------------------

// One command-line flag and the scenario field it sets.
struct Flag {
    const char* name;
    std::string pointer;  // JSON pointer into the scenario
    enum Kind { Int, Number, Text, Switch, Setting } kind;
    const char* group;  // the section of the help it is listed in
    std::string help;
    const char* switch_value = nullptr;  // Switch: the JSON text it sets
    CLI::Validator values{};             // Setting: the table's transform
    bool list = false;                   // Setting: a comma-separated list (a JSON array)
    std::string inference_pointer{};     // a flag that follows the mode: the field it sets in inference
};

constexpr const char* kMode = "Mode";
constexpr const char* kTraining = "Training";
constexpr const char* kInference = "Inference";
constexpr const char* kLayout = "Layout";
constexpr const char* kHardware = "Hardware";

// An enumerated flag: the field it sets, its help and its check all from the field's table.
template <typename E>
Flag setting(const char* name, const detail::Field<E>& field, const char* group, Values kind = Values::One,
             const char* fallback = nullptr) {
    std::string pointer = "/" + std::string(field.path);
    std::replace(pointer.begin(), pointer.end(), '.', '/');
    return {name,
            pointer,
            Flag::Setting,
            group,
            setting_help(field, fallback),
            nullptr,
            setting_values<E>(kind),
            kind == Values::List};
}

// --precision: a recipe (training.precision) or a dtype, as the other calculators spell it. The rule:
// a name of the recipe table (auto, amp_fp32_weights, pure, ... and their aliases) is the recipe; a
// dtype name (fp32, fp16, bf16, fp8 and their aliases, int8, int4) sets training.dtype in training and
// inference.weight_format in inference. int8 and int4 are weight formats only: training refuses them.
constexpr const char* kPrecisionDtypes = "fp32, fp16, bf16, fp8, int8, int4";

std::optional<std::string> precision_dtype(const std::string& text) {
    if (auto d = detail::parse_setting<detail::Dtype>(text)) return std::string(detail::name(*d));
    const std::string key = detail::normalize_setting(text);
    if (key == "int8" || key == "int4") return key;
    return std::nullopt;
}

Flag precision_flag() {
    using namespace gpumem::detail;
    auto check = [](std::string& text) -> std::string {
        if (auto recipe = parse_setting<Precision>(text)) {
            text = name(*recipe);
            return std::string();
        }
        if (auto dtype = precision_dtype(text)) {
            text = *dtype;
            return std::string();
        }
        return "must be a recipe (" + names_text<Precision>() + ") or a dtype (" + kPrecisionDtypes + "), got " +
               quoted_word(text);
    };
    return {"--precision",
            "/training/precision",
            Flag::Setting,
            kTraining,
            std::string("training.precision: the recipe, one of ") + names_text<Precision>() +
                " (default auto); or a dtype (" + kPrecisionDtypes +
                "): training.dtype in training, inference.weight_format in inference",
            nullptr,
            CLI::Validator(check, "", "precision"),
            false,
            "/inference/weight_format"};
}

const std::vector<Flag>& scenario_flags() {
    using namespace gpumem::detail;
    static const std::vector<Flag> flags = {
        setting("--mode", kModeField, kMode),
        setting("--method", kMethodField, kTraining),
        {"--lora", "/training/method", Flag::Switch, kTraining, "training.method = lora", "\"lora\""},
        {"--qlora", "/training/method", Flag::Switch, kTraining, "training.method = qlora", "\"qlora\""},
        {"--lora-rank", "/training/lora/rank", Flag::Int, kTraining, "training.lora.rank: the adapters' rank"},
        {"--lora-alpha", "/training/lora/alpha", Flag::Number, kTraining, "training.lora.alpha"},
        setting("--lora-targets", kLoraTargetsField, kTraining, Values::List, "q_proj,v_proj"),
        setting("--quantization", kQuantizationField, kTraining),
        setting("--dtype", kDtypeField, kTraining),
        precision_flag(),
        setting("--optimizer", kOptimizerField, kTraining),
        {"--seq-len", "/training/seq_len", Flag::Int, kTraining,
         "training.seq_len: tokens per sequence (rows padded to each batch's longest sample: the longest sample "
         "after truncation)"},
        {"--seq-length", "/training/seq_len", Flag::Int, kMode,
         "tokens per sequence: training.seq_len, or inference.context_len in inference (gpu_memory_calculator.py's "
         "spelling)",
         nullptr, CLI::Validator(), false, "/inference/context_len"},
        {"--sequence-length", "/training/seq_len", Flag::Int, kMode, "as --seq-length (vram_calculator.py's spelling)",
         nullptr, CLI::Validator(), false, "/inference/context_len"},
        {"--grad-accum", "/training/gradient_accumulation_steps", Flag::Int, kTraining,
         "training.gradient_accumulation_steps"},
        {"--gradient-checkpointing", "/training/activation_checkpointing", Flag::Switch, kTraining,
         "training.activation_checkpointing = full", "\"full\""},
        setting("--activation-checkpointing", kCheckpointingField, kTraining),
        setting("--attention", kTrainingAttentionField, kTraining),
        setting("--loss", kLossField, kTraining),
        {"--context-len", "/inference/context_len", Flag::Int, kInference,
         "inference.context_len: tokens per sequence"},
        setting("--weight-format", kWeightFormatField, kInference, Values::Open),
        {"--group-size", "/inference/group_size", Flag::Int, kInference,
         "inference.group_size: weights per int4 scale"},
        setting("--kv-cache-dtype", kKvCacheDtypeField, kInference),
        {"--no-kv-cache", "/inference/kv_cache", Flag::Switch, kInference, "inference.kv_cache = false", "false"},
        setting("--inference-engine", kInferenceEngineField, kInference),
        {"--gpu-memory-utilization", "/inference/gpu_memory_utilization", Flag::Number, kInference,
         "inference.gpu_memory_utilization: the share of the card vLLM claims"},
        {"--max-num-batched-tokens", "/inference/max_num_batched_tokens", Flag::Int, kInference,
         "inference.max_num_batched_tokens (vLLM)"},
        {"--block-size", "/inference/block_size", Flag::Int, kInference,
         "inference.block_size: tokens per KV block (vLLM)"},
        {"--max-num-seqs", "/inference/max_num_seqs", Flag::Int, kInference,
         "inference.max_num_seqs: sequences per step, the profile run's sampler rows (vLLM)"},
        {"--engine-version", "/inference/engine_version", Flag::Text, kInference,
         "inference.engine_version: the vLLM (from 0.10, default 0.12; 0.8-v0 / 0.9-v0: the V0 engine) or SGLang "
         "(default 0.5.3) release whose budget applies"},
        {"--gpu-layers", "/inference/gpu_layers", Flag::Int, kInference,
         "inference.gpu_layers: layers on the GPU (llama.cpp)"},
        {"--ubatch", "/inference/ubatch", Flag::Int, kInference,
         "inference.ubatch: tokens per compute step (llama.cpp)"},
        {"--mem-fraction-static", "/inference/mem_fraction_static", Flag::Number, kInference,
         "inference.mem_fraction_static: the share for weights and KV pool (SGLang)"},
        {"--chunked-prefill-size", "/inference/chunked_prefill_size", Flag::Int, kInference,
         "inference.chunked_prefill_size: tokens per prefill chunk (SGLang)"},
        {"--max-total-tokens", "/inference/max_total_tokens", Flag::Int, kInference,
         "inference.max_total_tokens: prompt plus output tokens per request (TGI)"},
        {"--max-batch-prefill-tokens", "/inference/max_batch_prefill_tokens", Flag::Int, kInference,
         "inference.max_batch_prefill_tokens: the warm-up's prefill (TGI)"},
        {"--cuda-memory-fraction", "/inference/cuda_memory_fraction", Flag::Number, kInference,
         "inference.cuda_memory_fraction: the share of the card TGI may use"},
        {"--free-gpu-memory-fraction", "/inference/free_gpu_memory_fraction", Flag::Number, kInference,
         "inference.free_gpu_memory_fraction: the share of free memory for KV (TensorRT-LLM)"},
        {"--max-num-tokens", "/inference/max_num_tokens", Flag::Int, kInference,
         "inference.max_num_tokens: tokens per engine step (TensorRT-LLM)"},
        setting("--engine", kEngineTypeField, kLayout),
        {"--zero", "/engine/zero_stage", Flag::Int, kLayout, "engine.zero_stage: 0-3"},
        setting("--fsdp-sharding", kFsdpShardingField, kLayout),
        setting("--offload-optimizer", kOffloadOptimizerField, kLayout),
        setting("--offload-param", kOffloadParamField, kLayout),
        {"--dp", "/parallelism/data_parallel_size", Flag::Int, kLayout, "parallelism.data_parallel_size"},
        {"--tp", "/parallelism/tensor_parallel_size", Flag::Int, kLayout, "parallelism.tensor_parallel_size"},
        {"--pp", "/parallelism/pipeline_parallel_size", Flag::Int, kLayout, "parallelism.pipeline_parallel_size"},
        {"--ep", "/parallelism/expert_parallel_size", Flag::Int, kLayout, "parallelism.expert_parallel_size"},
        {"--cp", "/parallelism/context_parallel_size", Flag::Int, kLayout, "parallelism.context_parallel_size"},
        {"--sequence-parallel", "/parallelism/sequence_parallel", Flag::Switch, kLayout,
         "parallelism.sequence_parallel = true", "true"},
        {"--gpu", "/hardware/gpu", Flag::Text, kHardware, "hardware.gpu: a catalogue GPU (gpumem presets)"},
        {"--num-gpus", "/hardware/num_gpus", Flag::Int, kHardware, "hardware.num_gpus"},
        {"--gpus", "/hardware/num_gpus", Flag::Int, kHardware, "hardware.num_gpus (as --num-gpus)"},
        {"--gpu-mem", "/hardware/gpu_memory_gb", Flag::Number, kHardware,
         "hardware.gpu_memory_gb: the card's memory, GB"},
    };
    return flags;
}

// A number-valued flag as JSON: numbers stay numbers when they parse, so the core's range checks
// name the field (a non-number is passed as a string and the core says what is allowed).
json number_value(const std::string& text) {
    json v = json::parse(text, nullptr, false);
    if (!v.is_discarded() && v.is_number()) return v;
    return text;
}

json flag_value(const Flag& flag, const std::string& text) {
    if (flag.kind == Flag::Switch) return json::parse(flag.switch_value);
    if (flag.kind == Flag::Int || flag.kind == Flag::Number) return number_value(text);
    if (!flag.list) return text;
    json list = json::array();  // the transform has dropped empty items
    std::stringstream ss(text);
    for (std::string item; std::getline(ss, item, ',');) list.push_back(item);
    return list;
}

//-----------------------------------------------------------------------------
// [SECTION] The commands
//-----------------------------------------------------------------------------

struct Known {
    const char* name;
    Command command;
    const char* about;
};

const Known kCommands[] = {
    {"estimate", Command::Estimate, "estimate per-GPU memory for a scenario"},
    {"params", Command::Params, "exact parameter count of a config.json or a model"},
    {"quick", Command::Quick, "a quick look from a size alone: quick SIZE_IN_BILLIONS --gpus N"},
    {"maxfit", Command::Maxfit, "the largest batch size and sequence length (or context) that fit"},
    {"plan", Command::Plan, "the layouts of a cluster that fit, fastest first (README.md, \"Planner\")"},
    {"fit", Command::Fit, "what would make it fit: the smallest changes, each with its new peak and its cost"},
    {"export", Command::Export, "the config or command line that runs the scenario: export FORMAT"},
    {"chart", Command::Chart, "the peak against sequence length or batch size, as an SVG"},
    {"calibrate", Command::Calibrate,
     "fit the runtime overheads to measured peaks: calibrate FILE.jsonl --out CAL.json"},
    {"validate", Command::Validate, "check a scenario file: validate FILE"},
    {"presets", Command::Presets, "list bundled models, GPUs and weight formats"},
    {"settings", Command::Settings, "every enumerated scenario field, its default and allowed values"},
    {"table", Command::Table, "memory per dtype for inference, full training and LoRA: table MODEL"},
    {"check", Command::Check,
     "does the job a config or command runs fit? check FILE... or check -- COMMAND (exit 0 fits, 3 does not)"},
    {"version", Command::Version, "print the version"},
};

constexpr const char* kInput = "Input";
constexpr const char* kOutput = "Output";
constexpr const char* kPlan = "Plan";

const char* const kHubNote =
    "A Hub model comes from the HF cache, else the Hub (HF_ENDPOINT, HF_TOKEN, HF_HOME, HF_HUB_CACHE,\n"
    "HF_HUB_OFFLINE=1, HF_HUB_DOWNLOAD_TIMEOUT).";

// Options that set a field of Args: given twice, the later wins.
CLI::Option* text_option(CLI::App* app, const char* name, std::string& into, const char* help, const char* group,
                         const char* type) {
    return app->add_option(name, into, help)->group(group)->type_name(type);
}

// --scenario, --model, --revision, --hf-config: what names the model (params: only the last three).
void add_model_options(CLI::App* app, Args& a, bool scenario) {
    if (scenario)
        text_option(app, "--scenario,--config", a.scenario_file,
                    "read a scenario JSON, or gpu-mem-calculator's config file (\"-\": stdin; README.md, \"Scenario\")",
                    kInput, "FILE");
    text_option(app, "--model", a.model,
                "a bundled preset or alias (gpumem presets), a Hub id or URL, a config.json or a folder holding one",
                kInput, "ID");
    text_option(app, "--revision", a.revision, "the Hub branch, tag or commit of --model (default main)", kInput,
                "REV");
    text_option(app, "--hf-config", a.hf_config_file, "a config.json (or a preset record) naming the model", kInput,
                "FILE");
}

// --deepspeed and --calibration: files read into the scenario.
void add_file_inputs(CLI::App* app, Args& a) {
    text_option(app, "--deepspeed", a.deepspeed_file,
                "a DeepSpeed ds_config.json: its micro-batch, accumulation, dtype, ZeRO stage and offload", kInput,
                "FILE");
    text_option(app, "--calibration", a.calibration_file,
                "a calibration (gpumem calibrate): its overheads, where the scenario gives none", kInput, "FILE");
}

// The scenario flags, each setting the field it names in command-line order (a later flag wins).
// For plan, --gpus, --num-gpus and --gpu name the cluster (plan.num_gpus, plan.gpu).
void add_scenario_flags(CLI::App* app, Args& a, Command command) {
    for (const Flag& flag : scenario_flags()) {
        std::string help = flag.help;
        const char* plan_key = nullptr;
        if (command == Command::Plan && flag.pointer == "/hardware/num_gpus") {
            plan_key = "num_gpus";
            help = "plan.num_gpus: GPUs in the cluster (required)";
        } else if (command == Command::Plan && flag.pointer == "/hardware/gpu") {
            plan_key = "gpu";
            help = "plan.gpu: the catalogue GPU (default: the scenario's)";
        }
        auto set = [&a, &flag, plan_key](const std::string& text) {
            json value = flag_value(flag, text);
            if (plan_key) {
                a.plan[plan_key] = value;
            } else if (flag.name == std::string("--precision")) {
                // The transform has made it a recipe's name or a dtype's.
                if (detail::parse_setting<detail::Precision>(text))
                    a.overrides.push_back({flag.name, flag.pointer, value});
                else a.overrides.push_back({flag.name, "/training/dtype", value, flag.inference_pointer});
            } else {
                a.overrides.push_back({flag.name, flag.pointer, value, flag.inference_pointer});
            }
        };
        CLI::Option* option = flag.kind == Flag::Switch ? app->add_flag_callback(
                                                              flag.name, [set] { set(""); }, help)
                                                        : app->add_option_function<std::string>(flag.name, set, help);
        // Each occurrence applied as it is read: command-line order, a mistake reported where it is.
        option->group(flag.group)->trigger_on_parse();
        if (flag.kind == Flag::Int) option->type_name("N");
        if (flag.kind == Flag::Number) option->type_name("X");
        if (flag.kind == Flag::Text) option->type_name("ID");
        if (flag.kind == Flag::Setting) option->type_name(flag.list ? "LIST" : "NAME")->transform(flag.values);
    }
    app->add_option_function<std::string>(
           "--batch-size", [&a](const std::string& text) { a.batch_size = text; },
           "training.batch_size or inference.batch_size, whichever mode the scenario is in")
        ->group(kTraining)
        ->type_name("N");
    app->add_flag("--load-full-model", a.load_full_model,
                  "accepted as gpu_memory_calculator.py spells it; changes nothing (gpumem counts every parameter "
                  "from config.json, without loading weights)")
        ->group(kInput);
    app->add_flag("--json", a.json_out, "print the result JSON instead of the table")->group(kOutput);
}

// A plan flag: a field of the request's "plan" section.
void plan_option(CLI::App* app, Args& a, const char* name, const char* field, const char* help, const char* type) {
    app->add_option_function<std::string>(
           name, [&a, field](const std::string& text) { a.plan[json::json_pointer(field)] = number_value(text); }, help)
        ->group(kPlan)
        ->type_name(type);
}

// The command line's grammar: one subcommand per command, each with its options and help. CLI11
// takes some 10 µs per option, so only the options of `only` are added (every command's for
// kEveryCommand, none for Command::Help: the commands' list).
constexpr Command kEveryCommand = Command(-1);

void describe(CLI::App& app, Args& a, Command only) {
    app.name("gpumem");
    app.description("gpumem: the GPU memory an LLM needs to train or serve, and what takes it");
    app.set_help_flag("-h,--help", "print this help (gpumem COMMAND --help: the command's options)");
    app.footer(
        "options with no command are estimate's: gpumem --model ID --mode training ...\n"
        "exit codes: 0 ok, 1 invalid input, 2 usage");
    app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    app.require_subcommand(0, 1);
    app.add_flag_callback(
        "--version", [&a] { a.command = Command::Version; }, "print the version");
    for (const Known& k : kCommands) {
        CLI::App* sub = app.add_subcommand(k.name, k.about);
        sub->preparse_callback([&a, k](std::size_t) { a.command = k.command; });
        switch (only == kEveryCommand || only == k.command ? k.command : Command::Help) {
            case Command::Estimate:
                add_model_options(sub, a, true);
                add_file_inputs(sub, a);
                sub->add_flag("--jsonl", a.jsonl, "read one scenario per stdin line, write one result per line")
                    ->group(kInput);
                add_scenario_flags(sub, a, k.command);
                sub->add_flag("--gb", a.gb, "print GB (10^9 bytes) instead of GiB (2^30)")->group(kOutput);
                sub->add_flag("--explain", a.explain,
                              "after the table, why each figure is what it is: its formula with this scenario's "
                              "numbers and its source (with --json: the result's \"explain\")")
                    ->group(kOutput);
                sub->footer(std::string("The flags override the same fields of --scenario.\n") + kHubNote);
                break;
            case Command::Maxfit:
                add_model_options(sub, a, true);
                add_file_inputs(sub, a);
                add_scenario_flags(sub, a, k.command);
                sub->footer(
                    "For each size field (training: batch_size and seq_len; inference: batch_size, the concurrent\n"
                    "sequences, and context_len), with the others as given, the largest value that fits: exact at\n"
                    "the boundary (it fits, one more does not). The flags override the same fields of --scenario.\n" +
                    std::string(kHubNote));
                break;
            case Command::Plan:
                add_model_options(sub, a, true);
                add_file_inputs(sub, a);
                add_scenario_flags(sub, a, k.command);
                plan_option(sub, a, "--gpus-per-node", "/gpus_per_node", "plan.gpus_per_node (default min(N, 8))", "N");
                plan_option(sub, a, "--host-ram-gb", "/host_ram_gb",
                            "plan.host_ram_gb: CPU RAM per node, GB; limits offloading (default: unlimited)", "X");
                plan_option(sub, a, "--global-batch", "/global_batch_size",
                            "plan.global_batch_size: sequences per optimizer step (training)", "N");
                plan_option(sub, a, "--top", "/top", "plan.top: rows to print (default 10)", "K");
                plan_option(sub, a, "--mfu", "/step_time/mfu",
                            "plan.step_time.mfu: compute efficiency of the step-time model (default 0.45)", "X");
                sub->add_option_function<std::string>(
                       "--bench",
                       [&a](const std::string& text) {
                           // A round count, clamped to 1-10000 (the check below took digits only); 20 when none.
                           a.bench_rounds =
                               text.empty()
                                   ? 20
                                   : static_cast<int>(std::clamp(std::strtol(text.c_str(), nullptr, 10), 1L, 10000L));
                       },
                       "time ROUNDS plans (default 20): evaluations/s and plan time, median and p90")
                    ->expected(0, 1)
                    ->type_name("[ROUNDS]")
                    ->check(CLI::Validator(
                        [](std::string& text) {
                            bool digits = text.size() <= 18 && std::all_of(text.begin(), text.end(),
                                                                           [](char c) { return c >= '0' && c <= '9'; });
                            return digits ? std::string()
                                          : "must be a whole number of rounds (1-10000), got " + quoted_word(text);
                        },
                        "", "rounds"))
                    ->group(kPlan);
                sub->footer(
                    "Takes the same model and scenario options as estimate; plan.* fields of the scenario also "
                    "work.\n" +
                    std::string(kHubNote));
                break;
            case Command::Fit:
                add_model_options(sub, a, true);
                add_file_inputs(sub, a);
                add_scenario_flags(sub, a, k.command);
                sub->add_flag("--include-borderline", a.include_borderline,
                              "also list runs whose estimate fits but whose error band's top does not")
                    ->group(kOutput);
                sub->footer(
                    "Searches the layout, engine, checkpointing, micro-batch and the scenario's knobs for the least\n"
                    "change that fits and the fastest run that fits in each tier, each with its peak, step time and\n"
                    "cost (when it fits: the faster runs, and what each change saves). A run counts as fitting when\n"
                    "its error band's top fits (--include-borderline: its estimate). --json: each with its scenario\n"
                    "and estimate. Takes the same model and scenario options as estimate.\n" +
                    std::string(kHubNote));
                break;
            case Command::Export:
                sub->add_option("FORMAT", a.positional,
                                std::string("what to write: ") + detail::names_text<detail::ExportFormat>())
                    ->expected(1)
                    ->allow_extra_args(false)
                    ->type_name("");
                add_model_options(sub, a, true);
                add_file_inputs(sub, a);
                add_scenario_flags(sub, a, k.command);
                text_option(sub, "--out", a.out_file, "write the config there instead of standard output", kOutput,
                            "FILE");
                text_option(sub, "--gpus-per-node", a.gpus_per_node, "GPUs per node (default min(GPUs, 8))", kLayout,
                            "N");
                text_option(sub, "--script", a.script, "torchrun: the training script (default train.py)", kOutput,
                            "FILE");
                sub->footer(
                    "Writes what runs the scenario: the format's config file or command line, with the values\n"
                    "the estimate assumed; notes on standard error say what is left to the script. A field the\n"
                    "format cannot express is an error naming it. Takes the same options as estimate.\n" +
                    std::string(kHubNote));
                break;
            case Command::Chart:
                add_model_options(sub, a, true);
                add_file_inputs(sub, a);
                add_scenario_flags(sub, a, k.command);
                text_option(sub, "--x", a.chart_field,
                            "the size to sweep: training.seq_len (default in training), training.batch_size, "
                            "inference.context_len (default in inference), inference.batch_size",
                            kOutput, "FIELD");
                text_option(sub, "--max", a.chart_max, "the sweep's last value (default: past twice the max fit)",
                            kOutput, "N");
                text_option(sub, "--out", a.out_file, "write the SVG there instead of standard output", kOutput,
                            "FILE");
                break;
            case Command::Calibrate:
                sub->add_option("FILE", a.positional, "measurement records, one JSON object per line (\"-\": stdin)")
                    ->expected(1)
                    ->allow_extra_args(false)
                    ->type_name("");
                text_option(sub, "--out", a.out_file, "write the calibration file there", kOutput, "FILE");
                text_option(sub, "--name", a.name, "the calibration's name (default: the records file's)", kInput,
                            "NAME");
                text_option(sub, "--calibration", a.calibration_file,
                            "score the records with this calibration instead of fitting one", kInput, "FILE");
                sub->add_flag("--strict", a.strict,
                              "fail when any record cannot be used (by default it is skipped and reported)")
                    ->group(kInput);
                sub->add_flag("--json", a.json_out, "print the calibration and its report as JSON")->group(kOutput);
                sub->footer(
                    "Each record: {\"id\", \"source\", \"scenario\": {...}, \"measured\": {\"metric\": \"allocated\" "
                    "|\n"
                    "\"reserved\" | \"device_total\", \"gib\": 18.9}} (README.md, \"Calibrate to your cluster\").");
                break;
            case Command::Quick:
                sub->add_option("SIZE_B", a.positional, "the model's size in billions of parameters")
                    ->expected(1)
                    ->allow_extra_args(false)  // a second one is left over: positional_error
                    ->type_name("");
                text_option(sub, "--scenario", a.scenario_file,
                            "read the rest of the scenario from a JSON file (\"-\": stdin)", kInput, "FILE");
                add_scenario_flags(sub, a, k.command);
                sub->add_flag("--gb", a.gb, "print GB (10^9 bytes) instead of GiB (2^30)")->group(kOutput);
                break;
            case Command::Params:
                add_model_options(sub, a, false);
                sub->add_flag("--json", a.json_out, "print the count as JSON")->group(kOutput);
                break;
            case Command::Check:
                sub->add_option("FILE", a.positional,
                                "a DeepSpeed JSON; an accelerate, axolotl, torchtune or litgpt YAML; a file holding a "
                                "launch command (\"-\": stdin)")
                    ->expected(0, -1)
                    ->type_name("");
                text_option(sub, "--model", a.model,
                            "the model, over the one the files name: a preset or alias, a Hub id or URL, a "
                            "config.json or a folder holding one",
                            kInput, "ID");
                text_option(sub, "--revision", a.revision, "the Hub branch, tag or commit of the model (default main)",
                            kInput, "REV");
                text_option(sub, "--gpu", a.check_gpu, "the GPU (default: the scenario's, H100-80GB)", kInput, "NAME");
                text_option(sub, "--num-gpus", a.check_num_gpus, "GPUs in all, over what the files say", kInput, "N");
                text_option(sub, "--gpus-per-node", a.gpus_per_node, "GPUs per node", kInput, "N");
                text_option(sub, "--seq-len", a.check_seq_len,
                            "tokens per sequence (training) or the context (serving), over the files'", kInput, "N");
                sub->add_flag("--json", a.json_out, "print the estimate with a \"check\" section: what was read")
                    ->group(kOutput);
                sub->footer(
                    "The format is recognised from the content; a file a config names (axolotl's deepspeed:, a\n"
                    "--config) is looked up from the current folder, then the config's folder and its parents.\n"
                    "`gpumem check [options] -- vllm serve MODEL ...` checks a command as typed. Exit codes: 0 fits,\n"
                    "3 does not fit, 1 invalid input, 2 usage.\n" +
                    std::string(kHubNote));
                break;
            case Command::Validate:
                sub->add_option("FILE", a.positional, "the scenario file (\"-\": stdin)")
                    ->expected(1)
                    ->allow_extra_args(false)
                    ->type_name("");
                sub->add_flag("--json", a.json_out, "an unreadable file: print the error document too")->group(kOutput);
                break;
            case Command::Presets:
                sub->add_flag("--json", a.json_out, "print them as JSON")->group(kOutput);
                break;
            case Command::Table:
                sub->add_option("MODEL", a.positional, "a bundled preset or alias, a Hub id or URL, a config.json")
                    ->expected(1)
                    ->allow_extra_args(false)
                    ->type_name("");
                text_option(sub, "--revision", a.revision, "the Hub branch, tag or commit of MODEL (default main)",
                            kInput, "REV");
                text_option(sub, "--dtype", a.table_dtype,
                            "one row: fp32, fp16, bf16, fp8, int8, int4, mxfp4, nvfp4, another catalogue format or "
                            "one of --config-dir's (default: each of the eight)",
                            kInput, "NAME");
                text_option(sub, "--batch-size", a.batch_size, "sequences at once (default 1)", kInput, "N");
                text_option(sub, "--sequence-length,--seq-length", a.sequence_length,
                            "tokens per sequence, and the inference context (default 2048)", kInput, "N");
                text_option(sub, "--lora-rank", a.lora_rank, "the LoRA column's adapter rank (default 64)", kInput,
                            "N");
                text_option(sub, "--config-dir", a.config_dir,
                            "a folder with data_types.json and gpu_types.json: dtypes and GPUs added to the catalogues",
                            kInput, "DIR");
                sub->add_flag("--show-detailed", a.show_detailed,
                              "the layouts (TP, PP, EP, DP, TP + PP), the GPUs each column fits and the minimum memory")
                    ->group(kOutput);
                sub->add_flag("--list-types", a.list_types, "list the dtypes and GPUs (no model needed)")
                    ->group(kOutput);
                sub->add_flag("--json", a.json_out, "print the table as JSON")->group(kOutput);
                sub->add_flag("--gb", a.gb, "print GB (10^9 bytes) instead of GiB (2^30)")->group(kOutput);
                sub->footer(
                    "Each cell is gpumem's estimate (device total per GPU): inference with the weights in the dtype,\n"
                    "full training with Adam and the weights, gradients and moments in the dtype (recipe pure), and\n"
                    "LoRA over a base in the dtype (int8 and int4: a QLoRA base, int8 or NF4). README.md, \"Memory "
                    "per\n"
                    "dtype\".\n" +
                    std::string(kHubNote));
                break;
            case Command::Settings:
                sub->add_flag("--json", a.json_out, "print the tables as JSON")->group(kOutput);
                sub->add_flag("--markdown", a.markdown, "print docs/scenario.md as generated from the tables")
                    ->group(kOutput);
                break;
            default:
                break;
        }
    }
}

// The command that has `flag`, when another than the one typed: "--top" -> "plan".
std::string owner_of(const std::string& flag, Command typed) {
    static const std::map<std::string, std::vector<Command>> owners = [] {
        std::map<std::string, std::vector<Command>> out;
        CLI::App app;
        Args unused;  // describe() binds the options to it; nothing is parsed
        describe(app, unused, kEveryCommand);
        for (const Known& k : kCommands)
            for (const CLI::Option* option : app.get_subcommand(k.name)->get_options())
                for (const std::string& name : option->get_lnames()) out["--" + name].push_back(k.command);
        return out;
    }();
    auto it = owners.find(flag);
    if (it == owners.end() || std::find(it->second.begin(), it->second.end(), typed) != it->second.end()) return "";
    return command_name(it->second.front());
}

// "unknown option --seqlen (did you mean --seq-len?)": the command's option nearest to the word,
// when a third of it or less is mistyped; "unknown option --top (an option of plan)" when it is
// another command's.
std::string unknown_option(const CLI::App& scope, Command typed, const std::string& word) {
    const std::size_t eq = word.find('=');  // --flag=value: the flag
    const std::string flag = word.rfind("--", 0) == 0 && eq != std::string::npos && eq > 2 ? word.substr(0, eq) : word;
    const std::string message = "unknown option " + shown_word(flag);
    if (flag.size() > 64 || flag.rfind("--", 0) != 0) return message;
    const std::string owner = owner_of(flag, typed);
    if (!owner.empty()) return message + " (an option of " + owner + ")";
    std::string nearest;
    std::size_t best = flag.size();
    for (const CLI::Option* option : scope.get_options()) {
        for (const std::string& name : option->get_lnames()) {
            if (best == 0 || name.empty()) continue;
            // Nearer than the best so far, and a third of the name or less mistyped.
            const std::size_t limit = std::min(best - 1, (name.size() - 1) / 3);
            const std::size_t d = detail::edit_distance(flag, "--" + name, limit);
            if (d <= limit) best = d, nearest = "--" + name;
        }
    }
    return message + (nearest.empty() ? "" : " (did you mean " + nearest + "?)");
}

// quick SIZE_B and validate FILE: the one argument they take, missing or given twice.
std::string positional_error(Command command) {
    if (command == Command::Quick) return "quick needs one size in billions of parameters, e.g. quick 7 --gpus 8";
    if (command == Command::Export) return "export needs one format: " + detail::names_text<detail::ExportFormat>();
    if (command == Command::Calibrate) return "calibrate needs one records file (JSON lines; \"-\": stdin)";
    if (command == Command::Validate) return "validate needs one scenario file";
    return "";
}

// An empty word where a flag's value or the command's argument goes ("--model ''", "--gpu=",
// "validate ''"): said as such, rather than read as "none given" or as a file named "".
std::string empty_word_error(const CLI::App& app, const std::vector<std::string>& words, const Args& a) {
    const CLI::App& scope = app.get_subcommands().empty() ? app : *app.get_subcommands()[0];
    for (std::size_t i = 0; i < words.size() && words[i] != "--"; ++i) {
        const std::string& w = words[i];
        const std::size_t eq = w.rfind("--", 0) == 0 ? w.find('=') : std::string::npos;
        const std::string name = w.substr(0, eq);
        if (name.size() < 2 || name[0] != '-') continue;
        const CLI::Option* option = scope.get_option_no_throw(name);
        if (option == nullptr || option->get_type_size_max() == 0) continue;  // not ours, or a switch
        const bool empty = eq != std::string::npos ? eq + 1 == w.size() : i + 1 < words.size() && words[i + 1].empty();
        if (empty) return name + " needs a value, got " + quoted_word("");
    }
    if (std::find(a.positional.begin(), a.positional.end(), "") == a.positional.end()) return "";
    for (const CLI::Option* option : scope.get_options())
        if (option->get_positional())
            return std::string(command_name(a.command)) + " " + option->get_name() + ": got " + quoted_word("");
    return std::string(command_name(a.command)) + ": got " + quoted_word("");
}

// The words CLI11 left over: each unknown option, else (none) the first stray argument.
std::string extras_error(const CLI::App& app, const Args& a) {
    const CLI::App& scope = app.get_subcommands().empty() ? app : *app.get_subcommands()[0];
    std::vector<std::string> left = app.remaining(true), lines;
    for (const std::string& w : left)
        if (w.size() > 1 && w[0] == '-') lines.push_back(unknown_option(scope, a.command, w));
    if (lines.empty() && !left.empty() && !positional_error(a.command).empty())
        lines.push_back(positional_error(a.command) + ", got " + quoted_word(left[0]) + " too");
    else if (lines.empty() && !left.empty())
        lines.push_back(std::string(command_name(a.command)) + " takes no argument " + quoted_word(left[0]));
    std::string out;
    for (const std::string& line : lines) out += (out.empty() ? "" : "\n") + line;
    return out.empty() ? "unexpected arguments" : out;
}

// What a parse error says, naming the flag: CLI11's own words where they are clear.
void parse_error(const CLI::ParseError& e, const CLI::App& app, const std::vector<std::string>& words, Args& a) {
    std::string message = e.what();
    a.exit_code = kUsage;
    if (dynamic_cast<const CLI::ExtrasError*>(&e)) {
        message = extras_error(app, a);
    } else if (dynamic_cast<const CLI::ArgumentMismatch*>(&e) && message.find(" required ") != std::string::npos) {
        message = message.substr(0, message.find(':')) + " needs a value";  // "--model: 1 required TEXT missing"
        const std::string flag = message.substr(0, message.find(' '));
        if (std::find(words.begin(), words.end(), flag + "=") != words.end()) message += ", got " + quoted_word("");
    } else if (dynamic_cast<const CLI::ConversionError*>(&e) && message.rfind("Could not convert: ", 0) == 0 &&
               message.find(" = ") != std::string::npos) {
        // "Could not convert: --lora = maybe": a switch given a value it cannot read as true or false.
        const std::size_t eq = message.find(" = "), at = std::string("Could not convert: ").size();
        message =
            message.substr(at, eq - at) + " is a switch: it takes no value, got " + quoted_word(message.substr(eq + 3));
    } else if (dynamic_cast<const CLI::ValidationError*>(&e)) {
        a.exit_code = kInvalid;  // a value the field does not take, as the core reports it in a file
        a.json_out = std::find(words.begin(), words.end(), "--json") != words.end();  // its error document too
    }
    a.error = message;
}

bool names_a_model(const Args& a) { return !a.scenario_file.empty() || !a.model.empty() || !a.hf_config_file.empty(); }

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

// --deepspeed: the scenario fields a DeepSpeed config decides, over the scenario's; the "auto"
// values it leaves to the script become notes.
bool read_deepspeed(const Args& a, const ReadFile& read, json& scenario, Request& r, std::string& error) {
    json ds;
    if (!read_document(read, a.deepspeed_file, "DeepSpeed config ", ds, error)) return false;
    json imported = gpumem::import_deepspeed(ds);
    if (!imported.value("ok", false)) {
        error = a.deepspeed_file + ": " + imported["errors"][0]["message"].get<std::string>();
        return false;
    }
    scenario.merge_patch(imported["scenario"]);
    for (const json& n : imported["notes"]) r.notes.push_back(a.deepspeed_file + ": " + n.get<std::string>());
    return true;
}

// --calibration: the file's overheads where the scenario gives none, and its name and hash.
bool read_calibration(const Args& a, const ReadFile& read, json& scenario, Request& r, std::string& error) {
    json calibration;
    if (!read_document(read, a.calibration_file, "calibration file ", calibration, error)) return false;
    json applied = gpumem::apply_calibration(scenario, calibration);
    if (!applied.value("ok", false)) {
        error = a.calibration_file + ": " + applied["errors"][0]["message"].get<std::string>();
        return false;
    }
    scenario = applied["scenario"];
    r.calibration = applied["calibration"];
    return true;
}

// The scenario from --scenario, --deepspeed, --model / --hf-config, the flags and --calibration, in that order.
bool build_scenario(const Args& a, const ReadFile& read, Request& r, std::string& error) {
    json& scenario = r.document;
    scenario = json::object();
    if (!a.scenario_file.empty()) {
        if (!read_document(read, a.scenario_file, "scenario file ", scenario, error)) return false;
        if (!scenario.is_object()) {
            error = a.scenario_file + ": a scenario must be a JSON object";
            return false;
        }
    }
    if (!a.deepspeed_file.empty() && !read_deepspeed(a, read, scenario, r, error)) return false;
    if (!a.model.empty()) scenario["model"] = {{"preset", a.model}};
    if (!a.hf_config_file.empty()) {
        json config;
        if (!read_config(read, a.hf_config_file, config, error)) return false;
        scenario["model"] = {{"hf_config", config}};
    }
    // The mode the scenario ends in (the last --mode, else the file's): the flags that follow it set
    // its field, and a flag of the other mode is an error naming both.
    json mode = scenario.contains("mode") ? scenario["mode"] : json("training");
    for (const Override& o : a.overrides)
        if (o.pointer == "/mode") mode = o.value;
    const bool inference = mode == "inference";
    for (const Override& o : a.overrides) {
        std::string pointer = inference && !o.inference_pointer.empty() ? o.inference_pointer : o.pointer;
        // --precision int8 / int4 in training: weight formats, not a dtype training computes in.
        const bool weight_only = !inference && o.flag == "--precision" && (o.value == "int8" || o.value == "int4");
        const bool other_mode =
            inference ? pointer.rfind("/training/", 0) == 0 : weight_only || pointer.rfind("/inference/", 0) == 0;
        if (other_mode) {
            std::string field = pointer.substr(1);
            std::replace(field.begin(), field.end(), '/', '.');
            error = o.flag + (o.flag == "--precision" ? " " + o.value.get<std::string>() : "") +
                    " does not apply to mode " + (inference ? "inference" : "training");
            error += weight_only ? ": training computes in fp32, fp16, bf16 or fp8 (a quantized base for LoRA: "
                                   "--qlora --quantization int8 or nf4)"
                                 : " (it sets " + field + ")";
            r.exit_code = kUsage;
            return false;
        }
        scenario[json::json_pointer(pointer)] = o.value;
    }
    if (!a.batch_size.empty())
        scenario[inference ? "inference" : "training"]["batch_size"] = number_value(a.batch_size);
    if (a.explain) scenario["explain"] = true;  // the result then carries "explain"
    if (a.load_full_model)
        r.notes.push_back(
            "--load-full-model changes nothing: gpumem counts every parameter from config.json, exactly "
            "and without loading weights");
    return a.calibration_file.empty() || read_calibration(a, read, scenario, r, error);
}

// calibrate FILE: one record per line (blank lines skipped); a line that is not JSON is named, and
// fails the file under --strict (otherwise it is skipped and reported like the core's bad records).
bool read_records(const Args& a, const ReadFile& read, Request& r, std::string& error) {
    std::string why;
    std::optional<std::string> text = read(a.positional[0], why);
    if (!text) {
        error = why.empty() ? "cannot read records file " + a.positional[0] : why;
        return false;
    }
    json records = json::array();
    std::istringstream lines(*text);
    std::size_t number = 0;
    for (std::string line; std::getline(lines, line);) {
        ++number;
        if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
        std::optional<json> record = gpumem::parse_json(line, error);
        if (!record) {
            error = a.positional[0] + ":" + std::to_string(number) + ": " + error;
            if (a.strict) return false;
            r.unreadable_lines.push_back({{"line", number}, {"field", ""}, {"problem", error}, {"message", error}});
            error.clear();
            continue;
        }
        records.push_back(std::move(*record));
        r.record_lines.push_back(number);
    }
    if (records.empty() && !r.unreadable_lines.empty()) {
        error = r.unreadable_lines[0]["message"].get<std::string>() +
                (r.unreadable_lines.size() > 1
                     ? " (and " + std::to_string(r.unreadable_lines.size() - 1) + " more lines that are not JSON)"
                     : "") +
                "; no record is left";
        return false;
    }
    std::string name = a.name;
    if (name.empty()) {
        name = a.positional[0] == "-" ? "calibration" : a.positional[0].substr(a.positional[0].find_last_of('/') + 1);
        name = name.substr(0, name.find('.'));
    }
    r.document = {{"records", records}, {"name", name}};
    if (a.strict) r.document["strict"] = true;
    if (!a.calibration_file.empty()) {
        json calibration;
        if (!read_document(read, a.calibration_file, "calibration file ", calibration, error)) return false;
        r.document["calibration"] = calibration;
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
        if (it.key() == "step_time" && plan.contains("step_time") && plan["step_time"].is_object())
            plan["step_time"].update(*it);
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
        case Command::Plan:
        case Command::Fit:
        case Command::Export:
        case Command::Chart: {
            if (a.command == Command::Estimate && a.jsonl) return r;
            std::string error;
            if (!build_scenario(a, read, r, error)) {
                if (r.exit_code != kUsage) return invalid(error);
                r.error = error;  // a flag of the other mode
                return r;
            }
            if (a.command == Command::Quick) quick_model(a, r.document);
            if (a.command == Command::Export) {
                json request = {{"format", a.positional[0]}, {"scenario", r.document}, {"script", a.script}};
                if (!a.gpus_per_node.empty()) request["gpus_per_node"] = number_value(a.gpus_per_node);
                r.document = request;
            }
            if (a.command == Command::Chart) {
                json request = {{"scenario", r.document}};
                const std::string mode = r.document.value("mode", "training");
                request["field"] = !a.chart_field.empty() ? a.chart_field
                                   : mode == "inference"  ? "inference.context_len"
                                                          : "training.seq_len";
                if (!a.chart_max.empty()) request["max"] = number_value(a.chart_max);
                r.document = request;
            }
            if (a.command == Command::Fit && a.include_borderline) r.document["fit"] = {{"include_borderline", true}};
            if (a.command == Command::Plan && !plan_section(a, r.document)) {
                r.exit_code = kUsage;
                r.error = "plan needs --gpus N (the GPUs in the cluster)";
            }
            return r;
        }
        case Command::Calibrate: {
            std::string error;
            if (!read_records(a, read, r, error)) return invalid(error);
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

std::string shown_word(const std::string& word) {
    return word.empty() ? "\"\" (an empty word)" : gpumem::display_text(word, kShownWordChars);
}

const char* command_name(Command command) {
    for (const Known& k : kCommands)
        if (k.command == command) return k.name;
    return "";
}

Args parse_args(const std::vector<std::string>& words) {
    Args a;
    try {
        CLI::App app;
        auto find = [](const std::string& name) -> const Known* {
            for (const Known& k : kCommands)
                if (name == k.name) return &k;
            return nullptr;
        };
        // No words: the help, exit 2. `help [COMMAND]`: a command's help.
        if (words.empty() || words[0] == "help") {
            const Known* k = words.size() > 1 ? find(words[1]) : nullptr;
            if (words.size() > 1 && !k) {
                a.error = "unknown command " + shown_word(words[1]);
                a.exit_code = kUsage;
                return a;
            }
            describe(app, a, k ? k->command : Command::Help);
            a.help = k ? app.get_subcommand(k->name)->help(app.get_name()) : app.help();
            a.exit_code = words.empty() ? kUsage : kOk;
            return a;
        }
        const Known* named = find(words[0]);
        // check [options] -- COMMAND...: the words after `--` are the command to check, as typed.
        if (named && named->command == Command::Check) {
            auto dashes = std::find(words.begin(), words.end(), std::string("--"));
            if (dashes != words.end()) {
                Args checked = parse_args(std::vector<std::string>(words.begin(), dashes));
                checked.check_command.assign(dashes + 1, words.end());
                if (checked.error.empty() && checked.check_command.empty()) {
                    checked.error = "check: `--` must be followed by the command to check";
                    checked.exit_code = kUsage;
                }
                return checked;
            }
        }
        // Options with no command are estimate's, as gpu_memory_calculator.py reads them:
        // `gpumem --model microsoft/phi-2 --mode training`.
        if (!named && words[0].size() > 1 && words[0][0] == '-' && words[0] != "--" && words[0] != "-h" &&
            words[0] != "--help" && words[0] != "--version") {
            std::vector<std::string> with_command = {"estimate"};
            with_command.insert(with_command.end(), words.begin(), words.end());
            return parse_args(with_command);
        }
        if (!named && (words[0].empty() || words[0][0] != '-')) {
            a.error = "unknown command " + shown_word(words[0]);
            a.exit_code = kUsage;
            return a;
        }
        describe(app, a, named ? named->command : Command::Help);  // "--version", "--help": no command
        try {
            app.parse(std::vector<std::string>(words.rbegin(), words.rend()));  // CLI11 takes them reversed
        } catch (const CLI::CallForHelp&) {
            const bool command = !app.get_subcommands().empty();
            a = Args();
            a.help = command ? app.get_subcommands()[0]->help(app.get_name()) : app.help();
            return a;
        } catch (const CLI::ParseError& e) {
            parse_error(e, app, words, a);
            return a;
        }
        if (a.command == Command::Help) {  // no command (`gpumem --`): as bare `gpumem`
            a.help = app.help();
            a.exit_code = kUsage;
            return a;
        }
        if (std::string empty = empty_word_error(app, words, a); !empty.empty()) {
            a.error = empty;
            a.exit_code = kUsage;
            return a;
        }
    } catch (const std::exception& e) {  // e.g. out of memory: still a value, never an exception
        a = Args();
        a.error = std::string("cannot read the command line: ") + e.what();
        a.exit_code = kUsage;
        return a;
    }
    const std::string name = command_name(a.command);
    const Override* format = nullptr;
    for (const Override& o : a.overrides)
        if (o.pointer == "/inference/weight_format") format = &o;
    if (a.command == Command::Estimate && !a.jsonl && !names_a_model(a))
        a.error = "estimate needs --scenario FILE, --jsonl, --model ID or --hf-config FILE";
    else if (a.command == Command::Params && a.hf_config_file.empty() && a.model.empty())
        a.error = "params needs --hf-config FILE or --model ID";
    else if ((a.command == Command::Quick || a.command == Command::Validate || a.command == Command::Export ||
              a.command == Command::Calibrate) &&
             a.positional.size() != 1)
        a.error = positional_error(a.command);
    else if ((a.command == Command::Maxfit || a.command == Command::Plan || a.command == Command::Fit ||
              a.command == Command::Export || a.command == Command::Chart) &&
             !names_a_model(a))
        a.error = name + " needs --scenario FILE, --model ID or --hf-config FILE";
    else if (a.command == Command::Table && a.positional.empty() && !a.list_types)
        a.error = "table needs a model: table MODEL (or --list-types)";
    else if (a.command == Command::Table && a.positional.size() > 1)
        a.error = "table takes one model, got " + quoted_word(a.positional[1]) + " too";
    else if (format && a.scenario_file.empty() &&
             !detail::parse_setting<detail::WeightFormat>(format->value.get<std::string>())) {
        // Only a scenario file can add its own formats to the table's.
        a.error = "--weight-format: " + detail::allowed_text<detail::WeightFormat>() + ", got " +
                  quoted_word(format->value.get<std::string>());
        a.exit_code = kInvalid;
        return a;
    }
    if (!a.error.empty()) a.exit_code = kUsage;
    if (a.command == Command::Table && !a.positional.empty()) a.model = a.positional[0];  // fetched as --model is
    return a;
}

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
