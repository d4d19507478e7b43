// libFuzzer target: any bytes as a gpumem command line, run as the CLI runs it (core/cli/main.cpp)
// but without its I/O: parse_args(), build_request() over a few files held in memory, then the
// core call the command makes. Checks what a user is promised, not only "no crash":
//   - a usage error (exit 2), or a value an enumerated flag does not take (exit 1 from
//     parse_args), has a message that names a word of the command line (the flag, the command, or
//     the flag of a --flag=value word); nothing else exits 2 but the bare `gpumem`; parse_args
//     never throws (CLI11 reads the words and throws on every mistake);
//   - build_request never throws; an input error (exit 1) has a message, naming the file that
//     cannot be read or parsed, and the error document --json prints for it can be printed;
//   - every document handed to the core, and every result, holds finite numbers only (nlohmann
//     would print NaN and infinities as null);
//   - a result is either ok, with finite non-negative byte figures, or {"ok": false, "errors"}
//     with at least one error, each with a field and a non-empty message.
// A violated promise calls abort(), which libFuzzer reports with the input.
//
// Input format: the words of the command line (after `gpumem`), separated by NUL or newline
// bytes; the first kMaxWords are used. tests/fuzz/cli_seeds/ holds one command line per file.
// The files a command line can name are those of kFiles below ("-" is stdin); other names cannot
// be read.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include <gpumem/gpumem.h>

#include "cli/args.h"

namespace {

using nlohmann::json;
using namespace gpumem::cli;

constexpr std::size_t kMaxWords = 48;

// Per-input cost is kept small so the fuzzer keeps its pace. plan searches every layout of the
// cluster, and for each the micro-batch sizes that divide the global batch (found by trial
// division up to global_batch / dp: at 2^40 sequences, the field's maximum, one plan runs for
// hours), and returns up to `top` rows, each with its whole estimate. So a plan is searched only
// within these bounds (the slowest found within them, DeepSeek-V3 on 64 GPUs, takes about 2 s
// under the sanitizers); beyond them it is parsed, built and checked but not run.
constexpr double kMaxPlanGpus = 64;
constexpr double kMaxPlanTop = 16;
constexpr double kMaxPlanGlobalBatch = 1024;  // explicit, or num_gpus x batch_size x gradient_accumulation_steps

struct File {
    const char* path;
    const char* text;
};

const File kFiles[] = {
    // stdin: one line, so estimate --jsonl reads one scenario from it.
    {"-", R"({"version": 1, "model": {"preset": "meta-llama/Llama-3.1-8B"}, "mode": "training", )"
          R"("training": {"method": "full", "batch_size": 1, "seq_len": 2048, "dtype": "bf16", "optimizer": "adamw"}, )"
          R"("hardware": {"num_gpus": 1, "gpu_memory_gb": 80}})"},
    {"train.json", R"({"version": 1, "model": {"preset": "Qwen/Qwen2.5-7B"}, "mode": "training",
                       "training": {"method": "lora", "batch_size": 2, "seq_len": 2048,
                                    "activation_checkpointing": "full"},
                       "engine": {"type": "deepspeed", "zero_stage": 2}, "parallelism": {"data_parallel_size": 4},
                       "hardware": {"gpu": "A100-80GB", "num_gpus": 4}})"},
    {"infer.json", R"({"version": 1, "model": {"preset": "llama3-8b"}, "mode": "inference",
                       "inference": {"engine": "vllm", "context_len": 8192, "batch_size": 8,
                                     "kv_cache_dtype": "fp8"}})"},
    {"plan.json", R"({"version": 1, "model": {"preset": "llama3-8b"}, "training": {"seq_len": 4096},
                      "plan": {"num_gpus": 8, "gpus_per_node": 8, "top": 3, "step_time": {"mfu": 0.4}}})"},
    {"odd.json",
     R"({"model": {"preset": "llama3-8b"}, "mode": 7, "training": 5, "engine": 3, "hardware": [], "plan": 4})"},
    {"list.json", "[1, 2]"},
    {"broken.json", R"({"model": {"preset": )"},
    {"config.json", R"({"architectures": ["LlamaForCausalLM"], "hidden_act": "silu", "hidden_size": 4096,
                        "intermediate_size": 14336, "max_position_embeddings": 8192, "model_type": "llama",
                        "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8,
                        "rms_norm_eps": 1e-05, "rope_theta": 500000.0, "tie_word_embeddings": false,
                        "torch_dtype": "bfloat16", "vocab_size": 128256})"},
    {"record.json", R"({"id": "tiny", "config": {"model_type": "gpt2", "n_embd": 768, "n_head": 12, "n_layer": 12,
                                                  "n_positions": 1024, "vocab_size": 50257}})"},
};

