// The five serving engines' commands (formats/vllm.cpp, sglang.cpp, tgi.cpp, tensorrt_llm.cpp,
// llama_cpp.cpp): real-looking launch lines read into the scenario fields they set, the defects of
// the old writers (dropped data/expert parallelism, a quantized V cache without flash attention,
// an alias written as the model id) kept as tests, and the round trip export -> read -> estimate
// giving the same per-GPU peak and KV pool over a matrix of layouts and formats, or a refusal with
// its reason.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gpumem/gpumem.h>

#include "formats/format.h"

using nlohmann::json;
using gpumem::detail::ConfigFormat;
using gpumem::detail::Loaded;
using gpumem::detail::Reading;

namespace {

struct Read {
    ConfigFormat format = ConfigFormat::Deepspeed;
    Reading reading;
    std::vector<gpumem::Issue> load_issues;
    std::size_t parts = 0;
};

Read read_command(const std::string& text) {
    Read out;
    Loaded l = gpumem::detail::load_command("cmd", text);
    out.load_issues = l.issues;
    out.parts = l.parts.size();
    if (l.parts.empty()) return out;
    out.format = l.parts[0].format;
    out.reading = gpumem::detail::read_doc(out.format, l.parts[0].doc);
    return out;
}

bool has(const std::vector<std::string>& list, const std::string& part) {
    for (const std::string& s : list)
        if (s.find(part) != std::string::npos) return true;
    return false;
}

json exported(const std::string& format, const json& scenario) {
    return gpumem::export_config({{"format", format}, {"scenario", scenario}});
}

std::string words(const json& e) { return e.value("text", std::string()); }

}  // namespace

//-----------------------------------------------------------------------------
// Reading real-looking commands
//-----------------------------------------------------------------------------

TEST(FormatsServing, VllmServeLineSetsTheFieldsItNames) {
    Read r = read_command(
        "CUDA_VISIBLE_DEVICES=0,1,2,3 vllm serve meta-llama/Llama-3.1-70B-Instruct \\\n"
        "  --tensor-parallel-size 4 --max-model-len 16384 --gpu-memory-utilization 0.92 \\\n"
        "  --max-num-seqs 128 --max-num-batched-tokens 4096 --block-size 32 --kv-cache-dtype fp8_e4m3 \\\n"
        "  --dtype bfloat16 --port 8000 --host 0.0.0.0 --served-model-name llama --enable-prefix-caching \\\n"
        "  --cpu-offload-gb 4 --some-new-flag 3\n");
    ASSERT_EQ(r.format, ConfigFormat::Vllm);
    const Reading& g = r.reading;
    ASSERT_TRUE(g.issues.empty()) << g.issues[0].field << ": " << g.issues[0].problem;
    const json& s = g.scenario;
    EXPECT_EQ(g.model, "meta-llama/Llama-3.1-70B-Instruct");
    EXPECT_EQ(s["mode"], "inference");
    EXPECT_EQ(s["inference"]["engine"], "vllm");
    EXPECT_EQ(s["inference"]["context_len"], 16384);
    EXPECT_DOUBLE_EQ(s["inference"]["gpu_memory_utilization"].get<double>(), 0.92);
    EXPECT_EQ(s["inference"]["batch_size"], 128);
    EXPECT_EQ(s["inference"]["max_num_batched_tokens"], 4096);
    EXPECT_EQ(s["inference"]["block_size"], 32);
    EXPECT_EQ(s["inference"]["kv_cache_dtype"], "fp8");
    EXPECT_EQ(s["inference"]["weight_format"], "bf16");
    EXPECT_EQ(s["parallelism"]["tensor_parallel_size"], 4);
    EXPECT_EQ(s["hardware"]["num_gpus"], 4);
    for (const char* k : {"port", "host", "served-model-name", "enable-prefix-caching"})
        EXPECT_TRUE(has(g.ignored, k)) << k;
    EXPECT_TRUE(has(g.warnings, "cpu-offload-gb")) << "a memory flag gpumem does not model is a warning";
    EXPECT_TRUE(has(g.warnings, "some-new-flag")) << "an unknown flag is a warning, never silence";
    EXPECT_EQ(g.read["max-model-len"], "16384");
}

