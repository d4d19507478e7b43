// What the serving engines' readers and writers share (serving.h).
#include "formats/serving.h"

#include <string>

#include "gpumem/gpumem.h"

namespace gpumem::detail {

std::string served_model(const Run& r) {
    const json& m = r.s["model"];
    if (m.contains("hub_id") && m["hub_id"].is_string()) return m["hub_id"];
    // A bundled preset named by an alias: its Hub id (presets/aliases.json maps the alias to it).
    if (m.contains("preset") && m["preset"].is_string())
        if (std::optional<json> p = find_preset(m["preset"].get<std::string>()))
            if (p->contains("model_id") && (*p)["model_id"].is_string()) return (*p)["model_id"];
    return r.model;
}

void read_fraction_into(Reader& r, const char* field) {
    if (auto v = r.number(0.01, 1.0)) r.set(field, *v);
}

void read_parallel(Reader& r, const char* field) {
    if (auto v = r.uint(1, 1 << 16)) r.set(std::string("parallelism.") + field, *v);
}

void read_model(Reader& r) {
    if (auto v = r.string()) r.out().model = *v;
}

void warn_unmodelled(Reader& r, const char* what) { r.warn(std::string(what) + "; the estimate does not include it"); }

//-----------------------------------------------------------------------------
// vLLM's and SGLang's weight and KV-cache formats
//-----------------------------------------------------------------------------

ServedFormats served_formats(const Run& r, const char* engine, const char* fp8_kv, Written& w) {
    // What both quantize a plain checkpoint to on load: --quantization fp8 (dynamic per-tensor fp8),
    // bitsandbytes (4-bit NF4 in-flight), mxfp4.
    static const char* const kQuantization[][2] = {{"fp8", "fp8"}, {"nf4", "bitsandbytes"}, {"mxfp4", "mxfp4"}};
    const std::string weights = r.inference()["weight_format"], kv = r.inference()["kv_cache_dtype"];
    ServedFormats f;
    if (weights == "bf16" || weights == "fp16" || weights == "fp32") f.dtype = torch_dtype_name(weights);
    for (const auto& row : kQuantization)
        if (weights == row[0]) f.quantization = row[1];
    f.from_checkpoint = weights == "int4" || weights == "nvfp4";
    if (f.dtype.empty() && f.quantization.empty() && !f.from_checkpoint)
        w.refuse("inference.weight_format",
                 std::string(engine) +
                     " serves bf16, fp16, fp32, fp8, nf4 (bitsandbytes), mxfp4, and GPTQ/AWQ (int4) or NVFP4 "
                     "checkpoints",
                 weights);
    // The cache is the activation dtype unless told fp8; fp32 only when the weights are fp32.
    const bool half_weights = weights != "fp32";
    if (kv == "fp8") f.kv = fp8_kv;
    else if (kv == "fp32" && half_weights)
        w.refuse("inference.kv_cache_dtype",
                 std::string(engine) + " keeps the cache in the model's dtype (fp32 only with fp32 weights) or fp8",
                 kv);
    else if (kv != "fp16" && kv != "bf16" && kv != "fp32")
        w.refuse("inference.kv_cache_dtype",
                 std::string(engine) + "'s --kv-cache-dtype is auto (the model's dtype) or fp8", kv);
    return f;
}

void note_quantized_checkpoint(const ServedFormats& f, const Run& r, const char* engine, Written& w) {
    if (f.from_checkpoint)
        w.notes.push_back("weights " + r.inference()["weight_format"].get<std::string>() +
                          ": serve a checkpoint quantized that way (" + engine + " reads its quantization_config)");
}

void read_torch_dtype(Reader& r) {
    auto v = r.string();
    if (!v) return;
    if (*v == "auto") {
        r.assume(r.key() + " is \"auto\": the checkpoint's dtype (gpumem's weight_format auto)");
        return;
    }
    static const char* const kMap[][2] = {{"bfloat16", "bf16"}, {"bf16", "bf16"}, {"float16", "fp16"},
                                          {"half", "fp16"},     {"fp16", "fp16"}, {"float32", "fp32"},
                                          {"float", "fp32"},    {"fp32", "fp32"}};
    for (const auto& row : kMap)
        if (*v == row[0]) {
            r.out().scenario["_dtype"] = row[1];
            return;
        }
    r.issue("must be auto, bfloat16, float16 (half) or float32 (float)");
}

void read_quantization(Reader& r) {
    auto v = r.string();
    if (!v) return;
    // vLLM model_executor/layers/quantization/__init__.py QuantizationMethods; SGLang's --quantization
    // choices (tests/data/formats/{vllm,sglang}.json): the ones that store one of gpumem's formats.
    static const char* const kMap[][2] = {
        {"fp8", "fp8"},           {"fbgemm_fp8", "fp8"},     {"ptpc_fp8", "fp8"},     {"modelopt", "fp8"},
        {"modelopt_fp8", "fp8"},  {"w8a8_fp8", "fp8"},       {"bitsandbytes", "nf4"}, {"gptq", "int4"},
        {"awq", "int4"},          {"marlin", "int4"},        {"gptq_marlin", "int4"}, {"awq_marlin", "int4"},
        {"moe_wna16", "int4"},    {"auto-round", "int4"},    {"mxfp4", "mxfp4"},      {"modelopt_fp4", "nvfp4"},
        {"petit_nvfp4", "nvfp4"}, {"compressed-tensors", ""}};
    for (const auto& row : kMap)
        if (*v == row[0]) {
            if (std::string(row[1]).empty()) {
                r.assume(r.key() + " " + *v + ": the checkpoint's quantization_config decides the format");
                return;
            }
            if (*v == "bitsandbytes")
                r.assume(r.key() +
                         " bitsandbytes: read as nf4 (the 4-bit format a plain checkpoint is quantized to "
                         "on load; a bitsandbytes checkpoint keeps its own)");
            r.set("inference.weight_format", row[1]);
            return;
        }
    warn_unmodelled(r, ("quantization " + *v + " is not a weight format gpumem models").c_str());
}

void read_kv_dtype(Reader& r) {
    auto v = r.string();
    if (!v) return;
    if (*v == "auto") {
        r.assume(r.key() + " is \"auto\": the model's dtype");
        return;
    }
    static const char* const kMap[][2] = {
        {"fp8", "fp8"},   {"fp8_e4m3", "fp8"}, {"fp8_e5m2", "fp8"}, {"fp8_inc", "fp8"},  {"bfloat16", "bf16"},
        {"bf16", "bf16"}, {"float16", "fp16"}, {"fp16", "fp16"},    {"float32", "fp32"}, {"fp8_e4m3fn", "fp8"}};
    for (const auto& row : kMap)
        if (*v == row[0]) {
            r.set("inference.kv_cache_dtype", row[1]);
            return;
        }
    warn_unmodelled(r, ("cache dtype " + *v + " is not one gpumem models (fp32, fp16, bf16, fp8)").c_str());
}

//-----------------------------------------------------------------------------
// The end of a reading
//-----------------------------------------------------------------------------

namespace {

std::uint64_t size_of(const Reader& r, const char* field) {
    const json v = r.get(field);
    return v.is_number_unsigned() ? v.get<std::uint64_t>() : 1;
}

// The GPUs CUDA_VISIBLE_DEVICES lists (0 when it is not set).
std::uint64_t visible_gpus(const Doc& doc) {
    if (!doc.contains("_env") || !doc["_env"].contains("CUDA_VISIBLE_DEVICES")) return 0;
    const ojson& v = doc["_env"]["CUDA_VISIBLE_DEVICES"];
    if (!v.is_string()) return 0;
    std::uint64_t n = 0;
    bool in_item = false;
    for (char c : v.get<std::string>()) {
        if (c == ',') in_item = false;
        else if (c != ' ' && !in_item) {
            in_item = true;
            ++n;
        }
    }
    return n;
}

}  // namespace

void finish_serving(Reader& r, const char* engine, VisibleGpus mode) {
    json& s = r.out().scenario;
    s["mode"] = "inference";
    r.set("inference.engine", engine);
    const Doc& doc = r.doc();
    if (r.out().model.empty() && doc.contains("_args") && doc["_args"].is_array() && !doc["_args"].empty() &&
        doc["_args"][0].is_string())
        r.out().model = doc["_args"][0];
    if (s.contains("_dtype")) {
        if (!r.has("inference.weight_format")) r.set("inference.weight_format", s["_dtype"]);
        s.erase("_dtype");
    }
    const bool sized = r.has("parallelism.tensor_parallel_size") || r.has("parallelism.pipeline_parallel_size") ||
                       r.has("parallelism.data_parallel_size");
    const std::uint64_t visible = visible_gpus(doc);
    if (!sized && visible > 1) {
        const std::string n = std::to_string(visible);
        if (mode == VisibleGpus::Shard) {
            r.set("parallelism.tensor_parallel_size", visible);
            r.assume("CUDA_VISIBLE_DEVICES shows " + n + " GPUs and no shard count is given: " + engine +
                     " shards the model over all of them (tensor parallel " + n + ")");
        } else if (mode == VisibleGpus::Split) {
            r.out().warnings.push_back("CUDA_VISIBLE_DEVICES shows " + n + " GPUs: " + engine +
                                       " splits the layers over all of them (--split-mode layer); gpumem models "
                                       "one GPU holding every layer, an upper bound per GPU");
        } else {
            r.assume("CUDA_VISIBLE_DEVICES shows " + n + " GPUs, but no parallel size is given: " + engine +
                     " runs on one of them");
        }
    }
    // Unsharded by its own default: one GPU per server, whatever GPU count is given with the file (gpumem's
    // default for a serving scenario that gives only a count is one server over all of them).
    if (!sized && mode != VisibleGpus::Shard && !r.has("parallelism.tensor_parallel_size"))
        r.set("parallelism.tensor_parallel_size", 1);
    const std::uint64_t gpus = size_of(r, "parallelism.tensor_parallel_size") *
                               size_of(r, "parallelism.pipeline_parallel_size") *
                               size_of(r, "parallelism.data_parallel_size");
    r.set("hardware.num_gpus", gpus);
}

}  // namespace gpumem::detail
