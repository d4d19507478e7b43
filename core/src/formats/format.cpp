// What the tools' files share (format.h): loading JSON, YAML and command lines into documents,
// the Reader and Writer the key tables work through, and the table-driven read and write.
#include "formats/format.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "gpumem/gpumem.h"

namespace gpumem::detail {

bool is_serving(ConfigFormat f) {
    return f == ConfigFormat::Vllm || f == ConfigFormat::LlamaCpp || f == ConfigFormat::Sglang ||
           f == ConfigFormat::Tgi || f == ConfigFormat::TensorrtLlm;
}

namespace {

//-----------------------------------------------------------------------------
// YAML and JSON into flat documents
//-----------------------------------------------------------------------------

constexpr int kMaxDepth = 64;  // as parse_json's
// A config has hundreds of values and a command tens of words; these bounds keep every step below
// (a Doc's keys are looked up in order) far under a second, and a YAML alias from multiplying a
// small file into a huge one.
constexpr std::size_t kMaxNodes = 8000;
constexpr std::size_t kMaxWords = 4096;

// A plain YAML scalar typed as YAML 1.1 (PyYAML's resolver) types it: null, bool, int, float, or
// the string itself.
ojson yaml_scalar_value(const YAML::Node& node) {
    const std::string& s = node.Scalar();
    if (node.Tag() == "!") return s;  // quoted: always a string
    static const char* const kNull[] = {"", "~", "null", "Null", "NULL"};
    static const char* const kTrue[] = {"true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON"};
    static const char* const kFalse[] = {"false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF"};
    for (const char* n : kNull)
        if (s == n) return nullptr;
    for (const char* t : kTrue)
        if (s == t) return true;
    for (const char* f : kFalse)
        if (s == f) return false;
    // Integers: [-+]?(0|[1-9][0-9_]*) and 0x hex, as PyYAML's int resolver (octal and base 60 aside).
    std::string digits;
    for (char c : s)
        if (c != '_') digits += c;
    const bool sign = !digits.empty() && (digits[0] == '-' || digits[0] == '+');
    const std::string body = digits.substr(sign ? 1 : 0);
    if (!body.empty() && body.size() <= 18 && std::all_of(body.begin(), body.end(), ::isdigit) &&
        (body == "0" || body[0] != '0')) {
        const long long v = std::strtoll(digits.c_str(), nullptr, 10);
        if (v >= 0) return static_cast<std::uint64_t>(v);
        return v;
    }
    // Floats: PyYAML wants a '.' ("1.0e-5"; "1e-5" stays a string in PyYAML).
    if (body.find('.') != std::string::npos && body.size() <= 64) {
        char* end = nullptr;
        const double v = std::strtod(digits.c_str(), &end);
        if (end && *end == '\0' && std::isfinite(v)) return v;
    }
    return s;
}

struct Flattener {
    std::size_t nodes = 0;
    std::vector<Issue>& issues;
    const std::string& name;