TEST(FormatsServing, VllmApiServerModuleAndShortFlags) {
    Read r = read_command(
        "python -m vllm.entrypoints.openai.api_server --model mistralai/Mixtral-8x7B-v0.1 -tp 2 -dp 4 "
        "--enable-expert-parallel --quantization fp8\n");
    ASSERT_EQ(r.format, ConfigFormat::Vllm);
    const json& s = r.reading.scenario;
    EXPECT_EQ(r.reading.model, "mistralai/Mixtral-8x7B-v0.1");
    EXPECT_EQ(s["parallelism"]["tensor_parallel_size"], 2);
    EXPECT_EQ(s["parallelism"]["data_parallel_size"], 4);
    EXPECT_EQ(s["parallelism"]["expert_parallel_size"], 4);  // vLLM's EP = TP x DP: experts 1/8 per GPU
    EXPECT_EQ(s["hardware"]["num_gpus"], 8);
    EXPECT_EQ(s["inference"]["weight_format"], "fp8");
    EXPECT_TRUE(has(r.reading.assumptions, "max-model-len")) << "the default context is said";
}

TEST(FormatsServing, VisibleGpusWithoutSizes) {
    // vLLM runs on one GPU whatever is visible; TGI shards over every visible GPU (launcher
    // main.rs find_num_shards); llama.cpp splits the layers over them (a warning).
    Read v = read_command("CUDA_VISIBLE_DEVICES=0,1 vllm serve meta-llama/Llama-3.1-8B\n");
    EXPECT_EQ(v.reading.scenario["hardware"]["num_gpus"], 1);
    EXPECT_TRUE(has(v.reading.assumptions, "CUDA_VISIBLE_DEVICES"));
    Read t = read_command("CUDA_VISIBLE_DEVICES=0,1,2,3 text-generation-launcher --model-id meta-llama/Llama-3.1-8B\n");
    ASSERT_EQ(t.format, ConfigFormat::Tgi);
    EXPECT_EQ(t.reading.scenario["parallelism"]["tensor_parallel_size"], 4);
    EXPECT_EQ(t.reading.scenario["hardware"]["num_gpus"], 4);
    EXPECT_TRUE(has(t.reading.assumptions, "CUDA_VISIBLE_DEVICES"));
    Read l = read_command("CUDA_VISIBLE_DEVICES=0,1 llama-server -m model-Q4_K_M.gguf\n");
    EXPECT_EQ(l.reading.scenario["hardware"]["num_gpus"], 1);
    EXPECT_TRUE(has(l.reading.warnings, "CUDA_VISIBLE_DEVICES"));
}

TEST(FormatsServing, SglangLaunchServerWithDataParallelAttention) {
    Read r = read_command(
        "python3 -m sglang.launch_server --model-path mistralai/Mixtral-8x7B-v0.1 --tp 8 --dp 8 "
        "--enable-dp-attention --ep-size 8 --mem-fraction-static 0.8 --context-length 8192 "
        "--max-running-requests 64 --chunked-prefill-size 4096 --kv-cache-dtype fp8_e5m2 --log-level info\n");
    ASSERT_EQ(r.format, ConfigFormat::Sglang);
    const Reading& g = r.reading;
    ASSERT_TRUE(g.issues.empty()) << g.issues[0].field << ": " << g.issues[0].problem;
    const json& s = g.scenario;
    EXPECT_EQ(g.model, "mistralai/Mixtral-8x7B-v0.1");
    EXPECT_EQ(s["inference"]["engine"], "sglang");
    EXPECT_DOUBLE_EQ(s["inference"]["mem_fraction_static"].get<double>(), 0.8);
    EXPECT_EQ(s["inference"]["context_len"], 8192);
    EXPECT_EQ(s["inference"]["batch_size"], 64);
    EXPECT_EQ(s["inference"]["chunked_prefill_size"], 4096);
    EXPECT_EQ(s["inference"]["kv_cache_dtype"], "fp8");
    // 8 GPUs: attention in 8 groups of 1, the experts over all 8.
    EXPECT_EQ(s["parallelism"]["tensor_parallel_size"], 1);
    EXPECT_EQ(s["parallelism"]["data_parallel_size"], 8);
    EXPECT_EQ(s["parallelism"]["expert_parallel_size"], 8);
    EXPECT_EQ(s["hardware"]["num_gpus"], 8);
    EXPECT_TRUE(has(g.ignored, "log-level"));
    // Without data-parallel attention, --dp-size replicates: tp x dp GPUs.
    Read plain = read_command("python -m sglang.launch_server --model-path m --tp-size 2 --dp-size 3\n");
    EXPECT_EQ(plain.reading.scenario["hardware"]["num_gpus"], 6);
    Read bad = read_command("python -m sglang.launch_server --model-path m --tp 4 --dp 3 --enable-dp-attention\n");
    ASSERT_FALSE(bad.reading.issues.empty());
    EXPECT_EQ(bad.reading.issues[0].field, "dp-size");
}

