// The tools' configs both ways (core/src/formats): what `export` writes, `check` reads back as the
// same job; real spellings of each tool are read; the defects each writer had are fixed; the
// readers are bounded on hostile input.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <cmath>
#include <map>
#include <string>

#include <gpumem/gpumem.h>

using nlohmann::json;

namespace {

json exported(const std::string& format, const json& scenario, int per_node = 0) {
    json request = {{"format", format}, {"scenario", scenario}};
    if (per_node > 0) request["gpus_per_node"] = per_node;
    return gpumem::export_config(request);
}

json read(const std::string& name, const std::string& text, const std::map<std::string, std::string>& others = {}) {
    gpumem::FindFile find = [&](const std::string& n, const std::string&) -> std::optional<std::string> {
        auto it = others.find(n);
        if (it == others.end()) return std::nullopt;
        return it->second;
    };
    return gpumem::read_configs({{"files", json::array({{{"name", name}, {"text", text}}})}}, find);
}

json read_command(const std::string& command) { return gpumem::read_configs({{"command", command}}); }

// What `gpumem check` estimates from a reading: the model and GPU count the user gives where the
// files name none (as --model and --num-gpus), and the GPU (--gpu).
json checked(const json& reading, const json& original) {
    json s = reading["scenario"];
    const std::string model = reading.value("model", std::string());
    s["model"] = model.empty() ? original["model"] : json(model);
    if (!s.contains("hardware") || !s["hardware"].contains("num_gpus"))
        s["hardware"]["num_gpus"] = original["hardware"]["num_gpus"];
    s["hardware"]["gpu"] = original["hardware"]["gpu"];
    return gpumem::estimate(s);
}

double relative(double a, double b) { return std::fabs(a - b) / std::max(1.0, std::fabs(b)); }

std::uint64_t peak(const json& r) { return r["per_gpu"]["device_total_bytes"].get<std::uint64_t>(); }

}  // namespace

//-----------------------------------------------------------------------------
// Round trip: export, then check, is the same job
//-----------------------------------------------------------------------------

