// `python -m sglang.launch_server`, read and written through one table (format.h). Flags follow
// sgl-project/sglang python/sglang/srt/server_args.py as its argument reference lists them
// (tests/data/formats/sglang.json, with the commit).
//
// SGLang's layout: --tp-size GPUs run one model instance; --dp-size replicates it (dp x tp GPUs in
// all), unless --enable-dp-attention, which splits the same tp GPUs into dp attention groups of
// tp/dp GPUs while the MoE layers span all tp of them ("DP for attention, TP for FFN": the SGLang
// docs' dp_dpa_router_guide; sgl-project/sglang issue #8164: the GPUs used are tp's). --ep-size
// splits the experts inside that tp group (moe_tp_size = tp_size / ep_size), so each GPU holds
// 1/tp of the experts either way. gpumem's (tp, dp = ep, ep) is therefore --tp-size tp x dp
// --dp-size dp --enable-dp-attention --ep-size tp x dp: attention sharded tp ways, experts tp x ep.
#include <string>

#include "formats/serving.h"

namespace gpumem::detail {

namespace {

constexpr const char* kEngine = "SGLang";

ServedFormats formats_of(const Run& r) {
    Written scratch;  // refusals were made by refuse(), before the keys are written
    return served_formats(r, kEngine, "fp8_e4m3", scratch);
}

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

void read_chunked_prefill(Reader& r) {
    if (r.value() == "-1" || r.value() == -1) {
        r.warn(
            "-1 turns chunked prefill off: a whole prompt is one prefill step; gpumem models chunks of "
            "inference.chunked_prefill_size");
        return;
    }
    read_uint_into(r, "inference.chunked_prefill_size", 1, 1 << 24);
}

bool expert_parallel(const Run& r) { return r.ep > 1; }
std::optional<ojson> write_tp(Writer& w) {
    const std::uint64_t tp = expert_parallel(w.r) ? w.r.tp * w.r.dp : w.r.tp;
    return tp > 1 ? std::optional<ojson>(tp) : std::nullopt;
}
std::optional<ojson> write_pp(Writer& w) { return w.r.pp > 1 ? std::optional<ojson>(w.r.pp) : std::nullopt; }
std::optional<ojson> write_dp(Writer& w) { return w.r.dp > 1 ? std::optional<ojson>(w.r.dp) : std::nullopt; }
std::optional<ojson> write_dp_attention(Writer& w) {
    return expert_parallel(w.r) ? std::optional<ojson>(nullptr) : std::nullopt;
}
std::optional<ojson> write_ep(Writer& w) {
    return expert_parallel(w.r) ? std::optional<ojson>(w.r.tp * w.r.dp) : std::nullopt;
}
void read_dp_attention(Reader& r) {
    if (r.value().is_boolean() && !r.value().get<bool>()) return;
    r.out().scenario["_dp_attention"] = true;
}
void read_ep(Reader& r) {
    if (auto v = r.uint(1, 1 << 16)) r.out().scenario["_ep_size"] = *v;
}

const Key kKeys[] = {
    {"model-path", "model", read_model, [](Writer& w) -> std::optional<ojson> { return served_model(w.r); }, "model"},
    {"dtype", "inference.weight_format", read_torch_dtype, write_dtype},
    {"quantization", "inference.weight_format", read_quantization, write_quantization},
    {"mem-fraction-static", "inference.mem_fraction_static",
     [](Reader& r) { read_fraction_into(r, "inference.mem_fraction_static"); },
     [](Writer& w) { return inference_value(w, "mem_fraction_static"); }},
    {"context-length", "inference.context_len",
     [](Reader& r) { read_uint_into(r, "inference.context_len", 1, 100000000); },
     [](Writer& w) { return inference_value(w, "context_len"); }},
    {"max-running-requests", "inference.batch_size",
     [](Reader& r) { read_uint_into(r, "inference.batch_size", 1, 1000000); },
     [](Writer& w) { return inference_value(w, "batch_size"); }},
    {"chunked-prefill-size", "inference.chunked_prefill_size", read_chunked_prefill,
     [](Writer& w) { return inference_value(w, "chunked_prefill_size"); }},
    {"kv-cache-dtype", "inference.kv_cache_dtype", read_kv_dtype, write_kv},
    {"tp-size", "parallelism.tensor_parallel_size", [](Reader& r) { read_parallel(r, "tensor_parallel_size"); },
     write_tp, "tensor-parallel-size,tp"},
    {"pp-size", "parallelism.pipeline_parallel_size", [](Reader& r) { read_parallel(r, "pipeline_parallel_size"); },
     write_pp, "pipeline-parallel-size"},
    {"dp-size", "parallelism.data_parallel_size", [](Reader& r) { read_parallel(r, "data_parallel_size"); }, write_dp,
     "data-parallel-size,dp"},
    {"enable-dp-attention", "parallelism.data_parallel_size", read_dp_attention, write_dp_attention, "", true},
    {"ep-size", "parallelism.expert_parallel_size", read_ep, write_ep, "expert-parallel-size,ep"},
    // Memory flags gpumem does not model.
    {"config", "",
     [](Reader& r) { r.warn("the YAML file of flags it names is not read here; its flags are not in the estimate"); },
     nullptr},
    {"max-total-tokens", "", [](Reader& r) { warn_unmodelled(r, "caps the KV pool's tokens below what fits"); },
     nullptr},
    {"max-prefill-tokens", "",
     [](Reader& r) { warn_unmodelled(r, "caps a prefill batch; gpumem sizes the step by chunked_prefill_size"); },
     nullptr},
    {"cpu-offload-gb", "", [](Reader& r) { warn_unmodelled(r, "keeps part of the weights in CPU memory"); }, nullptr},
    {"disable-cuda-graph", "",
     [](Reader& r) { warn_unmodelled(r, "runs without CUDA graphs, whose reserve gpumem counts"); }, nullptr, "", true},
    {"cuda-graph-max-bs", "", [](Reader& r) { warn_unmodelled(r, "sizes the CUDA graphs' buffers"); }, nullptr},
    {"enable-lora", "", [](Reader& r) { warn_unmodelled(r, "LoRA adapters' weights and buffers"); }, nullptr, "", true},
    {"max-lora-rank", "", [](Reader& r) { warn_unmodelled(r, "LoRA adapters' weights and buffers"); }, nullptr},
    {"max-loras-per-batch", "", [](Reader& r) { warn_unmodelled(r, "LoRA adapters' weights and buffers"); }, nullptr},
    {"speculative-algorithm", "", [](Reader& r) { warn_unmodelled(r, "a draft model or heads and their cache"); },
     nullptr},
};

// Flags that do not change GPU memory.
const char* const kIgnored[] = {"host",
                                "port",
                                "api-key",
                                "admin-api-key",
                                "served-model-name",
                                "chat-template",
                                "log-level",
                                "log-level-http",
                                "log-requests",
                                "log-requests-level",
                                "random-seed",
                                "trust-remote-code",
                                "tokenizer-path",
                                "tokenizer-mode",
                                "revision",
                                "download-dir",
                                "load-format",
                                "tool-call-parser",
                                "reasoning-parser",
                                "enable-metrics",
                                "show-time-cost",
                                "schedule-policy",
                                "schedule-conservativeness",
                                "stream-interval",
                                "watchdog-timeout",
                                "dist-timeout",
                                "dist-init-addr",
                                "nccl-init-addr",
                                "nnodes",
                                "node-rank",
                                "base-gpu-id",
                                "gpu-id-step",
                                "skip-server-warmup",
                                "warmups",
                                "nccl-port",
                                "max-queued-requests",
                                "attention-backend",
                                "sampling-backend",
                                "grammar-backend",
                                "disable-radix-cache",
                                "enable-cache-report",
                                "decode-log-interval",
                                "device",
                                "skip-tokenizer-init",
                                "page-size",
                                "load-balance-method",
                                "enable-torch-compile",
                                "torch-compile-max-bs",
                                "file-storage-path",
                                "crash-dump-folder",
                                "otlp-traces-endpoint",
                                "enable-trace"};

void refuse(Writer& wr) {
    const Run& r = wr.r;
    served_formats(r, kEngine, "fp8_e4m3", wr.w);
    if (r.cp > 1)
        wr.w.refuse("parallelism.context_parallel_size",
                    "SGLang's --attention-context-parallel-size is not the layout gpumem models as context parallel",
                    std::to_string(r.cp));
    if (r.ep > 1 && r.ep != r.dp)
        wr.w.refuse("parallelism.expert_parallel_size",
                    "SGLang splits the experts over its tensor-parallel group; with data-parallel attention that "
                    "group is TP x DP GPUs, so expert_parallel_size must equal data_parallel_size (" +
                        std::to_string(r.dp) + ")",
                    std::to_string(r.ep));
}

void finish_write(Writer& wr, ojson& doc) {
    wr.w.file_name = "sglang_serve.sh";
    wr.w.text = command_text({"python", "-m", "sglang.launch_server"}, doc);
    note_quantized_checkpoint(formats_of(wr.r), wr.r, kEngine, wr.w);
    if (wr.r.ep > 1)
        wr.w.notes.push_back("--enable-dp-attention: attention runs data-parallel in " + std::to_string(wr.r.dp) +
                             " groups of " + std::to_string(wr.r.tp) + " GPUs, the experts over all " +
                             std::to_string(wr.r.tp * wr.r.dp));
}

void finish_read(Reader& r) {
    json& s = r.out().scenario;
    const bool dp_attention = s.contains("_dp_attention");
    const std::uint64_t ep = s.value("_ep_size", std::uint64_t{1});
    s.erase("_dp_attention");
    s.erase("_ep_size");
    const json tp = r.get("parallelism.tensor_parallel_size"), dp = r.get("parallelism.data_parallel_size");
    const std::uint64_t t = tp.is_number_unsigned() ? tp.get<std::uint64_t>() : 1;
    const std::uint64_t d = dp.is_number_unsigned() ? dp.get<std::uint64_t>() : 1;
    if (dp_attention && d > 1) {
        if (t % d != 0) {
            r.out().issues.push_back({"dp-size",
                                      "must divide --tp-size (" + std::to_string(t) +
                                          ") with --enable-dp-attention: the attention groups split the TP GPUs",
                                      std::to_string(d)});
        } else {
            // One instance of t GPUs: attention in d groups of t/d, the experts over all t.
            r.set("parallelism.tensor_parallel_size", t / d);
            r.set("parallelism.expert_parallel_size", d);
            r.assume("--enable-dp-attention: " + std::to_string(t) + " GPUs, attention tensor-parallel over " +
                     std::to_string(t / d) + " of them in " + std::to_string(d) +
                     " data-parallel groups, the experts over all " + std::to_string(t) + " (expert_parallel_size " +
                     std::to_string(d) + "; a dense model's MLP is modelled at TP " + std::to_string(t / d) + ")");
        }
    } else if (ep > 1) {
        r.assume("--ep-size " + std::to_string(ep) + ": the experts are split inside the tensor-parallel group of " +
                 std::to_string(t) + ", 1/" + std::to_string(t) + " of them per GPU as with TP alone");
    }
    if (!r.has("inference.mem_fraction_static")) {
        if (dp_attention && d > 1)
            r.out().warnings.push_back("--mem-fraction-static not given: SGLang's default counts the whole --tp-size " +
                                       std::to_string(t) +
                                       "; gpumem's default rule takes the attention's tensor-parallel size: set "
                                       "inference.mem_fraction_static for the engine's value");
        else r.assume("--mem-fraction-static not given: SGLang's rule by GPU memory and TP x PP (gpumem's default)");
    }
    finish_serving(r, "sglang", VisibleGpus::One);
}

}  // namespace

extern const Tool kSglangTool = {ConfigFormat::Sglang, "command",  "sglang_serve.sh",   kKeys,
                                 std::size(kKeys),     kIgnored,   std::size(kIgnored), refuse,
                                 finish_write,         finish_read};

}  // namespace gpumem::detail
