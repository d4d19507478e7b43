// The tools' own config files and command lines, in both directions. One file per tool
// (formats/<tool>.cpp) holds that tool's reader and writer side by side, both driven by one table
// of Key rows (tool key <-> scenario field): the writer writes only rows of the table and every row
// reads back what it wrote, so nothing can be written that is not read, nor read that is not
// written. This header is what those files share: the document a file or command line becomes
// (Doc), the reading (Reader, Reading), the writing (Run, Writer, Written) and the table (Key, Tool).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "scenario/fields.h"
#include "gpumem/settings.h"

namespace gpumem::detail {

using ojson = nlohmann::ordered_json;

//-----------------------------------------------------------------------------
// [SECTION] The formats
//-----------------------------------------------------------------------------

// ConfigFormat and its table kFormats are settings (gpumem/settings.h).

bool is_serving(ConfigFormat f);

//-----------------------------------------------------------------------------
// [SECTION] Documents: what a file or a command line becomes
//-----------------------------------------------------------------------------

// A tool's settings as one flat object in the file's order. A JSON or YAML file's nested maps
// become dotted keys ("zero_optimization.stage": 2); lists and scalars are values. A command line
// becomes its flags with their values as written ("max-model-len": "4096", a flag with no value:
// true), plus "_program" (e.g. "vllm serve"), "_args" (the positional words) and "_env" (the
// VAR=value words before it). YAML scalars are typed as YAML 1.1 reads them (PyYAML, which the
// Python tools use): true/yes/on are booleans, 4096 an integer, "4096" (quoted) a string.
using Doc = ojson;

// One tool's document in a file or command line. A command may hold two: `accelerate launch`'s own
// flags (read as accelerate's config keys) and the script's HF Trainer arguments.
struct Part {
    ConfigFormat format;
    Doc doc;
};

// A file or command line of at most kMaxJsonBytes, read into documents, or the issues that stopped
// it (the field is the file's name). Depth and node counts are bounded (a YAML alias cannot expand
// a small file into a huge one).
struct Loaded {
    std::vector<Part> parts;
    std::vector<Issue> issues;
    std::vector<std::string> notes;  // what was made of the text (the launcher, the GPUs it sees)
};
// A JSON or YAML file: one part, its format recognised from the keys only that tool's files have;
// no part (and no issue) when no tool's keys are found.
Loaded load_structured(const std::string& name, const std::string& text);
// Shell words of a text (backslash continuations joined, comments dropped), with "\n" words where
// a command ends (newline, ';', '&', '|'); linear in the text. nullopt when a quote is left open.
std::optional<std::vector<std::string>> shell_words(const std::string& text);
// The first tool command in a shell text (VAR=value prefixes, `env`, launchers such as torchrun,
// accelerate launch and deepspeed, `docker run ... IMAGE` unwrapped) as parts; none when no tool's
// command is found. Flags become keys without their dashes; "_program" names the program, "_args"
// holds the positional words, "_env" the VAR=value words, "_config" a config file it names.
Loaded load_command(const std::string& name, const std::string& text);
// "_program", "_args", ...: the parts of a command that are not the tool's settings.
bool is_command_part(const std::string& key);
// A flat document laid over another, as a tool lays command-line overrides over its config file:
// keys replaced, "~key" deleting key and everything under it (torchtune).
Doc overlay(const Doc& base, const Doc& over);

//-----------------------------------------------------------------------------
// [SECTION] Reading
//-----------------------------------------------------------------------------

// What a file or command said, as scenario fields, and what was made of each key.
struct Reading {
    json scenario = json::object();        // the scenario fields the file sets
    ojson read = ojson::object();          // tool key -> the value as written, for every key that set a field
    std::vector<std::string> ignored;      // keys that do not change memory (learning rate, logging, ...)
    std::vector<std::string> warnings;     // keys that would change memory but gpumem does not model
    std::vector<std::string> assumptions;  // "auto" and defaults, resolved as the tool resolves them
    std::vector<std::string> references;   // other files the file names (axolotl's deepspeed: ...)
    std::string model;                     // the model the file names ("" when none)
    std::vector<Issue> issues;
};

// The context a Key's read function works in: the current key and its value, and the reading.
class Reader {
public:
    Reader(Reading& out, const Doc& doc) : out_(out), doc_(doc) {}