TEST(Formats, ExportThenCheckIsTheSameJobForEveryTrainingFormat) {
    const json base = {{"mode", "training"},
                       {"model", "meta-llama/Llama-3.1-8B"},
                       {"hardware", {{"gpu", "H100-80GB"}, {"num_gpus", 1}}},
                       {"training", {{"batch_size", 2}, {"gradient_accumulation_steps", 4}, {"seq_len", 2048}}}};
    auto with = [&](const json& patch) {
        json s = base;
        s.merge_patch(patch);
        return s;
    };
    const std::vector<std::pair<std::string, json>> scenarios = {
        {"one GPU, full", with(json::object())},
        {"one GPU, checkpointing", with({{"training", {{"activation_checkpointing", "full"}}}})},
        {"DDP x8", with({{"hardware", {{"num_gpus", 8}}}, {"engine", {{"type", "ddp"}}}})},
        {"ZeRO-1 x8", with({{"hardware", {{"num_gpus", 8}}}, {"engine", {{"type", "deepspeed"}, {"zero_stage", 1}}}})},
        {"ZeRO-2 x8", with({{"hardware", {{"num_gpus", 8}}}, {"engine", {{"type", "deepspeed"}, {"zero_stage", 2}}}})},
        {"ZeRO-3 x16",
         with({{"hardware", {{"num_gpus", 16}}}, {"engine", {{"type", "deepspeed"}, {"zero_stage", 3}}}})},
        {"ZeRO-3 offload x8",
         with({{"hardware", {{"num_gpus", 8}}},
               {"engine",
                {{"type", "deepspeed"}, {"zero_stage", 3}, {"offload_optimizer", "cpu"}, {"offload_param", "cpu"}}}})},
        {"FSDP full x8", with({{"hardware", {{"num_gpus", 8}}}, {"engine", {{"type", "fsdp"}}}})},
        {"FSDP hybrid x16",
         with({{"hardware", {{"num_gpus", 16}}}, {"engine", {{"type", "fsdp"}, {"fsdp_sharding", "hybrid_shard"}}}})},
        {"FSDP offload x8",
         with({{"hardware", {{"num_gpus", 8}}},
               {"engine", {{"type", "fsdp"}, {"offload_optimizer", "cpu"}, {"offload_param", "cpu"}}},
               {"training", {{"activation_checkpointing", "full"}}}})},
        {"TP 2 x DP 4", with({{"hardware", {{"num_gpus", 8}}},
                              {"parallelism", {{"tensor_parallel_size", 2}}},
                              {"engine", {{"type", "deepspeed"}, {"zero_stage", 1}}}})},
        {"CP 2 x8", with({{"hardware", {{"num_gpus", 8}}},
                          {"parallelism", {{"context_parallel_size", 2}}},
                          {"engine", {{"type", "fsdp"}}}})},
        {"EP 2 x8 Mixtral", with({{"model", "mistralai/Mixtral-8x7B-v0.1"},
                                  {"hardware", {{"num_gpus", 8}}},
                                  {"parallelism", {{"expert_parallel_size", 2}}},
                                  {"engine", {{"type", "deepspeed"}, {"zero_stage", 3}}}})},
        {"LoRA",
         with({{"training", {{"method", "lora"}, {"lora", {{"rank", 16}, {"target_modules", {"all_linear"}}}}}}})},
        {"LoRA q,v x4",
         with({{"hardware", {{"num_gpus", 4}}},
               {"engine", {{"type", "fsdp"}}},
               {"training", {{"method", "lora"}, {"lora", {{"target_modules", {"q_proj", "v_proj"}}}}}}})},
        {"QLoRA nf4", with({{"training", {{"method", "qlora"}, {"quantization", "nf4"}}}})},
        {"QLoRA int8", with({{"training", {{"method", "qlora"}, {"quantization", "int8"}}}})},
        {"AdamW 8-bit", with({{"training", {{"optimizer", "adamw_8bit"}}}})},
        {"paged AdamW 8-bit x8",
         with({{"hardware", {{"num_gpus", 8}}},
               {"engine", {{"type", "fsdp"}}},
               {"training", {{"optimizer", "paged_adamw_8bit"}, {"activation_checkpointing", "full"}}}})},
        {"12 GPUs, nodes of 8", with({{"hardware", {{"num_gpus", 12}}}, {"engine", {{"type", "ddp"}}}})},
    };
    const char* const formats[] = {"deepspeed", "accelerate", "torchrun", "torchtune", "axolotl", "litgpt"};
    int pairs = 0, same = 0, refused = 0;
    for (const auto& [label, scenario] : scenarios) {
        for (const char* format : formats) {
            ++pairs;
            json e = exported(format, scenario);
            if (!e.value("ok", false)) {
                // A refusal names the field and why the tool cannot run it.
                ASSERT_TRUE(e.contains("errors") && !e["errors"].empty()) << format << " " << label;
                EXPECT_FALSE(e["errors"][0]["problem"].get<std::string>().empty()) << format << " " << label;
                ++refused;
                if (std::getenv("GPUMEM_SHOW_REFUSALS"))
                    std::printf("  refused %s / %s: %s\n", format, label.c_str(),
                                e["errors"][0]["message"].get<std::string>().c_str());
                continue;
            }
            // The export's own read-back finds nothing the file leaves out.
            EXPECT_TRUE(e["dropped"].is_array() && e["dropped"].empty())
                << format << " " << label << ": " << e["dropped"].dump();
            const json resolved = e["scenario"];
            std::map<std::string, std::string> others;
            if (resolved["engine"]["type"] == "deepspeed" && std::string(format) != "deepspeed") {
                json ds = exported("deepspeed", resolved);
                ASSERT_TRUE(ds.value("ok", false)) << ds.dump();
                others["ds_config.json"] = ds["text"];
            }
            json r = read(e["file_name"], e["text"], others);
            ASSERT_TRUE(r.value("ok", false)) << format << " " << label << ": " << r.dump() << "\n" << e["text"];
            json original = resolved;
            original["model"] = scenario["model"];
            // A DeepSpeed JSON and an accelerate config are half a launch: the training script sets
            // the rest (model, micro-batch, length, LoRA, optimizer, checkpointing), as its flags.
            if (std::string(format) == "deepspeed" || std::string(format) == "accelerate") {
                json script = original["training"];
                script.merge_patch(r["scenario"].value("training", json::object()));
                r["scenario"]["training"] = script;
            }
            json back = checked(r, original);
            ASSERT_TRUE(back.value("ok", false)) << format << " " << label << ": " << back.dump().substr(0, 600);
            const json& estimate = e["estimate"];
            EXPECT_LE(relative(static_cast<double>(peak(back)), static_cast<double>(peak(estimate))), 0.005)
                << format << " " << label << ": exported " << peak(estimate) << " B, read back " << peak(back) << " B\n"
                << e["text"];
            if (relative(static_cast<double>(peak(back)), static_cast<double>(peak(estimate))) <= 0.005) ++same;
        }
    }
    // The matrix: 20 scenarios x 6 formats; each pair is the same job or a refusal with a reason.
    EXPECT_EQ(pairs, 120);
    EXPECT_EQ(same + refused, pairs);
    std::printf("[ round trip ] %d pairs: %d read back as the same job, %d refused with a reason\n", pairs, same,
                refused);
}

