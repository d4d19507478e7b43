// `vllm serve` (and `python -m vllm.entrypoints.openai.api_server`), read and written through one
// table (format.h). Flags and values follow vllm-project/vllm vllm/engine/arg_utils.py
// (EngineArgs.add_cli_args), vllm/config/cache.py (CacheDType) and
// vllm/model_executor/layers/quantization/__init__.py, as tests/data/formats/vllm.json lists them
// with their commits.
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "formats/serving.h"

namespace gpumem::detail {

namespace {

constexpr const char* kEngine = "vLLM";

ServedFormats formats_of(const Run& r) {
    Written scratch;  // refusals were made by refuse(), before the keys are written
    return served_formats(r, kEngine, "fp8", scratch);
}

// The positional model (vllm serve MODEL), or --model (the api_server's spelling).
void read_none(Reader&) {}
std::optional<ojson> write_model(Writer& w) { return served_model(w.r); }

std::optional<ojson> write_dtype(Writer& w) {
    const ServedFormats f = formats_of(w.r);
    return f.dtype.empty() ? std::nullopt : std::optional<ojson>(f.dtype);
}
std::optional<ojson> write_quantization(Writer& w) {
    const ServedFormats f = formats_of(w.r);
    return f.quantization.empty() ? std::nullopt : std::optional<ojson>(f.quantization);
}
std::optional<ojson> write_kv(Writer& w) {
    const ServedFormats f = formats_of(w.r);
    return f.kv.empty() ? std::nullopt : std::optional<ojson>(f.kv);
}

// vLLM's human-readable integers (vllm/engine/arg_utils.py human_readable_int, the type of
// --max-model-len and --max-num-batched-tokens): "32k" is 32 x 1000 (decimals allowed, "25.6k"),
// "32K" and, in later releases, "32Ki" are 32 x 1024. nullopt when the text has no such suffix.
std::optional<double> human_readable(const ojson& v) {
    if (!v.is_string()) return std::nullopt;
    std::string t = v.get<std::string>();
    double multiplier = 0;
    if (t.size() > 2 && t.compare(t.size() - 2, 2, "Ki") == 0) multiplier = 1024, t.resize(t.size() - 2);
    else if (t.size() > 1 && t.back() == 'K') multiplier = 1024, t.pop_back();
    else if (t.size() > 1 && t.back() == 'k') multiplier = 1000, t.pop_back();
    if (multiplier == 0 || t.size() > 20 || t.find_first_not_of("0123456789.") != std::string::npos)
        return std::nullopt;
    if (multiplier == 1024 && t.find('.') != std::string::npos) return std::nullopt;  // vLLM refuses decimals there
    char* end = nullptr;
    const double n = std::strtod(t.c_str(), &end);
    if (!end || *end != '\0') return std::nullopt;
    return std::floor(n * multiplier);
}

void read_tokens(Reader& r, const char* field, std::uint64_t max) {
    if (std::optional<double> n = human_readable(r.value())) {
        if (*n >= 1 && *n <= static_cast<double>(max)) r.set(field, static_cast<std::uint64_t>(*n));
        else r.issue("must be from 1 to " + std::to_string(max) + " tokens");
        return;
    }
    read_uint_into(r, field, 1, max);
}

void read_context(Reader& r) {
    if (r.value().is_string() && (r.value() == "auto" || r.value() == "-1")) {
        r.assume(r.key() + " is auto: the model's max_position_embeddings (vLLM's default); set it to be exact");
        return;
    }
    read_tokens(r, "inference.context_len", 100000000);
}

// Data parallelism: --data-parallel-size replicas, each of TP x PP GPUs. With
// --enable-expert-parallel the MoE layers' experts are split over TP x DP ranks instead of TP
// (vLLM's expert-parallel deployment guide, docs.vllm.ai serving/expert_parallel_deployment:
// "EP_SIZE = TP_SIZE x DP_SIZE"): gpumem's expert_parallel_size equal to the data-parallel size,
// the experts then sharded TP x EP ways.
std::optional<ojson> write_tp(Writer& w) { return w.r.tp > 1 ? std::optional<ojson>(w.r.tp) : std::nullopt; }
std::optional<ojson> write_pp(Writer& w) { return w.r.pp > 1 ? std::optional<ojson>(w.r.pp) : std::nullopt; }
std::optional<ojson> write_dp(Writer& w) { return w.r.dp > 1 ? std::optional<ojson>(w.r.dp) : std::nullopt; }
void read_expert_parallel(Reader& r) {
    if (r.value().is_boolean() && !r.value().get<bool>()) return;
    r.out().scenario["_expert_parallel"] = true;
}
std::optional<ojson> write_expert_parallel(Writer& w) {
    return w.r.ep > 1 ? std::optional<ojson>(nullptr) : std::nullopt;
}

const Key kKeys[] = {
    {"@model", "model", read_none, write_model},
    {"model", "model", read_model, nullptr},
    {"dtype", "inference.weight_format", read_torch_dtype, write_dtype},
    {"quantization", "inference.weight_format", read_quantization, write_quantization, "q"},
    {"gpu-memory-utilization", "inference.gpu_memory_utilization",
     [](Reader& r) { read_fraction_into(r, "inference.gpu_memory_utilization"); },
     [](Writer& w) { return inference_value(w, "gpu_memory_utilization"); }},
    {"max-model-len", "inference.context_len", read_context,
     [](Writer& w) { return inference_value(w, "context_len"); }},
    {"max-num-seqs", "inference.batch_size", [](Reader& r) { read_uint_into(r, "inference.batch_size", 1, 1000000); },
     [](Writer& w) { return inference_value(w, "batch_size"); }},
    {"max-num-batched-tokens", "inference.max_num_batched_tokens",
     [](Reader& r) { read_tokens(r, "inference.max_num_batched_tokens", 1 << 24); },
     [](Writer& w) { return inference_value(w, "max_num_batched_tokens"); }},
    {"block-size", "inference.block_size", [](Reader& r) { read_uint_into(r, "inference.block_size", 1, 1 << 16); },
     [](Writer& w) { return inference_value(w, "block_size"); }},
    {"kv-cache-dtype", "inference.kv_cache_dtype", read_kv_dtype, write_kv},
    {"tensor-parallel-size", "parallelism.tensor_parallel_size",
     [](Reader& r) { read_parallel(r, "tensor_parallel_size"); }, write_tp, "tp"},
    {"pipeline-parallel-size", "parallelism.pipeline_parallel_size",
     [](Reader& r) { read_parallel(r, "pipeline_parallel_size"); }, write_pp, "pp"},
    {"data-parallel-size", "parallelism.data_parallel_size", [](Reader& r) { read_parallel(r, "data_parallel_size"); },
     write_dp, "dp"},
    {"enable-expert-parallel", "parallelism.expert_parallel_size", read_expert_parallel, write_expert_parallel, "",
     true},
    // Memory flags gpumem does not model.
    {"config", "",
     [](Reader& r) { r.warn("the YAML file of flags it names is not read here; its flags are not in the estimate"); },
     nullptr},
    {"kv-cache-memory-bytes", "", [](Reader& r) { warn_unmodelled(r, "sets the KV cache's bytes directly"); }, nullptr},
    {"num-gpu-blocks-override", "",
     [](Reader& r) { warn_unmodelled(r, "fixes the number of KV blocks instead of filling the memory"); }, nullptr},
    {"cpu-offload-gb", "", [](Reader& r) { warn_unmodelled(r, "keeps part of the weights in CPU memory"); }, nullptr},
    {"enforce-eager", "",
     [](Reader& r) {
         warn_unmodelled(r, "runs without CUDA graphs, whose reserve gpumem counts (tunable vllm_cuda_graph_gib)");
     },
     nullptr, "", true},
    {"enable-lora", "", [](Reader& r) { warn_unmodelled(r, "LoRA adapters' weights and buffers"); }, nullptr, "", true},
    {"max-lora-rank", "", [](Reader& r) { warn_unmodelled(r, "LoRA adapters' weights and buffers"); }, nullptr},
    {"max-loras", "", [](Reader& r) { warn_unmodelled(r, "LoRA adapters' weights and buffers"); }, nullptr},
    {"speculative-config", "", [](Reader& r) { warn_unmodelled(r, "a draft model or heads and their cache"); },
     nullptr},
    {"decode-context-parallel-size", "",
     [](Reader& r) { warn_unmodelled(r, "splits the decode KV cache over the TP ranks"); }, nullptr, "dcp"},
    {"max-cpu-loras", "", read_none, nullptr},
};

// Flags that do not change GPU memory.
const char* const kIgnored[] = {"host",
                                "port",
                                "uds",
                                "api-key",
                                "served-model-name",
                                "uvicorn-log-level",
                                "disable-uvicorn-access-log",
                                "disable-log-requests",
                                "disable-log-stats",
                                "enable-log-requests",
                                "enable-log-outputs",
                                "max-log-len",
                                "chat-template",
                                "chat-template-content-format",
                                "response-role",
                                "seed",
                                "trust-remote-code",
                                "tokenizer",
                                "tokenizer-mode",
                                "revision",
                                "code-revision",
                                "tokenizer-revision",
                                "download-dir",
                                "load-format",
                                "hf-token",
                                "tool-call-parser",
                                "enable-auto-tool-choice",
                                "tool-parser-plugin",
                                "reasoning-parser",
                                "generation-config",
                                "disable-fastapi-docs",
                                "allowed-origins",
                                "allowed-methods",
                                "allowed-headers",
                                "allow-credentials",
                                "ssl-*",
                                "root-path",
                                "middleware",
                                "return-tokens-as-token-ids",
                                "enable-prefix-caching",
                                "no-enable-prefix-caching",
                                "prefix-caching-hash-algo",
                                "enable-chunked-prefill",
                                "max-logprobs",
                                "disable-custom-all-reduce",
                                "distributed-executor-backend",
                                "swap-space",
                                "headless",
                                "api-server-count",
                                "enable-request-id-headers",
                                "enable-prompt-tokens-details",
                                "enable-server-load-tracking",
                                "enable-force-include-usage",
                                "lora-modules",
                                "data-parallel-address",
                                "data-parallel-rpc-port",
                                "data-parallel-rank",
                                "data-parallel-start-rank",
                                "data-parallel-backend",
                                "data-parallel-size-local",
                                "worker-cls",
                                "worker-extension-cls",
                                "max-parallel-loading-workers",
                                "guided-decoding-backend",
                                "structured-outputs-config",
                                "logits-processor-pattern",
                                "disable-frontend-multiprocessing",
                                "model-impl",
                                "config-format",
                                "hf-config-path",
                                "allowed-local-media-path"};

void refuse(Writer& wr) {
    const Run& r = wr.r;
    const ServedFormats f = served_formats(r, kEngine, "fp8", wr.w);
    (void)f;
    if (r.cp > 1)
        wr.w.refuse("parallelism.context_parallel_size",
                    "vLLM has no context parallelism of the layout gpumem models (its "
                    "--decode-context-parallel-size splits the decode KV cache within TP)",
                    std::to_string(r.cp));
    if (r.ep > 1 && r.ep != r.dp)
        wr.w.refuse("parallelism.expert_parallel_size",
                    "vLLM's expert parallelism spans TP x DP (--enable-expert-parallel puts 1/(TP x DP) of the "
                    "experts on each GPU): it must equal data_parallel_size (" +
                        std::to_string(r.dp) + ")",
                    std::to_string(r.ep));
}

void finish_write(Writer& wr, ojson& doc) {
    wr.w.file_name = "vllm_serve.sh";
    std::vector<std::string> head = {"vllm", "serve"};
    head.push_back(doc["@model"].get<std::string>());  // the positional model first
    doc.erase("@model");
    wr.w.text = command_text(head, doc);
    note_quantized_checkpoint(formats_of(wr.r), wr.r, kEngine, wr.w);
}

void finish_read(Reader& r) {
    json& s = r.out().scenario;
    if (s.contains("_expert_parallel")) {
        s.erase("_expert_parallel");
        const json dp = r.get("parallelism.data_parallel_size");
        if (dp.is_number_unsigned() && dp.get<std::uint64_t>() > 1) {
            r.set("parallelism.expert_parallel_size", dp);
            r.assume(
                "--enable-expert-parallel: the experts are split over TP x DP ranks (expert_parallel_size = "
                "data_parallel_size " +
                dp.dump() + ")");
        } else {
            r.assume("--enable-expert-parallel with no data parallelism: the experts are split over the " +
                     std::string("tensor-parallel ranks, as without it"));
        }
    }
    if (!r.has("inference.context_len"))
        r.assume(
            "--max-model-len not given: vLLM serves the model's full max_position_embeddings; gpumem's "
            "inference.context_len default applies unless set");
    if (!r.has("inference.batch_size"))
        r.assume(
            "--max-num-seqs not given: vLLM's default (it depends on the version and the GPU); gpumem's "
            "inference.batch_size applies unless set");
    finish_serving(r, "vllm", VisibleGpus::One);
}

}  // namespace

extern const Tool kVllmTool = {ConfigFormat::Vllm, "command",           "vllm_serve.sh", kKeys,        std::size(kKeys),
                               kIgnored,           std::size(kIgnored), refuse,          finish_write, finish_read};

}  // namespace gpumem::detail
