// The configs people launch with, read as one scenario (gpumem.h, read_configs): each file or
// command recognised by its content, the files it names found and read beneath it, the tools'
// readings merged.
#include <string>
#include <vector>

#include "formats/format.h"
#include "gpumem/gpumem.h"

namespace gpumem::detail {

namespace {

constexpr int kMaxReferenceDepth = 4;  // a config naming a config naming ... (each file read once)

std::string base_name(const std::string& path) {
    const std::size_t slash = path.find_last_of('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

// A file's text as a tool's documents: a JSON or YAML map of a tool's keys, else a shell command.
Loaded load_any(const std::string& name, const std::string& text) {
    Loaded structured = load_structured(name, text);
    if (!structured.parts.empty()) return structured;
    Loaded command = load_command(name, text);
    if (!command.parts.empty() || !command.issues.empty()) return command;
    // Neither: what the structured reading found wrong (a YAML or JSON error, a bound), unless it was
    // only that the text is not a map (a shell text is one YAML string); else what is read.
    for (const Issue& i : structured.issues)
        if (i.problem.rfind("must be a map", 0) != 0) return structured;
    Loaded none;
    none.issues.push_back({name,
                           "is not a config or command gpumem reads: a DeepSpeed JSON; an accelerate, axolotl, "
                           "torchtune or litgpt YAML; or a torchrun, accelerate launch, deepspeed, python, tune run, "
                           "litgpt, axolotl, vllm serve, sglang.launch_server, llama-server, "
                           "text-generation-launcher or trtllm-serve command",
                           ""});
    return none;
}

json without_internal(const json& scenario) {
    json out = scenario;
    if (!out.is_object()) return json::object();
    for (auto it = out.begin(); it != out.end();) {
        if (!it.key().empty() && it.key()[0] == '_') it = out.erase(it);
        else ++it;
    }
    return out;
}

struct Checker {
    Checker(const FindFile& f, const std::vector<std::pair<std::string, std::string>>& g) : find(f), given(g) {}
    const FindFile& find;
    const std::vector<std::pair<std::string, std::string>>& given;  // the request's files
    std::vector<std::string> seen;                                  // files read, each once
    json scenario = json::object();
    std::string model;
    json formats = json::array(), files = json::array();
    ojson read = ojson::object();
    json ignored = json::array(), warnings = json::array(), assumptions = json::array();
    std::vector<Issue> issues;

    std::optional<std::string> lookup(const std::string& name, const std::string& from) {
        if (find) return find(name, from);
        for (const auto& [n, t] : given)
            if (n == name) return t;
        for (const auto& [n, t] : given)
            if (base_name(n) == base_name(name)) return t;
        return std::nullopt;
    }

    void record(const std::string& file, const Reading& r, bool main_file) {
        const std::string prefix = main_file ? "" : file + ": ";
        for (auto it = r.read.begin(); it != r.read.end(); ++it) read[prefix + it.key()] = it.value();
        for (const std::string& k : r.ignored) ignored.push_back(prefix + k);
        for (const std::string& w : r.warnings) warnings.push_back(prefix + w);
        for (const std::string& a : r.assumptions) assumptions.push_back(prefix + a);
        for (const Issue& i : r.issues) issues.push_back({prefix + i.field, i.problem, i.value});
        if (model.empty() && !r.model.empty()) model = r.model;
    }

    // One file (or command) and what it names: the named files' fields first, the file's over them.
    void read_text(const std::string& name, const std::string& text, int depth, bool main_file) {
        if (depth > kMaxReferenceDepth) {
            issues.push_back({name, "is named by a chain of configs deeper than 4", ""});
            return;
        }
        for (const std::string& s : seen)
            if (s == name) return;
        seen.push_back(name);
        files.push_back(name);
        Loaded loaded = load_any(name, text);
        for (const Issue& i : loaded.issues) issues.push_back(i);
        for (const std::string& n : loaded.notes) assumptions.push_back(n);
        for (Part& part : loaded.parts) {
            Doc doc = part.doc;
            // A config the command names (tune run --config, litgpt --config, accelerate --config_file,
            // axolotl train CFG): its keys beneath the command's.
            if (doc.contains("_config") && doc["_config"].is_string()) {
                const std::string config = doc["_config"];
                std::string found = config;
                std::optional<std::string> base = lookup(config, name);
                // torchtune's built-in configs by name: recipes/configs/NAME.yaml in a torchtune checkout.
                const bool builtin = part.format == ConfigFormat::Torchtune &&
                                     config.find(".yaml") == std::string::npos &&
                                     config.find(".yml") == std::string::npos;
                if (!base && builtin) {
                    found = "recipes/configs/" + config + ".yaml";
                    base = lookup(found, name);
                }
                if (base) {
                    files.push_back(found);
                    seen.push_back(found);  // a file the request also gives is read here, once
                    Loaded b = load_structured(found, *base);
                    for (const Issue& i : b.issues) issues.push_back(i);
                    if (!b.parts.empty()) {
                        // torchtune's `optimizer=torch.optim.AdamW`: a component's path, set as its _component_
                        // (the config's other keys of that component stay).
                        if (part.format == ConfigFormat::Torchtune) {
                            Doc renamed = Doc::object();
                            for (auto it = doc.begin(); it != doc.end(); ++it) {
                                const bool component = b.parts[0].doc.contains(it.key() + "._component_");
                                renamed[component ? it.key() + "._component_" : it.key()] = it.value();
                            }
                            doc = std::move(renamed);
                        }
                        doc = overlay(b.parts[0].doc, doc);
                    } else if (b.issues.empty())
                        issues.push_back({found, std::string("is not a ") + name_of(part.format) + " config", ""});
                } else if (builtin && config.find('/') != std::string::npos) {
                    assumptions.push_back("--config " + config +
                                          " is torchtune's built-in config, not here: keys the command does not set "
                                          "take gpumem's defaults (tune cp " +
                                          config + " . and check that file to read them all)");
                } else {
                    issues.push_back({config,
                                      "is named by " + name +
                                          " but was not found (looked in the current folder, then " + name +
                                          "'s folder and the folders above it)",
                                      ""});
                }
            }
            formats.push_back(name_of(part.format));
            Reading r = read_doc(part.format, doc);
            // Files the reading names (a deepspeed: JSON, --deepspeed ds.json): beneath this one.
            for (const std::string& ref : r.references) {
                std::optional<std::string> t = lookup(ref, name);
                if (!t) {
                    issues.push_back({ref,
                                      "is named by " + name +
                                          " but was not found (looked in the current folder, then " + name +
                                          "'s folder and the folders above it)",
                                      ""});
                    continue;
                }
                read_text(ref, *t, depth + 1, false);
            }
            // Launchers that start one process per GPU they see (axolotl train, accelerate launch with no
            // process count, torchrun --nproc-per-node gpu): CUDA_VISIBLE_DEVICES says how many.
            const bool per_visible_gpu = part.format == ConfigFormat::Axolotl ||
                                         part.format == ConfigFormat::Accelerate ||
                                         part.format == ConfigFormat::Torchrun;
            if (per_visible_gpu && doc.contains("_env") && doc["_env"].contains("CUDA_VISIBLE_DEVICES") &&
                !r.scenario.contains("hardware") && !scenario.contains("hardware")) {
                const ojson& v = doc["_env"]["CUDA_VISIBLE_DEVICES"];
                const std::string ids = v.is_string() ? v.get<std::string>() : v.dump();
                std::size_t count = ids.empty() ? 0 : 1;
                for (char ch : ids) count += ch == ',';
                if (count > 0) {
                    r.scenario["hardware"]["num_gpus"] = count;
                    assumptions.push_back("CUDA_VISIBLE_DEVICES=" + display_text(ids, 60) + ": " +
                                          std::to_string(count) + " GPU(s), one process each");
                }
            }
            scenario.merge_patch(without_internal(r.scenario));
            record(name, r, main_file);
        }
    }

    static std::string name_of(ConfigFormat f) { return name(f); }
};

}  // namespace

json read_configs(const json& request, const FindFile& find_file) {
    if (!request.is_object())
        return error_document(
            {{"", "the request must be an object: {\"files\": [{\"name\", \"text\"}], \"command\"}", show(request)}});
    std::vector<std::pair<std::string, std::string>> given;
    std::vector<Issue> issues;
    if (request.contains("files")) {
        const json& fs = request["files"];
        if (!fs.is_array()) issues.push_back({"files", "must be a list of {\"name\", \"text\"}", show(fs)});
        else
            for (std::size_t i = 0; i < fs.size(); ++i) {
                const json& f = fs[i];
                if (!f.is_object() || !f.contains("text") || !f["text"].is_string()) {
                    issues.push_back({"files[" + std::to_string(i) + "]", "must be {\"name\", \"text\"}", show(f)});
                    continue;
                }
                std::string n = f.value("name", json("file " + std::to_string(i + 1))).is_string()
                                    ? f.value("name", "file " + std::to_string(i + 1))
                                    : "file " + std::to_string(i + 1);
                given.emplace_back(n, f["text"].get<std::string>());
            }
    }
    std::string command;
    if (request.contains("command")) {
        const json& c = request["command"];
        if (c.is_string()) command = c.get<std::string>();
        else if (c.is_array()) {
            for (const json& w : c) {
                if (!w.is_string()) {
                    issues.push_back({"command", "must be a string or a list of words", show(c)});
                    break;
                }
                command += (command.empty() ? "" : " ") + shell_word(w.get<std::string>());
            }
        } else {
            issues.push_back({"command", "must be a string or a list of words", show(c)});
        }
    }
    if (given.empty() && command.empty() && issues.empty())
        issues.push_back({"files", "nothing to read: give files or a command", ""});
    if (!issues.empty()) return error_document(issues);

    Checker c(find_file, given);
    // The files the request gives are read in turn; a file another one names is read there, once.
    if (!command.empty()) c.read_text("command", command, 0, true);
    for (const auto& [n, t] : given) {
        bool already = false;
        for (const std::string& s : c.seen) already = already || s == n || base_name(s) == base_name(n);
        if (!already) c.read_text(n, t, 0, c.files.empty());
    }
    if (!c.issues.empty()) return error_document(c.issues);
    json check = {{"format", c.formats.empty() ? json() : c.formats[0]},
                  {"formats", c.formats},
                  {"files", c.files},
                  {"read", json(c.read)},
                  {"ignored", c.ignored},
                  {"warnings", c.warnings},
                  {"assumptions", c.assumptions}};
    return {{"ok", true}, {"scenario", c.scenario}, {"model", c.model}, {"check", check}};
}

}  // namespace gpumem::detail

namespace gpumem {

nlohmann::json read_configs(const nlohmann::json& request, const FindFile& find_file) {
    return detail::read_configs(request, find_file);
}

}  // namespace gpumem