    const std::string& key() const { return key_; }
    const ojson& value() const { return *value_; }
    const Doc& doc() const { return doc_; }
    Reading& out() { return out_; }
    void at(const std::string& key, const ojson& value) {
        key_ = key;
        value_ = &value;
    }

    // Sets a dotted scenario field ("training.batch_size").
    void set(const std::string& field, const json& value);
    bool has(const std::string& field) const;
    json get(const std::string& field) const;  // null when unset

    // The current value as the type a key holds; an issue naming the key when it is not.
    // Command-line strings are converted ("4096" -> 4096, "True" -> true).
    std::optional<std::uint64_t> uint(std::uint64_t min = 0, std::uint64_t max = (1ULL << 53));
    std::optional<double> number(double min, double max);
    std::optional<bool> boolean();
    std::optional<std::string> string();
    // "auto" (or the tool's own word for it) is noted as an assumption and nullopt returned.
    bool is_auto(const char* resolved_as);

    void issue(const std::string& problem);
    void warn(const std::string& what) { out_.warnings.push_back(key_ + ": " + what); }
    void assume(const std::string& what) { out_.assumptions.push_back(what); }

private:
    Reading& out_;
    const Doc& doc_;
    std::string key_;
    const ojson* value_ = nullptr;
};

//-----------------------------------------------------------------------------
// [SECTION] Writing
//-----------------------------------------------------------------------------

// The fields of a resolved scenario (estimate()'s "scenario") the writers read.
struct Run {
    const json& s;
    std::string model;  // Hub id (an alias resolved to its id)
    std::string method, dtype, precision, optimizer, checkpointing, attention, loss, compile, framework;
    std::string engine, fsdp_sharding, offload_optimizer, offload_param;
    std::uint64_t batch = 1, accumulation = 1, seq_len = 0, zero_stage = 0;
    std::uint64_t dp = 1, tp = 1, pp = 1, cp = 1, ep = 1, num_gpus = 1;
    bool optimizer_in_backward = false, activation_offloading = false, double_quant = false, sp = false;

    explicit Run(const json& scenario);
    bool adapters() const { return method == "lora" || method == "qlora"; }
    bool training() const { return s.contains("training"); }
    std::uint64_t world() const { return dp * tp * pp * cp; }
    const json& lora() const { return s["training"]["lora"]; }
    std::vector<std::string> lora_targets() const;
    bool targets(const char* module) const;
    const json& inference() const { return s["inference"]; }
};

// What a writer produced, or the issues that stopped it.
struct Written {
    const char* kind = "command";  // "json", "yaml" or "command"
    std::string file_name;
    std::string text;
    std::vector<std::string> notes;
    std::vector<Issue> issues;