std::optional<std::string> read_file(const std::string& path, std::string& /*why*/) {
    for (const File& f : kFiles)
        if (path == f.path) return std::string(f.text);
    return std::nullopt;
}

[[noreturn]] void fail() { std::abort(); }

// Finite numbers everywhere.
void check_finite(const json& j) {
    if (j.is_number_float() && !std::isfinite(j.get<double>())) fail();
    if (j.is_structured())
        for (const json& v : j) check_finite(v);
}

// What --json prints must be printable (as main.cpp prints it).
void check_printable(const json& doc) {
    try {
        (void)to_json_text(doc);
    } catch (const json::exception&) {
        fail();
    }
}

// The checks read results with at(): a missing field throws, which ends the fuzzer like abort().

void check_bytes(const json& v) {
    if (!v.is_number() || v.get<double>() < 0 || !std::isfinite(v.get<double>())) fail();
}

// {"ok": true, ...} or {"ok": false, "errors": [{"field", "message"}, ...]} with at least one error.
bool check_result(const json& r) {
    if (!r.is_object() || !r.contains("ok") || !r.at("ok").is_boolean()) fail();
    check_finite(r);
    check_printable(r);
    if (r.at("ok").get<bool>()) return true;
    if (!r.contains("errors") || !r.at("errors").is_array() || r.at("errors").empty()) fail();
    for (const json& e : r.at("errors")) {
        if (!e.is_object() || !e.contains("field") || !e.at("field").is_string()) fail();
        if (!e.contains("message") || !e.at("message").is_string() || e.at("message").get<std::string>().empty())
            fail();
    }
    return false;
}

void check_estimate(const json& r) {
    if (!check_result(r)) return;
    const json& g = r.at("per_gpu");
    for (const char* k : {"peak_allocated_bytes", "peak_reserved_bytes", "device_total_bytes", "capacity_bytes"})
        check_bytes(g.at(k));
    for (const json& c : g.at("components")) check_bytes(c);
    check_bytes(r.at("host_bytes"));
    check_bytes(r.at("parameters").at("total"));
    if (g.at("peak_reserved_bytes").get<double>() < g.at("peak_allocated_bytes").get<double>()) fail();
    if (!r.at("fits").is_boolean() || !r.at("scenario").is_object()) fail();
}

void check_maxfit(const json& r) {
    if (!check_result(r)) return;
    if (!r.at("solvers").is_array() || r.at("solvers").empty()) fail();
    for (const json& s : r.at("solvers")) {
        check_bytes(s.at("value"));
        if (s.at("value").get<double>() > s.at("field_maximum").get<double>()) fail();
    }
}

void check_plan(const json& r) {
    if (!check_result(r)) return;
    for (const json& p : r.at("plans")) {
        check_bytes(p.at("device_total_bytes"));
        if (!(p.at("step_time_s").get<double>() > 0)) fail();
        check_estimate(p.at("estimate"));
    }
}

// The command line's words: split on NUL and newline, at most kMaxWords.
std::vector<std::string> split_words(const std::uint8_t* data, std::size_t size) {
    std::vector<std::string> words;
    if (size == 0) return words;
    std::string word;
    for (std::size_t i = 0; i <= size && words.size() < kMaxWords; ++i) {
        if (i == size || data[i] == '\0' || data[i] == '\n') {
            words.push_back(word);
            word.clear();
        } else {
            word.push_back(static_cast<char>(data[i]));
        }
    }
    return words;
}

// A usage error names what is wrong: a word of the command line (the flag, the command, or the
// flag of --flag=value) as messages show words (shown_word: on one line, bounded), an empty word
// as `"" (an empty word)`.
void check_usage_error(const std::string& error, const std::vector<std::string>& words, Command command) {
    if (error.empty()) fail();
    // Options with no command are estimate's: a message may name the command the words implied.
    const std::string implied = gpumem::cli::command_name(command);
    if (!implied.empty() && error.rfind(implied + " ", 0) == 0) return;
    for (const std::string& w : words) {
        const std::size_t eq = w.find('=');
        const std::string flag = w.rfind("--", 0) == 0 && eq != std::string::npos && eq > 2 ? w.substr(0, eq) : w;
        if (error.find(shown_word(flag)) != std::string::npos) return;
    }
    fail();
}