//-----------------------------------------------------------------------------
// The defects each writer had
//-----------------------------------------------------------------------------

TEST(Formats, DeepSpeedWritesTensorParallelAndTheDataParallelBatch) {
    // --tp 2 --dp 4: DeepSpeed's batch assertion counts data-parallel ranks (world / autotp_size), so
    // train_batch_size = 2 x 4 x 4 = 32, not 2 x 4 x 8.
    json e = exported("deepspeed", {{"model", "meta-llama/Llama-3.1-8B"},
                                    {"hardware", {{"num_gpus", 8}}},
                                    {"parallelism", {{"tensor_parallel_size", 2}, {"data_parallel_size", 4}}},
                                    {"engine", {{"type", "deepspeed"}, {"zero_stage", 1}}},
                                    {"training", {{"batch_size", 2}, {"gradient_accumulation_steps", 4}}}});
    ASSERT_TRUE(e["ok"].get<bool>()) << e.dump();
    json ds = json::parse(e["text"].get<std::string>());
    EXPECT_EQ(ds["train_batch_size"], 32);
    EXPECT_EQ(ds["tensor_parallel"]["autotp_size"], 2);
}

TEST(Formats, DeepSpeedRefusesWhatItsConfigCannotSay) {
    const json s = {{"model", "mistralai/Mixtral-8x7B-v0.1"},
                    {"hardware", {{"num_gpus", 8}}},
                    {"engine", {{"type", "deepspeed"}, {"zero_stage", 3}}}};
    json ep = s;
    ep["parallelism"] = {{"expert_parallel_size", 8}};
    json r = exported("deepspeed", ep);
    ASSERT_FALSE(r["ok"].get<bool>());
    EXPECT_EQ(r["errors"][0]["field"], "parallelism.expert_parallel_size");
    json cp = s;
    cp["parallelism"] = {{"context_parallel_size", 2}};
    r = exported("deepspeed", cp);
    ASSERT_FALSE(r["ok"].get<bool>());
    EXPECT_EQ(r["errors"][0]["field"], "parallelism.context_parallel_size");
}

TEST(Formats, TwelveGpusLaunchTwelveProcesses) {
    // Nodes of 8: torchrun starts the same count on every node, so 12 is 2 nodes x 6, never 2 x 8.
    json e = exported(
        "torchrun",
        {{"model", "meta-llama/Llama-3.1-8B"}, {"hardware", {{"num_gpus", 12}}}, {"engine", {{"type", "ddp"}}}}, 8);
    ASSERT_TRUE(e["ok"].get<bool>()) << e.dump();
    const std::string t = e["text"];
    EXPECT_NE(t.find("--nproc-per-node 6"), std::string::npos) << t;
    EXPECT_NE(t.find("--nnodes 2"), std::string::npos) << t;
    json r = read("train.sh", t);
    ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
    EXPECT_EQ(r["scenario"]["hardware"]["num_gpus"], 12);
}

TEST(Formats, TorchtuneOnSixteenGpusLaunchesTwoNodes) {
    json e = exported(
        "torchtune",
        {{"model", "meta-llama/Llama-3.1-8B"}, {"hardware", {{"num_gpus", 16}}}, {"engine", {{"type", "fsdp"}}}}, 8);
    ASSERT_TRUE(e["ok"].get<bool>()) << e.dump();
    const std::string t = e["text"];
    EXPECT_NE(t.find("--nnodes 2 --nproc_per_node 8"), std::string::npos) << t;
    json r = read("tune.sh", t);
    ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
    EXPECT_EQ(r["scenario"]["hardware"]["num_gpus"], 16);
}

