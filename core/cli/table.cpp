// gpumem table MODEL: memory per dtype (table.h).

#include "cli/table.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <sstream>

#include <gpumem/gpumem.h>

namespace gpumem::cli {

using nlohmann::json;

namespace {

// The dtypes of the table when --dtype names none: vram_calculator.py's eight, fp16 and bf16 apart.
const char* const kTableDtypes[] = {"fp32", "fp16", "bf16", "fp8", "int8", "int4", "mxfp4", "nvfp4"};
// The dtypes full training keeps its weights, gradients and moments in.
const char* const kTrainingDtypes[] = {"fp32", "fp16", "bf16", "fp8"};
// The GPUs the recommendations list (with the user's own after them): the common cards.
const char* const kRecommendedGpus[] = {"RTX-4090-24GB", "A100-40GB",  "A100-80GB",
                                        "H100-80GB",     "H200-141GB", "B200-192GB"};

bool one_of(const std::string& name, std::initializer_list<const char*> names) {
    return std::any_of(names.begin(), names.end(), [&](const char* n) { return name == n; });
}

bool trains_in(const std::string& dtype) {
    return std::any_of(std::begin(kTrainingDtypes), std::end(kTrainingDtypes),
                       [&](const char* d) { return dtype == d; });
}

const json* user_dtype(const TableOptions& o, const std::string& id) {
    for (const json& d : o.user_dtypes)
        if (d["id"] == id) return &d;
    return nullptr;
}

// The scenario of one cell: the model, the sizes, and for a user's dtype its format.
json base_scenario(const TableOptions& o, const std::string& dtype) {
    json s = {{"model", o.model}};
    if (const json* d = user_dtype(o, dtype)) s["formats"] = json::array({gpumem::detail::user_format(*d)});
    return s;
}

json inference_scenario(const TableOptions& o, const std::string& dtype) {
    json s = base_scenario(o, dtype);
    s["mode"] = "inference";
    s["inference"] = {{"weight_format", dtype}, {"batch_size", o.batch_size}, {"context_len", o.sequence_length}};
    return s;
}

// Full training with Adam, the weights, gradients and moments in the dtype (recipe pure).
json training_scenario(const TableOptions& o, const std::string& dtype) {
    json s = base_scenario(o, dtype);
    s["mode"] = "training";
    s["training"] = {{"dtype", dtype},
                     {"precision", "pure"},
                     {"optimizer", "adam"},
                     {"batch_size", o.batch_size},
                     {"seq_len", o.sequence_length}};
    return s;
}

// LoRA over a base in the dtype: a float base, or a QLoRA base for int8 (LLM.int8) and int4 (NF4).
json lora_scenario(const TableOptions& o, const std::string& dtype) {
    json s = base_scenario(o, dtype);
    s["mode"] = "training";
    // No checkpointing, as in the full-training column (the core's default for adapters is full).
    json t = {{"batch_size", o.batch_size},
              {"seq_len", o.sequence_length},
              {"lora", {{"rank", o.lora_rank}}},
              {"activation_checkpointing", "none"}};
    if (dtype == "int8" || dtype == "int4") {
        t["method"] = "qlora";
        t["quantization"] = dtype == "int8" ? "int8" : "nf4";
    } else {
        t["method"] = "lora";
        t["dtype"] = dtype;
    }
    s["training"] = t;
    return s;
}

// One estimate's device total per GPU; null when the estimate has none (an error: kept in `errors`).
json cell(const json& scenario, json& errors) {
    json r = gpumem::estimate(scenario);
    if (!r.value("ok", false)) {
        for (const json& e : r["errors"]) errors.push_back(e);
        return nullptr;
    }
    return r["per_gpu"]["device_total_bytes"];
}

// Every GPU the table may name: the catalogue's and the user's, with their capacity in bytes.
json all_gpus(const TableOptions& o) {
    json out = json::array();
    for (const json& g : gpumem::list_gpus())
        out.push_back({{"id", g["id"]}, {"name", g["name"]}, {"memory_bytes", g["memory_bytes"]}});
    for (const json& g : o.user_gpus)
        out.push_back({{"id", g["id"]}, {"name", g["name"]}, {"memory_bytes", g["memory_bytes"]}});
    return out;
}

// The smallest GPU that holds `bytes`: {"id", "memory_bytes"}, or null when none does.
json smallest_fit(const json& gpus, const json& bytes) {
    if (!bytes.is_number()) return nullptr;
    json best = nullptr;
    for (const json& g : gpus)
        if (g["memory_bytes"].get<double>() >= bytes.get<double>() &&
            (best.is_null() || g["memory_bytes"].get<double>() < best["memory_bytes"].get<double>()))
            best = g;
    return best;
}

}  // namespace

json dtype_table(const TableOptions& o) {
    std::vector<std::string> dtypes;
    if (!o.dtype.empty()) {
        dtypes.push_back(o.dtype);
    } else {
        dtypes.assign(std::begin(kTableDtypes), std::end(kTableDtypes));
        for (const json& d : o.user_dtypes)
            if (std::find(dtypes.begin(), dtypes.end(), d["id"].get<std::string>()) == dtypes.end())
                dtypes.push_back(d["id"]);
    }

    // The model and its count, from the first inference estimate (its errors are the table's).
    json first = gpumem::estimate(inference_scenario(o, dtypes[0]));
    if (!first.value("ok", false)) return first;
    json out = {{"ok", true},
                {"model", first["model"]},
                {"parameters", first["parameters"]["total"]},
                {"settings",
                 {{"batch_size", o.batch_size}, {"sequence_length", o.sequence_length}, {"lora_rank", o.lora_rank}}}};
    json errors = json::array(), rows = json::array();
    for (const std::string& dtype : dtypes) {
        json inference = gpumem::estimate(inference_scenario(o, dtype));
        if (!inference.value("ok", false)) return inference;  // the dtype itself is wrong: --dtype int3
        json row = {{"dtype", dtype},
                    {"weights_bytes", inference["per_gpu"]["components"]["weights"]},
                    {"inference_bytes", inference["per_gpu"]["device_total_bytes"]},
                    {"training_bytes", nullptr},
                    {"lora_bytes", nullptr}};
        if (trains_in(dtype)) row["training_bytes"] = cell(training_scenario(o, dtype), errors);
        if (one_of(dtype, {"fp32", "fp16", "bf16", "int8", "int4"}))
            row["lora_bytes"] = cell(lora_scenario(o, dtype), errors);
        rows.push_back(row);
    }
    out["rows"] = rows;
    json notes = json::array(
        {"each cell: gpumem's estimate of one GPU's device total (nvidia-smi), the table's rows with the whole model "
         "on it",
         "inference: the weights in the dtype, a batch of the sequence length with its KV cache",
         "training: full fine-tuning with Adam, weights, gradients and moments all in the dtype (recipe pure); "
         "only fp32, fp16, bf16 and fp8 train",
         "LoRA: adapters on q_proj and v_proj over a frozen base in the dtype; int8 and int4 are QLoRA bases "
         "(LLM.int8 and NF4)"});
    for (const json& w : first["warnings"]) notes.push_back(w);  // e.g. a sequence past the model's positions
    for (const json& e : errors) notes.push_back("not estimated: " + e["message"].get<std::string>());
    out["notes"] = notes;
    if (!o.detailed) return out;

    // The layouts, at --dtype (bf16 by default): inference with the model split TP x PP (x EP for MoE).
    const std::string at = o.dtype.empty() ? "bf16" : o.dtype;
    const json gpus = all_gpus(o);
    out["detailed_dtype"] = at;
    struct Layout {
        const char* strategy;
        int tp, pp, ep;
    };
    std::vector<Layout> layouts = {{"Single GPU", 1, 1, 1},
                                   {"Tensor Parallel", 2, 1, 1},
                                   {"Tensor Parallel", 4, 1, 1},
                                   {"Tensor Parallel", 8, 1, 1},
                                   {"Pipeline Parallel", 1, 2, 1},
                                   {"Pipeline Parallel", 1, 4, 1},
                                   {"Pipeline Parallel", 1, 8, 1},
                                   {"TP + PP", 2, 2, 1},
                                   {"TP + PP", 2, 4, 1},
                                   {"TP + PP", 4, 2, 1},
                                   {"TP + PP", 4, 4, 1}};
    const bool moe = first["parameters"]["per_component"].value("experts", 0.0) > 0;
    if (moe)
        for (int ep : {2, 4, 8}) layouts.push_back({"Expert Parallel", 1, 1, ep});
    json strategies = json::array();
    for (const Layout& l : layouts) {
        json s = inference_scenario(o, at);
        s["parallelism"] = {{"tensor_parallel_size", l.tp},
                            {"pipeline_parallel_size", l.pp},
                            {"expert_parallel_size", l.ep},
                            {"data_parallel_size", 1}};
        s["hardware"] = {{"num_gpus", l.tp * l.pp * l.ep}};
        json bytes = cell(s, errors);
        json fit = smallest_fit(gpus, bytes);
        strategies.push_back({{"strategy", l.strategy},
                              {"tp", l.tp},
                              {"pp", l.pp},
                              {"ep", l.ep},
                              {"dp", 1},
                              {"bytes_per_gpu", bytes},
                              {"smallest_gpu", fit.is_null() ? json(nullptr) : fit["id"]}});
    }
    out["strategies"] = strategies;

    // One GPU: what each column needs at that dtype, and which cards hold it.
    const json inference = cell(inference_scenario(o, at), errors);
    const json training = trains_in(at) ? cell(training_scenario(o, at), errors) : json(nullptr);
    const json lora =
        one_of(at, {"fp32", "fp16", "bf16", "int8", "int4"}) ? cell(lora_scenario(o, at), errors) : json(nullptr);
    out["minimum"] = {{"inference_bytes", inference}, {"training_bytes", training}, {"lora_bytes", lora}};
    json listed = json::array();
    auto fits = [](const json& need, const json& g) -> json {
        if (!need.is_number()) return nullptr;
        return need.get<double>() <= g["memory_bytes"].get<double>();
    };
    for (const json& g : gpus) {
        const std::string id = g["id"];
        const bool common = std::any_of(std::begin(kRecommendedGpus), std::end(kRecommendedGpus),
                                        [&](const char* r) { return id == r; });
        const bool own =
            std::any_of(o.user_gpus.begin(), o.user_gpus.end(), [&](const json& u) { return u["id"] == id; });
        if (!common && !own) continue;
        listed.push_back({{"id", id},
                          {"name", g["name"]},
                          {"memory_bytes", g["memory_bytes"]},
                          {"inference", fits(inference, g)},
                          {"training", fits(training, g)},
                          {"lora", fits(lora, g)}});
    }
    out["gpus"] = listed;
    return out;
}

namespace {

std::string amount(const json& bytes, bool gb) {
    if (!bytes.is_number()) return "-";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f",
                  bytes.get<double>() / (gb ? gpumem::kGB : static_cast<double>(gpumem::kGiB)));
    return buf;
}

std::string upper(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    return s;
}

std::string with_commas(std::uint64_t n) {
    std::string s = std::to_string(n);
    for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<std::size_t>(i), ",");
    return s;
}

