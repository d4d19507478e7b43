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
//   gpumem fit --model ID [flags...] [--json]         the smallest changes that make it fit
//   gpumem export FORMAT --model ID [flags...] [--out FILE] [--json]
//                                                      the config or command line that runs it
//   gpumem chart --model ID [flags...] [--x FIELD] [--out FILE.svg] [--json]
//   gpumem calibrate RECORDS.jsonl --out CAL.json [--name NAME] [--json]
//   (estimate, maxfit, plan, fit, export, chart: --deepspeed FILE, --calibration FILE)
//   gpumem validate FILE
//   gpumem presets [--json]
//   gpumem settings [--json | --markdown]
//   gpumem table MODEL [--dtype D] [--batch-size N] [--sequence-length N] [--lora-rank N] [--show-detailed]
//                [--config-dir DIR] [--json]             memory per dtype; table --list-types
//   gpumem --model ID [flags...]                       no command: estimate (gpu_memory_calculator.py's line)
//   gpumem version                                     (or --version)
//   gpumem help [COMMAND], gpumem [COMMAND] --help     the help CLI11 generates from args.cpp
//
// Exit codes: 0 ok, 1 invalid input, 2 usage.
//
// args.h turns the command line into what a command runs (options, the scenario or config.json
// the core gets); this file does the I/O: reads the files and stdin, runs the command, prints.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <gpumem/gpumem.h>

#include "cli/args.h"
#include "cli/explain_text.h"
#include "cli/hub.h"
#include "cli/settings_doc.h"
#include "cli/table.h"

namespace {

using nlohmann::json;
using gpumem::cli::Args;
using gpumem::cli::kInvalid;
using gpumem::cli::kOk;
using gpumem::cli::kUsage;
using gpumem::cli::Request;
using gpumem::cli::to_json_text;

// Reads from `in` until its end or past `limit` bytes; false when there was more than `limit`.
bool read_bounded(std::istream& in, std::string& out, std::size_t limit) {
    char buffer[1 << 16];
    while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
        out.append(buffer, static_cast<std::size_t>(in.gcount()));
        if (out.size() > limit) return false;
    }
    return true;
}

std::string too_large(const std::string& what) {
    return what + " is larger than " + std::to_string(gpumem::cli::kMaxInputBytes >> 20) +
           " MiB, the most gpumem reads from one file or stream";
}

// Reads a whole file ("-" is stdin), at most kMaxInputBytes; nullopt when it cannot be opened or
// is larger, with `why` saying which.
std::optional<std::string> read_file(const std::string& path, std::string& why) {
    std::string text;
    if (path == "-") {
        if (read_bounded(std::cin, text, gpumem::cli::kMaxInputBytes)) return text;
        why = too_large("standard input");
        return std::nullopt;
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) return std::nullopt;
    if (read_bounded(in, text, gpumem::cli::kMaxInputBytes)) return text;
    why = too_large(path);
    return std::nullopt;
}

// One line of `in` without its newline, at most kMaxInputBytes: 1 a line, 0 the end of the
// input, -1 a line longer than that (the rest of it is not read).
int read_record(std::istream& in, std::string& line) {
    line.clear();
    std::streambuf* buf = in.rdbuf();
    for (;;) {
        const int c = buf->sbumpc();
        if (c == std::char_traits<char>::eof()) return line.empty() ? 0 : 1;
        if (c == '\n') return 1;
        if (line.size() == gpumem::cli::kMaxInputBytes) return -1;
        line.push_back(static_cast<char>(c));
    }
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
    std::snprintf(buf, sizeof buf, "%10.2f",
                  static_cast<double>(bytes) / (gb ? gpumem::kGB : static_cast<double>(gpumem::kGiB)));
    return buf;
}

// The error band as one line: "42.1 GiB (80 % of 23 measured runs like this: 38.9-45.6 GiB)", the class it comes
// from when it fell back, and the share of those runs that would have run out of memory on this card.
std::string band_text(const json& r, bool gb) {
    const json& pg = r["per_gpu"];
    const json& b = pg["band"];
    const double unit = gb ? gpumem::kGB : static_cast<double>(gpumem::kGiB);
    const char* u = gb ? "GB" : "GiB";
    auto one = [unit](const json& v) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.1f", v.get<double>() / unit);
        return std::string(buf);
    };
    std::string text = one(pg["device_total_bytes"]) + " " + u + " (";
    const std::string level = b["level"];
    const std::size_t runs = b["runs"];
    const bool own = b["origin"] == "calibration";
    if (level == "none") return text + "no measured runs to draw a band from)";
    if (b.value("engine_claim", false))
        return text +
               "the engine's claim on the card: nvidia-smi shows it whatever the estimate's error, which "
               "moves the KV pool instead)";
    const std::string what = std::to_string(runs) + (own ? " of your calibration's runs" : " measured runs");
    text += (runs < 9 ? "all " : "80 % of ") + what;
    if (level == "class") text += " like this";
    else if (level == "mode_method") text += " of the same mode and method";
    else if (level == "mode") text += " of the same mode";
    text += ": " + one(b["low_bytes"]) + "-" + one(b["high_bytes"]) + " " + u + ")";
    if (level != "class")
        text += "; too few runs like this (" + std::to_string(b["class_runs"].get<std::size_t>()) + ")";
    char share[64];
    std::snprintf(share, sizeof share, "; %.0f %% of them would not have fit this card",
                  b["oom_share"].get<double>() * 100);
    return text + share;
}

const char* verdict_text(const json& r) {
    const std::string v = r.value("verdict", std::string());
    return v == "fits" ? "yes" : v == "borderline" ? "borderline (the point fits, the band's top does not)" : "NO";
}

// Bytes of a dtype's element, as the scenario names it (fp8 computes in bf16).
double dtype_bytes(const std::string& dtype) { return dtype == "fp32" || dtype == "float32" ? 4 : 2; }

