// `llama-server` / `llama-cli` (llama.cpp), read and written through one table (format.h). Flags
// and values follow ggml-org/llama.cpp common/arg.cpp as tools/server/README.md's generated help
// lists them (tests/data/formats/llama_cpp.json, with the commit): -c is the context of all
// sequences together (each of --parallel slots gets c / parallel), -ngl the layers on the GPU
// ("auto", "all" or a number), -ctk / -ctv the cache types, -fa on|off|auto. llama.cpp refuses a
// quantized V cache without flash attention (src/llama-context.cpp: "V cache quantization requires
// flash_attn").
#include <cctype>
#include <string>

#include "formats/serving.h"
#include "gpumem/gpumem.h"

namespace gpumem::detail {

namespace {

// GGUF file types of gpumem's weight formats, as llama.cpp names them in file names.
const char* const kGguf[][2] = {{"fp32", "F32"},      {"fp16", "F16"},  {"bf16", "BF16"},
                                {"q8_0", "Q8_0"},     {"q6_k", "Q6_K"}, {"q5_k_m", "Q5_K_M"},
                                {"q4_k_m", "Q4_K_M"}, {"q4_0", "Q4_0"}, {"mxfp4", "MXFP4"}};
// Cache types (common/arg.cpp kv_cache_types) of gpumem's KV dtypes.
const char* const kCacheTypes[][2] = {
    {"fp32", "f32"}, {"fp16", "f16"}, {"bf16", "bf16"}, {"int8", "q8_0"}, {"int4", "q4_0"}};

std::string gguf_of(const std::string& format) {
    for (const auto& row : kGguf)
        if (format == row[0]) return row[1];
    return "";
}
std::string cache_type_of(const std::string& kv) {
    for (const auto& row : kCacheTypes)
        if (kv == row[0]) return row[1];
    return "";
}
std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

// The weight format a GGUF file or quant tag names ("Llama-3.1-8B-Instruct-Q4_K_M.gguf", "Q4_K_M"):
// a GGUF type between non-alphanumeric characters; "" when none.
std::string format_in_name(const std::string& name) {
    const std::string n = lower(name);
    for (const auto& row : kGguf) {
        const std::string t = lower(row[1]);
        for (std::size_t at = n.find(t); at != std::string::npos; at = n.find(t, at + 1)) {
            const bool left = at == 0 || !std::isalnum(static_cast<unsigned char>(n[at - 1]));
            const std::size_t end = at + t.size();
            const bool right = end == n.size() || !std::isalnum(static_cast<unsigned char>(n[end]));
            if (left && right) return row[0];
        }
    }
    return "";
}

bool quantized_cache(const std::string& type) { return type.size() > 1 && type[0] == 'q'; }

const std::string& weights_of(const Run& r) { return r.inference()["weight_format"].get_ref<const std::string&>(); }
const std::string& kv_of(const Run& r) { return r.inference()["kv_cache_dtype"].get_ref<const std::string&>(); }
bool flash_of(const Run& r) { return r.inference()["attention"] != "eager"; }

void read_model_file(Reader& r) {
    auto v = r.string();
    if (!v) return;
    r.out().model = *v;
    const std::string f = format_in_name(*v);
    if (!f.empty()) {
        r.set("inference.weight_format", f);
        r.assume("the weights' format " + f + " is read from the GGUF file's name " + *v);
    }
}
std::optional<ojson> write_model_file(Writer& w) {
    const std::string m = served_model(w.r);
    const std::size_t slash = m.find('/');
    return (slash == std::string::npos ? m : m.substr(slash + 1)) + "-" + gguf_of(weights_of(w.r)) + ".gguf";
}

// -hf user/repo[:quant]: the quant defaults to Q4_K_M (common/arg.cpp's help for --hf-repo: "quant
// is optional, case-insensitive, default to Q4_K_M, or falls back to the first file in the repo").
void read_hf_repo(Reader& r) {
    auto v = r.string();
    if (!v) return;
    const std::size_t colon = v->find(':');
    r.out().model = v->substr(0, colon);
    const std::string tag = colon == std::string::npos ? "Q4_K_M" : v->substr(colon + 1);
    const std::string f = format_in_name(tag);
    if (f.empty()) {
        r.warn("quant " + tag + " is not a GGUF type gpumem models");
        return;
    }
    r.set("inference.weight_format", f);
    if (colon == std::string::npos) r.assume(r.key() + " names no quant: llama.cpp takes Q4_K_M");
}

void read_gpu_layers(Reader& r) {
    if (r.value() == "all" || r.value() == "auto" || r.value() == "-1" || r.value() == -1) {
        if (r.value() == "auto")
            r.assume(r.key() + " auto: every layer on the GPU (llama.cpp lowers it only when they do not fit)");
        r.set("inference.gpu_layers", -1);
        return;
    }
    if (auto v = r.uint(0, 1000000)) r.out().scenario["_gpu_layers"] = *v;
}
std::optional<ojson> write_gpu_layers(Writer& w) {
    const std::int64_t n = w.r.inference()["gpu_layers"];
    return n < 0 ? std::uint64_t{999} : static_cast<std::uint64_t>(n);  // 999: llama.cpp's idiom for "all"
}

void read_ctx(Reader& r) {
    if (auto v = r.uint(0, 100000000)) r.out().scenario["_ctx"] = *v;
}
std::optional<ojson> write_ctx(Writer& w) {  // shared by the parallel sequences
    return w.r.inference()["context_len"].get<std::uint64_t>() * w.r.inference()["batch_size"].get<std::uint64_t>();
}

void read_flash(Reader& r) {
    const ojson& v = r.value();
    if (v == true || v == "on" || v == "1" || v == "true") r.set("inference.attention", "flash");
    else if (v == "off" || v == "0" || v == "false") r.set("inference.attention", "eager");
    else if (v == "auto") {
        r.assume(r.key() + " auto: on (the CUDA backend supports it)");
        r.set("inference.attention", "flash");
    } else r.issue("must be on, off or auto");
}
std::optional<ojson> write_flash(Writer& w) { return std::string(flash_of(w.r) ? "on" : "off"); }

void read_cache(Reader& r, const char* temp) {
    if (auto v = r.string()) r.out().scenario[temp] = lower(*v);
}
std::optional<ojson> write_cache(Writer& w) {
    const std::string t = cache_type_of(kv_of(w.r));
    return t == "f16" ? std::nullopt : std::optional<ojson>(t);
}

const Key kKeys[] = {
    {"model", "model", read_model_file, write_model_file, "m"},
    {"hf-repo", "model", read_hf_repo, nullptr, "hf,hfr"},
    {"n-gpu-layers", "inference.gpu_layers", read_gpu_layers, write_gpu_layers, "ngl,gpu-layers"},
    {"ctx-size", "inference.context_len", read_ctx, write_ctx, "c"},
    {"parallel", "inference.batch_size",
     [](Reader& r) {
         if (auto v = r.uint(1, 1000000)) r.out().scenario["_parallel"] = *v;
     },
     [](Writer& w) { return inference_value(w, "batch_size"); }, "np"},
    {"ubatch-size", "inference.ubatch", [](Reader& r) { read_uint_into(r, "inference.ubatch", 1, 1 << 20); },
     [](Writer& w) { return inference_value(w, "ubatch"); }, "ub"},
    {"flash-attn", "inference.attention", read_flash, write_flash, "fa"},
    {"cache-type-k", "inference.kv_cache_dtype", [](Reader& r) { read_cache(r, "_cache_k"); }, write_cache, "ctk"},
    {"cache-type-v", "inference.kv_cache_dtype", [](Reader& r) { read_cache(r, "_cache_v"); }, write_cache, "ctv"},
    // Memory flags gpumem does not model.
    {"no-kv-offload", "", [](Reader& r) { warn_unmodelled(r, "keeps the KV cache in CPU memory"); }, nullptr, "nkvo",
     true},
    {"split-mode", "", [](Reader& r) { warn_unmodelled(r, "splits the model over several GPUs"); }, nullptr, "sm"},
    {"tensor-split", "", [](Reader& r) { warn_unmodelled(r, "splits the model over several GPUs"); }, nullptr, "ts"},
    {"override-tensor", "", [](Reader& r) { warn_unmodelled(r, "moves tensors to other devices"); }, nullptr, "ot"},
    {"cpu-moe", "", [](Reader& r) { warn_unmodelled(r, "keeps the experts in CPU memory"); }, nullptr, "cmoe", true},
    {"n-cpu-moe", "", [](Reader& r) { warn_unmodelled(r, "keeps some layers' experts in CPU memory"); }, nullptr,
     "ncmoe"},
    {"swa-full", "", [](Reader& r) { warn_unmodelled(r, "a full-size cache for sliding-window layers"); }, nullptr, "",
     true},
    {"fit", "", [](Reader& r) { warn_unmodelled(r, "lets llama.cpp lower the context and GPU layers to fit"); },
     nullptr},
    {"lora", "", [](Reader& r) { warn_unmodelled(r, "LoRA adapters' weights"); }, nullptr},
    {"mmproj", "", [](Reader& r) { warn_unmodelled(r, "a multimodal projector's weights"); }, nullptr, "mm"},
    {"model-draft", "", [](Reader& r) { warn_unmodelled(r, "a draft model and its cache"); }, nullptr, "md"},
    {"device", "", [](Reader& r) { warn_unmodelled(r, "chooses the devices the model is split over"); }, nullptr,
     "dev"},
};

// Flags that do not change GPU memory.
const char* const kIgnored[] = {"host",
                                "port",
                                "api-key",
                                "api-key-file",
                                "alias",
                                "a",
                                "threads",
                                "t",
                                "threads-batch",
                                "tb",
                                "threads-http",
                                "batch-size",
                                "b",
                                "seed",
                                "s",
                                "temp",
                                "temperature",
                                "top-k",
                                "top-p",
                                "min-p",
                                "repeat-penalty",
                                "repeat-last-n",
                                "presence-penalty",
                                "frequency-penalty",
                                "n-predict",
                                "predict",
                                "n",
                                "prompt",
                                "p",
                                "file",
                                "f",
                                "system-prompt",
                                "sys",
                                "conversation",
                                "cnv",
                                "no-cnv",
                                "interactive",
                                "i",
                                "interactive-first",
                                "if",
                                "color",
                                "chat-template",
                                "chat-template-file",
                                "jinja",
                                "reasoning-format",
                                "reasoning-budget",
                                "log-*",
                                "verbose",
                                "v",
                                "verbosity",
                                "lv",
                                "metrics",
                                "slots",
                                "no-slots",
                                "props",
                                "cont-batching",
                                "cb",
                                "no-cont-batching",
                                "nocb",
                                "mlock",
                                "no-mmap",
                                "mmap",
                                "numa",
                                "embedding",
                                "embeddings",
                                "cache-reuse",
                                "cache-prompt",
                                "no-cache-prompt",
                                "timeout",
                                "to",
                                "path",
                                "ssl-*",
                                "cors-*",
                                "no-webui",
                                "webui",
                                "keep",
                                "main-gpu",
                                "mg",
                                "defrag-thold",
                                "dt",
                                "context-shift",
                                "no-context-shift",
                                "warmup",
                                "no-warmup",
                                "kv-unified",
                                "kvu",
                                "no-kv-unified",
                                "cache-ram",
                                "cram",
                                "ctx-checkpoints",
                                "ctxcp",
                                "slot-save-path",
                                "offline",
                                "hf-token",
                                "hft",
                                "hf-file",
                                "hff",
                                "pooling",
                                "rerank",
                                "single-turn",
                                "st",
                                "escape",
                                "no-escape",
                                "special",
                                "sp",
                                "no-display-prompt",
                                "simple-io"};

void refuse(Writer& wr) {
    const Run& r = wr.r;
    if (gguf_of(weights_of(r)).empty())
        wr.w.refuse("inference.weight_format",
                    "llama.cpp loads GGUF files: fp32, fp16, bf16, q8_0, q6_k, q5_k_m, q4_k_m, q4_0 or mxfp4",
                    weights_of(r));
    const std::string cache = cache_type_of(kv_of(r));
    if (cache.empty())
        wr.w.refuse("inference.kv_cache_dtype",
                    "llama.cpp's cache types are f32, f16, bf16, q8_0 (int8) and q4_0 (int4)", kv_of(r));
    else if (quantized_cache(cache) && !flash_of(r))
        wr.w.refuse("inference.kv_cache_dtype",
                    "a quantized V cache (" + cache +
                        ") needs flash attention in llama.cpp, which refuses it otherwise; set inference.attention "
                        "to flash or the cache to fp16",
                    kv_of(r));
    if (r.num_gpus > 1 || r.tp > 1)
        wr.w.refuse("hardware.num_gpus", "gpumem models llama.cpp on one GPU", std::to_string(r.num_gpus));
}

void finish_write(Writer& wr, ojson& doc) {
    wr.w.file_name = "llama_server.sh";
    wr.w.text = command_text({"llama-server"}, doc);
    wr.w.notes.push_back("--model: the GGUF file of " + served_model(wr.r) + " in " + gguf_of(weights_of(wr.r)));
}

// The number of layers of a bundled model ("" or a file name: 0).
std::uint64_t layers_of(const std::string& model) {
    if (model.empty()) return 0;
    std::optional<json> p = find_preset(model);
    if (!p || !p->contains("config")) return 0;
    const json& c = (*p)["config"];
    if (c.contains("num_hidden_layers") && c["num_hidden_layers"].is_number_unsigned()) return c["num_hidden_layers"];
    return 0;
}

void finish_read(Reader& r) {
    json& s = r.out().scenario;
    // The context: -c tokens shared by --parallel slots (common/arg.cpp: n_ctx / n_parallel each).
    const std::uint64_t parallel = s.value("_parallel", std::uint64_t{1});
    if (!s.contains("_parallel")) r.assume("--parallel not given: read as 1 sequence holding the whole -c context");
    r.set("inference.batch_size", parallel);
    if (s.contains("_ctx")) {
        const std::uint64_t ctx = s["_ctx"];
        if (ctx == 0) r.assume("-c 0: the model's trained context (gpumem's context default applies unless set)");
        else if (ctx < parallel)
            r.out().issues.push_back(
                {"ctx-size", "must be at least --parallel (" + std::to_string(parallel) + ")", std::to_string(ctx)});
        else r.set("inference.context_len", ctx / parallel);
    }
    // GPU layers: at or above the model's layer count every layer is on the GPU (llama.cpp clamps).
    if (s.contains("_gpu_layers")) {
        const std::uint64_t n = s["_gpu_layers"];
        const std::uint64_t layers = layers_of(r.out().model);
        if ((layers && n >= layers) || (!layers && n >= 999)) r.set("inference.gpu_layers", -1);
        else r.set("inference.gpu_layers", n);
    }
    // The cache: gpumem has one dtype for K and V; where they differ, the larger is taken.
    const std::string k = s.value("_cache_k", std::string("f16")), v = s.value("_cache_v", std::string("f16"));
    auto kv_dtype = [](const std::string& type) -> std::string {
        for (const auto& row : kCacheTypes)
            if (type == row[1]) return row[0];
        return "";
    };
    const bool given = s.contains("_cache_k") || s.contains("_cache_v");
    if (given) {
        const std::string dk = kv_dtype(k), dv = kv_dtype(v);
        if (dk.empty() || dv.empty()) {
            r.out().warnings.push_back("cache-type " + (dk.empty() ? k : v) +
                                       ": not a cache type gpumem models (f32, f16, bf16, q8_0, q4_0); the estimate "
                                       "keeps the cache in f16");
        } else if (dk != dv) {
            auto rank = [](const std::string& d) { return d == "fp32" ? 4 : d == "int8" ? 1 : d == "int4" ? 0 : 2; };
            const std::string larger = rank(dk) >= rank(dv) ? dk : dv;
            r.set("inference.kv_cache_dtype", larger);
            r.out().warnings.push_back("cache types K " + k + " and V " + v +
                                       " differ: gpumem has one cache dtype and takes the larger, " + larger);
        } else {
            r.set("inference.kv_cache_dtype", dk);
        }
    }
    for (const char* temp : {"_parallel", "_ctx", "_gpu_layers", "_cache_k", "_cache_v"}) s.erase(temp);
    if (!r.has("inference.attention")) {
        r.assume("-fa not given: llama.cpp's default auto turns flash attention on where the backend supports it");
        r.set("inference.attention", "flash");
    }
    if (quantized_cache(v) && r.get("inference.attention") == "eager")
        r.out().issues.push_back(
            {"cache-type-v", "a quantized V cache needs flash attention: llama.cpp refuses it with -fa off", v});
    finish_serving(r, "llama.cpp", VisibleGpus::Split);
}

}  // namespace

extern const Tool kLlamaCppTool = {ConfigFormat::LlamaCpp, "command",  "llama_server.sh",   kKeys,
                                   std::size(kKeys),       kIgnored,   std::size(kIgnored), refuse,
                                   finish_write,           finish_read};

}  // namespace gpumem::detail