TEST(FormatsServing, TgiLauncherAndItsDefaults) {
    Read r = read_command(
        "text-generation-launcher --model-id meta-llama/Llama-3.1-8B-Instruct --num-shard 2 --quantize "
        "bitsandbytes-nf4 --max-input-tokens 3000 --max-total-tokens 4096 --cuda-memory-fraction 0.9 --port 80 "
        "--max-concurrent-requests 128\n");
    ASSERT_EQ(r.format, ConfigFormat::Tgi);
    const Reading& g = r.reading;
    ASSERT_TRUE(g.issues.empty()) << g.issues[0].field << ": " << g.issues[0].problem;
    const json& s = g.scenario;
    EXPECT_EQ(s["inference"]["engine"], "tgi");
    EXPECT_EQ(s["inference"]["weight_format"], "nf4");
    EXPECT_EQ(s["inference"]["max_total_tokens"], 4096);
    EXPECT_EQ(s["inference"]["context_len"], 4096);
    EXPECT_EQ(s["inference"]["max_batch_prefill_tokens"], 3050);  // max_input_tokens + 50
    EXPECT_DOUBLE_EQ(s["inference"]["cuda_memory_fraction"].get<double>(), 0.9);
    EXPECT_EQ(s["parallelism"]["tensor_parallel_size"], 2);
    EXPECT_TRUE(has(g.ignored, "max-concurrent-requests"));
    // docker run ... ghcr.io/huggingface/text-generation-inference --model-id ...
    Read d = read_command(
        "docker run --gpus all --shm-size 1g -p 8080:80 ghcr.io/huggingface/text-generation-inference:3.3.7 "
        "--model-id meta-llama/Llama-3.1-8B --sharded false\n");
    ASSERT_EQ(d.format, ConfigFormat::Tgi);
    EXPECT_EQ(d.reading.model, "meta-llama/Llama-3.1-8B");
    EXPECT_EQ(d.reading.scenario["hardware"]["num_gpus"], 1);
}

TEST(FormatsServing, TrtllmServeLine) {
    Read r = read_command(
        "trtllm-serve serve meta-llama/Llama-3.1-70B --backend pytorch --tp_size 4 --max_batch_size 32 "
        "--max_num_tokens 4096 --max_seq_len 8192 --kv_cache_free_gpu_memory_fraction 0.8 "
        "--extra_llm_api_options extra.yaml --port 8000\n");
    ASSERT_EQ(r.format, ConfigFormat::TensorrtLlm);
    const Reading& g = r.reading;
    ASSERT_TRUE(g.issues.empty()) << g.issues[0].field << ": " << g.issues[0].problem;
    const json& s = g.scenario;
    EXPECT_EQ(g.model, "meta-llama/Llama-3.1-70B");
    EXPECT_EQ(s["inference"]["engine"], "tensorrt_llm");
    EXPECT_EQ(s["inference"]["batch_size"], 32);
    EXPECT_EQ(s["inference"]["max_num_tokens"], 4096);
    EXPECT_EQ(s["inference"]["context_len"], 8192);
    EXPECT_DOUBLE_EQ(s["inference"]["free_gpu_memory_fraction"].get<double>(), 0.8);
    EXPECT_EQ(s["hardware"]["num_gpus"], 4);
    EXPECT_TRUE(has(g.warnings, "extra_llm_api_options")) << "the YAML it names is not read: said";
}