// The embedding table's bytes on this GPU (its share of the weights) and the input batch's (token
// ids, int64, and their embedded hidden states: batch x tokens x hidden, in the activations).
std::pair<double, double> embeddings_and_input(const json& r) {
    const json& sc = r["scenario"];
    const json& params = r["parameters"];
    const json& as = r["assumptions"];
    const double embedding = params.value("embedding", 0.0), hidden = r["model"].value("hidden_size", 0.0);
    const double tp = sc["parallelism"].value("tensor_parallel_size", 1.0);
    double weight_bytes = 0, act_bytes = 2, batch = 0, tokens = 0;
    if (sc["mode"] == "training") {
        const json& t = sc["training"];
        act_bytes = dtype_bytes(t.value("dtype", "bf16"));
        weight_bytes = t.value("method", "full") == "full" && as.contains("bytes_per_trainable_param")
                           ? as["bytes_per_trainable_param"].value("weights", act_bytes)
                           : act_bytes;
        batch = t.value("batch_size", 1.0);
        tokens = t.value("seq_len", 0.0);
    } else {
        const json& i = sc["inference"];
        const bool all_in_format = as.value("params_in_weight_format", 0.0) >= params.value("total", 0.0);
        act_bytes = dtype_bytes(
            i.value("weight_format", "bf16") == "fp32" ? "fp32" : r["model"].value("checkpoint_dtype", "bf16"));
        weight_bytes = all_in_format ? as.value("weight_bytes_per_param", act_bytes)
                                     : dtype_bytes(r["model"].value("checkpoint_dtype", "bf16"));
        batch = i.value("batch_size", 1.0);
        tokens = i.value("context_len", 0.0);
    }
    return {embedding * weight_bytes / std::max(1.0, tp), batch * tokens * (8 + hidden * act_bytes)};
}

// "GPUs needed" on the three cards the other calculator names: the scenario on each, its share of
// one card and the GPUs it needs (the estimate's, or the ZeRO-3 count its warning gives).
void print_gpus_needed(const json& r) {
    std::cout << "\nGPUs needed (the same scenario on each card; share of one card -> GPUs):\n";
    for (const char* id : {"A100-80GB", "H100-80GB", "A100-40GB"}) {
        json scenario = r["scenario"];
        scenario["hardware"] = {{"gpu", id}, {"num_gpus", r["scenario"]["hardware"]["num_gpus"]}};
        json e = gpumem::estimate(scenario);
        if (!e.value("ok", false)) continue;
        const double share =
            e["per_gpu"]["device_total_bytes"].get<double>() / e["per_gpu"]["capacity_bytes"].get<double>();
        std::string needed;
        if (!e["gpus_needed"].is_null()) {
            needed = e["gpus_needed"].dump();
        } else {
            for (const json& w : e["warnings"]) {
                const std::string text = w.get<std::string>();
                const std::size_t at = text.find("it fits on ");
                if (at != std::string::npos)
                    needed = text.substr(at + 11, text.find(' ', at + 11) - at - 11) + " with ZeRO-3";
            }
            if (needed.empty()) needed = "does not fit (gpumem fit says what would)";
        }
        char line[160];
        std::snprintf(line, sizeof line, "  %-12s %6.2f -> %s\n", id, share, needed.c_str());
        std::cout << line;
    }
}

// What a serving engine's KV pool holds, as the verdict's subject: "3 of 32 sequences of 8,192 tokens fit
// (KV pool 3.98 GiB per GPU = 26,000 tokens)"; with room to spare, "32 of 32 ... fit, room for 53 (...)".
std::string serving_text(const json& sv, bool gb) {
    char pool[48];
    std::snprintf(pool, sizeof pool, "%.2f %s",
                  sv["kv_cache_bytes"].get<double>() / (gb ? gpumem::kGB : static_cast<double>(gpumem::kGiB)),
                  gb ? "GB" : "GiB");
    const std::uint64_t held = sv["max_concurrent_sequences"], asked = sv["requested_sequences"];
    return with_commas(std::min(held, asked)) + " of " + with_commas(asked) + " sequences of " +
           with_commas(sv["at_context_len"]) + " tokens fit" + (held > asked ? ", room for " + with_commas(held) : "") +
           " (KV pool " + pool + " per GPU = " + with_commas(sv["kv_cache_tokens"]) + " tokens)";
}