TEST(Formats, AccelerateOnTwoNodesNamesTheMainProcess) {
    json e = exported(
        "accelerate",
        {{"model", "meta-llama/Llama-3.1-8B"}, {"hardware", {{"num_gpus", 16}}}, {"engine", {{"type", "fsdp"}}}}, 8);
    ASSERT_TRUE(e["ok"].get<bool>()) << e.dump();
    const std::string t = e["text"];
    EXPECT_NE(t.find("num_machines: 2"), std::string::npos) << t;
    EXPECT_NE(t.find("main_process_ip:"), std::string::npos) << t;
    EXPECT_NE(t.find("main_process_port: 29500"), std::string::npos) << t;
}

TEST(Formats, TorchtuneDeletesFusedForBitsandbytesOptimizers) {
    // bitsandbytes' AdamW8bit takes no `fused` (TypeError when torchtune builds it from the config).
    json e = exported("torchtune", {{"model", "meta-llama/Llama-3.1-8B"}, {"training", {{"optimizer", "adamw_8bit"}}}});
    ASSERT_TRUE(e["ok"].get<bool>()) << e.dump();
    const std::string t = e["text"];
    EXPECT_NE(t.find("'~optimizer.fused'"), std::string::npos) << t;
    EXPECT_EQ(t.find("optimizer.fused=True"), std::string::npos) << t;
    // And a config that keeps fused: True with bitsandbytes is refused on reading.
    json r = read("cfg.yaml",
                  "model:\n  _component_: torchtune.models.llama3_1.llama3_1_8b\n"
                  "optimizer:\n  _component_: bitsandbytes.optim.AdamW8bit\n  fused: True\n");
    ASSERT_FALSE(r["ok"].get<bool>());
    EXPECT_EQ(r["errors"][0]["field"], "optimizer.fused");
}

TEST(Formats, AxolotlEightBitLoraIsLoraWithLoadIn8bit) {
    json e = exported("axolotl", {{"model", "meta-llama/Llama-3.1-8B"},
                                  {"training", {{"method", "qlora"}, {"quantization", "int8"}}}});
    ASSERT_TRUE(e["ok"].get<bool>()) << e.dump();
    const std::string t = e["text"];
    EXPECT_NE(t.find("adapter: lora\n"), std::string::npos) << t;
    EXPECT_NE(t.find("load_in_8bit: true"), std::string::npos) << t;
    EXPECT_EQ(t.find("qlora"), std::string::npos) << t;
}

TEST(Formats, AxolotlUnderDeepSpeedCountsTheFp32MasterCopy) {
    // The same ZeRO-2 run through axolotl and through the DeepSpeed JSON is one job: DeepSpeed's bf16
    // engine keeps an fp32 master partition either way.
    const json s = {{"model", "meta-llama/Llama-3.1-8B"},
                    {"hardware", {{"num_gpus", 8}}},
                    {"engine", {{"type", "deepspeed"}, {"zero_stage", 2}}},
                    {"training", {{"batch_size", 1}}}};
    json ax = exported("axolotl", s), ds = exported("deepspeed", s);
    ASSERT_TRUE(ax["ok"].get<bool>()) << ax.dump();
    ASSERT_TRUE(ds["ok"].get<bool>()) << ds.dump();
    EXPECT_EQ(ax["scenario"]["training"]["precision"], "mixed_master_fp32");
    EXPECT_EQ(peak(ax["estimate"]), peak(ds["estimate"]));
}