std::string pad(const std::string& s, std::size_t width) {
    return s.size() >= width ? s + " " : s + std::string(width - s.size(), ' ');
}

const std::string kRule(80, '=');
const std::string kLine(80, '-');

}  // namespace

std::string table_text(const json& t, bool gb) {
    const std::string unit = gb ? "(GB)" : "(GiB)";
    std::ostringstream out;
    out << kRule << "\nModel: " << gpumem::display_text(t["model"]["name"].get<std::string>(), 200)
        << "\nArchitecture: " << gpumem::display_text(t["model"]["model_type"].get<std::string>())
        << "\nParameters: " << with_commas(t["parameters"].get<std::uint64_t>()) << "\n"
        << kRule << "\n\n";
    out << "Memory Requirements by Data Type and Scenario (batch " << t["settings"]["batch_size"].dump() << " x "
        << t["settings"]["sequence_length"].dump() << " tokens, LoRA rank " << t["settings"]["lora_rank"].dump()
        << "):\n"
        << kRule << "\n";
    out << pad("Data Type", 13) << pad("Weights", 13) << pad("Inference", 13) << pad("Training", 13) << "LoRA\n";
    out << pad("", 13) << pad(unit, 13) << pad(unit, 13) << pad("(Adam) " + unit, 13) << unit << "\n" << kLine << "\n";
    for (const json& r : t["rows"])
        out << pad(upper(r["dtype"]), 13) << pad(amount(r["weights_bytes"], gb), 13)
            << pad(amount(r["inference_bytes"], gb), 13) << pad(amount(r["training_bytes"], gb), 13)
            << amount(r["lora_bytes"], gb) << "\n";
    if (t.contains("strategies")) {
        const std::string at = upper(t["detailed_dtype"]);
        out << "\nParallelization Strategies (" << at << " Inference):\n" << kRule << "\n";
        out << pad("Strategy", 20) << pad("TP", 5) << pad("PP", 5) << pad("EP", 5) << pad("DP", 5)
            << pad("Memory/GPU " + unit, 18) << "Smallest GPU\n"
            << kLine << "\n";
        for (const json& s : t["strategies"])
            out << pad(s["strategy"], 20) << pad(s["tp"].dump(), 5) << pad(s["pp"].dump(), 5) << pad(s["ep"].dump(), 5)
                << pad(s["dp"].dump(), 5) << pad(amount(s["bytes_per_gpu"], gb), 18)
                << (s["smallest_gpu"].is_null() ? std::string("none") : s["smallest_gpu"].get<std::string>()) << "\n";
        out << "\nRecommendations (" << at << ", one GPU):\n" << kRule << "\n";
        out << pad("GPU", 20) << pad("Memory " + unit, 14) << pad("Inference", 12) << pad("Training", 12) << "LoRA\n"
            << kLine << "\n";
        auto mark = [](const json& v) { return v.is_null() ? std::string("-") : v.get<bool>() ? "yes" : "no"; };
        for (const json& g : t["gpus"])
            out << pad(g["id"], 20) << pad(amount(g["memory_bytes"], gb), 14) << pad(mark(g["inference"]), 12)
                << pad(mark(g["training"]), 12) << mark(g["lora"]) << "\n";
        out << "\nMinimum GPU Requirements (" << at << "):\n" << kLine << "\n";
        const json& m = t["minimum"];
        out << "Single GPU Inference: " << amount(m["inference_bytes"], gb) << " " << unit.substr(1, unit.size() - 2)
            << "\nSingle GPU Training: " << amount(m["training_bytes"], gb) << " " << unit.substr(1, unit.size() - 2)
            << "\nSingle GPU LoRA: " << amount(m["lora_bytes"], gb) << " " << unit.substr(1, unit.size() - 2) << "\n";
    }
    out << "\nnotes:\n";
    for (const json& n : t["notes"]) out << "  - " << n.get<std::string>() << "\n";
    return out.str();
}