TEST(FormatsServing, LlamaServerLine) {
    Read r = read_command(
        "./llama-server -m models/Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf -c 16384 -np 4 -ngl 99 -fa on "
        "-ctk q8_0 -ctv q8_0 -ub 256 --host 0.0.0.0 --port 8080 -t 8\n");
    ASSERT_EQ(r.format, ConfigFormat::LlamaCpp);
    const Reading& g = r.reading;
    ASSERT_TRUE(g.issues.empty()) << g.issues[0].field << ": " << g.issues[0].problem;
    const json& s = g.scenario;
    EXPECT_EQ(s["inference"]["engine"], "llama.cpp");
    EXPECT_EQ(s["inference"]["weight_format"], "q4_k_m");  // from the GGUF file's name
    EXPECT_EQ(s["inference"]["batch_size"], 4);
    EXPECT_EQ(s["inference"]["context_len"], 4096);  // -c is shared by the 4 slots
    EXPECT_EQ(s["inference"]["gpu_layers"], 99);     // the model is a file: no layer count to clamp to
    EXPECT_EQ(s["inference"]["attention"], "flash");
    EXPECT_EQ(s["inference"]["kv_cache_dtype"], "int8");
    EXPECT_EQ(s["inference"]["ubatch"], 256);
    EXPECT_TRUE(has(g.ignored, "t"));
    // -ngl above a bundled model's layer count is every layer (llama.cpp clamps it).
    Read all = read_command("llama-server -hf meta-llama/Llama-3.1-8B -ngl 99\n");
    EXPECT_EQ(all.reading.scenario["inference"]["gpu_layers"], -1);
    EXPECT_EQ(all.reading.scenario["inference"]["weight_format"], "q4_k_m");  // -hf's default quant
    // Different K and V types: one dtype, the larger, and a warning.
    Read mixed = read_command("llama-server -m x.gguf -ctk q8_0 -ctv f16\n");
    EXPECT_EQ(mixed.reading.scenario["inference"]["kv_cache_dtype"], "fp16");
    EXPECT_TRUE(has(mixed.reading.warnings, "differ"));
    // A quantized V cache with flash attention off is what llama.cpp refuses: an issue naming it.
    Read off = read_command("llama-server -m x.gguf -fa off -ctv q4_0\n");
    ASSERT_FALSE(off.reading.issues.empty());
    EXPECT_EQ(off.reading.issues[0].field, "cache-type-v");
}

TEST(FormatsServing, VllmHumanReadableTokenCounts) {
    // vllm/engine/arg_utils.py human_readable_int: k is 1000, K 1024.
    Read r = read_command("vllm serve m --max-model-len 32k --max-num-batched-tokens 2K\n");
    ASSERT_TRUE(r.reading.issues.empty()) << r.reading.issues[0].problem;
    EXPECT_EQ(r.reading.scenario["inference"]["context_len"], 32000);
    EXPECT_EQ(r.reading.scenario["inference"]["max_num_batched_tokens"], 2048);
    Read half = read_command("vllm serve m --max-model-len 25.6k\n");
    EXPECT_EQ(half.reading.scenario["inference"]["context_len"], 25600);
    Read bad = read_command("vllm serve m --max-model-len 1.5K\n");
    ASSERT_EQ(bad.reading.issues.size(), 1u);
}

TEST(FormatsServing, BadValuesNameTheFlag) {
    Read r = read_command("vllm serve m --max-model-len lots --gpu-memory-utilization 1.5\n");
    ASSERT_EQ(r.reading.issues.size(), 2u);
    EXPECT_EQ(r.reading.issues[0].field, "max-model-len");
    EXPECT_EQ(r.reading.issues[1].field, "gpu-memory-utilization");
}

TEST(FormatsServing, EveryRowIsAFlagTheEngineTakes) {
    // tests/data/formats/<engine>.json: the flags each engine's CLI has, read from its source.
    struct Engine {
        ConfigFormat format;
        const char* file;
        std::vector<const char*> lists;
    };
    const std::vector<Engine> engines = {
        {ConfigFormat::Vllm, "vllm", {"flags", "serve_only_flags"}},
        {ConfigFormat::Sglang, "sglang", {"flags"}},
        {ConfigFormat::Tgi, "tgi", {"flags"}},
        {ConfigFormat::TensorrtLlm, "tensorrt_llm", {"trtllm_serve_flags"}},
        {ConfigFormat::LlamaCpp, "llama_cpp", {"flags"}},
    };
    auto dashes = [](std::string s) {
        for (char& c : s)
            if (c == '_') c = '-';
        return s;
    };
    for (const Engine& e : engines) {
        std::ifstream in(std::string(GPUMEM_SOURCE_DIR) + "/tests/data/formats/" + e.file + ".json");
        std::stringstream text;
        text << in.rdbuf();
        const json rules = json::parse(text.str());
        std::set<std::string> flags;
        for (const char* list : e.lists)
            for (const json& f : rules[list]) flags.insert(dashes(f.get<std::string>()));
        if (rules.contains("short_aliases"))
            for (const auto& [flag, alias] : rules["short_aliases"].items()) flags.insert(dashes(alias));
        if (rules.contains("abbreviations"))
            for (const auto& [abbreviation, flag] : rules["abbreviations"].items()) flags.insert(dashes(abbreviation));
        const gpumem::detail::Tool& t = gpumem::detail::tool(e.format);
        ASSERT_EQ(t.format, e.format) << e.file;
        for (std::size_t i = 0; i < t.key_count; ++i) {
            std::vector<std::string> names = {t.keys[i].key};
            std::stringstream aliases(t.keys[i].aliases);
            for (std::string a; std::getline(aliases, a, ',');) names.push_back(a);
            for (const std::string& n : names) {
                if (n.rfind('@', 0) == 0) continue;  // a positional word
                EXPECT_TRUE(flags.count(dashes("--" + n)) || flags.count(dashes("-" + n)))
                    << e.file << " has no flag " << n;
            }
        }
    }
}

