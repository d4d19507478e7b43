// The planner and the max-fit solvers: the fast path agrees with estimate() to the byte, the
// solvers are exact at the boundary, plan rows respect divisibility and fit when re-estimated,
// rankings are stable, and bad input is named.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include <gpumem/gpumem.h>

#include "search/search.h"

using nlohmann::json;

namespace {

json preset(const char* id) { return {{"preset", id}}; }

// The planner's path: read once, details off, then the layout applied and evaluated.
struct Fast {
    gpumem::detail::Scenario s;
    explicit Fast(const json& doc) {
        auto read = gpumem::detail::read_scenario(doc);
        EXPECT_TRUE(read.issues.empty()) << doc.dump() << " " << (read.issues.empty() ? "" : read.issues[0].message());
        s = read.scenario;
        s.details = false;
    }
    gpumem::detail::Figures at(const gpumem::detail::Layout& l) {
        gpumem::detail::apply_layout(s, l);
        return gpumem::detail::evaluate(s);
    }
};

// The same layout written into the document, for estimate().
json with_layout(json doc, const gpumem::detail::Layout& l, bool training) {
    doc["parallelism"] = {{"data_parallel_size", l.dp},     {"tensor_parallel_size", l.tp},
                          {"pipeline_parallel_size", l.pp}, {"context_parallel_size", l.cp},
                          {"expert_parallel_size", l.ep},   {"sequence_parallel", l.sequence_parallel}};
    doc["hardware"]["num_gpus"] = l.dp * l.tp * l.pp * l.cp;
    const char* section = training ? "training" : "inference";
    doc[section]["batch_size"] = l.batch_size;
    if (training) {
        doc["training"]["gradient_accumulation_steps"] = l.grad_accum;
        if (l.checkpointing) doc["training"]["activation_checkpointing"] = gpumem::detail::name(*l.checkpointing);
        if (l.seq_len) doc["training"]["seq_len"] = l.seq_len;
    } else if (l.seq_len) {
        doc["inference"]["context_len"] = l.seq_len;
    }
    return doc;
}

std::uint64_t bytes(double b) { return b <= 0 ? 0 : static_cast<std::uint64_t>(std::llround(b)); }

// Compares the fast evaluation with estimate() over `layouts`; returns how many were compared.
int compare(const json& base, const std::vector<gpumem::detail::Layout>& layouts, bool training) {
    Fast fast(base);
    int compared = 0;
    for (const auto& l : layouts) {
        if (!gpumem::detail::layout_problem(fast.s.model, l,
                                            training ? fast.s.training.seq_len : fast.s.inference.context_len)
                 .empty())
            continue;
        json doc = with_layout(base, l, training);
        json full = gpumem::estimate(doc);
        EXPECT_TRUE(full["ok"].get<bool>()) << doc.dump() << "\n" << full.dump();
        if (!full["ok"].get<bool>()) continue;
        auto f = fast.at(l);
        EXPECT_EQ(bytes(f.device), full["per_gpu"]["device_total_bytes"].get<std::uint64_t>()) << doc.dump();
        EXPECT_EQ(bytes(f.allocated), full["per_gpu"]["peak_allocated_bytes"].get<std::uint64_t>()) << doc.dump();
        EXPECT_EQ(f.fits, full["fits"].get<bool>()) << doc.dump();
        ++compared;
    }
    return compared;
}

std::vector<gpumem::detail::Layout> training_layouts(bool moe) {
    std::vector<gpumem::detail::Layout> out;
    using gpumem::detail::Checkpointing;
    const Checkpointing ckpt[] = {Checkpointing::None, Checkpointing::Selective, Checkpointing::Full};
    int i = 0;
    for (std::uint64_t tp : {1, 2, 4})
        for (std::uint64_t pp : {1, 2})
            for (std::uint64_t cp : {1, 2})
                for (std::uint64_t ep : moe ? std::vector<std::uint64_t>{1, 2, 4} : std::vector<std::uint64_t>{1}) {
                    gpumem::detail::Layout l;
                    l.tp = tp, l.pp = pp, l.cp = cp, l.ep = ep;
                    l.dp = 4;
                    l.sequence_parallel = tp > 1 && i % 2;
                    l.batch_size = 1 + i % 3;
                    l.grad_accum = 1 + i % 4;
                    l.checkpointing = ckpt[i % 3];
                    out.push_back(l);
                    ++i;
                }
    return out;
}

}  // namespace