    void refuse(const std::string& field, const std::string& problem, const std::string& value) {
        issues.push_back({field, problem, value});
    }
};

// The context a Key's write function works in.
struct Writer {
    const Run& r;
    std::uint64_t per_node = 8;  // GPUs per node of the launch
    std::string script = "train.py";
    Written& w;
};

//-----------------------------------------------------------------------------
// [SECTION] The table
//-----------------------------------------------------------------------------

// One tool key and the scenario field(s) it maps to. `read` sets the fields from the key's value;
// `write` gives the value to write (nullopt: the key is left out, the tool's default being what the
// scenario says). For a command, `key` is the long flag without its dashes ("max-model-len"), and
// `aliases` its other spellings, comma-separated ("tp" for -tp); '-' and '_' are the same.
struct Key {
    const char* key;
    const char* field;  // the scenario field it sets, for docs and `check`'s "read" ("" when derived)
    void (*read)(Reader&);
    std::optional<ojson> (*write)(Writer&);
    const char* aliases = "";
    bool flag_only = false;  // a command flag that takes no value (--enable-expert-parallel)
};

// A tool: its keys, the keys known not to change memory, and its checks either side.
struct Tool {
    ConfigFormat format;
    const char* kind;       // "json", "yaml" or "command"
    const char* file_name;  // of the written file
    const Key* keys;
    std::size_t key_count;
    // Keys (or prefixes ending in '.' or '*') that do not change memory: listed as ignored.
    const char* const* ignored;
    std::size_t ignored_count;
    // Before writing: the scenario the tool cannot run is refused here, with the reason.
    void (*refuse)(Writer&);
    // After the keys are written: the head of a command, notes. May be null.
    void (*finish_write)(Writer&, ojson& doc);
    // After the keys are read: fields derived from several keys, defaults the tool applies. May be null.
    void (*finish_read)(Reader&);
};

const Tool& tool(ConfigFormat f);

// The tools (formats/<tool>.cpp).
extern const Tool kDeepspeedTool;
extern const Tool kAccelerateTool;
extern const Tool kTorchrunTool;
extern const Tool kTorchtuneTool;
extern const Tool kAxolotlTool;
extern const Tool kLitgptTool;
extern const Tool kVllmTool;
extern const Tool kSglangTool;
extern const Tool kTgiTool;
extern const Tool kTensorrtLlmTool;
extern const Tool kLlamaCppTool;

// Reads a document of the tool: each key through its row, ignored keys listed, the rest warned.
Reading read_doc(ConfigFormat f, const Doc& doc);
// Writes the run as the tool's file or command (refused with reasons where the tool cannot run it).
Written write_run(ConfigFormat f, const Run& r, std::uint64_t per_node, const std::string& script);

// Rows several tools share, under each tool's own name for them: LoRA's rank, alpha and dropout
// (written only for adapters), the micro-batch and the accumulation steps.
void read_lora_rank(Reader& r);
std::optional<ojson> write_lora_rank(Writer& w);
void read_lora_alpha(Reader& r);
std::optional<ojson> write_lora_alpha(Writer& w);
void read_lora_dropout(Reader& r);
std::optional<ojson> write_lora_dropout(Writer& w);
void read_micro_batch(Reader& r);
std::optional<ojson> write_micro_batch(Writer& w);
void read_accumulation(Reader& r);
std::optional<ojson> write_accumulation(Writer& w);
// A DeepSpeed JSON the config names (axolotl's deepspeed:, HF Trainer's --deepspeed): engine deepspeed,
// the file read beneath this one; written as ds_config.json (what `gpumem export deepspeed` writes).
void read_deepspeed_file(Reader& r);
std::optional<ojson> write_deepspeed_file(Writer& w);
// An HF Trainer --optim name (axolotl's optimizer:, torchrun's --optim) as the scenario's optimizer.
void read_hf_optimizer(Reader& r);
std::optional<ojson> write_hf_optimizer(Writer& w);
// The key's value, a whole number in [min, max], into `field`.
void read_uint_into(Reader& r, const char* field, std::uint64_t min, std::uint64_t max);

// Shared by the tools' files.
std::string shell_word(const std::string& s);
std::string number_text(double v);
std::string yaml_text(const ojson& nested);  // block YAML of a nested object
ojson nest(const ojson& flat);               // "a.b": 1 -> {"a": {"b": 1}}
// A command: `head` then one flag per continued line: "--key value", "--key" for a null value, the
// bare value for "@name" keys (positional words); with `overrides`, "key=value" words (torchtune).
std::string command_text(const std::vector<std::string>& head, const ojson& flags, bool overrides = false);
std::string torch_dtype_name(const std::string& dtype);                // "bf16" -> "bfloat16"
std::string hf_optim(const std::string& optimizer);                    // HF Trainer's --optim name, "" when none
std::optional<std::string> optimizer_of_hf(const std::string& optim);  // the reverse
std::uint64_t nodes_for(std::uint64_t world, std::uint64_t per_node);
void refuse_megatron(Writer& w, const char* format);

}  // namespace gpumem::detail