    bool count() {
        if (++nodes <= kMaxNodes) return true;
        if (issues.empty())
            issues.push_back(
                {name, "has over " + std::to_string(kMaxNodes) + " values (aliases expanded); not a config", ""});
        return false;
    }
    ojson value(const YAML::Node& n, int depth) {
        if (!count()) return nullptr;
        if (depth > kMaxDepth) {
            if (issues.empty()) issues.push_back({name, "nests deeper than 64 levels", ""});
            return nullptr;
        }
        switch (n.Type()) {
            case YAML::NodeType::Scalar:
                return yaml_scalar_value(n);
            case YAML::NodeType::Sequence: {
                ojson a = ojson::array();
                for (const YAML::Node& x : n) a.push_back(value(x, depth + 1));
                return a;
            }
            case YAML::NodeType::Map: {
                ojson o = ojson::object();
                for (const auto& kv : n) {
                    if (!kv.first.IsScalar()) {
                        if (issues.empty()) issues.push_back({name, "has a key that is not a name", ""});
                        continue;
                    }
                    o[kv.first.Scalar()] = value(kv.second, depth + 1);
                }
                return o;
            }
            default:
                return nullptr;
        }
    }
};

void flatten_into(const ojson& v, const std::string& prefix, Doc& out) {
    if (v.is_object() && !v.empty()) {
        for (auto it = v.begin(); it != v.end(); ++it)
            flatten_into(it.value(), prefix.empty() ? it.key() : prefix + "." + it.key(), out);
        return;
    }
    out[prefix] = v;
}

// Text that is UTF-8 throughout (YAML and the shell words must be; the JSON parser checks its own).
bool is_utf8(const std::string& text) {
    try {
        (void)json(text).dump();
        return true;
    } catch (const json::exception&) {
        return false;
    }
}

bool has_key(const Doc& d, const char* k) { return d.contains(k); }
bool has_prefix(const Doc& d, const std::string& p) {
    for (auto it = d.begin(); it != d.end(); ++it)
        if (it.key().rfind(p, 0) == 0) return true;
    return false;
}

// The format of a flat document, from the keys only that tool's files have.
std::optional<ConfigFormat> recognise(const Doc& d, bool from_json) {
    if (from_json) {
        for (const char* k : {"train_micro_batch_size_per_gpu", "train_batch_size", "zero_optimization",
                              "gradient_accumulation_steps", "zero_allow_untested_optimizer"})
            if (has_key(d, k) || has_prefix(d, std::string(k) + ".")) return ConfigFormat::Deepspeed;
        if (has_prefix(d, "bf16.") || has_prefix(d, "fp16.")) return ConfigFormat::Deepspeed;
        return std::nullopt;
    }
    if (has_key(d, "distributed_type") || has_key(d, "compute_environment")) return ConfigFormat::Accelerate;
    for (auto it = d.begin(); it != d.end(); ++it) {
        const std::string& k = it.key();
        if ((k == "model._component_" || k == "tokenizer._component_") && it->is_string() &&
            it->get<std::string>().rfind("torchtune.", 0) == 0)
            return ConfigFormat::Torchtune;
    }
    if (has_key(d, "base_model") || has_key(d, "micro_batch_size") || has_key(d, "adapter") ||
        has_key(d, "sequence_len"))
        return ConfigFormat::Axolotl;
    if (has_key(d, "checkpoint_dir") || has_prefix(d, "train.") || has_key(d, "precision")) return ConfigFormat::Litgpt;
    if (has_prefix(d, "zero_optimization.") || has_key(d, "train_micro_batch_size_per_gpu"))
        return ConfigFormat::Deepspeed;
    return std::nullopt;
}

}  // namespace

Loaded load_structured(const std::string& name, const std::string& text) {
    Loaded out;
    if (text.size() > kMaxJsonBytes) {
        out.issues.push_back(
            {name, "is over 16 MiB; a config file is a few kB", std::to_string(text.size()) + " bytes"});
        return out;
    }
    if (!is_utf8(text)) {
        out.issues.push_back({name, "is not UTF-8 text", ""});
        return out;
    }
    std::size_t first = text.find_first_not_of(" \t\r\n");
    ojson nested;
    const bool as_json = first != std::string::npos && (text[first] == '{' || text[first] == '[');
    if (as_json) {
        std::string error;
        std::optional<json> parsed = parse_json(text, error);
        if (!parsed) {
            out.issues.push_back({name, "is not valid JSON: " + error, ""});
            return out;
        }
        // Values in all, counted before anything is looked up by key.
        std::size_t values = 0;
        std::vector<const json*> stack = {&*parsed};
        while (!stack.empty() && values <= kMaxNodes) {
            const json* v = stack.back();
            stack.pop_back();
            ++values;
            if (v->is_structured())
                for (const json& child : *v) stack.push_back(&child);
        }
        if (values > kMaxNodes) {
            out.issues.push_back(
                {name, "has over " + std::to_string(kMaxNodes) + " values; a config has hundreds", ""});
            return out;
        }
        nested = *parsed;
    } else {
        try {
            YAML::Node root = YAML::Load(text);
            Flattener f{0, out.issues, name};
            nested = f.value(root, 0);
        } catch (const YAML::Exception& e) {
            out.issues.push_back({name, "is not valid YAML: " + display_text(e.what()), ""});
            return out;
        }
        if (!out.issues.empty()) return out;
    }
    if (!nested.is_object()) {
        out.issues.push_back({name, "must be a map of settings (a JSON object or a YAML mapping)", ""});
        return out;
    }
    Doc doc;
    flatten_into(nested, "", doc);
    if (doc.contains("")) doc.erase("");
    if (std::optional<ConfigFormat> f = recognise(doc, as_json)) out.parts.push_back({*f, std::move(doc)});
    return out;
}

std::optional<std::vector<std::string>> shell_words(const std::string& text) {
    std::vector<std::string> words;
    std::string w;
    bool in_word = false;
    enum { Plain, Single, Double } q = Plain;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (q == Single) {
            if (c == '\'') q = Plain;
            else w += c;
            continue;
        }
        if (q == Double) {
            if (c == '"') q = Plain;
            else if (c == '\\' && i + 1 < text.size() &&
                     std::string("\"\\$`\n").find(text[i + 1]) != std::string::npos) {
                if (text[i + 1] != '\n') w += text[i + 1];
                ++i;
            } else w += c;
            continue;
        }
        if (c == '\\' && i + 1 < text.size()) {
            if (text[i + 1] == '\n') {  // continuation
                ++i;
                continue;
            }
            if (text[i + 1] == '\r' && i + 2 < text.size() && text[i + 2] == '\n') {
                i += 2;
                continue;
            }
            w += text[++i];
            in_word = true;
            continue;
        }
        if (c == '#' && !in_word) {  // a comment to the end of the line
            while (i < text.size() && text[i] != '\n') ++i;
            --i;
            continue;
        }
        if (c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == ';' || c == '&' || c == '|') {
            if (in_word) words.push_back(w);
            w.clear();
            in_word = false;
            if (c == '\n' || c == ';' || c == '&' || c == '|') words.push_back("\n");  // a command ends
            continue;
        }
        in_word = true;
        if (c == '\'') q = Single;
        else if (c == '"') q = Double;
        else w += c;
    }
    if (q != Plain) return std::nullopt;
    if (in_word) words.push_back(w);
    return words;
}

