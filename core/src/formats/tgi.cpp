// `text-generation-launcher` (TGI), read and written through one table (format.h). Flags follow
// huggingface/text-generation-inference launcher/src/main.rs at v3.3.7 (struct Args and its enums,
// tests/data/formats/tgi.json). The shard count: --num-shard, else 1 with --sharded false, else every
// GPU CUDA_VISIBLE_DEVICES lists (main.rs find_num_shards: `(None, None) =>
// num_cuda_devices().unwrap_or(1)`), so the writer always names it.
#include <string>

#include "formats/serving.h"

namespace gpumem::detail {

namespace {

// launcher/src/main.rs enum Quantization: what each --quantize stores.
const char* const kQuantize[][2] = {{"fp8", "fp8"},
                                    {"bitsandbytes-nf4", "nf4"},
                                    {"bitsandbytes-fp4", "fp4"},
                                    {"bitsandbytes", "int8"},
                                    {"eetq", "int8"},
                                    {"gptq", "int4"},
                                    {"awq", "int4"},
                                    {"marlin", "int4"}};

std::string weights_of(const Run& r) { return r.inference()["weight_format"]; }

std::optional<ojson> write_dtype(Writer& w) {
    const std::string f = weights_of(w.r);
    return f == "bf16" || f == "fp16" ? std::optional<ojson>(torch_dtype_name(f)) : std::nullopt;
}
void read_dtype(Reader& r) {
    auto v = r.string();
    if (!v) return;
    if (*v == "bfloat16") r.out().scenario["_dtype"] = "bf16";
    else if (*v == "float16") r.out().scenario["_dtype"] = "fp16";
    else r.issue("must be float16 or bfloat16");
}

std::optional<ojson> write_quantize(Writer& w) {
    const std::string f = weights_of(w.r);
    if (f == "int4") return std::nullopt;  // GPTQ or AWQ: as the checkpoint is (a note says so)
    for (const auto& row : kQuantize)
        if (f == row[1]) return std::optional<ojson>(row[0]);
    return std::nullopt;
}
void read_quantize(Reader& r) {
    auto v = r.string();
    if (!v) return;
    for (const auto& row : kQuantize)
        if (*v == row[0]) {
            r.set("inference.weight_format", row[1]);
            return;
        }
    warn_unmodelled(r, ("quantization " + *v + " is not a weight format gpumem models").c_str());
}

std::optional<ojson> write_kv(Writer& w) {
    return w.r.inference()["kv_cache_dtype"] == "fp8" ? std::optional<ojson>("fp8_e4m3fn") : std::nullopt;
}

// The longest request (prompt and generated tokens): TGI refuses longer ones, so it is the
// scenario's context too.
void read_max_total(Reader& r) {
    if (auto v = r.uint(2, 100000000)) {
        r.set("inference.max_total_tokens", *v);
        r.out().scenario["_max_total"] = *v;
    }
}
// The prompt's cap: TGI's warm-up prefill defaults to it + 50 (main.rs: max_batch_prefill_tokens
// = max_input_tokens + 50).
void read_max_input(Reader& r) {
    if (auto v = r.uint(1, 100000000)) r.out().scenario["_max_input"] = *v;
}
std::optional<ojson> write_max_input(Writer& w) { return w.r.inference()["max_total_tokens"].get<std::uint64_t>() - 1; }

void read_sharded(Reader& r) {
    if (auto v = r.boolean(); v && !*v) r.out().scenario["_unsharded"] = true;
}

const Key kKeys[] = {
    {"model-id", "model", read_model, [](Writer& w) -> std::optional<ojson> { return served_model(w.r); }},
    {"dtype", "inference.weight_format", read_dtype, write_dtype},
    {"quantize", "inference.weight_format", read_quantize, write_quantize},
    {"max-input-tokens", "inference.max_batch_prefill_tokens", read_max_input, write_max_input, "max-input-length"},
    {"max-total-tokens", "inference.max_total_tokens", read_max_total,
     [](Writer& w) { return inference_value(w, "max_total_tokens"); }},
    {"max-batch-prefill-tokens", "inference.max_batch_prefill_tokens",
     [](Reader& r) { read_uint_into(r, "inference.max_batch_prefill_tokens", 1, 100000000); },
     [](Writer& w) { return inference_value(w, "max_batch_prefill_tokens"); }},
    {"cuda-memory-fraction", "inference.cuda_memory_fraction",
     [](Reader& r) { read_fraction_into(r, "inference.cuda_memory_fraction"); },
     [](Writer& w) { return inference_value(w, "cuda_memory_fraction"); }},
    {"kv-cache-dtype", "inference.kv_cache_dtype", read_kv_dtype, write_kv},
    {"num-shard", "parallelism.tensor_parallel_size", [](Reader& r) { read_parallel(r, "tensor_parallel_size"); },
     [](Writer& w) -> std::optional<ojson> { return w.r.tp; }},
    {"sharded", "parallelism.tensor_parallel_size", read_sharded, nullptr},
    // Memory flags gpumem does not model.
    {"max-batch-total-tokens", "",
     [](Reader& r) { warn_unmodelled(r, "caps the KV tokens instead of what the warm-up leaves free"); }, nullptr},
    {"max-batch-size", "", [](Reader& r) { warn_unmodelled(r, "caps the batch the KV blocks are sized for"); },
     nullptr},
    {"cuda-graphs", "", [](Reader& r) { warn_unmodelled(r, "sets the batch sizes CUDA graphs are captured for"); },
     nullptr},
    {"speculate", "", [](Reader& r) { warn_unmodelled(r, "speculative tokens per step"); }, nullptr},
    {"lora-adapters", "", [](Reader& r) { warn_unmodelled(r, "LoRA adapters' weights"); }, nullptr},
    {"rope-scaling", "", [](Reader& r) { warn_unmodelled(r, "a longer context than the model's own"); }, nullptr},
    {"rope-factor", "", [](Reader& r) { warn_unmodelled(r, "a longer context than the model's own"); }, nullptr},
};

// Flags that do not change GPU memory.
const char* const kIgnored[] = {"revision",
                                "validation-workers",
                                "trust-remote-code",
                                "max-concurrent-requests",
                                "max-best-of",
                                "max-stop-sequences",
                                "max-top-n-tokens",
                                "waiting-served-ratio",
                                "max-waiting-tokens",
                                "max-client-batch-size",
                                "hostname",
                                "port",
                                "prometheus-port",
                                "shard-uds-path",
                                "master-addr",
                                "master-port",
                                "huggingface-hub-cache",
                                "weights-cache-override",
                                "disable-custom-kernels",
                                "json-output",
                                "otlp-endpoint",
                                "otlp-service-name",
                                "cors-allow-origin",
                                "api-key",
                                "watermark-gamma",
                                "watermark-delta",
                                "ngrok*",
                                "tokenizer-config-path",
                                "disable-grammar-support",
                                "env",
                                "usage-stats",
                                "payload-limit",
                                "enable-prefill-logprobs",
                                "graceful-termination-timeout"};

void refuse(Writer& wr) {
    const Run& r = wr.r;
    const std::string f = weights_of(r);
    const bool plain = f == "bf16" || f == "fp16";
    bool known = plain || f == "int4";
    for (const auto& row : kQuantize)
        if (f == row[1]) known = true;
    if (!known)
        wr.w.refuse("inference.weight_format",
                    "TGI serves bf16, fp16, fp8, nf4/fp4/int8 (bitsandbytes) and GPTQ/AWQ (int4) checkpoints", f);
    const std::string kv = r.inference()["kv_cache_dtype"];
    if (kv != "fp8" && kv != "fp16" && kv != "bf16")
        wr.w.refuse("inference.kv_cache_dtype", "TGI's --kv-cache-dtype is the model's dtype or fp8", kv);
    if (r.pp > 1)
        wr.w.refuse("parallelism.pipeline_parallel_size", "TGI shards by tensor parallelism only (--num-shard)",
                    std::to_string(r.pp));
    if (r.ep > 1)
        wr.w.refuse("parallelism.expert_parallel_size",
                    "TGI has no expert parallelism: its shards split every expert tensor-parallel",
                    std::to_string(r.ep));
    if (r.cp > 1)
        wr.w.refuse("parallelism.context_parallel_size", "TGI has no context parallelism", std::to_string(r.cp));
}

void finish_write(Writer& wr, ojson& doc) {
    wr.w.file_name = "tgi_serve.sh";
    wr.w.text = command_text({"text-generation-launcher"}, doc);
    wr.w.notes.push_back(
        "TGI sizes its batch from the KV blocks its warm-up leaves room for; the estimate's "
        "serving.max_concurrent_sequences is that batch at context_len");
    if (weights_of(wr.r) == "int4")
        wr.w.notes.push_back("weights int4: add --quantize gptq or awq, as the checkpoint is");
    if (wr.r.dp > 1)
        wr.w.notes.push_back("data_parallel_size " + std::to_string(wr.r.dp) +
                             ": TGI serves one replica per launch; start " + std::to_string(wr.r.dp) +
                             " of these behind a router");
}

void finish_read(Reader& r) {
    json& s = r.out().scenario;
    if (s.contains("_max_total")) {
        if (!r.has("inference.context_len")) r.set("inference.context_len", s["_max_total"]);
        s.erase("_max_total");
    }
    if (s.contains("_max_input")) {
        if (!r.has("inference.max_batch_prefill_tokens")) {
            r.set("inference.max_batch_prefill_tokens", s["_max_input"].get<std::uint64_t>() + 50);
            r.assume("--max-batch-prefill-tokens not given: TGI's max_input_tokens + 50");
        }
        s.erase("_max_input");
    }
    const bool unsharded = s.contains("_unsharded");
    s.erase("_unsharded");
    if (unsharded && !r.has("parallelism.tensor_parallel_size")) r.set("parallelism.tensor_parallel_size", 1);
    finish_serving(r, "tgi", VisibleGpus::Shard);
}

}  // namespace

extern const Tool kTgiTool = {ConfigFormat::Tgi, "command",           "tgi_serve.sh", kKeys,        std::size(kKeys),
                              kIgnored,          std::size(kIgnored), refuse,         finish_write, finish_read};

}  // namespace gpumem::detail