void print_table(const json& r, bool gb) {
    const char* unit = gb ? "GB" : "GiB";
    const json& sc = r["scenario"];
    const json& pg = r["per_gpu"];
    // The name and model_type may come from a Hub config or a file: shown on one line, controls escaped.
    std::cout << "gpumem " << r["version"].get<std::string>() << ": "
              << gpumem::display_text(r["model"]["name"].get<std::string>(), 200) << " ("
              << gpumem::display_text(r["model"]["model_type"].get<std::string>()) << ", "
              << with_commas(r["parameters"]["total"]) << (r["parameters"]["exact"].get<bool>() ? "" : " declared")
              << " parameters)\n";
    if (sc["mode"] == "training") {
        const json& t = sc["training"];
        std::cout << "training " << t["method"].get<std::string>() << " | " << t["dtype"].get<std::string>() << " "
                  << t["precision"].get<std::string>() << " | " << t["optimizer"].get<std::string>() << " | batch "
                  << t["batch_size"] << " x " << t["seq_len"] << " tokens | checkpointing "
                  << t["activation_checkpointing"].get<std::string>() << " | attention "
                  << t["attention"].get<std::string>() << "\n";
    } else {
        const json& i = sc["inference"];
        std::cout << "inference " << i["engine"].get<std::string>() << " | weights "
                  << i["weight_format"].get<std::string>() << " | batch " << i["batch_size"] << " x "
                  << i["context_len"] << " tokens | kv cache "
                  << (i["kv_cache"].get<bool>() ? i["kv_cache_dtype"].get<std::string>() : std::string("off")) << "\n";
    }
    const json& p = sc["parallelism"];
    std::cout << sc["hardware"]["num_gpus"] << " x " << sc["hardware"]["gpu"].get<std::string>();
    // The training engine is the training's: a serving scenario's engine is on the line above.
    if (sc["mode"] == "training") {
        std::cout << " | engine " << sc["engine"]["type"].get<std::string>();
        if (sc["engine"]["zero_stage"].get<int>() > 0) std::cout << " ZeRO-" << sc["engine"]["zero_stage"];
    }
    std::cout << " | dp " << p["data_parallel_size"] << " tp " << p["tensor_parallel_size"] << " pp "
              << p["pipeline_parallel_size"] << ": " << r["layout"]["text"].get<std::string>() << "\n\n";

    std::cout << "per GPU, at the peak (" << pg["peak_phase"].get<std::string>() << ")" << std::string(14, ' ') << unit
              << "\n";
    const std::pair<double, double> parts = embeddings_and_input(r);
    bool input_shown = false;
    for (const char* name : {"weights", "gradients", "optimizer_states", "activations", "logits", "kv_cache",
                             "temporaries", "overheads"}) {
        std::uint64_t b = pg["components"].value(name, std::uint64_t{0});
        if (b == 0) continue;
        std::string n = name;
        std::cout << "  " << n << std::string(n.size() < 28 ? 28 - n.size() : 1, ' ') << amount(b, gb) << "\n";
        // Two parts the other calculator lists on their own lines, shown inside the component that holds them.
        if (n == "weights" && parts.first > 0)
            std::cout << "    of which embeddings       " << amount(static_cast<std::uint64_t>(parts.first), gb)
                      << "\n";
        if (n == "activations" && parts.second > 0) {
            std::cout << "    of which input data       " << amount(static_cast<std::uint64_t>(parts.second), gb)
                      << "\n";
            input_shown = true;
        }
    }
    if (!input_shown && parts.second > 0)
        std::cout << "  (input data, freed by then) " << amount(static_cast<std::uint64_t>(parts.second), gb) << "\n";
    std::cout << "  " << std::string(38, '-') << "\n";
    std::cout << "  allocated (max_memory_allocated)" << amount(pg["peak_allocated_bytes"], gb) << "\n";
    std::cout << "  reserved (max_memory_reserved) " << amount(pg["peak_reserved_bytes"], gb) << "\n";
    std::cout << "  device total (nvidia-smi)      " << amount(pg["device_total_bytes"], gb) << "\n";
    std::cout << "  capacity                       " << amount(pg["capacity_bytes"], gb) << "\n";
    if (r["host_bytes"].get<std::uint64_t>() > 0)
        std::cout << "  host RAM (offload)             " << amount(r["host_bytes"], gb) << "\n";
    char util[16];
    std::snprintf(util, sizeof util, "%.1f%%", r["utilization"].get<double>() * 100);
    // An engine that fills its budget (vLLM, SGLang, TGI, TensorRT-LLM) claims the same share of the card
    // whatever the batch: its verdict is about the sequences its KV pool holds.
    const json& sv = r["serving"];
    const bool fills = sv.is_object() && sv.value("fills_budget", false);
    std::cout << "\nfits: " << verdict_text(r);
    if (fills)
        std::cout << ": " << serving_text(sv, gb) << "; " << sv["engine"].get<std::string>() << " claims " << util
                  << " of the card";
    else std::cout << " (" << util << " of the card)";
    if (!r["gpus_needed"].is_null()) std::cout << ", GPUs needed: " << r["gpus_needed"];
    std::cout << "\n";
    std::cout << "error band: " << band_text(r, gb) << "\n";
    print_gpus_needed(r);
    if (!r["warnings"].empty()) {
        std::cout << "\nwarnings:\n";
        for (const json& w : r["warnings"]) std::cout << "  - " << w.get<std::string>() << "\n";
    }
    if (!r["defaults_applied"].empty()) {
        std::cout << "\ndefaults applied:\n";
        for (const json& d : r["defaults_applied"]) std::cout << "  - " << d.get<std::string>() << "\n";
    }
}

// Unreadable input: the message on stderr, and under --json the same error document the API gives.
int input_error(const Args& o, const std::string& message) {
    if (o.json_out) std::cout << to_json_text(gpumem::cli::error_document(message)) << "\n";
    std::cerr << "gpumem: " << message << "\n";
    return kInvalid;
}

int emit(const json& result, const Args& o) {
    if (!result.value("ok", false)) {
        if (o.json_out) std::cout << to_json_text(result) << "\n";
        print_errors(result);
        return kInvalid;
    }
    if (o.json_out) {
        std::cout << to_json_text(result) << "\n";
    } else {
        print_table(result, o.gb);
        if (o.explain) std::cout << gpumem::cli::explain_text(result);
    }
    return kOk;
}

// A result as JSON (--json), or its errors: exit 0 or 1.
int emit_json(const json& result, const Args& o) {
    if (o.json_out) std::cout << to_json_text(result) << "\n";
    if (!result.value("ok", false)) print_errors(result);
    return result.value("ok", false) ? kOk : kInvalid;
}

int cmd_estimate(const Args& o, const Request& req) {
    if (o.jsonl) {
        int rc = kOk;
        std::string line;
        for (int got; (got = read_record(std::cin, line)) != 0;) {
            if (got < 0) {  // a record no scenario can be: say so on its line, and stop reading
                std::cout << gpumem::cli::error_document(too_large("a --jsonl record")).dump() << "\n";
                std::cerr << "gpumem: " << too_large("a --jsonl record") << "; stopped reading\n";
                return kInvalid;
            }
            if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
            std::string out = gpumem::estimate_json(line);
            if (out.rfind("{\"ok\":false", 0) == 0 || out.find("\"ok\":false") != std::string::npos) rc = kInvalid;
            std::cout << out << "\n";
        }
        return rc;
    }
    return emit(gpumem::estimate(req.document), o);
}

// Where --model's config.json came from, when it is not a bundled preset: a local file or folder,
// the HF cache or the Hub (hub.h). `ok` false with no error: it is a preset (or no --model).
gpumem::cli::HubModel model_source(const Args& a) {
    using gpumem::cli::HubModel;
    if (a.model.empty() || !a.hf_config_file.empty()) return {};
    HubModel local = gpumem::cli::load_local(a.model);
    if (local.ok || !local.error.empty()) return local;
    if (a.revision.empty() && gpumem::find_preset(a.model)) return {};
    const gpumem::cli::HubEnv env = gpumem::cli::hub_env([](const char* name) { return std::getenv(name); });
    return gpumem::cli::load_hub_model(a.model, a.revision, env, gpumem::cli::curl_http_get(),
                                       [](const std::string& id) { return gpumem::nearest_presets(id); });
}