json types_list(const json& user_dtypes, const json& user_gpus) {
    json dtypes = json::array(), gpus = json::array();
    for (const json& f : gpumem::list_formats())
        dtypes.push_back({{"id", f["id"]},
                          {"bytes_per_param", f["bytes_per_param"]},
                          {"about", f.value("about", "")},
                          {"source", "catalogue"}});
    for (const json& d : user_dtypes) {
        json row = d;
        row["source"] = "config-dir";
        dtypes.push_back(row);
    }
    for (const json& g : gpumem::list_gpus())
        gpus.push_back({{"id", g["id"]}, {"name", g["name"]}, {"memory_gb", g["memory_gb"]}, {"source", "catalogue"}});
    for (const json& g : user_gpus)
        gpus.push_back({{"id", g["id"]}, {"name", g["name"]}, {"memory_gb", g["memory_gb"]}, {"source", "config-dir"}});
    return {{"dtypes", dtypes}, {"gpus", gpus}};
}

std::string types_text(const json& types) {
    std::ostringstream out;
    out << "Data types (bytes per parameter, scales included):\n";
    for (const json& d : types["dtypes"]) {
        char bytes[32];
        std::snprintf(bytes, sizeof bytes, "%.4f", d["bytes_per_param"].get<double>());
        out << "  " << pad(gpumem::display_text(d["id"].get<std::string>(), 40), 10) << pad(bytes, 9)
            << gpumem::display_text(d["about"].get<std::string>(), 200)
            << (d["source"] == "config-dir" ? " (--config-dir)" : "") << "\n";
    }
    out << "GPUs (memory, GB):\n";
    for (const json& g : types["gpus"])
        out << "  " << pad(gpumem::display_text(g["id"].get<std::string>(), 40), 20) << pad(g["memory_gb"].dump(), 6)
            << gpumem::display_text(g["name"].get<std::string>(), 120)
            << (g["source"] == "config-dir" ? " (--config-dir)" : "") << "\n";
    return out.str();
}

