// The exporters (export.h). Each one reads the resolved scenario of an estimate, so what it writes
// is what was estimated.
#include "export/export.h"

#include "formats/format.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "gpumem/gpumem.h"

namespace gpumem::detail {

namespace {

using ojson = nlohmann::ordered_json;

//-----------------------------------------------------------------------------
// Writing text: shell words, command lines, YAML
//-----------------------------------------------------------------------------

// A command line, one option per continued line.
class Command {
public:
    explicit Command(std::vector<std::string> words) {
        for (const std::string& w : words) head_ += (head_.empty() ? "" : " ") + shell_word(w);
    }
    Command& flag(const std::string& f) {
        lines_.push_back(f);
        return *this;
    }
    Command& option(const std::string& f, const std::string& value) {
        lines_.push_back(f + " " + shell_word(value));
        return *this;
    }
    Command& option(const std::string& f, double value) { return option(f, number_text(value)); }
    // key=value (torchtune's overrides).
    Command& set(const std::string& key, const std::string& value) {
        lines_.push_back(shell_word(key + "=" + value));
        return *this;
    }
    std::string text() const {
        std::string out = head_;
        for (const std::string& l : lines_) out += " \\\n  " + l;
        return out + "\n";
    }

private:
    std::string head_;
    std::vector<std::string> lines_;
};

//-----------------------------------------------------------------------------
// Training formats
//-----------------------------------------------------------------------------

//-----------------------------------------------------------------------------
// Serving formats
//-----------------------------------------------------------------------------

struct Serve {
    std::uint64_t batch, context, block_size = 16, max_batched = 0, ubatch = 512;
    std::int64_t gpu_layers = -1;
    std::string weight_format, kv_dtype, engine, attention;
    double utilization = 0.9;

