// gpumem CLI: the command line turned into what a command runs.
//
// Two pure steps, shared by the CLI (main.cpp) and its fuzzer (tests/fuzz/cli_fuzz.cpp):
//
//   parse_args(words)          the words after the program name -> Args: the command, its options
//                              and the scenario fields the flags set, or a usage error. CLI11
//                              (Debian's libcli11-dev) reads them: one subcommand per command,
//                              its help generated, and the enumerated flags (--dtype,
//                              --optimizer, ...) checked against the core's settings tables
//                              (gpumem/settings.h), whose names the help lists
//   build_request(args, read)  Args + the files they name -> the document the core gets: the
//                              scenario (estimate, quick, maxfit, plan) or the config.json (params)
//
// Neither exits, prints, throws or touches a file or stdin: build_request reads through the
// `read` function its caller passes (main.cpp passes the file system and stdin, the fuzzer and the
// tests a few documents in memory). Problems come back as values: a message naming the flag, file
// or command, and the exit code the CLI ends with (2 usage, 1 invalid input). Nothing CLI11 throws
// gets out of parse_args.
//
// Not part of the core: the WebAssembly module does not link this.

#pragma once

#include <functional>

#include <gpumem/gpumem.h>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpumem::cli {

// Exit codes: 0 ok, 1 invalid input (unreadable file, malformed JSON, invalid field), 2 usage, 3 (check)
// does not fit.
constexpr int kOk = 0, kInvalid = 1, kUsage = 2;
// check: the job does not fit its GPUs.
constexpr int kDoesNotFit = 3;

//-----------------------------------------------------------------------------
// [SECTION] parse_args
//-----------------------------------------------------------------------------

enum class Command {
    Help,
    Version,
    Estimate,
    Params,
    Quick,
    Maxfit,
    Plan,
    Fit,
    Export,
    Chart,
    Calibrate,
    Validate,
    Presets,
    Settings,
    Table,
    Check
};

// The word that names a command on the command line ("estimate"); "" for Help.
const char* command_name(Command command);

// One flag's setting of a scenario field. Applied in command-line order, so a later flag wins.
struct Override {
    std::string flag;      // as typed: "--seq-len"
    std::string pointer;   // the field it sets, as a JSON pointer: "/training/seq_len"
    nlohmann::json value;  // a number when the text is a JSON number, else the text itself (the core
                           // then names the field and what is allowed); switches set fixed values
    // A flag that follows the mode (--seq-length, --precision DTYPE): the field it sets in inference;
    // `pointer` is the one in training (--precision int8 and int4 have none: an error there).
    std::string inference_pointer = "";
};

struct Args {
    Command command = Command::Help;
    int exit_code = kOk;  // kUsage or kInvalid with `error` set. Help: kUsage for no command (no
                          // words, or only `--`), kOk for --help and `help [COMMAND]`
    // What is wrong, one line per mistake, each naming the flag or command: kUsage for the command
    // line's shape ("--seq-len needs a value", "unknown option --frobnicate"), kInvalid for a value
    // an enumerated flag does not take ("--dtype: must be one of fp32, fp16, bf16, fp8, got \"int3\""),
    // as the core says of the same value in a scenario file.
    std::string error;
    std::string help;  // Help: the text to print (`gpumem --help`, `gpumem estimate --help`)

    // What the command reads. "" is "not given", as on the command line.
    std::string scenario_file;            // --scenario FILE ("-": stdin)
    std::string hf_config_file;           // --hf-config FILE (a config.json or a preset record)
    std::string model;                    // --model ID: a preset id or alias, a Hub id or URL, a path
    std::string revision;                 // --revision REV: the Hub branch, tag or commit (main)
    std::vector<std::string> positional;  // quick SIZE_B, validate FILE, export FORMAT, calibrate FILE
    std::string deepspeed_file;           // --deepspeed FILE: a DeepSpeed ds_config.json read into the scenario
    std::string calibration_file;         // --calibration FILE: a gpumem calibrate file's overheads
    std::string out_file;                 // --out FILE: export, chart and calibrate write there, not stdout
    std::string name;                     // calibrate --name: the calibration's name
    std::string chart_field;              // chart --x FIELD: training.seq_len, training.batch_size, ...
    std::string chart_max;                // chart --max N: the sweep's last value
    std::string script = "train.py";      // export torchrun --script FILE
    std::string gpus_per_node;            // export and check --gpus-per-node N
    // check: FILE... are `positional`; the words after `--` are the command to check; --gpu,
    // --num-gpus and --seq-len as typed (they override what the files say).
    std::vector<std::string> check_command;
    std::string check_gpu, check_num_gpus, check_seq_len;

    bool json_out = false;         // --json: the result document instead of the table
    bool strict = false;           // calibrate --strict: any record that cannot be used fails the file
    bool jsonl = false;            // estimate --jsonl: one scenario per stdin line (nothing else is read)
    bool gb = false;               // --gb: GB (10^9 B) instead of GiB in the table
    bool explain = false;          // --explain: each figure's formula, numbers and source after the table
    bool markdown = false;         // settings --markdown: docs/scenario.md as generated from the tables
    bool load_full_model = false;  // --load-full-model: accepted for the other calculator's command line; a note