namespace {

bool read_json(const std::string& path, const ReadFile& read, json& doc, bool& found, std::string& error) {
    std::string why;
    std::optional<std::string> text = read(path, why);
    found = text.has_value();
    if (!text) {
        error = why;  // a file over the size limit; a missing one adds nothing
        return why.empty();
    }
    std::optional<json> parsed = gpumem::parse_json(*text, error);
    if (!parsed) {
        error = path + ": " + error;
        return false;
    }
    doc = *parsed;
    return true;
}

}  // namespace

// The files read here; what they say is read by the core's reader (gpumem/user_catalogue.h), the
// page's file import's too.
bool read_config_dir(const std::string& dir, const ReadFile& read, json& dtypes, json& gpus,
                     std::vector<std::string>& notes, std::string& error) {
    dtypes = json::array();
    gpus = json::array();
    const std::string base = dir.empty() || dir.back() == '/' ? dir : dir + "/";
    json doc;
    bool found = false;
    const std::string dtype_file = base + "data_types.json";
    if (!read_json(dtype_file, read, doc, found, error)) return false;
    if (found && !gpumem::detail::read_user_dtypes(doc, dtype_file, dtypes, notes, error)) return false;
    const std::string gpu_file = base + "gpu_types.json";
    if (!read_json(gpu_file, read, doc, found, error)) return false;
    if (found && !gpumem::detail::read_user_gpus(doc, gpu_file, gpus, notes, error)) return false;
    return true;
}

}  // namespace gpumem::cli