TEST(PlannerFastPath, AgreesWithTheEstimateForTrainingToTheByte) {
    int compared = 0;
    const json engines[] = {
        {{"type", "none"}},
        {{"type", "ddp"}},
        {{"type", "deepspeed"}, {"zero_stage", 1}},
        {{"type", "deepspeed"}, {"zero_stage", 2}, {"offload_optimizer", "cpu"}},
        {{"type", "deepspeed"}, {"zero_stage", 3}},
        {{"type", "deepspeed"}, {"zero_stage", 3}, {"offload_optimizer", "cpu"}, {"offload_param", "cpu"}},
        {{"type", "fsdp"}, {"fsdp_sharding", "full_shard"}},
        {{"type", "fsdp"}, {"fsdp_sharding", "hybrid_shard"}},
        {{"type", "fsdp"}, {"fsdp_sharding", "shard_grad_op"}},
        {{"type", "megatron"}},
    };
    struct Case {
        const char* model;
        const char* method;
        bool moe;
        json extra = json::object();  // more training fields: the frameworks' switches, partial training
    };
    const Case cases[] = {
        {"meta-llama/Llama-3.1-8B", "full", false},
        {"meta-llama/Llama-3.1-8B", "lora", false},
        {"Qwen/Qwen2.5-7B", "qlora", false},
        {"google/gemma-2-9b", "full", false},
        {"mistralai/Mixtral-8x7B-v0.1", "full", true},
        {"Qwen/Qwen3-30B-A3B", "lora", true},
        {"meta-llama/Llama-3.2-3B", "full", false, {{"framework", "litgpt"}}},
        {"meta-llama/Llama-3.1-8B",
         "full",
         false,
         {{"framework", "torchtune"}, {"optimizer_in_backward", true}, {"activation_offloading", true}}},
        {"Qwen/Qwen2.5-7B", "qlora", false, {{"double_quant", true}}},
        {"meta-llama/Llama-3.1-8B", "frozen", false, {{"trainable_layers", 4}, {"train_lm_head", true}}},
    };
    int e = 0;
    for (const Case& c : cases) {
        for (int k = 0; k < 3; ++k, ++e) {
            const json& engine = engines[e % std::size(engines)];
            json base = {
                {"model", preset(c.model)},
                {"training", {{"method", c.method}, {"seq_len", 1024}, {"optimizer", k == 1 ? "adafactor" : "adamw"}}},
                {"engine", engine},
                {"hardware", {{"gpu", "H100-80GB"}}}};
            base["training"].update(c.extra);
            if (std::string(c.method) != "full") base["engine"] = {{"type", k ? "ddp" : "none"}};
            auto layouts = training_layouts(c.moe);
            if (base["engine"]["type"] == "none")
                for (auto& l : layouts) l.dp = 1, l.ep = 1;
            compared += compare(base, layouts, true);
        }
    }
    EXPECT_GE(compared, 250);
}

TEST(PlannerFastPath, AgreesWithTheEstimateForInferenceToTheByte) {
    int compared = 0;
    const char* models[] = {"meta-llama/Llama-3.1-8B", "mistralai/Mixtral-8x7B-v0.1", "google/gemma-2-9b",
                            "deepseek-ai/DeepSeek-V2-Lite"};
    const char* engines[] = {"transformers", "vllm", "llama.cpp"};
    const char* kv[] = {"auto", "fp8", "int8"};
    for (const char* model : models)
        for (int e = 0; e < 3; ++e) {
            json base = {{"model", preset(model)},
                         {"mode", "inference"},
                         {"inference", {{"engine", engines[e]}, {"kv_cache_dtype", kv[e]}, {"context_len", 2048}}}};
            std::vector<gpumem::detail::Layout> layouts;
            for (std::uint64_t tp : {1, 2, 4})
                for (std::uint64_t pp : {1, 2})
                    for (std::uint64_t b : {1, 8, 64}) {
                        gpumem::detail::Layout l;
                        l.tp = tp, l.pp = pp, l.batch_size = b;
                        l.seq_len = b == 64 ? 1024 : 4096;
                        layouts.push_back(l);
                    }
            compared += compare(base, layouts, false);
        }
    EXPECT_GE(compared, 150);
}