//-----------------------------------------------------------------------------
// The old writers' defects
//-----------------------------------------------------------------------------

TEST(FormatsServing, DataAndExpertParallelismAreWritten) {
    const json mixtral = {{"model", "mistralai/Mixtral-8x7B-v0.1"},
                          {"mode", "inference"},
                          {"parallelism", {{"data_parallel_size", 8}, {"expert_parallel_size", 8}}},
                          {"hardware", {{"num_gpus", 8}}}};
    json v = exported("vllm", mixtral);
    ASSERT_TRUE(v["ok"].get<bool>()) << v.dump();
    EXPECT_NE(words(v).find("--data-parallel-size 8"), std::string::npos) << words(v);
    EXPECT_NE(words(v).find("--enable-expert-parallel"), std::string::npos) << words(v);
    json s = exported("sglang", mixtral);
    ASSERT_TRUE(s["ok"].get<bool>()) << s.dump();
    EXPECT_NE(words(s).find("--dp-size 8"), std::string::npos) << words(s);
    EXPECT_NE(words(s).find("--ep-size 8"), std::string::npos) << words(s);
    EXPECT_NE(words(s).find("--tp-size 8"), std::string::npos) << words(s);
    EXPECT_NE(words(s).find("--enable-dp-attention"), std::string::npos) << words(s);
    // An expert-parallel size the engines cannot run is refused with the reason.
    json odd = mixtral;
    odd["parallelism"]["expert_parallel_size"] = 2;
    for (const char* f : {"vllm", "sglang", "tensorrt_llm", "tgi"}) {
        json e = exported(f, odd);
        ASSERT_FALSE(e["ok"].get<bool>()) << f;
        EXPECT_EQ(e["errors"][0]["field"], "parallelism.expert_parallel_size") << f;
        EXPECT_FALSE(e["errors"][0]["problem"].get<std::string>().empty());
    }
}

TEST(FormatsServing, LlamaCppQuantizedVCacheWithoutFlashAttentionIsRefused) {
    json e =
        exported("llama.cpp",
                 {{"model", "meta-llama/Llama-3.1-8B"},
                  {"mode", "inference"},
                  {"inference", {{"weight_format", "q4_k_m"}, {"kv_cache_dtype", "int8"}, {"attention", "eager"}}}});
    ASSERT_FALSE(e["ok"].get<bool>()) << e.dump();
    EXPECT_EQ(e["errors"][0]["field"], "inference.kv_cache_dtype");
    EXPECT_NE(e["errors"][0]["problem"].get<std::string>().find("flash attention"), std::string::npos);
}

TEST(FormatsServing, AnAliasIsWrittenAsItsHubId) {
    for (const char* f : {"vllm", "sglang", "tgi", "tensorrt_llm"}) {
        json e = exported(f, {{"model", "llama3.1-70b"}, {"mode", "inference"}});
        ASSERT_TRUE(e["ok"].get<bool>()) << f << e.dump();
        EXPECT_EQ(words(e).find("llama3.1-70b"), std::string::npos) << words(e);
        EXPECT_NE(words(e).find("meta-llama/Llama-3.1-70B"), std::string::npos) << words(e);
    }
}