// The Hub's safetensors count beside the exact one, as a warning past 1 %; the cache's notes.
void add_source_notes(const gpumem::cli::HubModel& m, json& result) {
    if (!result.is_object()) return;
    json& warnings = result["warnings"];
    if (!warnings.is_array()) warnings = json::array();
    for (const std::string& note : m.notes) warnings.push_back(note);
    const json* total =
        result.contains("parameters") && result["parameters"].is_object() && result["parameters"].contains("total")
            ? &result["parameters"]["total"]
            : nullptr;
    if (m.published_total == 0 || total == nullptr || !total->is_number_unsigned()) return;
    const double ours = total->get<double>(), theirs = static_cast<double>(m.published_total);
    const double off = (theirs - ours) / ours;  // the Hub's count relative to the exact one
    if (std::abs(off) <= 0.01) return;
    char text[400];
    std::snprintf(text, sizeof text,
                  "the Hub counts %s parameters in %s's safetensors, %+.1f%% from the exact count from config.json "
                  "(%s): extra stored tensors (FP8 scales, multi-token-prediction layers) or packed quantized "
                  "weights explain most such gaps",
                  with_commas(m.published_total).c_str(), m.id.c_str(), off * 100.0,
                  with_commas(total->get<std::uint64_t>()).c_str());
    warnings.push_back(text);
}

int cmd_params(const Args& o, const Request& req, const gpumem::cli::HubModel& source) {
    json config = req.document;
    if (source.ok) {
        config = source.config;
    } else if (o.hf_config_file.empty()) {
        auto preset = gpumem::find_preset(o.model);
        if (!preset) {
            std::cerr << "error: model.preset: is not a bundled preset, got \"" << o.model << "\"\n";
            return kInvalid;
        }
        config = (*preset)["config"];
    }
    json r = gpumem::params(config);
    add_source_notes(source, r);
    if (!r["ok"].get<bool>()) {
        if (o.json_out) std::cout << to_json_text(r) << "\n";
        print_errors(r);
        return kInvalid;
    }
    if (o.json_out) {
        std::cout << to_json_text(r) << "\n";
        return kOk;
    }
    std::cout << "total parameters: " << with_commas(r["total"]) << "\n";
    for (auto it = r["components"].begin(); it != r["components"].end(); ++it)
        std::cout << "  " << it.key() << std::string(14 - std::min<std::size_t>(13, it.key().size()), ' ')
                  << with_commas(*it) << "\n";
    // What the checkpoint's safetensors hold: its dtype, or its quantization's packed layout.
    const std::string method = r["model"]["quantization_method"].get<std::string>();
    const std::string format = r["model"]["quantization_format"].get<std::string>();
    std::cout << "checkpoint bytes: " << with_commas(r["checkpoint_bytes"]) << " ("
              << (method.empty() ? r["model"]["checkpoint_dtype"].get<std::string>()
                                 : method + (format.empty() ? "" : " " + format))
              << (r["checkpoint_bytes_exact"].get<bool>() ? "" : ", approximate") << ")\n";
    for (const json& w : r["warnings"]) std::cout << "warning: " << w.get<std::string>() << "\n";
    return kOk;
}

std::string gib(std::uint64_t bytes) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f GiB", static_cast<double>(bytes) / static_cast<double>(gpumem::kGiB));
    return buf;
}

int cmd_maxfit(const Args& o, const Request& req) {
    json r = gpumem::maxfit(req.document);
    if (!r.value("ok", false) || o.json_out) {
        if (o.json_out) std::cout << to_json_text(r) << "\n";
        if (!r.value("ok", false)) print_errors(r);
        return r.value("ok", false) ? kOk : kInvalid;
    }
    std::cout << "largest values that fit (" << r["mode"].get<std::string>() << ", capacity "
              << gib(r["capacity_bytes"]) << " per GPU), each with the other fields as given:\n";
    for (const json& x : r["solvers"]) {
        std::cout << "  " << x["field"].get<std::string>()
                  << std::string(24 - std::min<std::size_t>(23, x["field"].get<std::string>().size()), ' ')
                  << x["value"];
        std::string by = x["limited_by"];
        if (by == "memory")
            std::cout << "  (" << gib(x["device_total_bytes"]) << "; " << x["value"].get<std::uint64_t>() + 1
                      << " needs " << gib(x["next_device_total_bytes"]) << ")";
        else if (by == "does_not_fit") std::cout << "  (1 already needs " << gib(x["next_device_total_bytes"]) << ")";
        else std::cout << "  (the field's maximum)";
        if (x.contains("note")) std::cout << "  note: " << x["note"].get<std::string>();
        std::cout << "\n";
    }
    return kOk;
}

// The page's and the API's percent: a share of the card.
std::string percent(double part, double whole) {
    char text[16];
    std::snprintf(text, sizeof text, "%.0f %%", part / whole * 100);
    return text;
}

// One suggestion of fit(): its change, its peak, its speed against the scenario's and its cost.
void print_suggestion(int n, const json& x) {
    std::cout << "  " << n << ". ";
    if (x.value("least_change", false)) std::cout << "[least change] ";
    else if (x.value("fastest", false)) std::cout << "[fastest, " << x["tier"].get<std::string>() << "] ";
    std::cout << x["change"].get<std::string>() << "\n     ";
    // An engine that fills its budget claims the same share in every row: its rows differ by what the pool holds.
    if (x["serving"].is_object() && x["serving"].value("fills_budget", false))
        std::cout << serving_text(x["serving"], false) << ", claiming " << gib(x["device_total_bytes"]) << " per GPU";
    else
        std::cout << gib(x["device_total_bytes"]) << " per GPU ("
                  << percent(x["device_total_bytes"], x["estimate"]["per_gpu"]["capacity_bytes"]) << ")";
    const json& band = x["estimate"]["per_gpu"]["band"];
    if (band.is_object() && band.value("high_bytes", 0.0) > x["device_total_bytes"].get<double>())
        std::cout << ", up to " << gib(band["high_bytes"]) << " at the band's top";
    if (x["host_bytes"].get<double>() > 0) std::cout << ", " << gib(x["host_bytes"]) << " in host RAM";
    if (x.value("step_time_s", 0.0) > 0) {
        char speed[96];
        std::snprintf(speed, sizeof speed, "; step %.2f s, %.0f tokens/s (%.2fx the scenario's speed)",
                      x["step_time_s"].get<double>(), x["tokens_per_s"].get<double>(),
                      x.value("speed_vs_scenario", 0.0));
        std::cout << speed;
    }
    std::cout << "; " << x["cost"].get<std::string>() << "\n";
}