    // table MODEL: memory per dtype (README.md, "Memory per dtype")
    std::string table_dtype;      // --dtype NAME: one row (default: every dtype)
    std::string sequence_length;  // --sequence-length / --seq-length N as typed (default 2048)
    std::string lora_rank;        // --lora-rank N (default 64)
    bool show_detailed = false;   // --show-detailed: the layouts, GPUs and minimum memory too
    bool list_types = false;      // --list-types: the dtypes and GPUs, no model needed
    std::string config_dir;       // --config-dir DIR: data_types.json and gpu_types.json added to the catalogues

    std::vector<Override> overrides;  // the scenario flags (scenario_flags() in args.cpp), in order;
                                      // an enumerated flag's value is its table name (an alias or
                                      // another case is read as the name it stands for)
    std::string batch_size;           // --batch-size as typed: training.batch_size or
                                      // inference.batch_size, whichever mode the scenario ends in
    // plan: the fields the flags set in the request's "plan" section: num_gpus (--gpus /
    // --num-gpus), gpu (--gpu), gpus_per_node, host_ram_gb, global_batch_size, top, step_time.mfu.
    // For plan these flags name the cluster, so they are not in `overrides`.
    nlohmann::json plan = nlohmann::json::object();
    int bench_rounds = 0;             // plan --bench [ROUNDS]: 1-10000 timed plans (default 20); 0: no benchmark
    bool include_borderline = false;  // fit --include-borderline: runs whose point fits but band top does not
};

// `words` is argv without the program name. Never throws: every problem is `error` in the result.
Args parse_args(const std::vector<std::string>& words);

// A word of the command line as an error message shows it: on one line, control characters escaped,
// at most kShownWordChars characters (gpumem::display_text); an empty word as `"" (an empty word)`.
constexpr std::size_t kShownWordChars = 80;
std::string shown_word(const std::string& word);

//-----------------------------------------------------------------------------
// [SECTION] build_request
//-----------------------------------------------------------------------------

// The most the CLI reads from one file, from stdin, or as one --jsonl record: 64 MiB. The largest
// real config.json is about 100 kB and a scenario a few kB, so anything past this is a mistake
// (`--hf-config /dev/zero`, a checkpoint given for its config), refused before it fills memory.
constexpr std::size_t kMaxInputBytes = std::size_t{64} << 20;

// Reads a file the command line names ("-" is stdin): its bytes, or nullopt when it cannot, with
// `why` saying so when the reader knows more than "cannot read" (e.g. over kMaxInputBytes).
using ReadFile = std::function<std::optional<std::string>(const std::string& path, std::string& why)>;

struct Request {
    int exit_code = kOk;          // kOk: run it; kInvalid or kUsage: print `error` and stop
    std::string error;            // names the file, flag or command
    bool error_document = false;  // kInvalid: under --json the CLI also prints error_document(error)
    // estimate, quick, maxfit, fit: the scenario; plan: the scenario with its "plan" section;
    // export: {"format", "scenario", "gpus_per_node", "script"}; chart: {"scenario", "field", "max"};
    // calibrate: {"records", "name"}; params: the config.json of --hf-config (null for --model: the
    // command looks the preset up).
    nlohmann::json document;
    std::vector<std::string> notes;  // what reading --deepspeed left to the script ("auto" values), and
                                     // what a flag kept only for the other calculator's sake changes (nothing)
    nlohmann::json calibration;      // --calibration: {"name", "hash"} of the file applied; null when none
    // calibrate: the line of the records file each record came from (records[i] is on record_lines[i]),
    // and the lines that are not JSON, skipped: [{"line", "field", "problem", "message"}].
    std::vector<std::size_t> record_lines;
    nlohmann::json unreadable_lines = nlohmann::json::array();
};

// For estimate (not --jsonl), quick, maxfit, plan, fit, export, chart, calibrate and params; other
// commands get an empty request. Reads, in this order, --scenario (must be a JSON object),
// --deepspeed (its fields over the scenario's) and --hf-config; then the flags override the fields
// they name; then --calibration fills the overheads the scenario leaves out. Never throws: a document the flags cannot
// be applied to (e.g. "training": 5 with --seq-len) is kInvalid with the JSON library's message.
Request build_request(const Args& args, const ReadFile& read);

//-----------------------------------------------------------------------------
// [SECTION] What the CLI prints as JSON
//-----------------------------------------------------------------------------

// {"ok": false, "errors": [{"field": "", "problem": message, "value": "", "message": message}]}:
// what --json prints for a file that cannot be read or parsed, shaped as the core's errors.
nlohmann::json error_document(const std::string& message);

// The text --json prints: indented by 2, a byte that is not UTF-8 (a file name or argument echoed
// in a message or in the scenario) written as U+FFFD, as the core's JSON API does, not refused.
std::string to_json_text(const nlohmann::json& doc);

}  // namespace gpumem::cli
