// A serving view that agrees with itself (issue #30): the verdict of an engine that fills its budget is about
// sequences, a GPU count for serving is a layout said in words, warnings and defaults belong to their mode, and
// an export that does not fit says so. Also the default an adapter fine-tune gets for checkpointing.
#include <string>

#include <gtest/gtest.h>

#include "gpumem/gpumem.h"

#include "estimate_helpers.h"

namespace {

using json = nlohmann::json;

using gpumem::test::kLlama8B;
using gpumem::test::run;

const json kLlama70B = {{"preset", "meta-llama/Llama-3.1-70B-Instruct"}};

// The issue's scenario: vLLM serving the 70B to 32 users at 8k context on two H100s.
json issue_scenario() {
    return {{"model", kLlama70B},
            {"mode", "inference"},
            {"inference", {{"engine", "vllm"}, {"batch_size", 32}, {"context_len", 8192}}},
            {"hardware", {{"gpu", "H100-80GB"}, {"num_gpus", 2}}}};
}

bool listed(const json& list, const std::string& part) {
    for (const json& item : list)
        if (item.get<std::string>().find(part) != std::string::npos) return true;
    return false;
}

TEST(ServingView, TwoGpusForServingAreOneTensorParallelServerSaidInWords) {
    json r = run(issue_scenario());
    const json& p = r["scenario"]["parallelism"];
    EXPECT_EQ(p["tensor_parallel_size"], 2);
    EXPECT_EQ(p["data_parallel_size"], 1);
    EXPECT_TRUE(listed(r["defaults_applied"], "parallelism.tensor_parallel_size = 2 (num_gpus 2: one vllm server"));
    EXPECT_EQ(r["layout"]["replicas"], 1);
    EXPECT_EQ(r["layout"]["gpus_per_replica"], 2);
    EXPECT_EQ(r["layout"]["text"], "one vllm server split over 2 GPUs (tensor parallel 2)");
    // GPUs needed counts from the two-GPU server (tensor parallel 4), not from two replicas (which said 8).
    EXPECT_EQ(r["gpus_needed"], 4);

    // Replicas only when asked for, and then said so.
    json replicas = issue_scenario();
    replicas["parallelism"] = {{"data_parallel_size", 2}};
    json d = run(replicas);
    EXPECT_EQ(d["scenario"]["parallelism"]["tensor_parallel_size"], 1);
    EXPECT_EQ(d["layout"]["text"], "2 replicas, one GPU each: every GPU holds the whole model");
}

TEST(ServingView, TheLargestTensorParallelSizeTheHeadsAllowTheRestReplicas) {
    // Llama 3.1 8B: 32 heads, 8 kv heads; 6 GPUs: tensor parallel 2 (3 and 6 do not divide the heads), 3 replicas.
    json r = run({{"model", kLlama8B},
                  {"mode", "inference"},
                  {"inference", {{"engine", "sglang"}}},
                  {"hardware", {{"num_gpus", 6}}}});
    EXPECT_EQ(r["scenario"]["parallelism"]["tensor_parallel_size"], 2);
    EXPECT_EQ(r["scenario"]["parallelism"]["data_parallel_size"], 3);
    EXPECT_EQ(r["layout"]["text"], "3 replicas of 2 GPUs each (tensor parallel 2)");
    // transformers' device_map="auto" puts whole layers on each GPU: a pipeline.
    json t = run({{"model", kLlama8B}, {"mode", "inference"}, {"hardware", {{"num_gpus", 2}}}});
    EXPECT_EQ(t["scenario"]["parallelism"]["pipeline_parallel_size"], 2);
    EXPECT_EQ(t["scenario"]["parallelism"]["tensor_parallel_size"], 1);
    EXPECT_TRUE(listed(t["defaults_applied"], "device_map=\"auto\""));
}

TEST(ServingView, TrainingEngineDefaultsAndWarningsStayInTraining) {
    json r = run(issue_scenario());
    EXPECT_FALSE(listed(r["defaults_applied"], "engine.type")) << r["defaults_applied"].dump();
    EXPECT_FALSE(listed(r["warnings"], "the Megatron way")) << r["warnings"].dump();
    EXPECT_EQ(r["scenario"]["engine"]["type"], "none");
    // A training engine named in a serving scenario is said to be ignored.
    json named = issue_scenario();
    named["engine"] = {{"type", "deepspeed"}, {"zero_stage", 3}};
    json n = run(named);
    EXPECT_TRUE(listed(n["warnings"], "engine.type \"deepspeed\" is a training engine"));
    // Training keeps both.
    json t =
        run({{"model", kLlama8B}, {"hardware", {{"num_gpus", 2}}}, {"parallelism", {{"tensor_parallel_size", 2}}}});
    EXPECT_TRUE(listed(t["defaults_applied"], "engine.type = \"none\""));
    EXPECT_TRUE(listed(t["warnings"], "the Megatron way"));
}

TEST(ServingView, ABudgetFillingEngineIsJudgedBySequences) {
    for (const char* engine : {"vllm", "sglang", "tgi", "tensorrt_llm"}) {
        json s = issue_scenario();
        s["inference"]["engine"] = engine;
        json r = run(s);
        const json& sv = r["serving"];
        EXPECT_TRUE(sv["fills_budget"].get<bool>()) << engine;
        EXPECT_EQ(sv["requested_sequences"], 32) << engine;
        // The verdict is the pool's: fewer sequences than asked is "does not fit" whatever the claim.
        EXPECT_EQ(r["fits"].get<bool>(), sv["max_concurrent_sequences"].get<std::uint64_t>() >= 32 &&
                                             r["per_gpu"]["device_total_bytes"] <= r["per_gpu"]["capacity_bytes"])
            << engine;
    }
    json plain = run({{"model", kLlama8B}, {"mode", "inference"}});
    EXPECT_TRUE(plain["serving"].is_null());  // transformers grows its cache: judged by bytes
}

TEST(ServingView, ReservedNeverExceedsTheDeviceTotal) {
    // nvidia-smi shows the process's reserved memory and more: the device total is at least reserved.
    for (const char* engine : {"vllm", "sglang", "tgi", "tensorrt_llm", "transformers"})
        for (int tp : {1, 2})
            for (int batch : {1, 32}) {
                json s = issue_scenario();
                s["inference"]["engine"] = engine;
                s["inference"]["batch_size"] = batch;
                s["parallelism"] = {{"tensor_parallel_size", tp}};
                json r = run(s);
                EXPECT_LE(r["per_gpu"]["peak_reserved_bytes"].get<double>(),
                          r["per_gpu"]["device_total_bytes"].get<double>())
                    << engine << " tp " << tp << " batch " << batch;
            }
    // Images encoded into the pool's sequences: the encoder's working set may be the step's peak.
    for (const char* engine : {"vllm", "sglang"})
        for (int images : {1, 16}) {
            json r = run({{"model", {{"preset", "google/gemma-3-4b-it"}}},
                          {"mode", "inference"},
                          {"inference", {{"engine", engine}, {"batch_size", 8}, {"images", images}}}});
            EXPECT_LE(r["per_gpu"]["peak_reserved_bytes"].get<double>(),
                      r["per_gpu"]["device_total_bytes"].get<double>())
                << engine << " images " << images;
        }
}

TEST(ServingView, FitComparesBudgetFillersByThePool) {
    json f = gpumem::fit(issue_scenario());
    ASSERT_TRUE(f["ok"].get<bool>()) << f.dump();
    EXPECT_TRUE(f["serving"]["fills_budget"].get<bool>());
    ASSERT_FALSE(f["suggestions"].empty());
    for (const json& x : f["suggestions"]) {
        ASSERT_TRUE(x["serving"].is_object()) << x["change"];
        EXPECT_GE(x["serving"]["max_concurrent_sequences"].get<std::uint64_t>(),
                  x["serving"]["requested_sequences"].get<std::uint64_t>())
            << x["change"];
    }
}

TEST(ServingView, AnExportThatDoesNotFitSaysSo) {
    json r = gpumem::export_config({{"format", "vllm"}, {"scenario", issue_scenario()}});
    ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
    const std::string text = r["text"];
    EXPECT_EQ(text.rfind("# gpumem: this run does not fit: ", 0), 0u) << text;
    EXPECT_NE(text.find("of 32 sequences of 8192 tokens fit"), std::string::npos) << text;
    EXPECT_TRUE(r["fit_note_in_file"].get<bool>());
    // JSON has no comments: the note is in the answer only.
    json ds = gpumem::export_config({{"format", "deepspeed"}, {"scenario", {{"model", kLlama70B}}}});
    ASSERT_TRUE(ds["ok"].get<bool>()) << ds.dump();
    EXPECT_TRUE(ds["fit_note"].is_string());
    EXPECT_FALSE(ds["fit_note_in_file"].get<bool>());
    EXPECT_EQ(ds["text"].get<std::string>().rfind("{", 0), 0u);
    // One that fits has neither.
    json ok = gpumem::export_config(
        {{"format", "axolotl"}, {"scenario", {{"model", kLlama8B}, {"training", {{"method", "qlora"}}}}}});
    ASSERT_TRUE(ok["ok"].get<bool>()) << ok.dump();
    EXPECT_TRUE(ok["fit_note"].is_null());
    EXPECT_EQ(ok["text"].get<std::string>().find("# gpumem"), std::string::npos);
}

TEST(MethodDefaults, AdaptersCheckpointByDefaultAndSayWhy) {
    for (const char* method : {"lora", "qlora"}) {
        json r = run({{"model", kLlama8B}, {"training", {{"method", method}}}});
        EXPECT_EQ(r["scenario"]["training"]["activation_checkpointing"], "full") << method;
        EXPECT_TRUE(listed(r["defaults_applied"], "training.activation_checkpointing = \"full\" (what LoRA and QLoRA"))
            << method;
    }
    json full = run({{"model", kLlama8B}});
    EXPECT_EQ(full["scenario"]["training"]["activation_checkpointing"], "none");
    // Given, it is kept.
    json off = run({{"model", kLlama8B}, {"training", {{"method", "qlora"}, {"activation_checkpointing", "none"}}}});
    EXPECT_EQ(off["scenario"]["training"]["activation_checkpointing"], "none");
}

}  // namespace