int cmd_fit(const Args& o, const Request& req) {
    json r = gpumem::fit(req.document);
    if (!r.value("ok", false) || o.json_out) return emit_json(r, o);
    const double total = r["device_total_bytes"], capacity = r["capacity_bytes"];
    const std::string model = r["estimate"]["model"]["name"];
    int n = 0;
    const bool borderline = r.value("include_borderline", false);
    if (r.value("verdict", "") == "fits" || (borderline && r["fits"] == true)) {
        std::cout << model << " fits: ";
        if (r["serving"].is_object() && r["serving"].value("fills_budget", false))
            std::cout << serving_text(r["serving"], false) << ", claiming ";
        std::cout << gib(static_cast<std::uint64_t>(total)) << " of " << gib(static_cast<std::uint64_t>(capacity))
                  << " per GPU (" << percent(total, capacity) << "), "
                  << gib(static_cast<std::uint64_t>(capacity - total)) << " free.";
        if (!r["suggestions"].empty()) {
            std::cout << " Faster runs that fit, by tier:\n";
            for (const json& x : r["suggestions"]) print_suggestion(++n, x);
        }
        std::cout << (r["suggestions"].empty() ? " " : "") << "What each change would save:\n";
        for (const json& x : r["savings"]) print_suggestion(++n, x);
    } else {
        std::cout << model << (r["fits"] == true ? " is borderline: " : " does not fit: ");
        if (r["serving"].is_object() && r["serving"].value("fills_budget", false))
            std::cout << serving_text(r["serving"], false) << ", claiming ";
        std::cout << gib(static_cast<std::uint64_t>(total)) << " of " << gib(static_cast<std::uint64_t>(capacity))
                  << " per GPU (" << percent(total, capacity) << ")"
                  << (r["fits"] == true ? ", but the top of its error band does not fit" : "")
                  << ". What would make it fit" << (borderline ? "" : " with its error band")
                  << ": the least change, then the fastest run of each tier:\n";
        if (r["suggestions"].empty()) std::cout << "  nothing gpumem knows of, short of a different model\n";
        for (const json& x : r["suggestions"]) print_suggestion(++n, x);
    }
    std::cout << "(searched " << r["search"]["candidates"] << " runs of " << r["search"]["variants"] << " variants in "
              << static_cast<int>(std::ceil(r["search"]["elapsed_ms"].get<double>())) << " ms)\n";
    return kOk;
}

// Writes `text` to --out, or standard output without it.
int write_output(const Args& o, const std::string& text) {
    if (o.out_file.empty()) {
        std::cout << text;
        return kOk;
    }
    std::ofstream out(o.out_file, std::ios::binary);
    out << text;
    if (!out.good()) {
        std::cerr << "gpumem: cannot write " << o.out_file << "\n";
        return kInvalid;
    }
    return kOk;
}

int cmd_export(const Args& o, const Request& req) {
    json r = gpumem::export_config(req.document);
    if (!r.value("ok", false) || o.json_out) return emit_json(r, o);
    for (const json& n : r["notes"]) std::cerr << "gpumem: note: " << n.get<std::string>() << "\n";
    // A run that does not fit: the file says so where its format has comments; stderr always does.
    if (r["fit_note"].is_string()) std::cerr << "gpumem: warning: " << r["fit_note"].get<std::string>() << "\n";
    // A setting the format cannot carry: stderr says it whether or not the file has comments to say it in.
    if (r["dropped"].is_array())
        for (const json& d : r["dropped"]) std::cerr << "gpumem: warning: " << d["text"].get<std::string>() << "\n";
    if (!o.out_file.empty())
        std::cerr << "gpumem: wrote " << o.out_file << " (" << r["format"].get<std::string>() << ")\n";
    return write_output(o, r["text"].get<std::string>());
}

int cmd_chart(const Args& o, const Request& req) {
    json r = gpumem::sweep(req.document);
    if (!r.value("ok", false) || o.json_out) return emit_json(r, o);
    return write_output(o, gpumem::sweep_svg(r));
}

// calibrate's skipped records, each with the line of the records file it came from, and the lines
// that were not JSON, in line order.
json skipped_records(const json& result, const Request& req) {
    json out = req.unreadable_lines;
    for (json s : result.value("skipped", json::array())) {
        const std::size_t i = s.value("index", std::size_t{0});
        if (i < req.record_lines.size()) s["line"] = req.record_lines[i];
        out.push_back(std::move(s));
    }
    std::stable_sort(out.begin(), out.end(),
                     [](const json& a, const json& b) { return a.value("line", 0) < b.value("line", 0); });
    return out;
}

int cmd_calibrate(const Args& o, const Request& req) {
    json r = gpumem::calibrate(req.document);
    if (!r.value("ok", false) && !req.unreadable_lines.empty()) {  // the lines that were not JSON first
        json errors = req.unreadable_lines;
        for (const json& e : r.value("errors", json::array())) errors.push_back(e);
        r["errors"] = errors;
    }
    if (r.value("ok", false)) {
        const std::size_t used = req.document["records"].size() - r.value("skipped", json::array()).size();
        r["skipped"] = skipped_records(r, req);
        const std::string file = o.positional.empty() ? "-" : o.positional[0];
        for (const json& s : r["skipped"])
            std::cerr << "gpumem: skipped " << file << ":" << s.value("line", 0)
                      << (s.contains("id") ? " (id \"" + gpumem::display_text(s["id"].get<std::string>(), 80) + "\")"
                                           : "")
                      << ": " << gpumem::display_text(s.value("message", ""), 300) << "\n";
        if (!r["skipped"].empty())
            std::cerr << "gpumem: " << r["skipped"].size() << " record(s) skipped, " << used
                      << " used; --strict fails the file instead\n";
    }
    if (!r.value("ok", false) || o.json_out) {
        if (r.value("ok", false) && !o.out_file.empty() &&
            write_output(o, to_json_text(r["calibration"]) + "\n") != kOk)
            return kInvalid;
        Args to_stdout = o;
        to_stdout.out_file.clear();
        return emit_json(r, to_stdout);
    }
    auto cell = [](const json& x) {
        char text[40];
        std::snprintf(text, sizeof text, "%5.1f %% / %5.1f %% (%d)", x["median_pct"].get<double>(),
                      x["p90_pct"].get<double>(), x["within_10"].get<int>());
        return std::string(text);
    };
    const json& rep = r["report"];
    if (rep.contains("with_calibration")) {  // --calibration: scored, not fitted
        std::cout << "records scored with calibration \""
                  << gpumem::display_text(r["calibration"]["name"].get<std::string>(), 80) << "\" ("
                  << r["calibration"]["hash"].get<std::string>()
                  << ")\nabsolute error, median / p90 (records within 10 %):\n"
                  << "  class        n   defaults             with the calibration\n";
        for (auto& [cls, before] : rep["before"].items()) {
            char head[32];
            std::snprintf(head, sizeof head, "  %-10s %3d   ", cls.c_str(), before["n"].get<int>());
            std::cout << head << cell(before) << "   " << cell(rep["with_calibration"][cls]) << "\n";
        }
        return kOk;
    }
    if (o.out_file.empty()) {
        std::cerr << "gpumem: calibrate needs --out CAL.json (or --json to print it)\n";
        return kUsage;
    }
    if (write_output(o, to_json_text(r["calibration"]) + "\n") != kOk) return kInvalid;
    const json& cal = r["calibration"];
    std::cout << "calibration \"" << gpumem::display_text(cal["name"].get<std::string>(), 80) << "\" from "
              << cal["records"].size() << " records, written to " << o.out_file << " (hash "
              << gpumem::calibration_hash(cal) << ")\n";
    for (auto& [k, v] : cal["overheads"].items()) std::cout << "  overheads." << k << " = " << v.dump() << "\n";
    std::cout << "\nabsolute error, median / p90 (records within 10 %):\n";
    std::cout << "  class        n   defaults             fitted (in sample)   leave-one-out\n";
    for (auto& [cls, before] : rep["before"].items()) {
        char head[32];
        std::snprintf(head, sizeof head, "  %-10s %3d   ", cls.c_str(), before["n"].get<int>());
        std::cout << head << cell(before) << "   " << cell(rep["after"][cls]) << "   "
                  << cell(rep["leave_one_out"][cls]) << "\n";
    }
    return kOk;
}