TEST(MaxFit, TrainingBoundariesAreExact) {
    json scenario = {{"model", preset("meta-llama/Llama-3.1-8B")},
                     {"training", {{"seq_len", 2048}, {"activation_checkpointing", "full"}}},
                     {"engine", {{"type", "deepspeed"}, {"zero_stage", 3}}},
                     {"parallelism", {{"data_parallel_size", 8}}}};
    json r = gpumem::maxfit(scenario);
    ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
    ASSERT_EQ(r["solvers"].size(), 2u);
    for (const json& x : r["solvers"]) {
        std::uint64_t n = x["value"];
        ASSERT_GT(n, 0u) << x.dump();
        ASSERT_EQ(x["limited_by"], "memory") << x.dump();
        json at = scenario, next = scenario;
        const char* key = x["field"] == "training.batch_size" ? "batch_size" : "seq_len";
        at["training"][key] = n;
        next["training"][key] = n + 1;
        json fits = gpumem::estimate(at), not_fits = gpumem::estimate(next);
        EXPECT_TRUE(fits["fits"].get<bool>()) << key << " = " << n;
        EXPECT_FALSE(not_fits["fits"].get<bool>()) << key << " = " << n + 1;
        EXPECT_EQ(x["device_total_bytes"], fits["per_gpu"]["device_total_bytes"]);
        EXPECT_EQ(x["next_device_total_bytes"], not_fits["per_gpu"]["device_total_bytes"]);
    }
}

TEST(MaxFit, InferenceConcurrencyAndContextAreExact) {
    for (const char* engine : {"transformers", "vllm"}) {
        json scenario = {{"model", preset("meta-llama/Llama-3.1-8B")},
                         {"mode", "inference"},
                         {"inference", {{"engine", engine}, {"context_len", 8192}, {"batch_size", 4}}}};
        json r = gpumem::maxfit(scenario);
        ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
        for (const json& x : r["solvers"]) {
            std::uint64_t n = x["value"];
            ASSERT_GT(n, 0u) << x.dump();
            const char* key = x["field"] == "inference.batch_size" ? "batch_size" : "context_len";
            json at = scenario, next = scenario;
            at["inference"][key] = n;
            next["inference"][key] = n + 1;
            EXPECT_TRUE(gpumem::estimate(at)["fits"].get<bool>()) << engine << " " << key << " = " << n;
            EXPECT_FALSE(gpumem::estimate(next)["fits"].get<bool>()) << engine << " " << key << " = " << n + 1;
        }
        if (std::string(engine) == "vllm") {
            // vLLM's own figure: the KV pool holds this many sequences of 8192 tokens.
            json served = gpumem::estimate(scenario);
            EXPECT_EQ(r["solvers"][0]["value"], served["serving"]["max_concurrent_sequences"]);
        }
    }
}

TEST(MaxFit, NothingFitsIsZero) {
    // 405B parameters' bf16 weights alone are ~755 GiB: not even one sequence fits one H100.
    json r = gpumem::maxfit({{"model", {{"num_parameters", "405B"}}}, {"mode", "inference"}});
    ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
    EXPECT_EQ(r["solvers"][0]["value"], 0);
    EXPECT_EQ(r["solvers"][0]["limited_by"], "does_not_fit");
}

namespace {

json llama70_plan(int gpus, int top) {
    return {{"model", preset("meta-llama/Llama-3.1-70B")},
            {"training", {{"seq_len", 4096}}},
            {"plan", {{"num_gpus", gpus}, {"gpu", "H100-80GB"}, {"global_batch_size", 256}, {"top", top}}}};
}

}  // namespace