// A field's value when it is a number (strings and the like are refused by the core at once).
double number_or(const json& object, const char* key, double otherwise) {
    if (!object.is_object() || !object.contains(key) || !object.at(key).is_number()) return otherwise;
    return object.at(key).get<double>();
}

bool is_scenario_command(Command c) {
    return c == Command::Estimate || c == Command::Quick || c == Command::Maxfit || c == Command::Plan;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::vector<std::string> words = split_words(data, size);

    Args a;
    try {
        a = parse_args(words);
    } catch (...) {
        fail();
    }
    if (a.exit_code != kOk && a.exit_code != kUsage && a.exit_code != kInvalid) fail();
    if (!a.error.empty()) {
        if (a.exit_code == kOk) fail();
        check_usage_error(a.error, words, a.command);
        return 0;
    }
    if (a.exit_code == kInvalid) fail();  // exit 1 comes with its message
    if (a.command == Command::Help && a.help.empty()) fail();
    // Exit 2 without an error: only the help of bare `gpumem` (or `gpumem --`).
    if (a.exit_code == kUsage && !(a.command == Command::Help && !a.help.empty())) fail();
    if (a.bench_rounds < 0 || a.bench_rounds > 10000 || !a.plan.is_object()) fail();
    for (const Override& o : a.overrides)
        if (o.pointer.empty() || o.pointer[0] != '/' || o.flag.rfind("--", 0) != 0) fail();
    check_finite(a.plan);

    if (a.command == Command::Validate) {  // validate FILE: the file through the JSON API
        std::string why;
        if (std::optional<std::string> text = read_file(a.positional.at(0), why))
            check_estimate(json::parse(gpumem::estimate_json(*text)));
        return 0;
    }
    if (a.command == Command::Estimate && a.jsonl) {  // estimate --jsonl: stdin, one scenario a line
        std::string why;
        std::string in = *read_file("-", why), line;
        for (std::size_t start = 0; start <= in.size(); start += line.size() + 1) {
            line = in.substr(start, in.find('\n', start) - start);
            if (line.find_first_not_of(" \t\r") != std::string::npos)
                check_estimate(json::parse(gpumem::estimate_json(line)));
        }
        return 0;
    }

    Request r = build_request(a, read_file);  // must not throw: an exception ends the fuzzer
    if (r.exit_code == kUsage) {
        // plan without --gpus, or a flag of the other mode than the scenario's
        if (a.command != Command::Plan && r.error.find(" does not apply to mode ") == std::string::npos) fail();
        check_usage_error(r.error, words, a.command);
        return 0;
    }
    if (r.exit_code == kInvalid) {
        if (r.error.empty()) fail();
        if (r.error_document) {  // a file that cannot be read or parsed: the message names it
            auto names = [&](const std::string& file) {
                return !file.empty() && r.error.find(file) != std::string::npos;
            };
            if (!names(a.scenario_file) && !names(a.hf_config_file)) fail();
            check_printable(error_document(r.error));
        }
        return 0;
    }
    if (r.exit_code != kOk) fail();
    check_finite(r.document);
    check_printable(r.document);

    if (is_scenario_command(a.command) && !r.document.is_object()) fail();
    switch (a.command) {
        case Command::Estimate:
        case Command::Quick:
            check_estimate(gpumem::estimate(r.document));
            break;
        case Command::Maxfit:
            check_maxfit(gpumem::maxfit(r.document));
            break;
        case Command::Plan: {
            const json& plan = r.document.at("plan");
            if (!plan.contains("num_gpus")) fail();
            if (number_or(plan, "num_gpus", 1) > kMaxPlanGpus || number_or(plan, "top", 10) > kMaxPlanTop) break;
            const json training = r.document.value("training", json::object());
            double global_batch = plan.contains("global_batch_size")
                                      ? number_or(plan, "global_batch_size", 1)
                                      : number_or(plan, "num_gpus", 1) * number_or(training, "batch_size", 1) *
                                            number_or(training, "gradient_accumulation_steps", 1);
            if (global_batch > kMaxPlanGlobalBatch) break;
            check_plan(gpumem::plan(r.document));
            break;
        }
        case Command::Params: {
            json config = r.document;
            if (a.hf_config_file.empty()) {
                std::optional<json> preset = gpumem::find_preset(a.model);
                if (!preset) break;  // the CLI says so and exits 1
                config = preset->at("config");
            }
            check_result(gpumem::params(config));
            break;
        }
        default:
            break;
    }
    return 0;
}