TEST(Formats, LitgptRefusesWhatLitgptRefusesAndWritesWhatItRuns) {
    const json model = "meta-llama/Llama-3.1-8B";
    // finetune/lora.py: --quantize on several devices raises NotImplementedError.
    json r = exported("litgpt", {{"model", model},
                                 {"hardware", {{"num_gpus", 2}}},
                                 {"training", {{"method", "qlora"}, {"quantization", "nf4"}}}});
    ASSERT_FALSE(r["ok"].get<bool>());
    EXPECT_EQ(r["errors"][0]["field"], "training.method");
    // ... and with a -mixed precision, ValueError.
    r = exported("litgpt",
                 {{"model", model},
                  {"training", {{"method", "qlora"}, {"quantization", "nf4"}, {"precision", "amp_fp32_weights"}}}});
    ASSERT_FALSE(r["ok"].get<bool>());
    EXPECT_EQ(r["errors"][0]["field"], "training.precision");
    // On one device litgpt never checkpoints: a scenario with checkpointing is not what it runs.
    r = exported("litgpt", {{"model", model}, {"training", {{"activation_checkpointing", "full"}}}});
    ASSERT_FALSE(r["ok"].get<bool>());
    EXPECT_EQ(r["errors"][0]["field"], "training.activation_checkpointing");
    // FSDP's offload is off in litgpt's strategy.
    r = exported("litgpt", {{"model", model},
                            {"hardware", {{"num_gpus", 4}}},
                            {"engine", {{"type", "fsdp"}, {"offload_optimizer", "cpu"}, {"offload_param", "cpu"}}}});
    ASSERT_FALSE(r["ok"].get<bool>());
    EXPECT_EQ(r["errors"][0]["field"], "engine.offload_param");
    // The optimizer is written, not dropped.
    r = exported("litgpt", {{"model", model}, {"training", {{"optimizer", "paged_adamw_8bit"}}}});
    ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
    EXPECT_NE(r["text"].get<std::string>().find("--optimizer bitsandbytes.optim.PagedAdamW8bit"), std::string::npos);
}

TEST(Formats, AnExportSaysWhatItsFileDoesNotCarry) {
    // HF Trainer has no flag for activation offloading: the torchrun line, read back, runs without it.
    json e = exported(
        "torchrun",
        {{"model", "meta-llama/Llama-3.1-8B"},
         {"training", {{"method", "lora"}, {"activation_checkpointing", "full"}, {"activation_offloading", true}}}});
    ASSERT_TRUE(e["ok"].get<bool>()) << e.dump();
    ASSERT_EQ(e["dropped"].size(), 1u) << e["dropped"].dump();
    EXPECT_EQ(e["dropped"][0]["field"], "training.activation_offloading");
    EXPECT_EQ(e["dropped"][0]["estimated"], true);
    EXPECT_EQ(e["dropped"][0]["in_file"], false);
    const std::string text = e["text"];
    EXPECT_EQ(
        text.rfind("# gpumem: training.activation_offloading = true is not in the file: as written it runs false\n", 0),
        0u)
        << text;
    // The file still reads back as a command after its comment lines.
    EXPECT_TRUE(read_command(text).value("ok", false));
    // A run that does not fit: the fit line first, then what the file leaves out.
    e = exported("torchrun", {{"model", "meta-llama/Llama-3.1-70B"},
                              {"hardware", {{"gpu", "H100-80GB"}}},
                              {"training", {{"activation_checkpointing", "full"}, {"activation_offloading", true}}}});
    ASSERT_TRUE(e["ok"].get<bool>()) << e.dump();
    EXPECT_EQ(e["text"].get<std::string>().rfind("# gpumem: this run does not fit", 0), 0u) << e["text"];
    EXPECT_NE(e["text"].get<std::string>().find("\n# gpumem: training.activation_offloading"), std::string::npos);
}

TEST(Formats, LitgptRunsItsChunkedLoss) {
    // finetune/full.py, lora.py and adapter.py compute chunked_cross_entropy (litgpt/utils.py @00af8b0d).
    json e = exported("litgpt", {{"model", "meta-llama/Llama-3.1-8B"}, {"training", {{"method", "lora"}}}});
    ASSERT_TRUE(e["ok"].get<bool>()) << e.dump();
    EXPECT_EQ(e["scenario"]["training"]["loss"], "chunked");
    json r = read_command(e["text"]);
    ASSERT_TRUE(r.value("ok", false)) << r.dump();
    EXPECT_EQ(r["scenario"]["training"]["loss"], "chunked");
    e = exported("litgpt", {{"model", "meta-llama/Llama-3.1-8B"}, {"training", {{"loss", "standard"}}}});
    ASSERT_FALSE(e["ok"].get<bool>());
    EXPECT_EQ(e["errors"][0]["field"], "training.loss");
}

TEST(Formats, AnAliasIsWrittenAsItsHubId) {
    json e = exported("axolotl", {{"model", "llama3.1-8b"}});
    ASSERT_TRUE(e["ok"].get<bool>()) << e.dump();
    EXPECT_NE(e["text"].get<std::string>().find("base_model: meta-llama/Llama-3.1-8B\n"), std::string::npos)
        << e["text"];
}