TEST(Plan, RowsRespectDivisibilityAndTheGlobalBatch) {
    json r = gpumem::plan(llama70_plan(64, 50));
    ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
    ASSERT_GT(r["plans"].size(), 10u);
    for (const json& row : r["plans"]) {
        const json& l = row["layout"];
        std::uint64_t dp = l["data_parallel_size"], tp = l["tensor_parallel_size"], pp = l["pipeline_parallel_size"],
                      cp = l["context_parallel_size"], mb = l["micro_batch_size"],
                      ga = l["gradient_accumulation_steps"];
        EXPECT_EQ(dp * tp * pp * cp, 64u);
        EXPECT_EQ(64 % tp, 0u);  // Llama-3.1-70B: 64 heads
        EXPECT_EQ(8 % tp, 0u);   // 8 kv heads
        EXPECT_EQ(80 % pp, 0u);  // 80 layers
        EXPECT_EQ(4096 % cp, 0u);
        EXPECT_LE(tp, 8u);  // inside one node
        EXPECT_EQ(dp * mb * ga, 256u);
    }
}

TEST(Plan, TopRowFitsWhenReEstimated) {
    for (json request : {llama70_plan(64, 3),
                         json{{"model", preset("mistralai/Mixtral-8x7B-v0.1")},
                              {"training", {{"seq_len", 2048}}},
                              {"plan", {{"num_gpus", 16}, {"global_batch_size", 64}, {"top", 3}}}},
                         json{{"model", preset("meta-llama/Llama-3.1-70B")},
                              {"mode", "inference"},
                              {"inference", {{"engine", "vllm"}, {"batch_size", 16}}},
                              {"plan", {{"num_gpus", 8}, {"top", 3}}}}}) {
        json r = gpumem::plan(request);
        ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
        ASSERT_FALSE(r["plans"].empty()) << r.dump();
        for (const json& row : r["plans"]) {
            json again = gpumem::estimate(row["scenario"]);
            ASSERT_TRUE(again["ok"].get<bool>()) << again.dump();
            EXPECT_TRUE(again["fits"].get<bool>());
            EXPECT_EQ(again["per_gpu"]["device_total_bytes"], row["device_total_bytes"]);
            EXPECT_EQ(row["estimate"]["per_gpu"]["device_total_bytes"], row["device_total_bytes"]);
        }
    }
}

TEST(Plan, RankingIsStableAndOrdered) {
    json a = gpumem::plan(llama70_plan(32, 40)), b = gpumem::plan(llama70_plan(32, 40));
    ASSERT_TRUE(a["ok"].get<bool>());
    ASSERT_EQ(a["plans"].size(), b["plans"].size());
    for (std::size_t i = 0; i < a["plans"].size(); ++i) {
        EXPECT_EQ(a["plans"][i]["layout"], b["plans"][i]["layout"]) << i;
        if (i) {
            EXPECT_LE(a["plans"][i - 1]["step_time_s"].get<double>(), a["plans"][i]["step_time_s"].get<double>());
        }
    }
    EXPECT_EQ(a["search"]["candidates"], b["search"]["candidates"]);
}

TEST(Plan, StepTimeComputeTermFromTheFormula) {
    // Llama-3.1-8B on 8 x H100: 6N + 12 L H Q s FLOPs per token (PaLM), N = 8,030,261,248 parameters
    // less the 128,256 x 4,096 input embedding = 7,504,924,672; L 32, H 32, Q 128, s 2048.
    json r = gpumem::plan({{"model", preset("meta-llama/Llama-3.1-8B")},
                           {"training", {{"seq_len", 2048}}},
                           {"plan", {{"num_gpus", 8}, {"gpu", "H100-80GB"}, {"global_batch_size", 64}, {"top", 1}}}});
    ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
    double per_token = 6.0 * 7504924672.0 + 12.0 * 32 * 32 * 128 * 2048;
    double expected = 64.0 * 2048 * per_token / (8 * 989e12 * 0.45);  // 989 TFLOPS dense BF16, mfu 0.45
    EXPECT_NEAR(r["plans"][0]["step_time"]["compute_s"].get<double>(), expected, expected * 1e-12);
}