TEST(FormatsServing, TrtllmSaysWhatOnlyItsYamlCanSet) {
    // trtllm-serve has no flag for the weights' dtype or the cache's: the export says where they go.
    json e = exported("tensorrt_llm", {{"model", "meta-llama/Llama-3.1-8B"},
                                       {"mode", "inference"},
                                       {"inference", {{"weight_format", "fp16"}, {"kv_cache_dtype", "fp8"}}}});
    ASSERT_TRUE(e["ok"].get<bool>()) << e.dump();
    EXPECT_TRUE(has(e["notes"].get<std::vector<std::string>>(), "dtype: float16"));
    EXPECT_TRUE(has(e["notes"].get<std::vector<std::string>>(), "kv_cache_config: {dtype: fp8}"));
    json plain = exported("tensorrt_llm", {{"model", "meta-llama/Llama-3.1-8B"}, {"mode", "inference"}});
    EXPECT_TRUE(plain["notes"].empty()) << plain["notes"].dump();  // bf16, the checkpoint's own
}

TEST(FormatsServing, TgiAlwaysNamesItsShardCount) {
    // Without --num-shard TGI shards over every visible GPU: one GPU must be said.
    json e = exported("tgi", {{"model", "meta-llama/Llama-3.1-8B"}, {"mode", "inference"}});
    ASSERT_TRUE(e["ok"].get<bool>()) << e.dump();
    EXPECT_NE(words(e).find("--num-shard 1"), std::string::npos) << words(e);
}

//-----------------------------------------------------------------------------
// Round trip: export -> load_command -> read_doc -> estimate
//-----------------------------------------------------------------------------

namespace {

struct Case {
    const char* format;
    json scenario;
};

// The estimate of what the command reads back, with the model and GPU the check would take from
// its --model / --gpu flags (a command names neither a bundled preset's id nor a card).
json read_back(const json& exported_doc, const json& scenario, std::string& why) {
    Loaded l = gpumem::detail::load_command("cmd", exported_doc["text"].get<std::string>());
    if (l.parts.size() != 1) {
        why = "the command does not load as one tool's part";
        return nullptr;
    }
    Reading g = gpumem::detail::read_doc(l.parts[0].format, l.parts[0].doc);
    if (!g.issues.empty()) {
        why = "reading: " + g.issues[0].field + ": " + g.issues[0].problem;
        return nullptr;
    }
    json s = g.scenario;
    s["model"] = scenario["model"];
    if (scenario.contains("hardware") && scenario["hardware"].contains("gpu"))
        s["hardware"]["gpu"] = scenario["hardware"]["gpu"];
    return gpumem::estimate(s);
}

// The KV pool: the serving engines' pool (vLLM, SGLang, TGI, TensorRT-LLM), else the cache on the
// GPU (llama.cpp's whole-context cache).
double kv_bytes(const json& estimate) {
    if (estimate.contains("serving") && estimate["serving"].contains("kv_cache_bytes"))
        return estimate["serving"]["kv_cache_bytes"];
    return estimate["per_gpu"]["components"].value("kv_cache", 0.0);
}

bool near(double a, double b) { return std::fabs(a - b) <= 0.005 * std::max(std::fabs(a), std::fabs(b)); }

}  // namespace

