// `trtllm-serve` (TensorRT-LLM's PyTorch backend), read and written through one table (format.h).
// Options follow NVIDIA/TensorRT-LLM tensorrt_llm/commands/serve.py (click options, underscores)
// and tensorrt_llm/llmapi/llm_args.py (KvCacheConfig), as tests/data/formats/tensorrt_llm.json lists
// them with their commits. The weights' format comes from the checkpoint (ModelOpt) and the KV
// cache's dtype from the --extra_llm_api_options YAML (kv_cache_config.dtype): neither is a flag.
// Expert parallelism (--ep_size) splits the experts inside the tensor-parallel group
// (moe_tp_size x moe_ep_size = tp_size), so each GPU holds 1/tp of them either way.
#include <string>
#include <vector>

#include "formats/serving.h"
#include "gpumem/gpumem.h"

namespace gpumem::detail {

namespace {

void read_model_word(Reader&) {}
void read_backend(Reader& r) {
    auto v = r.string();
    if (v && *v != "pytorch")
        r.warn("backend " + *v +
               ": gpumem models the PyTorch backend's KV cache and buffers; a TensorRT engine "
               "plans its own");
}
void read_ep(Reader& r) {
    if (auto v = r.uint(1, 1 << 16); v && *v > 1)
        r.assume("--ep_size " + std::to_string(*v) +
                 ": the experts are split inside the tensor-parallel group, 1/tp of them per GPU as with TP alone");
}
void read_extra_options(Reader& r) {
    r.warn(
        "the YAML it names (kv_cache_config.dtype, enable_attention_dp, ...) is not read here; its settings are "
        "not in the estimate");
}

const Key kKeys[] = {
    {"@model", "model", read_model_word, [](Writer& w) -> std::optional<ojson> { return served_model(w.r); }},
    {"backend", "", read_backend, [](Writer&) -> std::optional<ojson> { return "pytorch"; }},
    {"max_batch_size", "inference.batch_size", [](Reader& r) { read_uint_into(r, "inference.batch_size", 1, 1000000); },
     [](Writer& w) { return inference_value(w, "batch_size"); }},
    {"max_num_tokens", "inference.max_num_tokens",
     [](Reader& r) { read_uint_into(r, "inference.max_num_tokens", 1, 1 << 24); },
     [](Writer& w) { return inference_value(w, "max_num_tokens"); }},
    {"max_seq_len", "inference.context_len",
     [](Reader& r) { read_uint_into(r, "inference.context_len", 1, 100000000); },
     [](Writer& w) { return inference_value(w, "context_len"); }},
    {"kv_cache_free_gpu_memory_fraction", "inference.free_gpu_memory_fraction",
     [](Reader& r) { read_fraction_into(r, "inference.free_gpu_memory_fraction"); },
     [](Writer& w) { return inference_value(w, "free_gpu_memory_fraction"); }, "free_gpu_memory_fraction"},
    {"tp_size", "parallelism.tensor_parallel_size", [](Reader& r) { read_parallel(r, "tensor_parallel_size"); },
     [](Writer& w) { return w.r.tp > 1 ? std::optional<ojson>(w.r.tp) : std::nullopt; }, "tensor_parallel_size"},
    {"pp_size", "parallelism.pipeline_parallel_size", [](Reader& r) { read_parallel(r, "pipeline_parallel_size"); },
     [](Writer& w) { return w.r.pp > 1 ? std::optional<ojson>(w.r.pp) : std::nullopt; }, "pipeline_parallel_size"},
    {"ep_size", "", read_ep, nullptr, "moe_expert_parallel_size"},
    {"extra_llm_api_options", "", read_extra_options, nullptr, "config"},
    {"cp_size", "", [](Reader& r) { warn_unmodelled(r, "context parallelism"); }, nullptr, "context_parallel_size"},
    {"max_beam_width", "", [](Reader& r) { warn_unmodelled(r, "beams multiply the KV cache per request"); }, nullptr},
};

// Options that do not change GPU memory.
const char* const kIgnored[] = {"host",
                                "port",
                                "tokenizer",
                                "custom_tokenizer",
                                "log_level",
                                "trust_remote_code",
                                "revision",
                                "reasoning_parser",
                                "tool_parser",
                                "num_postprocess_workers",
                                "gpus_per_node",
                                "metadata_server_config_file",
                                "server_role",
                                "otlp_traces_endpoint",
                                "disagg_cluster_uri",
                                "chat_template",
                                "media_io_kwargs",
                                "fail_fast_on_attention_window_too_large",
                                "custom_module_dirs",
                                "enable_chunked_prefill",
                                "cluster_size",
                                "moe_cluster_parallel_size"};

void refuse(Writer& wr) {
    const Run& r = wr.r;
    const std::string f = r.inference()["weight_format"];
    const bool plain = f == "bf16" || f == "fp16" || f == "fp32";
    const bool from_checkpoint = f == "fp8" || f == "int4" || f == "nvfp4" || f == "int8" || f == "mxfp4";
    if (!plain && !from_checkpoint)
        wr.w.refuse("inference.weight_format",
                    "TensorRT-LLM serves bf16, fp16, fp32 and ModelOpt-quantized (fp8, int8, int4, nvfp4, mxfp4) "
                    "checkpoints",
                    f);
    const std::string kv = r.inference()["kv_cache_dtype"];
    if (kv != "fp8" && kv != "fp16" && kv != "bf16" && kv != "fp32")
        wr.w.refuse("inference.kv_cache_dtype", "TensorRT-LLM's kv_cache_config.dtype is auto or fp8", kv);
    if (r.ep > 1)
        wr.w.refuse("parallelism.expert_parallel_size",
                    "trtllm-serve splits the experts inside its tensor-parallel group (--ep_size divides --tp_size); "
                    "attention data parallelism (enable_attention_dp) is an --extra_llm_api_options setting gpumem "
                    "does not write",
                    std::to_string(r.ep));
    if (r.cp > 1)
        wr.w.refuse("parallelism.context_parallel_size",
                    "trtllm-serve's --cp_size is not the layout gpumem models as context parallel",
                    std::to_string(r.cp));
}

// The dtype a bundled checkpoint is stored in (its config's torch_dtype), "" when not known.
std::string checkpoint_dtype(const Run& r) {
    const json& m = r.s["model"];
    if (!m.contains("preset") || !m["preset"].is_string()) return "";
    std::optional<json> p = find_preset(m["preset"].get<std::string>());
    if (!p || !p->contains("config")) return "";
    const json& c = (*p)["config"];
    const json d = c.contains("torch_dtype") ? c["torch_dtype"] : c.value("dtype", json());
    if (!d.is_string()) return "";
    const std::string t = d;
    return t == "bfloat16" ? "bf16" : t == "float16" ? "fp16" : t == "float32" ? "fp32" : "";
}

void finish_write(Writer& wr, ojson& doc) {
    const Run& r = wr.r;
    wr.w.file_name = "trtllm_serve.sh";
    std::vector<std::string> head = {"trtllm-serve"};
    head.push_back(doc["@model"].get<std::string>());  // the positional model first
    doc.erase("@model");
    wr.w.text = command_text(head, doc);
    const std::string f = r.inference()["weight_format"];
    if (r.inference()["kv_cache_dtype"] == "fp8")
        wr.w.notes.push_back("KV cache fp8: give --extra_llm_api_options a YAML with kv_cache_config: {dtype: fp8}");
    if (f != "bf16" && f != "fp16" && f != "fp32")
        wr.w.notes.push_back("weights " + f + ": serve a checkpoint quantized that way (ModelOpt)");
    else if (f != checkpoint_dtype(r))
        wr.w.notes.push_back("weights " + f + ": trtllm-serve loads the checkpoint in its own dtype (the LLM API's " +
                             "dtype \"auto\"); give --extra_llm_api_options a YAML with dtype: " + torch_dtype_name(f));
    if (r.dp > 1)
        wr.w.notes.push_back("data_parallel_size " + std::to_string(r.dp) +
                             ": trtllm-serve serves one replica per launch; start " + std::to_string(r.dp) +
                             " of these behind a router");
}

void finish_read(Reader& r) {
    if (!r.has("inference.free_gpu_memory_fraction"))
        r.assume("--kv_cache_free_gpu_memory_fraction not given: KvCacheConfig's 0.9");
    finish_serving(r, "tensorrt_llm", VisibleGpus::One);
}

}  // namespace

extern const Tool kTensorrtLlmTool = {
    ConfigFormat::TensorrtLlm, "command", "trtllm_serve.sh", kKeys,      std::size(kKeys), kIgnored,
    std::size(kIgnored),       refuse,    finish_write,      finish_read};

}  // namespace gpumem::detail