TEST(Plan, PipelineBubbleIsTheOneF1BFraction) {
    json r = gpumem::plan(llama70_plan(64, 200));
    ASSERT_TRUE(r["ok"].get<bool>());
    int checked = 0;
    for (const json& row : r["plans"]) {
        double p = row["layout"]["pipeline_parallel_size"], m = row["layout"]["gradient_accumulation_steps"];
        if (p < 2) continue;
        const json& t = row["step_time"];
        double busy = t["compute_s"].get<double>() + t["recompute_s"].get<double>() + t["tp_comm_s"].get<double>() +
                      t["cp_comm_s"].get<double>() + t["ep_comm_s"].get<double>();
        double bubble = t["pp_bubble_s"];
        // (p-1)/(m+p-1) of the pipeline's time (Narayanan et al. 2021)
        EXPECT_NEAR(bubble / (busy + bubble), (p - 1) / (m + p - 1), 1e-12);
        ++checked;
    }
    EXPECT_GT(checked, 0);
}

TEST(Plan, HostRamLimitsOffload) {
    json request = {{"model", preset("meta-llama/Llama-3.1-8B")},
                    {"training", {{"seq_len", 4096}}},
                    {"plan", {{"num_gpus", 1}, {"gpu", "RTX-4090-24GB"}, {"global_batch_size", 1}, {"top", 50}}}};
    json unlimited = gpumem::plan(request);
    ASSERT_TRUE(unlimited["ok"].get<bool>()) << unlimited.dump();
    ASSERT_FALSE(unlimited["plans"].empty());  // 8B on 24 GB only fits by offloading
    EXPECT_NE(unlimited["plans"][0]["layout"]["offload_optimizer"], "none");
    request["plan"]["host_ram_gb"] = 16;  // less than the ~8B x 12 bytes of optimizer state
    json limited = gpumem::plan(request);
    ASSERT_TRUE(limited["ok"].get<bool>());
    EXPECT_TRUE(limited["plans"].empty());
    EXPECT_GT(limited["search"]["host_ram_limited"].get<int>(), 0);
}

TEST(Plan, BadInputIsNamed) {
    auto field_of = [](const json& request) {
        json r = gpumem::plan(request);
        EXPECT_FALSE(r["ok"].get<bool>()) << r.dump();
        return r["ok"].get<bool>() ? std::string() : r["errors"][0]["field"].get<std::string>();
    };
    json model = preset("meta-llama/Llama-3.1-8B");
    EXPECT_EQ(field_of({{"model", model}}), "plan.num_gpus");
    EXPECT_EQ(field_of({{"model", model}, {"plan", {{"num_gpus", 0}}}}), "plan.num_gpus");
    EXPECT_EQ(field_of({{"model", model}, {"plan", {{"num_gpus", 8}, {"gpu", "H900"}}}}), "plan.gpu");
    EXPECT_EQ(field_of({{"model", model}, {"plan", {{"num_gpus", 8}, {"top", 0}}}}), "plan.top");
    EXPECT_EQ(field_of({{"model", model}, {"plan", {{"num_gpus", 8}, {"step_time", {{"mfu", 2}}}}}}),
              "plan.step_time.mfu");
    EXPECT_EQ(field_of({{"model", model}, {"plan", {{"num_gpus", 8}, {"step_time", {{"speed", 2}}}}}}),
              "plan.step_time.speed");
    EXPECT_EQ(field_of({{"model", model}, {"plan", {{"num_gpus", 8}, {"gpus", 2}}}}), "plan.gpus");
    EXPECT_EQ(field_of({{"model", model}, {"plan", "8"}}), "plan");
    EXPECT_EQ(field_of({{"model", model}, {"training", {{"batch_size", -4}}}, {"plan", {{"num_gpus", 8}}}}),
              "training.batch_size");
    EXPECT_EQ(field_of(json::array()), "");
    json bad = json::parse(gpumem::plan_json("{\"model\": "));
    EXPECT_FALSE(bad["ok"].get<bool>());
    EXPECT_NE(bad["errors"][0]["message"].get<std::string>().find("malformed JSON"), std::string::npos);
    json maxfit_bad =
        json::parse(gpumem::maxfit_json("{\"model\": {\"preset\": \"llama3-8b\"}, \"training\": {\"seq_len\": 0}}"));
    EXPECT_FALSE(maxfit_bad["ok"].get<bool>());
    EXPECT_EQ(maxfit_bad["errors"][0]["field"], "training.seq_len");
}