TEST(FormatsServing, RoundTripGivesTheSamePeakAndKvPool) {
    const json llama = "meta-llama/Llama-3.1-8B", llama70 = "meta-llama/Llama-3.1-70B",
               mixtral = "mistralai/Mixtral-8x7B-v0.1";
    std::vector<Case> cases;
    auto add = [&](const char* f, json model, json inference, json parallel, std::uint64_t gpus) {
        json s = {{"model", model}, {"mode", "inference"}, {"inference", inference}};
        if (!parallel.empty()) s["parallelism"] = parallel;
        s["hardware"] = {{"num_gpus", gpus}, {"gpu", "H100-80GB"}};
        cases.push_back({f, s});
    };
    for (const char* f : {"vllm", "sglang"}) {
        for (const char* w : {"bf16", "fp16", "fp8", "nf4"})
            for (const char* kv : {"auto", "fp8"})
                add(f, llama, {{"weight_format", w}, {"kv_cache_dtype", kv}, {"batch_size", 32}}, json::object(), 1);
        add(f, llama70, {{"context_len", 8192}}, {{"tensor_parallel_size", 4}}, 4);
        add(f, llama70, {{"kv_cache_dtype", "fp8"}}, {{"tensor_parallel_size", 4}, {"data_parallel_size", 2}}, 8);
        add(f, llama70, json::object(), {{"tensor_parallel_size", 2}, {"pipeline_parallel_size", 2}}, 4);
        add(f, mixtral, json::object(), {{"data_parallel_size", 8}, {"expert_parallel_size", 8}}, 8);
        add(f, mixtral, {{"kv_cache_dtype", "fp8"}},
            {{"tensor_parallel_size", 2}, {"data_parallel_size", 4}, {"expert_parallel_size", 4}}, 8);
        add(f, mixtral, json::object(), {{"tensor_parallel_size", 4}, {"data_parallel_size", 2}}, 8);
        // A checkpoint quantized beforehand (gpt-oss: MXFP4 experts, its quantization_config).
        add(f, "openai/gpt-oss-20b", json::object(), json::object(), 1);
        add(f, "openai/gpt-oss-20b", json::object(), {{"data_parallel_size", 4}, {"expert_parallel_size", 4}}, 4);
        add(f, llama, {{"weight_format", "q4_k_m"}}, json::object(), 1);                               // refused
        add(f, mixtral, json::object(), {{"data_parallel_size", 8}, {"expert_parallel_size", 2}}, 8);  // refused
    }
    add("vllm", llama, {{"gpu_memory_utilization", 0.8}, {"block_size", 32}, {"max_num_batched_tokens", 2048}},
        json::object(), 1);
    add("sglang", llama, {{"mem_fraction_static", 0.7}, {"chunked_prefill_size", 2048}}, json::object(), 1);
    for (const char* w : {"bf16", "fp16", "fp8", "nf4", "fp4", "int8"})
        for (const char* kv : {"auto", "fp8"})
            add("tgi", llama, {{"weight_format", w}, {"kv_cache_dtype", kv}}, json::object(), 1);
    add("tgi", llama70, {{"context_len", 8192}}, {{"tensor_parallel_size", 4}}, 4);
    add("tgi", llama, {{"max_batch_prefill_tokens", 2048}, {"cuda_memory_fraction", 0.8}}, json::object(), 1);
    add("tgi", llama70, json::object(), {{"tensor_parallel_size", 2}, {"pipeline_parallel_size", 2}}, 4);  // refused
    add("tensorrt_llm", llama, {{"batch_size", 16}}, json::object(), 1);
    add("tensorrt_llm", llama, {{"batch_size", 16}, {"max_num_tokens", 2048}}, json::object(), 1);
    add("tensorrt_llm", llama70, {{"context_len", 8192}, {"free_gpu_memory_fraction", 0.85}},
        {{"tensor_parallel_size", 4}}, 4);
    add("tensorrt_llm", llama70, json::object(), {{"tensor_parallel_size", 2}, {"pipeline_parallel_size", 2}}, 4);
    add("tensorrt_llm", mixtral, json::object(), {{"data_parallel_size", 8}, {"expert_parallel_size", 8}},
        8);  // refused
    for (const char* w : {"q4_k_m", "q8_0", "q6_k", "bf16", "fp16"})
        for (const char* kv : {"fp16", "int8", "int4"})
            for (const char* attention : {"flash", "eager"})
                add("llama.cpp", llama,
                    {{"weight_format", w},
                     {"kv_cache_dtype", kv},
                     {"attention", attention},
                     {"batch_size", 2},
                     {"context_len", 8192}},
                    json::object(), 1);
    add("llama.cpp", llama, {{"weight_format", "q4_k_m"}, {"gpu_layers", 20}, {"ubatch", 1024}}, json::object(), 1);
    add("llama.cpp", llama, {{"weight_format", "q4_k_m"}}, {{"tensor_parallel_size", 2}}, 2);  // refused

    std::size_t compared = 0, refused = 0;
    for (const Case& c : cases) {
        const std::string label = std::string(c.format) + " " + c.scenario.dump();
        json e = exported(c.format, c.scenario);
        if (!e.value("ok", false)) {
            ASSERT_TRUE(e.contains("errors")) << label;
            EXPECT_FALSE(e["errors"][0]["problem"].get<std::string>().empty()) << label;
            ++refused;
            continue;
        }
        // The export's own read-back finds nothing the file leaves out.
        EXPECT_TRUE(e["dropped"].is_array() && e["dropped"].empty()) << label << "\n" << e["dropped"].dump();
        std::string why;
        json back = read_back(e, c.scenario, why);
        ASSERT_FALSE(back.is_null()) << label << "\n" << why << "\n" << e["text"].get<std::string>();
        ASSERT_TRUE(back.value("ok", false)) << label << "\n" << back.dump() << "\n" << e["text"].get<std::string>();
        const json& before = e["estimate"];
        EXPECT_TRUE(near(before["per_gpu"]["device_total_bytes"], back["per_gpu"]["device_total_bytes"]))
            << label << "\n"
            << e["text"].get<std::string>() << before["per_gpu"]["device_total_bytes"] << " vs "
            << back["per_gpu"]["device_total_bytes"];
        EXPECT_GT(kv_bytes(before), 0) << label;
        EXPECT_TRUE(near(kv_bytes(before), kv_bytes(back))) << label << "\n" << e["text"].get<std::string>();
        EXPECT_EQ(before["scenario"]["parallelism"], back["scenario"]["parallelism"]) << label;
        EXPECT_EQ(before["scenario"]["inference"]["weight_format"], back["scenario"]["inference"]["weight_format"])
            << label;
        EXPECT_EQ(before["scenario"]["inference"]["kv_cache_dtype"], back["scenario"]["inference"]["kv_cache_dtype"])
            << label;
        ++compared;
    }
    // Every engine is compared over its matrix, and the refusals are the cases meant to be refused.
    EXPECT_GE(compared, 70u);
    EXPECT_EQ(refused, 2u * 2 + 1 + 1 + 5 * 2 + 1) << compared << " compared";
    RecordProperty("round_trip_compared", static_cast<int>(compared));
    RecordProperty("round_trip_refused", static_cast<int>(refused));
}

