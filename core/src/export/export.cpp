// The export request (export.h): the scenario estimated, then written by its tool's table
// (formats/<tool>.cpp), so what is written is what was estimated.
#include "export/export.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "formats/format.h"
#include "gpumem/gpumem.h"

namespace gpumem::detail {

namespace {

// The inference.engine a serving format runs.
const char* engine_of(ExportFormat f) {
    switch (f) {
        case ExportFormat::LlamaCpp:
            return name(InferenceEngine::LlamaCpp);
        case ExportFormat::Sglang:
            return name(InferenceEngine::Sglang);
        case ExportFormat::Tgi:
            return name(InferenceEngine::Tgi);
        case ExportFormat::TensorrtLlm:
            return name(InferenceEngine::TensorrtLlm);
        default:
            return name(InferenceEngine::Vllm);
    }
}

// Sets section.key to `value` when the scenario leaves it out; an issue when it gives another value.
void require_field(json& scenario, const char* section, const char* key, const std::string& value, const char* format,
                   std::vector<Issue>& issues) {
    json& s = scenario[section];
    if (s.is_null()) s = json::object();
    if (!s.is_object()) return;  // the scenario reader names it
    auto it = s.find(key);
    if (it == s.end() || it->is_null()) {
        s[key] = value;
        return;
    }
    if (it->is_string() && normalize_setting(it->get<std::string>()) == normalize_setting(value)) return;
    issues.push_back({std::string(section) + "." + key,
                      std::string("is not what ") + format + " runs (" + value + "); leave it out or set " + value,
                      show(*it)});
}

// What the file's reader should know before running it: that the estimate says it does not fit (or fits only
// without its error band), in the estimate's own figures; empty when it fits. An engine that fills its budget is
// judged by the sequences its KV pool holds.
std::string fit_note(const json& e) {
    const std::string verdict = e.value("verdict", std::string());
    if (verdict == "fits") return "";
    auto gib = [](double bytes) {
        char text[32];
        std::snprintf(text, sizeof text, "%.2f GiB", bytes / static_cast<double>(kGiB));
        return std::string(text);
    };
    const json& pg = e["per_gpu"];
    const double total = pg["device_total_bytes"], cap = pg["capacity_bytes"];
    const json& sv = e["serving"];
    std::string what;
    if (sv.is_object() && sv.value("fills_budget", false))
        what = std::to_string(sv["max_concurrent_sequences"].get<std::uint64_t>()) + " of " +
               std::to_string(sv["requested_sequences"].get<std::uint64_t>()) + " sequences of " +
               std::to_string(sv["at_context_len"].get<std::uint64_t>()) + " tokens fit (KV pool " +
               gib(sv["kv_cache_bytes"]) + " per GPU)";
    else what = gib(total) + " of " + gib(cap) + " per GPU (" + std::to_string(std::lround(total / cap * 100)) + " %)";
    if (verdict == "borderline")
        return "borderline, the estimate fits (" + what + ") but the top of its error band (" +
               gib(pg["band"].value("high_bytes", total)) + ") does not: `gpumem fit` finds a margin";
    return "this run does not fit: " + what + "; `gpumem fit` finds what would";
}

// The scenario sections a written file decides; the model, the GPU and its count are the user's to give
// (as `gpumem check` asks for them), extras are not run.
constexpr const char* kRunSections[] = {"training", "parallelism", "engine", "inference"};

// Each leaf of `a` and `b` under `path` that differs, as {"field", "estimated", "in_file"}.
void leaf_differences(const json& a, const json& b, const std::string& path, json& out) {
    if (a.is_object() && b.is_object()) {
        for (auto it = a.begin(); it != a.end(); ++it) {
            auto other = b.find(it.key());
            leaf_differences(it.value(), other == b.end() ? json() : *other, path + "." + it.key(), out);
        }
        for (auto it = b.begin(); it != b.end(); ++it)
            if (!a.contains(it.key())) leaf_differences(json(), it.value(), path + "." + it.key(), out);
        return;
    }
    if (a != b) out.push_back({{"field", path}, {"estimated", a}, {"in_file", b}});
}

// The written file read back as `gpumem check` reads it, given the model, GPU and GPU count the file does
// not name: each field it runs otherwise than the estimated scenario is a setting the format drops.
// A DeepSpeed JSON and an accelerate config are half a launch (the script gives the training settings,
// which the notes list), and a file that names ds_config.json is read with the one export writes.
// Empty when the file runs the estimated job; null when the text cannot be read back (a defect of the writer).
json dropped_settings(ExportFormat format, const Written& w, const Run& run, std::uint64_t per_node,
                      const std::string& script, bool fills_budget) {
    const json& resolved = run.s;
    const std::string fmt = name(format);
    FindFile find = [&](const std::string& file, const std::string&) -> std::optional<std::string> {
        if (file.size() < 14 || file.compare(file.size() - 14, 14, "ds_config.json") != 0) return std::nullopt;
        Written ds = write_run(ConfigFormat::Deepspeed, run, per_node, script);
        if (!ds.issues.empty()) return std::nullopt;
        return ds.text;
    };
    json request = std::string(w.kind) == "command"
                       ? json{{"command", w.text}}
                       : json{{"files", json::array({{{"name", w.file_name}, {"text", w.text}}})}};
    const json reading = read_configs(request, find);
    if (!reading.value("ok", false)) return json();
    json back = reading["scenario"];
    back["model"] = resolved["model"];
    back["mode"] = resolved["mode"];
    const std::uint64_t files_gpus = back["hardware"].is_object() ? back["hardware"].value("num_gpus", 0ull) : 0ull;
    back["hardware"] = resolved["hardware"];
    if (files_gpus > 0) back["hardware"]["num_gpus"] = files_gpus;
    if (format == ExportFormat::Deepspeed || format == ExportFormat::Accelerate) {
        json script = resolved["training"];
        script.merge_patch(back.value("training", json::object()));
        back["training"] = script;
    }
    const json estimated_back = estimate(back);
    if (!estimated_back.value("ok", false)) return json();
    json out = json::array();
    for (const char* section : kRunSections)
        leaf_differences(resolved.value(section, json()), estimated_back["scenario"].value(section, json()), section,
                         out);
    // An engine that fills its budget takes requests as they come: the sequences asked for are the load the
    // verdict is judged by, not a setting of the server.
    if (fills_budget)
        out.erase(
            std::remove_if(out.begin(), out.end(), [](const json& d) { return d["field"] == "inference.batch_size"; }),
            out.end());
    for (json& d : out)
        d["text"] = d["field"].get<std::string>() + " = " + show(d["estimated"]) +
                    " is not in the file: as written it runs " +
                    (d["in_file"].is_null() ? std::string("without it") : show(d["in_file"]));
    return out;
}

}  // namespace

json export_config(const json& request) {
    std::vector<Issue> issues;
    if (!request.is_object())
        return error_document({{"", "the request must be an object: {\"format\", \"scenario\"}", show(request)}});
    FieldReader reader(request, "", issues);
    std::optional<ExportFormat> format;
    if (!request.contains("format")) issues.push_back({"format", "is required: " + allowed_text<ExportFormat>(), ""});
    else format = reader.setting<ExportFormat>("format");
    std::uint64_t per_node = reader.uint("gpus_per_node", 1, 1024).value_or(0);
    std::string script = reader.string("script").value_or("train.py");
    if (!request.contains("scenario") || !request["scenario"].is_object())
        issues.push_back(
            {"scenario", "is required: the scenario to export (an object)", show(request.value("scenario", json()))});
    if (!issues.empty()) return error_document(issues);

    // What the format runs, where the scenario leaves it open.
    json scenario = request["scenario"];
    const char* fmt = name(*format);
    if (is_serving(*format)) {
        if (!scenario.contains("mode")) scenario["mode"] = "inference";
        require_field(scenario, "inference", "engine", engine_of(*format), fmt, issues);
        // llama-server's -fa defaults to auto, flash attention where the backend has it (common/arg.cpp): what
        // the written command runs where the scenario leaves the attention open.
        if (*format == ExportFormat::LlamaCpp &&
            !(scenario["inference"].is_object() && scenario["inference"].contains("attention")))
            scenario["inference"]["attention"] = "flash";
    } else {
        if (!scenario.contains("mode")) scenario["mode"] = "training";
        if (*format == ExportFormat::Deepspeed &&
            !(scenario.contains("engine") && scenario["engine"].is_object() && scenario["engine"].contains("type")))
            scenario["engine"]["type"] = "deepspeed";
        if (*format == ExportFormat::Torchtune) {
            require_field(scenario, "training", "framework", "torchtune", fmt, issues);
            if (!(scenario["training"].is_object() && scenario["training"].contains("precision")))
                scenario["training"]["precision"] = "pure";  // torchtune holds the weights in its dtype
        }
        if (*format == ExportFormat::Litgpt) {
            require_field(scenario, "training", "framework", "litgpt", fmt, issues);
            require_field(scenario, "training", "loss", "chunked", fmt, issues);  // chunked_cross_entropy, always
        }
        const bool deepspeed = scenario.contains("engine") && scenario["engine"].is_object() &&
                               scenario["engine"].value("type", json()) == json("deepspeed");
        // Under DeepSpeed, bf16/fp16 keep an fp32 master copy of what trains, adapters included
        // (runtime/bf16_optimizer.py): what the written config runs, where the scenario leaves it open.
        if (deepspeed && !(scenario["training"].is_object() && scenario["training"].contains("precision")) &&
            (*format == ExportFormat::Deepspeed || *format == ExportFormat::Accelerate ||
             *format == ExportFormat::Torchrun || *format == ExportFormat::Axolotl))
            scenario["training"]["precision"] = "mixed_master_fp32";
        // axolotl loads the weights in its bf16/fp16 dtype; under DeepSpeed, the scenario's own default
        // (mixed_master_fp32: DeepSpeed's fp32 master copy) is what runs.
        if (*format == ExportFormat::Axolotl && !deepspeed &&
            !(scenario["training"].is_object() && scenario["training"].contains("precision")))
            scenario["training"]["precision"] = "pure";
    }
    if (!issues.empty()) return error_document(issues);
    const std::string mode = scenario["mode"].is_string() ? scenario["mode"].get<std::string>() : "";
    if (mode != (is_serving(*format) ? "inference" : "training"))
        return error_document({{"mode",
                                std::string(fmt) + " is a " + (is_serving(*format) ? "serving" : "training") +
                                    " format: the mode must be " + (is_serving(*format) ? "inference" : "training"),
                                show(scenario["mode"])}});

    json estimated = estimate(scenario);
    if (!estimated.value("ok", false)) return estimated;
    // litgpt decides two things by the device count: FSDP and checkpointing every block on several
    // GPUs, neither on one (finetune/*.py setup()). Where the scenario leaves them open, that is what runs.
    if (*format == ExportFormat::Litgpt) {
        const Run first(estimated["scenario"]);
        const bool several = first.world() > 1;
        bool changed = false;
        if (!(scenario["training"].is_object() && scenario["training"].contains("activation_checkpointing"))) {
            scenario["training"]["activation_checkpointing"] = several ? "full" : "none";
            changed = true;
        }
        if (several && !(scenario["engine"].is_object() && scenario["engine"].contains("type"))) {
            scenario["engine"]["type"] = "fsdp";
            changed = true;
        }
        if (changed) {
            estimated = estimate(scenario);
            if (!estimated.value("ok", false)) return estimated;
        }
    }
    const Run run(estimated["scenario"]);
    if (per_node == 0) per_node = std::min<std::uint64_t>(run.world(), 8);
    Written w = write_run(*format, run, per_node, script);
    if (!w.issues.empty()) return error_document(w.issues);
    json notes = w.notes;
    // A run that does not fit says so in the file, where the format has comments (YAML and shell lines: '#');
    // a JSON file cannot, so the front ends say it beside it (fit_note).
    const std::string warning = fit_note(estimated);
    const bool commented = std::string(w.kind) != "json";
    const json& serving = estimated["serving"];
    const json dropped = dropped_settings(*format, w, run, per_node, script,
                                          serving.is_object() && serving.value("fills_budget", false));
    // What the file does not carry is said in the file too, under the fit line.
    if (commented && dropped.is_array()) {
        std::string head;
        for (const json& d : dropped) head += "# gpumem: " + d["text"].get<std::string>() + "\n";
        w.text = head + w.text;
    }
    if (!dropped.is_array()) notes.push_back("gpumem could not read this file back to check that it runs the estimate");
    if (!warning.empty() && commented) w.text = "# gpumem: " + warning + "\n" + w.text;
    return {{"ok", true},
            {"format", fmt},
            {"kind", w.kind},
            {"file_name", w.file_name},
            {"text", w.text},
            {"notes", notes},
            {"verdict", estimated["verdict"]},
            {"fit_note", warning.empty() ? json() : json(warning)},
            {"fit_note_in_file", !warning.empty() && commented},
            {"dropped", dropped},
            {"scenario", estimated["scenario"]},
            {"estimate", estimated}};
}

//-----------------------------------------------------------------------------
// Reading a DeepSpeed config
//-----------------------------------------------------------------------------

json import_deepspeed(const json& ds) {
    if (!ds.is_object()) return error_document({{"", "a DeepSpeed config is a JSON object", show(ds)}});
    Loaded loaded = load_structured("ds_config.json", ds.dump());
    if (!loaded.issues.empty()) return error_document(loaded.issues);
    Doc doc = loaded.parts.empty() ? Doc::object() : loaded.parts[0].doc;
    Reading reading = read_doc(ConfigFormat::Deepspeed, doc);
    if (!reading.issues.empty()) return error_document(reading.issues);
    json notes = reading.assumptions;
    for (const std::string& w : reading.warnings) notes.push_back(w);
    return {{"ok", true}, {"scenario", reading.scenario}, {"notes", notes}};
}

}  // namespace gpumem::detail

namespace gpumem {

nlohmann::json export_config(const nlohmann::json& request) { return detail::export_config(request); }

nlohmann::json import_deepspeed(const nlohmann::json& ds_config) { return detail::import_deepspeed(ds_config); }

}  // namespace gpumem