    explicit Serve(const json& s) {
        const json& i = s["inference"];
        batch = i["batch_size"];
        context = i["context_len"];
        weight_format = i["weight_format"];
        kv_dtype = i["kv_cache_dtype"];
        engine = i["engine"];
        attention = i["attention"];
        utilization = i.value("gpu_memory_utilization", 0.9);
        block_size = i.value("block_size", std::uint64_t{16});
        max_batched = i.value("max_num_batched_tokens", std::uint64_t{0});
        gpu_layers = i.value("gpu_layers", std::int64_t{-1});
        ubatch = i.value("ubatch", std::uint64_t{512});
        mem_fraction_static = i.value("mem_fraction_static", 0.88);
        chunked_prefill = i.value("chunked_prefill_size", std::uint64_t{8192});
        max_total_tokens = i.value("max_total_tokens", std::uint64_t{4096});
        max_prefill_tokens = i.value("max_batch_prefill_tokens", std::uint64_t{4146});
        cuda_memory_fraction = i.value("cuda_memory_fraction", 1.0);
        free_fraction = i.value("free_gpu_memory_fraction", 0.9);
        max_num_tokens = i.value("max_num_tokens", std::uint64_t{8192});
    }
    // sglang, tgi and tensorrt_llm (scenario.cpp, read_serving_engine_settings)
    double mem_fraction_static = 0.88, cuda_memory_fraction = 1, free_fraction = 0.9;
    std::uint64_t chunked_prefill = 8192, max_total_tokens = 4096, max_prefill_tokens = 4146, max_num_tokens = 8192;
};

// How vLLM and SGLang, which load the same checkpoint formats, are told the weights' and the KV
// cache's formats: --dtype for plain floats, --quantization for what they quantize on load, nothing
// for a checkpoint quantized beforehand (they read its quantization_config). `fp8_kv` is the
// engine's name for an fp8 cache.
struct ServedFormats {
    std::string dtype, quantization, kv;
    bool from_checkpoint = false;
};

ServedFormats served_formats(const Serve& v, const char* engine, const char* fp8_kv, Written& w) {
    static const char* const kQuantization[][2] = {
        {"fp8", "fp8"}, {"nf4", "bitsandbytes"}, {"fp4", "bitsandbytes"}, {"mxfp4", "mxfp4"}};
    ServedFormats f;
    if (v.weight_format == "bf16" || v.weight_format == "fp16" || v.weight_format == "fp32")
        f.dtype = torch_dtype_name(v.weight_format);
    for (const auto& row : kQuantization)
        if (v.weight_format == row[0]) f.quantization = row[1];
    f.from_checkpoint = v.weight_format == "int4" || v.weight_format == "nvfp4";
    if (f.dtype.empty() && f.quantization.empty() && !f.from_checkpoint)
        w.refuse("inference.weight_format",
                 std::string(engine) +
                     " serves bf16, fp16, fp32, fp8, nf4/fp4 (bitsandbytes), mxfp4, and "
                     "GPTQ/AWQ (int4) or NVFP4 checkpoints",
                 v.weight_format);
    if (v.kv_dtype == "fp8") f.kv = fp8_kv;
    else if (v.kv_dtype != "fp16" && v.kv_dtype != "bf16" && v.kv_dtype != "fp32")
        w.refuse("inference.kv_cache_dtype",
                 std::string(engine) + "'s --kv-cache-dtype is auto (the model's dtype) or fp8", v.kv_dtype);
    return f;
}

// The note for a checkpoint quantized beforehand.
void note_quantized_checkpoint(const ServedFormats& f, const Serve& v, const char* engine, Written& w) {
    if (f.from_checkpoint)
        w.notes.push_back("weights " + v.weight_format + ": serve a checkpoint quantized that way (" + engine +
                          " reads its quantization_config)");
}

Written write_vllm(const Run& r) {
    Written w;
    w.file_name = "vllm_serve.sh";
    const Serve v(r.s);
    const ServedFormats f = served_formats(v, "vLLM", "fp8", w);
    if (!w.issues.empty()) return w;

    Command c({"vllm", "serve", r.model});
    if (!f.dtype.empty()) c.option("--dtype", f.dtype);
    if (!f.quantization.empty()) c.option("--quantization", f.quantization);
    c.option("--gpu-memory-utilization", v.utilization);
    c.option("--max-model-len", static_cast<double>(v.context));
    c.option("--max-num-seqs", static_cast<double>(v.batch));
    c.option("--max-num-batched-tokens", static_cast<double>(v.max_batched));
    c.option("--block-size", static_cast<double>(v.block_size));
    if (!f.kv.empty()) c.option("--kv-cache-dtype", f.kv);
    if (r.tp > 1) c.option("--tensor-parallel-size", static_cast<double>(r.tp));
    if (r.pp > 1) c.option("--pipeline-parallel-size", static_cast<double>(r.pp));
    w.text = c.text();
    note_quantized_checkpoint(f, v, "vLLM", w);
    return w;
}

// SGLang (sgl-project/sglang python/sglang/srt/server_args.py, the flags of
// tests/data/formats/sglang.json): the static share, the context, the running requests and the
// chunked prefill that size its pool (inference.cpp, sglang()).
Written write_sglang(const Run& r) {
    Written w;
    w.file_name = "sglang_serve.sh";
    const Serve v(r.s);
    const ServedFormats f = served_formats(v, "SGLang", "fp8_e4m3", w);
    if (!w.issues.empty()) return w;

    Command c({"python", "-m", "sglang.launch_server"});
    c.option("--model-path", r.model);
    if (!f.dtype.empty()) c.option("--dtype", f.dtype);
    if (!f.quantization.empty()) c.option("--quantization", f.quantization);
    c.option("--mem-fraction-static", v.mem_fraction_static);
    c.option("--context-length", static_cast<double>(v.context));
    c.option("--max-running-requests", static_cast<double>(v.batch));
    c.option("--chunked-prefill-size", static_cast<double>(v.chunked_prefill));
    if (!f.kv.empty()) c.option("--kv-cache-dtype", f.kv);
    if (r.tp > 1) c.option("--tp-size", static_cast<double>(r.tp));
    if (r.pp > 1) c.option("--pp-size", static_cast<double>(r.pp));
    w.text = c.text();
    note_quantized_checkpoint(f, v, "SGLang", w);
    return w;
}

// TGI (huggingface/text-generation-inference launcher/src/main.rs at v3.3.7, the flags of
// tests/data/formats/tgi.json): the request and warm-up sizes and the memory fraction that size its
// KV blocks (inference.cpp, tgi()).
Written write_tgi(const Run& r) {
    Written w;
    w.file_name = "tgi_serve.sh";
    const Serve v(r.s);
    static const char* const kQuantize[][2] = {
        {"fp8", "fp8"}, {"nf4", "bitsandbytes-nf4"}, {"fp4", "bitsandbytes-fp4"}, {"int8", "bitsandbytes"}};
    std::string dtype, quantize;
    if (v.weight_format == "bf16" || v.weight_format == "fp16") dtype = torch_dtype_name(v.weight_format);
    for (const auto& row : kQuantize)
        if (v.weight_format == row[0]) quantize = row[1];
    const bool from_checkpoint = v.weight_format == "int4";
    if (dtype.empty() && quantize.empty() && !from_checkpoint)
        w.refuse("inference.weight_format",
                 "TGI serves bf16, fp16, fp8, nf4/fp4/int8 (bitsandbytes) and GPTQ/AWQ (int4) checkpoints",
                 v.weight_format);
    std::string kv;
    if (v.kv_dtype == "fp8") kv = "fp8_e4m3fn";
    else if (v.kv_dtype != "fp16" && v.kv_dtype != "bf16")
        w.refuse("inference.kv_cache_dtype", "TGI's --kv-cache-dtype is the model's dtype or fp8", v.kv_dtype);
    if (r.pp > 1)
        w.refuse("parallelism.pipeline_parallel_size", "TGI shards by tensor parallelism only (--num-shard)",
                 json(r.pp).dump());
    if (!w.issues.empty()) return w;

    Command c({"text-generation-launcher"});
    c.option("--model-id", r.model);
    if (!dtype.empty()) c.option("--dtype", dtype);
    if (!quantize.empty()) c.option("--quantize", quantize);
    c.option("--max-input-tokens", static_cast<double>(v.max_total_tokens - 1));
    c.option("--max-total-tokens", static_cast<double>(v.max_total_tokens));
    c.option("--max-batch-prefill-tokens", static_cast<double>(v.max_prefill_tokens));
    c.option("--cuda-memory-fraction", v.cuda_memory_fraction);
    if (!kv.empty()) c.option("--kv-cache-dtype", kv);
    if (r.tp > 1) c.option("--num-shard", static_cast<double>(r.tp));
    w.text = c.text();
    w.notes.push_back(
        "TGI sizes its batch from the KV blocks its warm-up leaves room for; the estimate's "
        "serving.max_concurrent_sequences is that batch at context_len");
    if (from_checkpoint) w.notes.push_back("weights int4: add --quantize gptq or awq, as the checkpoint is");
    return w;
}

// TensorRT-LLM (NVIDIA/TensorRT-LLM tensorrt_llm/commands/serve.py, the flags of
// tests/data/formats/tensorrt_llm.json): the KV cache's share of the free memory, the batch and the
// tokens per step that size the activations (inference.cpp, tensorrt_llm()).
Written write_tensorrt_llm(const Run& r) {
    Written w;
    w.file_name = "trtllm_serve.sh";
    const Serve v(r.s);
    const bool plain = v.weight_format == "bf16" || v.weight_format == "fp16" || v.weight_format == "fp32";
    const bool from_checkpoint = v.weight_format == "fp8" || v.weight_format == "int4" || v.weight_format == "nvfp4" ||
                                 v.weight_format == "int8" || v.weight_format == "mxfp4";
    if (!plain && !from_checkpoint)
        w.refuse("inference.weight_format",
                 "TensorRT-LLM serves bf16, fp16, fp32 and ModelOpt-quantized (fp8, int8, int4, nvfp4, mxfp4) "
                 "checkpoints",
                 v.weight_format);
    if (v.kv_dtype != "fp8" && v.kv_dtype != "fp16" && v.kv_dtype != "bf16" && v.kv_dtype != "fp32")
        w.refuse("inference.kv_cache_dtype", "TensorRT-LLM's kv_cache_config.dtype is auto or fp8", v.kv_dtype);
    if (!w.issues.empty()) return w;

    Command c({"trtllm-serve", r.model});
    c.option("--backend", std::string("pytorch"));
    c.option("--max_batch_size", static_cast<double>(v.batch));
    c.option("--max_num_tokens", static_cast<double>(v.max_num_tokens));
    c.option("--max_seq_len", static_cast<double>(v.context));
    c.option("--kv_cache_free_gpu_memory_fraction", v.free_fraction);
    if (r.tp > 1) c.option("--tp_size", static_cast<double>(r.tp));
    if (r.pp > 1) c.option("--pp_size", static_cast<double>(r.pp));
    w.text = c.text();
    if (v.kv_dtype == "fp8")
        w.notes.push_back("KV cache fp8: give --extra_llm_api_options a YAML with kv_cache_config: {dtype: fp8}");
    if (from_checkpoint)
        w.notes.push_back("weights " + v.weight_format + ": serve a checkpoint quantized that way (ModelOpt)");
    return w;
}

// llama.cpp's cache type name of a KV dtype ("" when it has none).
std::string llama_cache_type(const std::string& kv) {
    static const char* const kMap[][2] = {
        {"fp32", "f32"}, {"fp16", "f16"}, {"bf16", "bf16"}, {"int8", "q8_0"}, {"int4", "q4_0"}};
    for (const auto& row : kMap)
        if (kv == row[0]) return row[1];
    return "";
}

Written write_llama_cpp(const Run& r) {
    Written w;
    w.file_name = "llama_server.sh";
    const Serve v(r.s);
    static const char* const kGguf[][2] = {{"fp32", "F32"},      {"fp16", "F16"},  {"bf16", "BF16"},
                                           {"q8_0", "Q8_0"},     {"q6_k", "Q6_K"}, {"q5_k_m", "Q5_K_M"},
                                           {"q4_k_m", "Q4_K_M"}, {"q4_0", "Q4_0"}, {"mxfp4", "MXFP4"}};
    std::string gguf;
    for (const auto& row : kGguf)
        if (v.weight_format == row[0]) gguf = row[1];
    if (gguf.empty())
        w.refuse("inference.weight_format",
                 "llama.cpp loads GGUF files: fp32, fp16, bf16, q8_0, q6_k, q5_k_m, q4_k_m, "
                 "q4_0 or mxfp4",
                 v.weight_format);
    const std::string cache = llama_cache_type(v.kv_dtype);
    if (cache.empty())
        w.refuse("inference.kv_cache_dtype", "llama.cpp's cache types are f32, f16, bf16, q8_0 (int8) and q4_0 (int4)",
                 v.kv_dtype);
    if (r.num_gpus > 1 || r.tp > 1)
        w.refuse("hardware.num_gpus", "gpumem models llama.cpp on one GPU", std::to_string(r.num_gpus));
    if (!w.issues.empty()) return w;

    std::string base = r.model.substr(r.model.find('/') == std::string::npos ? 0 : r.model.find('/') + 1);
    Command c({"llama-server"});
    c.option("-m", base + "-" + gguf + ".gguf");
    c.option("--n-gpu-layers", v.gpu_layers < 0 ? 999.0 : static_cast<double>(v.gpu_layers));
    c.option("--ctx-size", static_cast<double>(v.context * v.batch));  // shared by the parallel sequences
    c.option("--parallel", static_cast<double>(v.batch));
    c.option("--ubatch-size", static_cast<double>(v.ubatch));
    const bool flash = v.attention != "eager";
    c.option("--flash-attn", flash ? "on" : "off");
    if (cache != "f16") c.option("--cache-type-k", cache).option("--cache-type-v", cache);
    w.text = c.text();
    w.notes.push_back("-m: the GGUF file of " + r.model + " in " + gguf);
    if ((cache == "q8_0" || cache == "q4_0") && !flash)
        w.notes.push_back("a quantized V cache needs flash attention in llama.cpp");
    return w;
}

//-----------------------------------------------------------------------------
// The request
//-----------------------------------------------------------------------------

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

Written write(ExportFormat f, const Run& r, std::uint64_t per_node, const std::string& script) {
    switch (f) {
        case ExportFormat::Deepspeed:
            return write_run(f, r, per_node, script);
        case ExportFormat::Accelerate:
            return write_run(f, r, per_node, script);
        case ExportFormat::Torchrun:
            return write_run(f, r, per_node, script);
        case ExportFormat::Torchtune:
            return write_run(f, r, per_node, script);
        case ExportFormat::Axolotl:
            return write_run(f, r, per_node, script);
        case ExportFormat::Litgpt:
            return write_run(f, r, per_node, script);
        case ExportFormat::Vllm:
            return write_vllm(r);
        case ExportFormat::LlamaCpp:
            return write_llama_cpp(r);
        case ExportFormat::Sglang:
            return write_sglang(r);
        case ExportFormat::Tgi:
            return write_tgi(r);
        case ExportFormat::TensorrtLlm:
            return write_tensorrt_llm(r);
    }
    return {};
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
        if (*format == ExportFormat::Litgpt) require_field(scenario, "training", "framework", "litgpt", fmt, issues);
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
    Written w = write(*format, run, per_node, script);
    if (!w.issues.empty()) return error_document(w.issues);
    json notes = w.notes;
    return {{"ok", true},
            {"format", fmt},
            {"kind", w.kind},
            {"file_name", w.file_name},
            {"text", w.text},
            {"notes", notes},
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