TEST(FormatsServing, AnExportSaysWhatItsCommandDoesNotCarry) {
    // An int4 checkpoint (GPTQ, AWQ) is a checkpoint, not a flag: `vllm serve` of the model id runs its bf16
    // weights. The export says so in its answer, in the command's comments and beside the notes.
    json e = exported(
        "vllm",
        {{"model", "meta-llama/Llama-3.1-8B"}, {"mode", "inference"}, {"inference", {{"weight_format", "int4"}}}});
    ASSERT_TRUE(e["ok"].get<bool>()) << e.dump();
    ASSERT_EQ(e["dropped"].size(), 1u) << e["dropped"].dump();
    EXPECT_EQ(e["dropped"][0]["field"], "inference.weight_format");
    EXPECT_EQ(e["dropped"][0]["estimated"], "int4");
    EXPECT_EQ(e["dropped"][0]["in_file"], "bf16");
    EXPECT_NE(e["text"].get<std::string>().find("# gpumem: inference.weight_format = \"int4\" is not in the file"),
              std::string::npos)
        << e["text"];
    // trtllm-serve's fp8 cache lives in its YAML, which the command does not give.
    e = exported(
        "tensorrt_llm",
        {{"model", "meta-llama/Llama-3.1-8B"}, {"mode", "inference"}, {"inference", {{"kv_cache_dtype", "fp8"}}}});
    ASSERT_TRUE(e["ok"].get<bool>()) << e.dump();
    ASSERT_EQ(e["dropped"].size(), 1u) << e["dropped"].dump();
    EXPECT_EQ(e["dropped"][0]["field"], "inference.kv_cache_dtype");
    // The sequences asked of an engine that fills its budget are its load, not a setting: TGI has no flag for them.
    e = exported("tgi",
                 {{"model", "meta-llama/Llama-3.1-8B"}, {"mode", "inference"}, {"inference", {{"batch_size", 8}}}});
    ASSERT_TRUE(e["ok"].get<bool>()) << e.dump();
    EXPECT_TRUE(e["dropped"].empty()) << e["dropped"].dump();
    // llama-server's -fa defaults to auto (flash attention): what the export estimates where the scenario is open.
    e = exported(
        "llama.cpp",
        {{"model", "meta-llama/Llama-3.1-8B"}, {"mode", "inference"}, {"inference", {{"weight_format", "q4_k_m"}}}});
    ASSERT_TRUE(e["ok"].get<bool>()) << e.dump();
    EXPECT_EQ(e["scenario"]["inference"]["attention"], "flash");
    EXPECT_TRUE(e["dropped"].empty()) << e["dropped"].dump();
}