double quantile(std::vector<double> xs, double q) {
    std::sort(xs.begin(), xs.end());
    return xs[std::min(xs.size() - 1, static_cast<std::size_t>((static_cast<double>(xs.size()) - 1) * q + 0.5))];
}

int cmd_plan(const Args& o, const Request& req) {
    const json& scenario = req.document;
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
        if (o.json_out) std::cout << to_json_text(r) << "\n";
        if (!r.value("ok", false)) print_errors(r);
        return r.value("ok", false) ? kOk : kInvalid;
    }
    const json& c = r["cluster"];
    bool training = r["mode"] == "training";
    std::cout << "plan: " << c["num_gpus"] << " x " << c["gpu"].get<std::string>() << " (" << c["gpus_per_node"]
              << " per node)";
    if (training) std::cout << ", global batch " << c["global_batch_size"] << " sequences";
    std::cout << "\nsearched " << r["search"]["candidates"] << " layouts, " << r["search"]["fitting"] << " fit ("
              << r["search"]["elapsed_ms"].get<double>() << " ms)\n\n";
    std::cout << (training ? "rank  dp  tp  pp  cp  ep  engine            ckpt       mb   ga   step s   tok/s       "
                             "MFU   GiB/GPU\n"
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
            std::snprintf(buf, sizeof buf,
                          "%4d %3d %3d %3d %3d %3d  %-17s %-9s %4d %4d  %7.3f  %9.0f  %5.1f%%  %7.2f\n",
                          p["rank"].get<int>(), l["data_parallel_size"].get<int>(),
                          l["tensor_parallel_size"].get<int>(), l["pipeline_parallel_size"].get<int>(),
                          l["context_parallel_size"].get<int>(), l["expert_parallel_size"].get<int>(), engine.c_str(),
                          l["activation_checkpointing"].get<std::string>().c_str(), l["micro_batch_size"].get<int>(),
                          l["gradient_accumulation_steps"].get<int>(), p["step_time_s"].get<double>(),
                          p["tokens_per_s"].get<double>(), p["mfu"].get<double>() * 100,
                          p["device_total_bytes"].get<double>() / static_cast<double>(gpumem::kGiB));
        } else {
            std::snprintf(buf, sizeof buf, "%4d %3d %3d %3d  %5d  %8d  %7.2f  %9.0f  %5.1f%%  %7.2f\n",
                          p["rank"].get<int>(), l["data_parallel_size"].get<int>(),
                          l["tensor_parallel_size"].get<int>(), l["pipeline_parallel_size"].get<int>(),
                          l["batch_size"].get<int>(), l["max_concurrent_sequences"].get<int>(),
                          p["step_time_s"].get<double>() * 1000, p["tokens_per_s"].get<double>(),
                          p["mfu"].get<double>() * 100,
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

// settings: the core's settings tables, as text, JSON (--json) or docs/scenario.md (--markdown).
int cmd_settings(const Args& o) {
    json settings = gpumem::settings();
    if (o.json_out) std::cout << to_json_text(settings) << "\n";
    else if (o.markdown) std::cout << gpumem::cli::settings_markdown(settings);
    else std::cout << gpumem::cli::settings_text(settings);
    return kOk;
}

int cmd_validate(const Args& o) {
    std::string why;
    std::optional<std::string> text = read_file(o.positional[0], why);
    if (!text) return input_error(o, why.empty() ? "cannot read " + o.positional[0] : why);
    json r = json::parse(gpumem::estimate_json(*text));
    if (!r["ok"].get<bool>()) {
        for (const json& e : r["errors"]) std::cout << "error: " << e["message"].get<std::string>() << "\n";
        return kInvalid;
    }
    std::cout << "valid\n";
    for (const json& w : r["warnings"]) std::cout << "warning: " << w.get<std::string>() << "\n";
    return kOk;
}

int cmd_presets(const Args& o) {
    json models = gpumem::list_presets(), gpus = gpumem::list_gpus(), formats = gpumem::list_formats();
    if (o.json_out) {
        std::cout << to_json_text({{"models", models}, {"gpus", gpus}, {"formats", formats}}) << "\n";
        return kOk;
    }
    std::cout << "models:\n";
    for (const json& m : models) {
        std::cout << "  " << m["id"].get<std::string>();
        if (!m["aliases"].empty()) {
            std::cout << "  (";
            for (std::size_t i = 0; i < m["aliases"].size(); ++i)
                std::cout << (i ? ", " : "") << m["aliases"][i].get<std::string>();
            std::cout << ")";
        }
        std::cout << "\n";
    }
    std::cout << "gpus:\n";
    for (const json& g : gpus)
        std::cout << "  " << gpumem::display_text(g["id"].get<std::string>(), 80) << "  "
                  << gpumem::display_text(g["name"].get<std::string>(), 120) << "\n";
    std::cout << "weight formats (bytes per weight):\n";
    for (const json& f : formats) {
        char bytes[32];
        std::snprintf(bytes, sizeof bytes, "%.4f", f["bytes_per_param"].get<double>());
        std::cout << "  " << f["id"].get<std::string>() << "  " << bytes << "  " << f.value("about", "") << "\n";
    }
    return kOk;
}

// A number as typed on the command line: a JSON number stays one, else the text (the core names it).
json number_or_text(const std::string& text) {
    json v = json::parse(text, nullptr, false);
    return !v.is_discarded() && v.is_number() ? v : json(text);
}

// table MODEL: memory per dtype; --list-types: the dtypes and GPUs; --config-dir adds the user's.
int cmd_table(const Args& a) {
    json dtypes = json::array(), gpus = json::array();
    if (!a.config_dir.empty()) {
        std::vector<std::string> notes;
        std::string error;
        if (!gpumem::cli::read_config_dir(a.config_dir, read_file, dtypes, gpus, notes, error))
            return input_error(a, error);
        for (const std::string& n : notes) std::cerr << "gpumem: note: " << n << "\n";
    }
    if (a.list_types) {
        json types = gpumem::cli::types_list(dtypes, gpus);
        std::cout << (a.json_out ? to_json_text(types) + "\n" : gpumem::cli::types_text(types));
        return kOk;
    }
    const gpumem::cli::HubModel source = model_source(a);
    if (!source.ok && !source.error.empty()) return input_error(a, "model: " + source.error);
    gpumem::cli::TableOptions o;
    if (source.ok) {
        std::cerr << "gpumem: " << source.id << (source.revision.empty() ? "" : " (" + source.revision + ")")
                  << ": config.json from " << source.from << "\n";
        for (const std::string& note : source.notes) std::cerr << "gpumem: note: " << note << "\n";
        o.model = {{"hf_config", source.config}, {"name", source.id}};
    } else {
        o.model = {{"preset", a.model}};
    }
    o.dtype = a.table_dtype;
    std::transform(o.dtype.begin(), o.dtype.end(), o.dtype.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (!a.batch_size.empty()) o.batch_size = number_or_text(a.batch_size);
    if (!a.sequence_length.empty()) o.sequence_length = number_or_text(a.sequence_length);
    if (!a.lora_rank.empty()) o.lora_rank = number_or_text(a.lora_rank);
    o.detailed = a.show_detailed;
    o.user_dtypes = dtypes;
    o.user_gpus = gpus;
    json t = gpumem::cli::dtype_table(o);
    if (!t.value("ok", false) || a.json_out) return emit_json(t, a);
    std::cout << gpumem::cli::table_text(t, a.gb);
    return kOk;
}

// A usage error, or flags that cannot be applied to the scenario file: each line of the message on
// stderr, then for a usage error where the help is.
int fail(int code, const std::string& message, gpumem::cli::Command command) {
    std::istringstream lines(message);
    for (std::string line; std::getline(lines, line);) std::cerr << "gpumem: " << line << "\n";
    if (code == kUsage) {
        const std::string name = gpumem::cli::command_name(command);
        std::cerr << "(see gpumem " << (name.empty() ? "" : name + " ") << "--help)\n";
    }
    return code;
}

// check: a file a config names, looked up as the tool would from the project's root: the current
// folder first, then the naming file's folder and each folder above it.
std::optional<std::string> find_named(const std::string& name, const std::string& from) {
    std::string why;
    std::error_code ec;
    if (name.empty() || name.size() > 4096) return std::nullopt;
    const std::filesystem::path p(name);
    if (p.is_absolute()) return std::filesystem::is_regular_file(p, ec) ? read_file(name, why) : std::nullopt;
    if (std::filesystem::is_regular_file(p, ec)) return read_file(name, why);
    std::filesystem::path dir = std::filesystem::absolute(std::filesystem::path(from), ec).parent_path();
    for (int up = 0; up < 256 && !dir.empty(); ++up) {
        const std::filesystem::path candidate = dir / p;
        if (std::filesystem::is_regular_file(candidate, ec)) return read_file(candidate.string(), why);
        if (dir == dir.parent_path()) break;
        dir = dir.parent_path();
    }
    return std::nullopt;
}

// check: the one-line verdict, the headroom, and what was read.
std::string size_text(std::uint64_t bytes, bool gb) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.2f %s",
                  static_cast<double>(bytes) / (gb ? gpumem::kGB : static_cast<double>(gpumem::kGiB)),
                  gb ? "GB" : "GiB");
    return buf;
}

void print_check(const json& r, bool gb) {
    const json& g = r["per_gpu"];
    const std::uint64_t peak = g.value("device_total_bytes", std::uint64_t{0});
    const std::uint64_t capacity = g.value("capacity_bytes", std::uint64_t{0});
    const json& s = r["scenario"];
    const json& c = r["check"];
    const bool fits = r.value("fits", false);
    std::string model = r.contains("model") && r["model"].is_object() ? r["model"].value("name", std::string()) : "";
    const json& sv = r.contains("serving") ? r["serving"] : json();
    std::cout << (fits ? "fits" : "does not fit") << ": ";
    // An engine that fills its budget claims the same share whatever the load: its verdict is the sequences.
    if (sv.is_object() && sv.value("fills_budget", false))
        std::cout << serving_text(sv, gb) << ", claiming " << size_text(peak, gb) << " of " << size_text(capacity, gb)
                  << " per GPU";
    else
        std::cout << size_text(peak, gb) << " of " << size_text(capacity, gb) << " per GPU ("
                  << (peak <= capacity ? "headroom " + size_text(capacity - peak, gb)
                                       : "over by " + size_text(peak - capacity, gb))
                  << ")";
    std::cout << ", " << gpumem::display_text(model) << " on " << s["hardware"].value("num_gpus", 1) << " x "
              << s["hardware"].value("gpu", std::string("GPU")) << "\n";
    std::cout << "error band: " << band_text(r, gb) << (r.value("verdict", "") == "borderline" ? ": borderline" : "")
              << "\n";
    std::string files;
    for (const json& f : c["files"]) files += (files.empty() ? "" : ", ") + gpumem::display_text(f.get<std::string>());
    std::cout << "read as " << c["format"].get<std::string>() << ": " << files << "\n";
    std::string keys;
    std::size_t shown = 0;
    for (auto it = c["read"].begin(); it != c["read"].end() && shown < 16; ++it, ++shown)
        keys +=
            (keys.empty() ? "" : ", ") + gpumem::display_text(it.key()) + " " + gpumem::display_text(it.value().dump());
    if (c["read"].size() > shown) keys += ", ... (" + std::to_string(c["read"].size()) + " keys; --json lists them)";
    if (!keys.empty()) std::cout << "  " << keys << "\n";
    for (const json& a : c["assumptions"])
        std::cout << "  assumed: " << gpumem::display_text(a.get<std::string>()) << "\n";
    for (const json& w : c["warnings"])
        std::cout << "  warning: " << gpumem::display_text(w.get<std::string>()) << "\n";
}

int cmd_check(const Args& a) {
    using gpumem::cli::kDoesNotFit;
    if (a.positional.empty() && a.check_command.empty())
        return fail(kUsage, "check needs files (check FILE...) or a command (check -- COMMAND)", a.command);
    json files = json::array();
    for (const std::string& path : a.positional) {
        std::string why;
        std::optional<std::string> text = read_file(path, why);
        if (!text) return input_error(a, path + ": " + (why.empty() ? "cannot read it" : why));
        files.push_back({{"name", path == "-" ? "stdin" : path}, {"text", *text}});
    }
    json request = {{"files", files}};
    if (!a.check_command.empty()) request["command"] = a.check_command;
    json read = gpumem::read_configs(request, find_named);
    if (!read.value("ok", false)) return emit_json(read, a);
    json scenario = read["scenario"];
    // The model: --model, else the one the files name; resolved as --model is.
    Args m = a;
    m.model = a.model.empty() ? read.value("model", std::string()) : a.model;
    if (m.model.empty())
        return input_error(a,
                           "model: the files name none (a DeepSpeed or accelerate config does not): give --model ID");
    const gpumem::cli::HubModel source = model_source(m);
    if (!source.ok && !source.error.empty()) return input_error(a, "model: " + source.error);
    if (source.ok) {
        std::cerr << "gpumem: " << source.id << ": config.json from " << source.from << "\n";
        scenario["model"] = {{"hf_config", source.config}, {"name", source.id}};
    } else {
        scenario["model"] = {{"preset", m.model}};
    }
    // The flags over the files.
    if (!a.check_gpu.empty()) scenario["hardware"]["gpu"] = a.check_gpu;
    if (!a.check_num_gpus.empty()) scenario["hardware"]["num_gpus"] = number_or_text(a.check_num_gpus);
    if (!a.gpus_per_node.empty()) scenario["hardware"]["gpus_per_node"] = number_or_text(a.gpus_per_node);
    if (!a.check_seq_len.empty()) {
        const bool serving = scenario.value("mode", json()) == json("inference");
        scenario[serving ? "inference" : "training"][serving ? "context_len" : "seq_len"] =
            number_or_text(a.check_seq_len);
    }
    json result = gpumem::estimate(scenario);
    if (!result.value("ok", false)) return emit_json(result, a);
    add_source_notes(source, result);
    result["check"] = read["check"];
    if (a.json_out) std::cout << to_json_text(result) << "\n";
    else print_check(result, a.gb);
    return result.value("fits", false) ? kOk : kDoesNotFit;
}

int run(const Args& a) {
    using gpumem::cli::Command;
    if (!a.error.empty())
        return a.exit_code == kInvalid ? input_error(a, a.error) : fail(a.exit_code, a.error, a.command);
    switch (a.command) {
        case Command::Help:
            std::cout << a.help;
            return a.exit_code;
        case Command::Version:
            std::cout << gpumem::version() << "\n";
            return kOk;
        case Command::Presets:
            return cmd_presets(a);
        case Command::Settings:
            return cmd_settings(a);
        case Command::Validate:
            return cmd_validate(a);
        case Command::Table:
            return cmd_table(a);
        case Command::Check:
            return cmd_check(a);
        default:
            break;
    }
    Request req = gpumem::cli::build_request(a, read_file);
    if (req.exit_code != kOk)
        return req.error_document ? input_error(a, req.error) : fail(req.exit_code, req.error, a.command);
    for (const std::string& note : req.notes) std::cerr << "gpumem: note: " << note << "\n";
    const gpumem::cli::HubModel source = model_source(a);
    if (!source.ok && !source.error.empty()) return input_error(a, "model: " + source.error);
    if (source.ok) {
        std::cerr << "gpumem: " << source.id << (source.revision.empty() ? "" : " (" + source.revision + ")")
                  << ": config.json from " << source.from << "\n";
        // estimate and params put the notes in their warnings; the other commands print them here.
        if (a.command != Command::Estimate && a.command != Command::Params)
            for (const std::string& note : source.notes) std::cerr << "gpumem: note: " << note << "\n";
        // export and chart wrap the scenario in their request.
        const bool wrapped = a.command == Command::Export || a.command == Command::Chart;
        json& scenario = wrapped ? req.document["scenario"] : req.document;
        if (scenario.is_object() && scenario.contains("model"))
            scenario["model"] = {{"hf_config", source.config}, {"name", source.id}};
    }
    switch (a.command) {
        case Command::Estimate: {
            if (a.jsonl || (!source.ok && req.calibration.is_null())) return cmd_estimate(a, req);
            json result = gpumem::estimate(req.document);
            if (result.value("ok", false)) add_source_notes(source, result);
            if (result.value("ok", false) && !req.calibration.is_null()) result["calibration"] = req.calibration;
            return emit(result, a);
        }
        case Command::Fit:
            return cmd_fit(a, req);
        case Command::Export:
            return cmd_export(a, req);
        case Command::Chart:
            return cmd_chart(a, req);
        case Command::Calibrate:
            return cmd_calibrate(a, req);
        case Command::Params:
            return cmd_params(a, req, source);
        case Command::Quick:
            return emit(gpumem::estimate(req.document), a);
        case Command::Maxfit:
            return cmd_maxfit(a, req);
        case Command::Plan:
            return cmd_plan(a, req);
        default:
            return kOk;
    }
}

}  // namespace

int main(int argc, char** argv) {
    try {
        return run(gpumem::cli::parse_args(std::vector<std::string>(argv + 1, argv + argc)));
    } catch (const std::exception& e) {  // e.g. a result the table cannot show
        std::cerr << "gpumem: " << e.what() << "\n";
        return kInvalid;
    }
}