//-----------------------------------------------------------------------------
// Real spellings
//-----------------------------------------------------------------------------

TEST(Formats, YamlScalarsAreTypedAsPyYamlTypesThem) {
    json r = read("a.yml",
                  "base_model: Qwen/Qwen2.5-7B\nsequence_len: 500_000\nmicro_batch_size: 2\nbf16: auto\n"
                  "gradient_checkpointing: yes\nlora_dropout: 0.05\nadapter: lora\nlora_r: '16'\n");
    ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
    const json& t = r["scenario"]["training"];
    EXPECT_EQ(t["seq_len"], 500000);  // YAML 1.1 ints take underscores
    EXPECT_EQ(t["activation_checkpointing"], "full");
    EXPECT_EQ(t["lora"]["rank"], 16);  // a quoted number: the tool's own schema coerces it
    EXPECT_EQ(r["check"]["format"], "axolotl");
    EXPECT_EQ(r["model"], "Qwen/Qwen2.5-7B");
}

TEST(Formats, ShellCommandsAreReadAsTyped) {
    json r = read_command(
        "CUDA_VISIBLE_DEVICES=0,1,2,3 accelerate launch --config_file fsdp.yaml --num_processes 4 \\\n"
        "  train.py --model_name_or_path 'Qwen/Qwen2.5-7B' --per_device_train_batch_size 4 \\\n"
        "  --gradient_accumulation_steps=8 --bf16 --gradient_checkpointing True  # comment\n");
    // fsdp.yaml is not given: an error naming it, not a silent default.
    ASSERT_FALSE(r["ok"].get<bool>());
    EXPECT_EQ(r["errors"][0]["field"], "fsdp.yaml");
    json ok = read_command(
        "accelerate launch --num_processes 4 --use_fsdp train.py --model_name_or_path Qwen/Qwen2.5-7B \\\n"
        "  --per_device_train_batch_size 4 --gradient_accumulation_steps=8 --bf16 --gradient_checkpointing True\n");
    ASSERT_TRUE(ok["ok"].get<bool>()) << ok.dump();
    const json& s = ok["scenario"];
    EXPECT_EQ(s["hardware"]["num_gpus"], 4);
    EXPECT_EQ(s["engine"]["type"], "fsdp");
    EXPECT_EQ(s["training"]["batch_size"], 4);
    EXPECT_EQ(s["training"]["gradient_accumulation_steps"], 8);
    EXPECT_EQ(s["training"]["dtype"], "bf16");
    EXPECT_EQ(ok["model"], "Qwen/Qwen2.5-7B");
    EXPECT_EQ(ok["check"]["formats"], json::array({"accelerate", "torchrun"}));
}

TEST(Formats, TuneRunOverridesAndDeletionsApplyOverTheConfig) {
    const std::map<std::string, std::string> files = {
        {"my_lora.yaml",
         "model:\n  _component_: torchtune.models.llama3_1.lora_llama3_1_8b\n  lora_rank: 8\n"
         "batch_size: 2\ngradient_accumulation_steps: 1\noptimizer:\n  _component_: torch.optim.AdamW\n"
         "  fused: True\n"}};
    json r = gpumem::read_configs(
        {{"command",
          "tune run --nproc_per_node 2 lora_finetune_distributed --config my_lora.yaml batch_size=4 model.lora_rank=32 "
          "optimizer._component_=bitsandbytes.optim.PagedAdamW8bit ~optimizer.fused"}},
        [&](const std::string& n, const std::string&) -> std::optional<std::string> {
            auto it = files.find(n);
            return it == files.end() ? std::nullopt : std::optional<std::string>(it->second);
        });
    ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
    const json& t = r["scenario"]["training"];
    EXPECT_EQ(t["batch_size"], 4);
    EXPECT_EQ(t["lora"]["rank"], 32);
    EXPECT_EQ(t["optimizer"], "paged_adamw_8bit");
    EXPECT_EQ(t["method"], "lora");
    EXPECT_EQ(r["scenario"]["hardware"]["num_gpus"], 2);
    EXPECT_EQ(r["scenario"]["engine"]["type"], "fsdp");
    EXPECT_EQ(r["model"], "meta-llama/Llama-3.1-8B-Instruct");
}