TEST(Plan, AHugeGlobalBatchIsSplitWithinTheReadersLimits) {
    // 2^40 sequences on one GPU: more than 10^6 accumulation steps even at the largest micro-batch the
    // reader allows (10^6; 2^40 > 10^12), so the layout is skipped, quickly (the divisors of 2^40 take
    // 2^20 trial divisions, not 2^40), and the warning says why.
    json r = gpumem::plan(
        {{"model", preset("meta-llama/Llama-3.1-8B")}, {"plan", {{"num_gpus", 1}, {"global_batch_size", 1ull << 40}}}});
    ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
    EXPECT_TRUE(r["plans"].empty());
    EXPECT_EQ(r["search"]["evaluations"], 0);
    ASSERT_FALSE(r["warnings"].empty());
    EXPECT_NE(r["warnings"][0].get<std::string>().find("no micro-batch of at most 1000000"), std::string::npos)
        << r["warnings"];
    // 2^24 on 8 GPUs: 2^21 per data-parallel rank splits as micro-batch x accumulation within 10^6 each.
    json ok = gpumem::plan({{"model", preset("meta-llama/Llama-3.2-1B")},
                            {"training", {{"seq_len", 256}}},
                            {"plan", {{"num_gpus", 8}, {"global_batch_size", 1ull << 24}}}});
    ASSERT_TRUE(ok["ok"].get<bool>()) << ok.dump();
    ASSERT_FALSE(ok["plans"].empty());
    for (const json& row : ok["plans"]) {
        EXPECT_LE(row["layout"]["gradient_accumulation_steps"].get<std::uint64_t>(), 1000000u);
        EXPECT_TRUE(row["estimate"]["ok"].get<bool>()) << row["estimate"].dump();
    }
}

TEST(Plan, MoeRowsDivideTheExpertsAndTheDataParallelRanks) {
    // Qwen3-30B-A3B: 32 heads, 4 kv heads, 128 experts, 48 layers.
    json r = gpumem::plan({{"model", preset("Qwen/Qwen3-30B-A3B")},
                           {"training", {{"seq_len", 2048}}},
                           {"plan", {{"num_gpus", 32}, {"global_batch_size", 128}, {"top", 200}}}});
    ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
    ASSERT_FALSE(r["plans"].empty());
    for (const json& row : r["plans"]) {
        const json& l = row["layout"];
        std::uint64_t dp = l["data_parallel_size"], tp = l["tensor_parallel_size"], pp = l["pipeline_parallel_size"],
                      cp = l["context_parallel_size"], ep = l["expert_parallel_size"];
        EXPECT_EQ(32 % tp, 0u);
        EXPECT_TRUE(4 % tp == 0 || tp % 4 == 0) << tp;
        EXPECT_EQ(48 % pp, 0u);
        EXPECT_EQ(128 % ep, 0u);
        EXPECT_EQ((dp * cp) % ep, 0u);
        if (ep > 1) {
            EXPECT_EQ(l["engine"], "megatron");  // the only engine the search gives EP
        }
    }
}