//-----------------------------------------------------------------------------
// Command lines
//-----------------------------------------------------------------------------

namespace {

std::string base_name(const std::string& path) {
    const std::size_t slash = path.find_last_of('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool is_python(const std::string& w) {
    const std::string b = base_name(w);
    return b == "python" || b.rfind("python3", 0) == 0;
}

// Flags of `words[i..]` into `doc` ("--max-model-len 4096", "--tp=2", "-tp 2", "--flag"), positional
// words into "_args", until `stop` says a word starts what comes next (the script of a launcher).
// A flag takes the next word as its value unless the tool's table says it takes none, or the next
// word is itself a flag.
std::size_t read_flags(const std::vector<std::string>& words, std::size_t i, Doc& doc, const Tool* tool,
                       bool (*stop)(const std::string&), bool stop_at_first_positional) {
    if (!doc.contains("_args")) doc["_args"] = ojson::array();
    while (i < words.size() && words[i] != "\n") {
        const std::string& w = words[i];
        if (w.size() > 1 && w[0] == '-' && !(w.size() > 1 && std::isdigit(static_cast<unsigned char>(w[1])))) {
            std::string flag = w.substr(w[1] == '-' ? 2 : 1);
            std::optional<std::string> value;
            if (const std::size_t eq = flag.find('='); eq != std::string::npos) {
                value = flag.substr(eq + 1);
                flag = flag.substr(0, eq);
            }
            bool takes_value = true;
            if (tool)
                for (std::size_t k = 0; k < tool->key_count; ++k) {
                    std::string names = std::string(tool->keys[k].key) + "," + tool->keys[k].aliases;
                    std::string f = flag;
                    std::replace(f.begin(), f.end(), '-', '_');
                    std::replace(names.begin(), names.end(), '-', '_');
                    if (("," + names + ",").find("," + f + ",") != std::string::npos && tool->keys[k].flag_only)
                        takes_value = false;
                }
            ++i;
            if (!value && takes_value && i < words.size() && words[i] != "\n" &&
                !(words[i].size() > 1 && words[i][0] == '-' && !std::isdigit(static_cast<unsigned char>(words[i][1]))))
                value = words[i++];
            if (value) doc[flag] = *value;
            else doc[flag] = true;
            continue;
        }
        if (stop && stop(w)) return i;
        if (stop_at_first_positional) return i;
        doc["_args"].push_back(w);
        ++i;
    }
    return i;
}

bool is_script(const std::string& w) {
    return w == "-m" || (w.size() > 3 && w.compare(w.size() - 3, 3, ".py") == 0) || is_python(w);
}

}  // namespace

Loaded load_command(const std::string& name, const std::string& text) {
    Loaded out;
    if (text.size() > kMaxJsonBytes) {
        out.issues.push_back(
            {name, "is over 16 MiB; a command is a few lines", std::to_string(text.size()) + " bytes"});
        return out;
    }
    if (!is_utf8(text)) {
        out.issues.push_back({name, "is not UTF-8 text", ""});
        return out;
    }
    std::optional<std::vector<std::string>> all = shell_words(text);
    if (!all) {
        out.issues.push_back({name, "has a quote that is never closed", ""});
        return out;
    }
    if (all->size() > kMaxWords) {
        out.issues.push_back({name, "has over " + std::to_string(kMaxWords) + " words; a command has tens", ""});
        return out;
    }
    const std::vector<std::string>& w = *all;
    std::size_t i = 0;
    while (i < w.size()) {
        // One command: its VAR=value words, then the program.
        ojson env = ojson::object();
        while (i < w.size() && w[i] == "\n") ++i;
        for (;;) {
            if (i >= w.size() || w[i] == "\n") break;
            const std::string& x = w[i];
            const std::size_t eq = x.find('=');
            if (eq != std::string::npos && eq > 0 && x.find_first_of("/-") > eq) {
                env[x.substr(0, eq)] = x.substr(eq + 1);
                ++i;
            } else if (x == "env" || x == "exec" || x == "nohup" || x == "time" || x == "sudo" || x == "uv" ||
                       x == "run" || x == "srun") {
                ++i;
            } else {
                break;
            }
        }
        auto at = [&](std::size_t k) -> std::string { return i + k < w.size() ? w[i + k] : std::string("\n"); };
        auto part = [&](ConfigFormat f, const std::string& program) -> Doc& {
            out.parts.push_back({f, Doc::object()});
            Doc& d = out.parts.back().doc;
            d["_program"] = program;
            if (!env.empty()) d["_env"] = env;
            return d;
        };
        std::string prog = base_name(at(0));
        // docker run ... IMAGE args: the image names the engine.
        if (prog == "docker" && (at(1) == "run" || at(1) == "container")) {
            std::size_t k = i + 2;
            while (k < w.size() && w[k] != "\n") {
                const std::string& x = w[k];
                if (x.find("vllm-openai") != std::string::npos || x.find("vllm/vllm") != std::string::npos) {
                    out.notes.push_back("the vllm/vllm-openai image runs `vllm serve` with the arguments after it");
                    Doc& d = part(ConfigFormat::Vllm, "vllm serve");
                    read_flags(w, k + 1, d, &tool(ConfigFormat::Vllm), nullptr, false);
                    return out;
                }
                if (x.find("text-generation-inference") != std::string::npos) {
                    out.notes.push_back("the text-generation-inference image runs text-generation-launcher");
                    Doc& d = part(ConfigFormat::Tgi, "text-generation-launcher");
                    read_flags(w, k + 1, d, &tool(ConfigFormat::Tgi), nullptr, false);
                    return out;
                }
                if (x.find("sglang") != std::string::npos || x.find("tensorrt") != std::string::npos ||
                    x.find("llama.cpp") != std::string::npos || x.find("llama-cpp") != std::string::npos) {
                    i = k + 1;  // the command follows the image
                    break;
                }
                if (x == "-e" && k + 1 < w.size()) {
                    const std::string& kv = w[k + 1];
                    const std::size_t eq = kv.find('=');
                    if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
                }
                ++k;
            }
            if (i != k + 1) {
                while (i < w.size() && w[i] != "\n") ++i;
                continue;
            }
            prog = base_name(at(0));
        }
        if (prog == "vllm" && at(1) == "serve") {
            read_flags(w, i + 2, part(ConfigFormat::Vllm, "vllm serve"), &tool(ConfigFormat::Vllm), nullptr, false);
            return out;
        }
        if (prog == "llama-server" || prog == "llama-cli") {
            read_flags(w, i + 1, part(ConfigFormat::LlamaCpp, prog), &tool(ConfigFormat::LlamaCpp), nullptr, false);
            return out;
        }
        if (prog == "text-generation-launcher") {
            read_flags(w, i + 1, part(ConfigFormat::Tgi, prog), &tool(ConfigFormat::Tgi), nullptr, false);
            return out;
        }
        if (prog == "trtllm-serve") {
            const std::size_t from = at(1) == "serve" ? i + 2 : i + 1;
            read_flags(w, from, part(ConfigFormat::TensorrtLlm, "trtllm-serve"), &tool(ConfigFormat::TensorrtLlm),
                       nullptr, false);
            return out;
        }
        if (prog == "tune" && at(1) == "run") {
            Doc& d = part(ConfigFormat::Torchtune, "tune run");
            // tune run [launcher flags] RECIPE --config CONFIG key=value ~key
            std::size_t k = read_flags(w, i + 2, d, &tool(ConfigFormat::Torchtune), nullptr, true);
            if (k < w.size() && w[k] != "\n") d["_recipe"] = w[k++];
            while (k < w.size() && w[k] != "\n") {
                const std::string& x = w[k];
                if (x == "--config" || x == "-c") {
                    if (k + 1 < w.size() && w[k + 1] != "\n") d["_config"] = w[k + 1];
                    k += 2;
                    continue;
                }
                if (x.rfind("--config=", 0) == 0) d["_config"] = x.substr(9);
                else if (x.rfind('~', 0) == 0) d[x] = true;
                else if (const std::size_t eq = x.find('='); eq != std::string::npos)
                    d[x.substr(0, eq)] = x.substr(eq + 1);
                else d["_args"].push_back(x);
                ++k;
            }
            return out;
        }
        if (prog == "litgpt") {
            Doc& d = part(ConfigFormat::Litgpt, "litgpt " + at(1));
            d["_command"] = at(1);
            read_flags(w, i + 2, d, &tool(ConfigFormat::Litgpt), nullptr, false);
            if (d.contains("config")) {
                d["_config"] = d["config"];
                d.erase("config");
            }
            return out;
        }
        if (prog == "axolotl" && at(1) != "\n") {
            Doc& d = part(ConfigFormat::Axolotl, "axolotl " + at(1));
            read_flags(w, i + 2, d, &tool(ConfigFormat::Axolotl), nullptr, false);
            if (!d["_args"].empty()) d["_config"] = d["_args"][0];
            return out;
        }
        // Launchers of a training script: their flags, then the script and its arguments.
        bool launcher = false;
        ConfigFormat launch_format = ConfigFormat::Torchrun;
        Doc launch = Doc::object();
        std::size_t k = i;
        if (prog == "torchrun" || (is_python(at(0)) && at(1) == "-m" &&
                                   (at(2) == "torch.distributed.run" || at(2) == "torch.distributed.launch"))) {
            launcher = true;
            launch["_program"] = "torchrun";
            k = read_flags(w, prog == "torchrun" ? i + 1 : i + 3, launch, &tool(ConfigFormat::Torchrun), is_script,
                           true);
        } else if (prog == "accelerate" && at(1) == "launch") {
            launcher = true;
            launch_format = ConfigFormat::Accelerate;
            launch["_program"] = "accelerate launch";
            k = read_flags(w, i + 2, launch, &tool(ConfigFormat::Accelerate), is_script, true);
            if (launch.contains("config_file")) {
                launch["_config"] = launch["config_file"];
                launch.erase("config_file");
            }
        } else if (prog == "deepspeed") {
            launcher = true;
            launch["_program"] = "deepspeed";
            k = read_flags(w, i + 1, launch, nullptr, is_script, true);
            // The deepspeed launcher's --num_gpus / --num_nodes are torchrun's nproc-per-node / nnodes.
            if (launch.contains("num_gpus")) launch["nproc_per_node"] = launch["num_gpus"], launch.erase("num_gpus");
            if (launch.contains("num_nodes")) launch["nnodes"] = launch["num_nodes"], launch.erase("num_nodes");
        } else if (is_python(at(0))) {
            k = i + 1;
        } else {
            while (i < w.size() && w[i] != "\n") ++i;  // not a tool's command: the next line
            continue;
        }
        if (launcher && launch["_args"].empty()) launch.erase("_args");
        if (!env.empty()) launch["_env"] = env;
        // The script: `-m axolotl.cli.train CFG`, `-m vllm...`, or a Python file with HF Trainer flags.
        if (k < w.size() && is_python(w[k])) ++k;
        std::string module;
        if (k + 1 < w.size() && w[k] == "-m") {
            module = w[k + 1];
            k += 2;
        }
        if (module == "vllm.entrypoints.openai.api_server") {
            read_flags(w, k, part(ConfigFormat::Vllm, "python -m " + module), &tool(ConfigFormat::Vllm), nullptr,
                       false);
            return out;
        }
        if (module == "sglang.launch_server") {
            read_flags(w, k, part(ConfigFormat::Sglang, "python -m " + module), &tool(ConfigFormat::Sglang), nullptr,
                       false);
            return out;
        }
        if (launcher || launch_format == ConfigFormat::Accelerate) {
            out.parts.push_back({launch_format, launch});
        }
        if (module.rfind("axolotl.cli", 0) == 0) {
            Doc& d = part(ConfigFormat::Axolotl, "python -m " + module);
            read_flags(w, k, d, &tool(ConfigFormat::Axolotl), nullptr, false);
            if (!d["_args"].empty()) d["_config"] = d["_args"][0];
            return out;
        }
        Doc& d = part(ConfigFormat::Torchrun, "script");
        if (k < w.size() && w[k] != "\n") d["_script"] = module.empty() ? w[k++] : module;
        read_flags(w, k, d, &tool(ConfigFormat::Torchrun), nullptr, false);
        return out;
    }
    return out;
}

Doc overlay(const Doc& base, const Doc& over) {
    // The keys whose values (and everything under them) the overrides replace or delete.
    std::set<std::string> gone;
    for (auto it = over.begin(); it != over.end(); ++it)
        gone.insert(it.key().rfind('~', 0) == 0 ? it.key().substr(1) : it.key());
    auto replaced = [&](const std::string& key) {
        for (std::size_t dot = key.find('.'); dot != std::string::npos; dot = key.find('.', dot + 1))
            if (gone.count(key.substr(0, dot))) return true;
        return gone.count(key) > 0;
    };
    Doc out = Doc::object();
    for (auto it = base.begin(); it != base.end(); ++it)
        if (!replaced(it.key())) out[it.key()] = it.value();
    for (auto it = over.begin(); it != over.end(); ++it)
        if (it.key().rfind('~', 0) != 0) out[it.key()] = it.value();
    return out;
}

//-----------------------------------------------------------------------------
// Reader
//-----------------------------------------------------------------------------

namespace {

std::vector<std::string> split_dots(const std::string& field) {
    std::vector<std::string> parts;
    std::size_t start = 0;
    for (;;) {
        std::size_t dot = field.find('.', start);
        parts.push_back(field.substr(start, dot - start));
        if (dot == std::string::npos) return parts;
        start = dot + 1;
    }
}

// A command line's string as the JSON value it spells, else the value as it is.
ojson typed(const ojson& v) {
    if (!v.is_string()) return v;
    const std::string& s = v.get_ref<const std::string&>();
    if (s == "true" || s == "True" || s == "TRUE") return true;
    if (s == "false" || s == "False" || s == "FALSE") return false;
    if (!s.empty() && s.size() < 40 && (std::isdigit(static_cast<unsigned char>(s[0])) || s[0] == '.' || s[0] == '-')) {
        char* end = nullptr;
        const double d = std::strtod(s.c_str(), &end);
        if (end && *end == '\0' && std::isfinite(d)) {
            if (d >= 0 && std::floor(d) == d && d < 9e15 && s.find_first_of(".eE") == std::string::npos)
                return static_cast<std::uint64_t>(d);
            return d;
        }
    }
    return v;
}

}  // namespace

void Reader::set(const std::string& field, const json& value) {
    json* at = &out_.scenario;
    for (const std::string& part : split_dots(field)) {
        if (!at->is_object()) *at = json::object();
        at = &(*at)[part];
    }
    *at = value;
}

bool Reader::has(const std::string& field) const { return !get(field).is_null(); }

json Reader::get(const std::string& field) const {
    const json* at = &out_.scenario;
    for (const std::string& part : split_dots(field)) {
        if (!at->is_object() || !at->contains(part)) return nullptr;
        at = &(*at)[part];
    }
    return *at;
}

std::optional<std::uint64_t> Reader::uint(std::uint64_t min, std::uint64_t max) {
    if (value().is_null()) return std::nullopt;  // YAML's `key:` with no value: not set
    const ojson v = typed(value());
    if (v.is_number_unsigned() && v.get<std::uint64_t>() >= min && v.get<std::uint64_t>() <= max)
        return v.get<std::uint64_t>();
    if (v.is_number_float() && std::floor(v.get<double>()) == v.get<double>() && v.get<double>() >= double(min) &&
        v.get<double>() <= double(max))
        return static_cast<std::uint64_t>(v.get<double>());
    issue("must be a whole number from " + std::to_string(min) + " to " + std::to_string(max));
    return std::nullopt;
}

std::optional<double> Reader::number(double min, double max) {
    if (value().is_null()) return std::nullopt;
    const ojson v = typed(value());
    if (v.is_number() && v.get<double>() >= min && v.get<double>() <= max) return v.get<double>();
    issue("must be a number from " + number_text(min) + " to " + number_text(max));
    return std::nullopt;
}

std::optional<bool> Reader::boolean() {
    if (value().is_null()) return std::nullopt;
    const ojson v = typed(value());
    if (v.is_boolean()) return v.get<bool>();
    if (v.is_number_unsigned() && v.get<std::uint64_t>() <= 1) return v.get<std::uint64_t>() == 1;
    issue("must be true or false");
    return std::nullopt;
}

std::optional<std::string> Reader::string() {
    if (value().is_null()) return std::nullopt;
    if (value().is_string()) return value().get<std::string>();
    if (value().is_number() || value().is_boolean()) return value().dump();
    issue("must be a name");
    return std::nullopt;
}

bool Reader::is_auto(const char* resolved_as) {
    if (!value().is_string() || value().get<std::string>() != "auto") return false;
    assume(key_ + " is \"auto\": " + resolved_as);
    return true;
}

void Reader::issue(const std::string& problem) {
    out_.issues.push_back({key_, problem, value_ ? display_text(value_->dump(), 80) : ""});
}

//-----------------------------------------------------------------------------
// Run
//-----------------------------------------------------------------------------

Run::Run(const json& scenario) : s(scenario) {
    const json& m = s["model"];
    model = m.contains("preset") ? m["preset"].get<std::string>()
            : m.contains("name") ? m["name"].get<std::string>()
                                 : std::string("MODEL");
    // A bundled alias ("llama3.1-8b") is written as the Hub id the tools download.
    if (m.contains("preset"))
        if (std::optional<json> record = find_preset(model); record && record->contains("model_id"))
            model = (*record)["model_id"].get<std::string>();
    const json& e = s["engine"];
    engine = e["type"];
    zero_stage = e["zero_stage"];
    fsdp_sharding = e["fsdp_sharding"];
    offload_optimizer = e["offload_optimizer"];
    offload_param = e["offload_param"];
    const json& p = s["parallelism"];
    dp = p["data_parallel_size"];
    tp = p["tensor_parallel_size"];
    pp = p["pipeline_parallel_size"];
    cp = p["context_parallel_size"];
    ep = p["expert_parallel_size"];
    sp = p.value("sequence_parallel", false);
    num_gpus = s["hardware"]["num_gpus"];
    if (!s.contains("training")) return;
    const json& t = s["training"];
    method = t["method"];
    dtype = t["dtype"];
    precision = t["precision"];
    optimizer = t["optimizer"];
    checkpointing = t["activation_checkpointing"];
    attention = t["attention"];
    loss = t["loss"];
    compile = t["compile"];
    framework = t["framework"];
    batch = t["batch_size"];
    accumulation = t["gradient_accumulation_steps"];
    seq_len = t["seq_len"];
    optimizer_in_backward = t["optimizer_in_backward"];
    activation_offloading = t["activation_offloading"];
    double_quant = t.value("double_quant", false);
}

std::vector<std::string> Run::lora_targets() const { return lora()["target_modules"].get<std::vector<std::string>>(); }

bool Run::targets(const char* module) const {
    auto t = lora_targets();
    return std::find(t.begin(), t.end(), "all_linear") != t.end() || std::find(t.begin(), t.end(), module) != t.end();
}

//-----------------------------------------------------------------------------
// Shared text helpers
//-----------------------------------------------------------------------------

std::string shell_word(const std::string& s) {
    static const char* const kPlain = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,@+%";
    if (!s.empty() && s.find_first_not_of(kPlain) == std::string::npos) return s;
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

std::string number_text(double v) {
    if (std::floor(v) == v && std::fabs(v) < 1e15) return std::to_string(static_cast<long long>(v));
    return json(v).dump();
}

namespace {

// A YAML scalar: plain when YAML 1.1 reads it back as the same string, else double-quoted (JSON's
// quoting is valid YAML).
std::string yaml_scalar(const ojson& v) {
    if (!v.is_string()) return v.dump();
    const std::string& s = v.get_ref<const std::string&>();
    static const char* const kPlain = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./";
    static const char* const kReserved[] = {"true", "false", "yes", "no", "on", "off", "null", "~", "y", "n"};
    std::string lower = s;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
    bool reserved = std::any_of(std::begin(kReserved), std::end(kReserved), [&](const char* r) { return lower == r; });
    bool numeric = !s.empty() && (std::isdigit(static_cast<unsigned char>(s[0])) || s[0] == '-' || s[0] == '.');
    if (s.empty() || reserved || numeric || s.find_first_not_of(kPlain) != std::string::npos) return v.dump();
    return s;
}

void write_yaml(const ojson& doc, std::string& out, int indent) {
    for (auto it = doc.begin(); it != doc.end(); ++it) {
        out += std::string(static_cast<std::size_t>(indent), ' ') + it.key() + ":";
        const ojson& v = it.value();
        if (v.is_object()) {
            out += "\n";
            write_yaml(v, out, indent + 2);
        } else if (v.is_array()) {
            std::string items;
            for (const ojson& x : v) items += (items.empty() ? "" : ", ") + yaml_scalar(x);
            out += " [" + items + "]\n";
        } else {
            out += " " + yaml_scalar(v) + "\n";
        }
    }
}

}  // namespace

std::string yaml_text(const ojson& nested) {
    std::string out;
    write_yaml(nested, out, 0);
    return out;
}

ojson nest(const ojson& flat) {
    ojson out = ojson::object();
    for (auto it = flat.begin(); it != flat.end(); ++it) {
        ojson* at = &out;
        for (const std::string& part : split_dots(it.key())) {
            if (!at->is_object()) *at = ojson::object();
            at = &(*at)[part];
        }
        *at = it.value();
    }
    return out;
}

std::string command_text(const std::vector<std::string>& head, const ojson& flags, bool overrides) {
    std::string out;
    for (const std::string& w : head) out += (out.empty() ? "" : " ") + shell_word(w);
    for (auto it = flags.begin(); it != flags.end(); ++it) {
        const std::string& k = it.key();
        const ojson& v = it.value();
        const std::string text = v.is_string()   ? v.get<std::string>()
                                 : v.is_number() ? number_text(v.get<double>())
                                                 : v.dump();
        std::string line;
        if (k.rfind('@', 0) == 0) line = shell_word(text);      // a positional word
        else if (overrides) line = shell_word(k + "=" + text);  // torchtune's key=value
        else if (v.is_null()) line = "--" + k;                  // a flag that takes no value
        else line = "--" + k + " " + shell_word(text);
        out += (out.empty() ? "" : " \\\n  ") + line;
    }
    return out + "\n";
}

std::string torch_dtype_name(const std::string& dtype) {
    return dtype == "bf16" ? "bfloat16" : dtype == "fp16" ? "float16" : "float32";
}

namespace {
// HF Trainer's --optim names (transformers' OptimizerNames) of our optimizers.
const char* const kHfOptim[][2] = {
    {"adamw", "adamw_torch"},
    {"adamw_fused", "adamw_torch_fused"},
    {"adamw_8bit", "adamw_bnb_8bit"},
    {"paged_adamw_8bit", "paged_adamw_8bit"},
    {"paged_adamw_32bit", "paged_adamw_32bit"},
    {"adafactor", "adafactor"},
    {"sgd", "sgd"},
    {"adagrad", "adagrad"},
    {"rmsprop", "rmsprop"},
    {"lion", "lion_32bit"},
};
}  // namespace

std::string hf_optim(const std::string& optimizer) {
    for (const auto& row : kHfOptim)
        if (optimizer == row[0]) return row[1];
    return "";
}

std::optional<std::string> optimizer_of_hf(const std::string& optim) {
    for (const auto& row : kHfOptim)
        if (optim == row[1]) return std::string(row[0]);
    // Other spellings HF Trainer accepts for the same optimizers.
    static const char* const kMore[][2] = {
        {"adamw_hf", "adamw"},
        {"adamw_torch_npu_fused", "adamw_fused"},
        {"adamw_8bit", "adamw_8bit"},
        {"paged_adamw", "paged_adamw_32bit"},
        {"lion_8bit", "lion"},
        {"paged_lion_32bit", "lion"},
        {"adamw_apex_fused", "adamw_fused"},
        // torchao's AdamW8bit: two 8-bit moments with block scales, as bitsandbytes'.
        {"adamw_torch_8bit", "adamw_8bit"}};
    for (const auto& row : kMore)
        if (optim == row[0]) return std::string(row[1]);
    return std::nullopt;
}

std::uint64_t nodes_for(std::uint64_t world, std::uint64_t per_node) { return (world + per_node - 1) / per_node; }

void refuse_megatron(Writer& wr, const char* format) {
    const Run& r = wr.r;
    if (r.engine == "megatron" || r.engine == "megatron_deepspeed")
        wr.w.refuse("engine.type",
                    std::string("is not exported as ") + format +
                        ": Megatron-LM runs from its own pretrain scripts and arguments "
                        "(--tensor-model-parallel-size, --pipeline-model-parallel-size)",
                    r.engine);
}

//-----------------------------------------------------------------------------
// Rows several tools share
//-----------------------------------------------------------------------------

void read_uint_into(Reader& r, const char* field, std::uint64_t min, std::uint64_t max) {
    if (auto v = r.uint(min, max)) r.set(field, *v);
}

void read_deepspeed_file(Reader& r) {
    auto v = r.string();
    if (!v) return;
    r.set("engine.type", "deepspeed");
    r.out().references.push_back(*v);
}
std::optional<ojson> write_deepspeed_file(Writer& w) {
    return w.r.engine == "deepspeed" ? std::optional<ojson>("ds_config.json") : std::nullopt;
}

void read_hf_optimizer(Reader& r) {
    auto v = r.string();
    if (!v) return;
    if (auto o = optimizer_of_hf(*v)) r.set("training.optimizer", *o);
    else r.warn("optimizer " + *v + " is not one gpumem models; the scenario's optimizer is used");
}
std::optional<ojson> write_hf_optimizer(Writer& w) { return hf_optim(w.r.optimizer); }

void read_lora_rank(Reader& r) { read_uint_into(r, "training.lora.rank", 1, 1 << 16); }
std::optional<ojson> write_lora_rank(Writer& w) {
    return w.r.adapters() ? std::optional<ojson>(w.r.lora()["rank"]) : std::nullopt;
}
void read_lora_alpha(Reader& r) {
    if (auto v = r.number(0, 1e6)) r.set("training.lora.alpha", *v);
}
std::optional<ojson> write_lora_alpha(Writer& w) {
    return w.r.adapters() ? std::optional<ojson>(w.r.lora()["alpha"]) : std::nullopt;
}
void read_lora_dropout(Reader& r) {
    if (auto v = r.number(0, 1)) r.set("training.lora.dropout", *v);
}
std::optional<ojson> write_lora_dropout(Writer& w) {
    return w.r.adapters() ? std::optional<ojson>(w.r.lora()["dropout"]) : std::nullopt;
}
void read_micro_batch(Reader& r) { read_uint_into(r, "training.batch_size", 1, 1 << 20); }
std::optional<ojson> write_micro_batch(Writer& w) { return w.r.batch; }
void read_accumulation(Reader& r) { read_uint_into(r, "training.gradient_accumulation_steps", 1, 1 << 20); }
std::optional<ojson> write_accumulation(Writer& w) { return w.r.accumulation; }

//-----------------------------------------------------------------------------
// The table-driven read and write
//-----------------------------------------------------------------------------

namespace {

// '-' and '_' are one character in flags and keys.
std::string key_form(const std::string& k) {
    std::string out = k;
    std::replace(out.begin(), out.end(), '-', '_');
    return out;
}

const Key* find_key(const Tool& t, const std::string& k) {
    const std::string want = key_form(k);
    for (std::size_t i = 0; i < t.key_count; ++i) {
        const Key& row = t.keys[i];
        if (key_form(row.key) == want) return &row;
        std::string aliases = row.aliases;
        std::size_t start = 0;
        while (start < aliases.size()) {
            std::size_t comma = aliases.find(',', start);
            if (key_form(aliases.substr(start, comma - start)) == want) return &row;
            if (comma == std::string::npos) break;
            start = comma + 1;
        }
    }
    return nullptr;
}

bool is_ignored(const Tool& t, const std::string& k) {
    const std::string want = key_form(k);
    for (std::size_t i = 0; i < t.ignored_count; ++i) {
        std::string p = key_form(t.ignored[i]);
        if (!p.empty() && p.back() == '*') {
            if (want.rfind(p.substr(0, p.size() - 1), 0) == 0) return true;
        } else if (want == p || (!p.empty() && p.back() == '.' && want.rfind(p, 0) == 0)) {
            return true;
        }
    }
    return false;
}

}  // namespace

bool is_command_part(const std::string& key) {
    static const char* const kParts[] = {"_program", "_env", "_args", "_config", "_script", "_recipe", "_command"};
    for (const char* p : kParts)
        if (key == p) return true;
    return false;
}

Reading read_doc(ConfigFormat f, const Doc& doc) {
    const Tool& t = tool(f);
    Reading out;
    Reader r(out, doc);
    for (auto it = doc.begin(); it != doc.end(); ++it) {
        const std::string& k = it.key();
        if (is_command_part(k)) continue;  // the command's own parts, read by finish_read
        r.at(k, it.value());
        if (const Key* row = find_key(t, k)) {
            const std::size_t before = out.issues.size();
            row->read(r);
            if (out.issues.size() == before && !it.value().is_null()) out.read[k] = it.value();
        } else if (is_ignored(t, k)) {
            out.ignored.push_back(k);
        } else {
            out.warnings.push_back(k + ": not a key gpumem reads for " + std::string(name(f)) +
                                   "; if it changes memory, the estimate does not include it");
        }
    }
    if (t.finish_read) t.finish_read(r);
    return out;
}

Written write_run(ConfigFormat f, const Run& r, std::uint64_t per_node, const std::string& script) {
    const Tool& t = tool(f);
    Written w;
    w.kind = t.kind;
    w.file_name = t.file_name;
    Writer wr{r, per_node, script, w};
    t.refuse(wr);
    if (!w.issues.empty()) return w;
    ojson doc = ojson::object();
    for (std::size_t i = 0; i < t.key_count; ++i) {
        const Key& row = t.keys[i];
        if (!row.write) continue;
        std::optional<ojson> v = row.write(wr);
        if (v) doc[row.key] = *v;
    }
    if (!w.issues.empty()) return w;
    if (t.finish_write) t.finish_write(wr, doc);
    return w;
}

}  // namespace gpumem::detail