TEST(Formats, KeysThatDoNotChangeMemoryAreIgnoredAndUnknownOnesWarned) {
    json r = read("ds.json",
                  R"({"train_micro_batch_size_per_gpu": 1, "steps_per_print": 10, "optimizer": {"type": "AdamW",
                      "params": {"lr": 1e-5}}, "zero_optimization": {"stage": 3, "overlap_comm": true}})");
    ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
    const json& c = r["check"];
    EXPECT_EQ(c["format"], "deepspeed");
    EXPECT_NE(std::find(c["ignored"].begin(), c["ignored"].end(), "steps_per_print"), c["ignored"].end());
    EXPECT_NE(std::find(c["ignored"].begin(), c["ignored"].end(), "optimizer.params.lr"), c["ignored"].end());
    bool warned = false;
    for (const json& w : c["warnings"])
        warned = warned || w.get<std::string>().rfind("zero_optimization.overlap_comm", 0) == 0;
    EXPECT_TRUE(warned) << c.dump();
    EXPECT_EQ(r["scenario"]["training"]["optimizer"], "adamw_fused");  // DeepSpeed's AdamW is FusedAdam
}

TEST(Formats, WhatIsNotAToolsConfigIsNamedAsSuch) {
    json r = read("notes.txt", "just some words\n");
    ASSERT_FALSE(r["ok"].get<bool>());
    EXPECT_EQ(r["errors"][0]["field"], "notes.txt");
    EXPECT_NE(r["errors"][0]["problem"].get<std::string>().find("vllm serve"), std::string::npos);
    r = read("bad.yaml", "micro_batch_size: [1, 2\n");
    ASSERT_FALSE(r["ok"].get<bool>());
    r = read("a.yml", "base_model: x\nmicro_batch_size: -3\n");
    ASSERT_FALSE(r["ok"].get<bool>());
    EXPECT_EQ(r["errors"][0]["field"], "micro_batch_size");
}

//-----------------------------------------------------------------------------
// Bounded on hostile input
//-----------------------------------------------------------------------------

TEST(Formats, AYamlAliasBombIsRefusedAtOnce) {
    // Each level repeats the one below nine times: 9^9 values if expanded.
    std::string text = "a0: &a0 [x, x, x, x, x, x, x, x, x]\n";
    for (int i = 1; i <= 9; ++i) {
        const std::string p = "*a" + std::to_string(i - 1);
        text += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [" + p + ", " + p + ", " + p + ", " + p +
                ", " + p + ", " + p + ", " + p + ", " + p + ", " + p + "]\n";
    }
    const auto start = std::chrono::steady_clock::now();
    json r = read("bomb.yaml", text);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ASSERT_FALSE(r["ok"].get<bool>());
    EXPECT_NE(r["errors"][0]["problem"].get<std::string>().find("aliases"), std::string::npos);
    EXPECT_LT(seconds, 10.0);  // a bound on a hang, not a speed claim: it takes milliseconds
}

TEST(Formats, DeepYamlIsRefusedWithoutACrash) {
    std::string text = "a: " + std::string(5000, '[') + std::string(5000, ']') + "\n";
    json r = read("deep.yaml", text);
    ASSERT_FALSE(r["ok"].get<bool>());
}

TEST(Formats, AnOpenQuoteIsNamed) {
    json r = read_command("vllm serve 'meta-llama/Llama-3.1-8B --max-model-len 4096\n");
    ASSERT_FALSE(r["ok"].get<bool>());
    EXPECT_NE(r["errors"][0]["problem"].get<std::string>().find("quote"), std::string::npos);
}

TEST(Formats, TextThatIsNotUtf8IsNamed) {
    // A YAML value with a stray byte once reached a JSON dump of the value, which threw (the formats
    // fuzzer's first finding).
    json r = read("cfg.yaml", "precision: \"bf16\xff\"\ncheckpoint_dir: checkpoints/x/y\n");
    ASSERT_FALSE(r["ok"].get<bool>());
    EXPECT_NE(r["errors"][0]["problem"].get<std::string>().find("UTF-8"), std::string::npos);
    r = read_command("vllm serve model\xc3 --max-model-len 4096\n");
    ASSERT_FALSE(r["ok"].get<bool>());
}