TEST(Plan, LoraComputeIsFourNPerToken) {
    // LoRA: no weight gradients for the frozen base, 4N + 12 L H Q s FLOPs per token (Llama-3.1-8B as above).
    json r = gpumem::plan({{"model", preset("meta-llama/Llama-3.1-8B")},
                           {"training", {{"method", "lora"}, {"seq_len", 2048}}},
                           {"plan", {{"num_gpus", 8}, {"gpu", "A100-80GB"}, {"global_batch_size", 64}, {"top", 1}}}});
    ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
    double per_token = 4.0 * 7504924672.0 + 12.0 * 32 * 32 * 128 * 2048;
    double expected = 64.0 * 2048 * per_token / (8 * 312e12 * 0.45);  // A100: 312 TFLOPS dense BF16
    EXPECT_NEAR(r["plans"][0]["step_time"]["compute_s"].get<double>(), expected, expected * 1e-12);
}

TEST(Plan, InferenceRowsDivideTheHeadsAndLayers) {
    // Llama-3.1-70B: 64 heads, 8 kv heads, 80 layers; each replica serves the scenario's batch.
    json r = gpumem::plan({{"model", preset("meta-llama/Llama-3.1-70B")},
                           {"mode", "inference"},
                           {"inference", {{"engine", "vllm"}, {"batch_size", 16}, {"context_len", 8192}}},
                           {"plan", {{"num_gpus", 16}, {"top", 100}}}});
    ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
    ASSERT_FALSE(r["plans"].empty());
    for (const json& row : r["plans"]) {
        const json& l = row["layout"];
        std::uint64_t dp = l["data_parallel_size"], tp = l["tensor_parallel_size"], pp = l["pipeline_parallel_size"];
        EXPECT_EQ(dp * tp * pp, 16u);
        EXPECT_EQ(64 % tp, 0u);
        EXPECT_EQ(80 % pp, 0u);
        EXPECT_GE(l["max_concurrent_sequences"].get<int>(), 16);
        EXPECT_DOUBLE_EQ(row["tokens_per_s"].get<double>(),
                         static_cast<double>(dp * 16) / row["step_time_s"].get<double>());
    }
}

TEST(Plan, EveryCatalogueGpuHasItsOwnSpeedFigures) {
    // presets/gpus.json gives each GPU its step_time record (dense BF16 peak, memory and link
    // bandwidths, the datasheets they come from); the plan's constants are that record's, and no
    // GPU of the catalogue falls back to H100-80GB's figures.
    const json gpus = gpumem::list_gpus();
    EXPECT_EQ(gpus.size(), 33u);
    for (const json& g : gpus) {
        const std::string id = g["id"];
        ASSERT_TRUE(g.contains("step_time")) << id;
        const json& st = g["step_time"];
        EXPECT_FALSE(st.value("source", "").empty()) << id;
        json r = gpumem::plan(
            {{"model", preset("meta-llama/Llama-3.2-1B")}, {"plan", {{"num_gpus", 1}, {"gpu", id}, {"top", 1}}}});
        ASSERT_TRUE(r["ok"].get<bool>()) << id << " " << r.dump();
        for (const char* k : {"peak_tflops", "hbm_gbps", "intra_node_gbps", "inter_node_gbps", "pcie_gbps"}) {
            ASSERT_TRUE(st.contains(k) && st[k].is_number()) << id << " " << k;
            EXPECT_GT(st[k].get<double>(), 0) << id << " " << k;
            EXPECT_EQ(r["constants"][k]["value"], st[k].get<double>()) << id << " " << k;
            EXPECT_EQ(r["constants"][k]["about"], id + ": " + st["source"].get<std::string>()) << id << " " << k;
        }
        std::string warnings = r["warnings"].dump();
        EXPECT_EQ(warnings.find("no performance figures"), std::string::npos) << id << " " << warnings;
        // A figure no datasheet gives is named in a warning (A10G: NVIDIA publishes no datasheet for it).
        for (const json& name : st.value("unsourced", json::array()))
            EXPECT_NE(warnings.find("no datasheet gives " + name.get<std::string>()), std::string::npos)
                << id << " " << warnings;
    }
    EXPECT_EQ(gpumem::list_gpus()[5]["step_time"]["unsourced"], json::array({"peak_tflops"}));  // A10G-24GB
}
