// The CLI's command line (core/cli/args.h): flags to scenario fields, usage errors as values, files
// read only through the reader the caller passes. Native only (the CLI has no WebAssembly build).
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include <gpumem/gpumem.h>

#include "cli/args.h"
#include "gpumem/settings.h"

using nlohmann::json;
using namespace gpumem::cli;

namespace {

// A reader over a few documents in memory that records what was asked for.
struct Files {
    std::map<std::string, std::string> docs;
    std::vector<std::string> asked;
    ReadFile reader() {
        return [this](const std::string& path, std::string&) -> std::optional<std::string> {
            asked.push_back(path);
            auto it = docs.find(path);
            if (it == docs.end()) return std::nullopt;
            return it->second;
        };
    }
};

Request build(const std::vector<std::string>& words, Files& files) {
    Args a = parse_args(words);
    EXPECT_EQ(a.exit_code, kOk) << a.error;
    EXPECT_EQ(a.error, "");
    return build_request(a, files.reader());
}

}  // namespace

TEST(CliArgs, FlagsSetTheScenarioFieldsTheyName) {
    Files files;
    Request r = build({"estimate",
                       "--model",
                       "llama3-8b",
                       "--lora",
                       "--lora-rank",
                       "32",
                       "--lora-targets",
                       "q_proj,,v_proj",
                       "--seq-len",
                       "1024",
                       "--engine",
                       "deepspeed",
                       "--zero",
                       "3",
                       "--gpus",
                       "8",
                       "--gpu-mem",
                       "48.5",
                       "--sequence-parallel",
                       "--gradient-checkpointing",
                       "--json"},
                      files);
    ASSERT_EQ(r.exit_code, kOk) << r.error;
    EXPECT_EQ(r.document, json::parse(R"({
        "model": {"preset": "llama3-8b"},
        "training": {"method": "lora", "lora": {"rank": 32, "target_modules": ["q_proj", "v_proj"]},
                     "seq_len": 1024, "activation_checkpointing": "full"},
        "engine": {"type": "deepspeed", "zero_stage": 3},
        "parallelism": {"sequence_parallel": true},
        "hardware": {"num_gpus": 8, "gpu_memory_gb": 48.5}})"));
    EXPECT_TRUE(files.asked.empty()) << "no file named, none read";
}

TEST(CliArgs, BatchSizeFollowsTheModeAndLaterFlagsWin) {
    Files files;
    // --batch-size and --seq-length land in the section of the mode the scenario ends in, wherever
    // they are typed (--seq-len, a training flag, is refused in inference: FlagsOfTheOtherModeAreErrors).
    Request r = build({"estimate", "--model", "x", "--batch-size", "8", "--seq-length", "1", "--mode", "inference",
                       "--seq-length", "2"},
                      files);
    EXPECT_EQ(r.document["inference"]["batch_size"], 8);
    EXPECT_EQ(r.document["inference"]["context_len"], 2);
    EXPECT_FALSE(r.document.contains("training"));
    Request t = build({"estimate", "--model", "x", "--sequence-length", "512"}, files);
    EXPECT_EQ(t.document["training"]["seq_len"], 512);
}

TEST(CliArgs, PrecisionIsARecipeOrADtypeByItsName) {
    Files files;
    // A recipe's name (or alias) is the recipe.
    EXPECT_EQ(build({"estimate", "--model", "x", "--precision", "AMP"}, files).document["training"]["precision"],
              "amp_fp32_weights");
    // A dtype's name: training.dtype in training, inference.weight_format in inference.
    EXPECT_EQ(build({"estimate", "--model", "x", "--precision", "bfloat16"}, files).document["training"]["dtype"],
              "bf16");
    Request inf = build({"estimate", "--model", "x", "--precision", "int8", "--mode", "inference"}, files);
    EXPECT_EQ(inf.document["inference"]["weight_format"], "int8");
    EXPECT_FALSE(inf.document.contains("training"));
    // int8 and int4 only store weights: training refuses them, naming the flag, its value and the mode.
    Request int4 = build({"estimate", "--model", "x", "--precision", "int4"}, files);
    EXPECT_EQ(int4.exit_code, kUsage);
    EXPECT_EQ(int4.error.rfind("--precision int4 does not apply to mode training: ", 0), 0u) << int4.error;
    Args bad = parse_args({"estimate", "--model", "x", "--precision", "int3"});
    EXPECT_EQ(bad.exit_code, kInvalid);
    EXPECT_EQ(bad.error,
              "--precision: must be a recipe (auto, amp_fp32_weights, pure, mixed_master_fp32, "
              "mixed_fp32_grads) or a dtype (fp32, fp16, bf16, fp8, int8, int4), got \"int3\"");
}

TEST(CliArgs, FlagsOfTheOtherModeAreErrors) {
    Files files;
    Request lora = build({"estimate", "--model", "x", "--mode", "inference", "--lora-rank", "8"}, files);
    EXPECT_EQ(lora.exit_code, kUsage);
    EXPECT_EQ(lora.error, "--lora-rank does not apply to mode inference (it sets training.lora.rank)");
    Request ctx = build({"estimate", "--model", "x", "--context-len", "4096"}, files);
    EXPECT_EQ(ctx.error, "--context-len does not apply to mode training (it sets inference.context_len)");
    // The mode a scenario file gives counts as --mode does.
    files.docs["inf.json"] = R"({"model": {"preset": "x"}, "mode": "inference"})";
    Request file = build({"estimate", "--scenario", "inf.json", "--optimizer", "adam"}, files);
    EXPECT_EQ(file.error, "--optimizer does not apply to mode inference (it sets training.optimizer)");
    // --load-full-model: accepted, nothing set, a note.
    Request full = build({"estimate", "--model", "x", "--load-full-model"}, files);
    EXPECT_EQ(full.exit_code, kOk);
    EXPECT_EQ(full.document, json::parse(R"({"model": {"preset": "x"}})"));
    ASSERT_EQ(full.notes.size(), 1u);
    EXPECT_EQ(full.notes[0].rfind("--load-full-model changes nothing", 0), 0u);
}

TEST(CliArgs, OptionsWithNoCommandAreEstimates) {
    Args a = parse_args({"--model", "microsoft/phi-2", "--mode", "training"});
    EXPECT_EQ(a.command, Command::Estimate);
    EXPECT_EQ(a.model, "microsoft/phi-2");
    EXPECT_EQ(parse_args({"--version"}).command, Command::Version);
    EXPECT_EQ(parse_args({"--frobnicate"}).error, "unknown option --frobnicate");
}

TEST(CliArgs, TableTakesAModelOrListsTheTypes) {
    Args t = parse_args({"table", "--lora-rank", "128", "--show-detailed", "microsoft/DialoGPT-medium",
                         "--sequence-length", "4096", "--config-dir", "cfg"});
    ASSERT_EQ(t.exit_code, kOk) << t.error;
    EXPECT_EQ(t.command, Command::Table);
    EXPECT_EQ(t.model, "microsoft/DialoGPT-medium");
    EXPECT_EQ(t.lora_rank, "128");
    EXPECT_EQ(t.sequence_length, "4096");
    EXPECT_EQ(t.config_dir, "cfg");
    EXPECT_TRUE(t.show_detailed);
    EXPECT_EQ(parse_args({"table", "--list-types"}).exit_code, kOk);
    EXPECT_EQ(parse_args({"table"}).error, "table needs a model: table MODEL (or --list-types)");
}

TEST(CliArgs, ScenarioFileThenConfigThenFlags) {
    Files files;
    files.docs["run.json"] = R"({"model": {"preset": "llama3-8b"}, "training": {"batch_size": 1, "seq_len": 2048}})";
    files.docs["config.json"] = R"({"config": {"hidden_size": 64}})";  // a preset record: "config" is unwrapped
    Request r = build({"estimate", "--scenario", "run.json", "--hf-config", "config.json", "--seq-len", "4096"}, files);
    ASSERT_EQ(r.exit_code, kOk) << r.error;
    EXPECT_EQ(files.asked, (std::vector<std::string>{"run.json", "config.json"}));
    EXPECT_EQ(r.document["model"], json::parse(R"({"hf_config": {"hidden_size": 64}})"));
    EXPECT_EQ(r.document["training"]["batch_size"], 1);  // from the file
    EXPECT_EQ(r.document["training"]["seq_len"], 4096);  // the flag wins
}

TEST(CliArgs, UnreadableOrMalformedFilesAreInvalidInputNamingTheFile) {
    Files files;
    files.docs["list.json"] = "[1, 2]";
    files.docs["broken.json"] = "{\"model\": ";
    Request missing = build({"estimate", "--scenario", "nope.json"}, files);
    EXPECT_EQ(missing.exit_code, kInvalid);
    EXPECT_EQ(missing.error, "cannot read scenario file nope.json");
    EXPECT_TRUE(missing.error_document);
    EXPECT_EQ(build({"maxfit", "--scenario", "list.json"}, files).error, "list.json: a scenario must be a JSON object");
    Request broken = build({"params", "--hf-config", "broken.json"}, files);
    EXPECT_EQ(broken.exit_code, kInvalid);
    EXPECT_EQ(broken.error.rfind("broken.json: malformed JSON", 0), 0u) << broken.error;
}

TEST(CliArgs, AFlagMissingItsValueIsAUsageErrorNamingIt) {
    for (const char* command : {"estimate", "plan"}) {
        for (const char* flag : {"--model", "--scenario", "--seq-len", "--batch-size", "--hf-config"}) {
            Args a = parse_args({command, "--model", "llama3-8b", flag});
            EXPECT_EQ(a.exit_code, kUsage) << flag;
            EXPECT_EQ(a.error, std::string(flag) + " needs a value");
        }
    }
    EXPECT_EQ(parse_args({"plan", "--model", "x", "--top"}).error, "--top needs a value");
    EXPECT_EQ(parse_args({"params", "--hf-config"}).error, "--hf-config needs a value");
}

TEST(CliArgs, AnUnknownFlagOrCommandIsAUsageErrorNamingIt) {
    Args flag = parse_args({"estimate", "--model", "llama3-8b", "--frobnicate", "3"});
    EXPECT_EQ(flag.exit_code, kUsage);
    EXPECT_EQ(flag.error, "unknown option --frobnicate");
    Args command = parse_args({"frobnicate"});
    EXPECT_EQ(command.exit_code, kUsage);
    EXPECT_EQ(command.error, "unknown command frobnicate");
    // An unknown command is what is reported: its flags cannot be read without it.
    EXPECT_EQ(parse_args({"frobnicate", "--gpus"}).error, "unknown command frobnicate");
    // Each command takes its own options: --top is plan's.
    EXPECT_EQ(parse_args({"estimate", "--model", "x", "--top", "3"}).error, "unknown option --top (an option of plan)");
    // A near miss names the option meant.
    EXPECT_EQ(parse_args({"estimate", "--model", "x", "--seqlen", "3"}).error,
              "unknown option --seqlen (did you mean --seq-len?)");
    EXPECT_EQ(parse_args({"estimate", "--model", "x", "--frobnicate"}).error, "unknown option --frobnicate");
    // One line per mistake.
    Args two = parse_args({"estimate", "--model", "x", "--frob", "1", "--nicate=2"});
    EXPECT_EQ(two.exit_code, kUsage);
    EXPECT_EQ(two.error, "unknown option --frob\nunknown option --nicate");
    EXPECT_EQ(parse_args({"estimate", "stray", "--model", "x"}).error, "estimate takes no argument \"stray\"");
    Args nothing = parse_args({"estimate", "--batch-size", "2"});
    EXPECT_EQ(nothing.exit_code, kUsage);
    EXPECT_EQ(nothing.error, "estimate needs --scenario FILE, --jsonl, --model ID or --hf-config FILE");
    EXPECT_EQ(parse_args({}).exit_code, kUsage);  // no words: the help text, exit 2
    EXPECT_EQ(parse_args({"--help"}).exit_code, kOk);
}

TEST(CliArgs, ABadIntegerReachesTheCoreWhichNamesTheFieldAndWhatIsAllowed) {
    // The parser keeps a value that is no JSON number as text, under the field the flag sets; the
    // core then refuses it with the field, the rule and the value (exit 1, not a usage error).
    Args a = parse_args({"estimate", "--model", "llama3-8b", "--seq-len", "abc"});
    ASSERT_EQ(a.exit_code, kOk);
    ASSERT_EQ(a.overrides.size(), 1u);
    EXPECT_EQ(a.overrides[0].flag, "--seq-len");
    EXPECT_EQ(a.overrides[0].pointer, "/training/seq_len");
    EXPECT_EQ(a.overrides[0].value, "abc");
    Files files;
    json result = gpumem::estimate(build_request(a, files.reader()).document);
    ASSERT_FALSE(result["ok"].get<bool>());
    EXPECT_EQ(result["errors"][0]["field"], "training.seq_len");
    EXPECT_EQ(result["errors"][0]["message"], "training.seq_len: must be a positive integer, got \"abc\"");
    // Numbers stay numbers, even those the core will refuse (it names them the same way).
    EXPECT_EQ(parse_args({"estimate", "--model", "x", "--seq-len", "2.5"}).overrides[0].value, 2.5);
    EXPECT_EQ(parse_args({"estimate", "--model", "x", "--seq-len", "1e999"}).overrides[0].value,
              "1e999");  // overflows a double
}

TEST(CliArgs, QuickSizeIsInBillions) {
    Files files;
    Request r = build({"quick", "7", "--gpus", "8", "--engine", "deepspeed"}, files);
    EXPECT_EQ(r.document["model"], json::parse(R"({"name": "7B model", "num_parameters": 7e9})"));
    // As gpu-mem-calculator reads it: DeepSpeed without a stage shards with ZeRO-3.
    EXPECT_EQ(r.document["engine"]["zero_stage"], 3);
    // 1e300 x 1e9 is past the largest double: the size goes to the core as typed, which refuses
    // it by name, rather than as an infinity (printed "null").
    Request huge = build({"quick", "1e300"}, files);
    EXPECT_EQ(huge.document["model"], json::parse(R"({"num_parameters": "1e300"})"));
    json result = gpumem::estimate(huge.document);
    ASSERT_FALSE(result["ok"].get<bool>());
    EXPECT_EQ(result["errors"][0]["field"], "model.num_parameters");
    EXPECT_EQ(parse_args({"quick", "--gpus", "8"}).exit_code, kUsage);
}

TEST(CliArgs, PlanFlagsNameTheCluster) {
    Files files;
    files.docs["run.json"] = R"({"model": {"preset": "llama3-8b"}, "hardware": {"num_gpus": 2, "gpu": "A100-80GB"},
                                 "plan": {"top": 3, "step_time": {"collective_latency_us": 5}}})";
    Request r = build(
        {"plan", "--scenario", "run.json", "--gpus", "64", "--gpu", "H100-80GB", "--mfu", "0.3", "--bench", "99999"},
        files);
    ASSERT_EQ(r.exit_code, kOk) << r.error;
    EXPECT_EQ(r.document["plan"], json::parse(R"({"num_gpus": 64, "gpu": "H100-80GB", "top": 3,
                                                  "step_time": {"collective_latency_us": 5, "mfu": 0.3}})"));
    EXPECT_FALSE(r.document["hardware"].contains("num_gpus"));  // the plan sets it per layout
    EXPECT_EQ(r.document["hardware"]["gpu"], "A100-80GB");
    EXPECT_EQ(parse_args({"plan", "--model", "x", "--bench", "99999"}).bench_rounds, 10000);
    EXPECT_EQ(parse_args({"plan", "--model", "x", "--bench"}).bench_rounds, 20);

    Request no_gpus = build({"plan", "--model", "llama3-8b"}, files);
    EXPECT_EQ(no_gpus.exit_code, kUsage);
    EXPECT_EQ(no_gpus.error, "plan needs --gpus N (the GPUs in the cluster)");
}

TEST(CliArgs, FlagsThatCannotApplyToTheFileAreInvalidInputNotAnException) {
    Files files;
    files.docs["odd.json"] = R"({"model": {"preset": "llama3-8b"}, "training": 5})";
    Request r = build({"estimate", "--scenario", "odd.json", "--seq-len", "5"}, files);
    EXPECT_EQ(r.exit_code, kInvalid);
    EXPECT_FALSE(r.error_document);
    EXPECT_NE(r.error.find("seq_len"), std::string::npos) << r.error;
}

TEST(CliArgs, SettingsTakesJsonOrMarkdownAndReadsNothing) {
    Args a = parse_args({"settings", "--markdown"});
    EXPECT_EQ(a.command, Command::Settings);
    EXPECT_EQ(a.exit_code, kOk) << a.error;
    EXPECT_TRUE(a.markdown);
    EXPECT_TRUE(parse_args({"settings", "--json"}).json_out);
    Files files;
    Request r = build({"settings"}, files);
    EXPECT_EQ(r.exit_code, kOk);
    EXPECT_TRUE(files.asked.empty());
}

TEST(CliArgs, HelpIsGeneratedPerCommandWithTheSettingsNames) {
    Args top = parse_args({"--help"});
    EXPECT_EQ(top.command, Command::Help);
    EXPECT_EQ(top.exit_code, kOk);
    for (const char* command :
         {"estimate", "params", "quick", "maxfit", "plan", "validate", "presets", "settings", "version"})
        EXPECT_NE(top.help.find(command), std::string::npos) << command;
    EXPECT_EQ(parse_args({}).help, top.help);  // bare `gpumem`: the same text, exit 2

    Args help = parse_args({"estimate", "--help"});
    EXPECT_EQ(help.command, Command::Help);
    EXPECT_EQ(help.exit_code, kOk);
    EXPECT_EQ(help.error, "");
    EXPECT_NE(help.help.find("gpumem estimate"), std::string::npos) << help.help;
    // Every name of an enumerated flag's table is listed, with the field and its default.
    EXPECT_NE(help.help.find("training.optimizer: "), std::string::npos) << help.help;
    for (const auto& row : gpumem::detail::rows(gpumem::detail::Optimizer{}))
        EXPECT_NE(help.help.find(row.name), std::string::npos) << row.name;
    EXPECT_NE(help.help.find("(default adamw)"), std::string::npos);
    EXPECT_NE(help.help.find("--kv-cache-dtype"), std::string::npos);
    EXPECT_EQ(help.help.find("--top"), std::string::npos) << "plan's option is not estimate's";
    EXPECT_EQ(parse_args({"help", "estimate"}).help, help.help);
    EXPECT_NE(parse_args({"plan", "-h"}).help.find("--global-batch"), std::string::npos);
    EXPECT_EQ(parse_args({"--version"}).command, Command::Version);
}

TEST(CliArgs, AnEnumeratedValueIsCheckedAgainstItsTable) {
    // A value the table does not have: one line naming the flag and every name allowed; exit 1, as
    // the core refuses the same value in a scenario file.
    Args dtype = parse_args({"estimate", "--model", "x", "--dtype", "int3"});
    EXPECT_EQ(dtype.exit_code, kInvalid);
    EXPECT_EQ(dtype.error, "--dtype: " + gpumem::detail::allowed_text<gpumem::detail::Dtype>() + ", got \"int3\"");
    EXPECT_EQ(dtype.error, "--dtype: must be one of fp32, fp16, bf16, fp8, got \"int3\"");
    EXPECT_EQ(parse_args({"plan", "--model", "x", "--gpus", "8", "--engine", "zero"}).error,
              "--engine: must be one of none, ddp, deepspeed, fsdp, megatron, megatron_deepspeed, got \"zero\"");
    EXPECT_EQ(parse_args({"estimate", "--model", "x", "--lora-targets", "q_proj,x_proj"}).error,
              "--lora-targets: " + gpumem::detail::allowed_text<gpumem::detail::LoraTarget>() + ", got \"x_proj\"");
    // The first mistake, in command-line order.
    EXPECT_EQ(parse_args({"estimate", "--model", "x", "--loss", "no", "--mode", "no"}).error.rfind("--loss:", 0), 0u);

    // An alias, another case or '-' for '_' is read as the name it stands for.
    Args alias =
        parse_args({"estimate", "--model", "x", "--optimizer", "adamw_torch", "--dtype", "BFloat16",
                    "--inference-engine", "llamacpp", "--lora-targets", "Q-Proj,,v_proj", "--precision", "amp"});
    ASSERT_EQ(alias.exit_code, kOk) << alias.error;
    ASSERT_EQ(alias.overrides.size(), 5u);
    EXPECT_EQ(alias.overrides[0].value, "adamw");
    EXPECT_EQ(alias.overrides[1].value, "bf16");
    EXPECT_EQ(alias.overrides[2].value, "llama.cpp");
    EXPECT_EQ(alias.overrides[3].value, json::parse(R"(["q_proj", "v_proj"])"));
    EXPECT_EQ(alias.overrides[4].value, "amp_fp32_weights");

    // A weight format outside the table can only come from the scenario file's own "formats".
    Args own = parse_args({"estimate", "--scenario", "run.json", "--weight-format", "my_q3"});
    EXPECT_EQ(own.exit_code, kOk) << own.error;
    EXPECT_EQ(own.overrides.at(0).value, "my_q3");
    EXPECT_EQ(parse_args({"estimate", "--model", "x", "--weight-format", "Q4_K_M"}).overrides.at(0).value, "q4_k_m");
    Args none = parse_args({"estimate", "--model", "x", "--weight-format", "my_q3"});
    EXPECT_EQ(none.exit_code, kInvalid);
    EXPECT_EQ(none.error.rfind("--weight-format: must be one of auto, fp32, ", 0), 0u) << none.error;
}

TEST(CliArgs, NothingCli11ThrowsGetsOut) {
    // Odd shapes of a command line: each is a value with a message naming a word, never an exception.
    const std::vector<std::vector<std::string>> lines = {
        {"estimate", "--model", "x", "--lora=maybe"},
        {"estimate", "--model=x", "--json=2"},
        {"estimate", "-"},
        {"estimate", "--"},
        {"-x"},
        {"--", "estimate"},
        {"plan", "--model", "x", "--bench", "ten"},
        {""},
        {"validate", "a", "b"},
        {"quick", "7", "--gpus", "8", "--gpus=9"},
        {"estimate", "--model", "x", "-hx"},
    };
    for (const auto& words : lines) {
        Args a = parse_args(words);
        std::string line;
        for (const std::string& w : words) line += w + " ";
        if (a.error.empty()) continue;
        EXPECT_NE(a.exit_code, kOk) << line;
        bool names = false;
        for (const std::string& w : words)
            names = names || (!w.empty() && a.error.find(w.substr(0, w.find('='))) != std::string::npos);
        EXPECT_TRUE(names || a.error.rfind("unknown command", 0) == 0) << line << "-> " << a.error;
    }
    EXPECT_EQ(parse_args({"estimate", "--model", "x", "--lora=maybe"}).error,
              "--lora is a switch: it takes no value, got \"maybe\"");
    EXPECT_EQ(parse_args({"plan", "--model", "x", "--bench", "ten"}).error,
              "--bench: must be a whole number of rounds (1-10000), got \"ten\"");
    EXPECT_EQ(parse_args({"quick", "7", "--gpus", "8", "--gpus=9"}).overrides.back().value, 9);
    EXPECT_EQ(parse_args({"quick", "7", "8"}).error,
              "quick needs one size in billions of parameters, e.g. quick 7 --gpus 8, got \"8\" too");
    EXPECT_EQ(parse_args({"estimate", "--model", "a", "--model", "b"}).model, "b");  // a later option wins
}

// An empty word where a command, a flag's value or an argument goes is said to be empty (issue #31:
// `gpumem help "" --help` answered "unknown command " naming nothing; found by the CLI fuzzer,
// tests/fuzz/regressions/cli-empty-word-as-help-topic).
TEST(CliArgs, AnEmptyWordIsSaidToBeEmpty) {
    const std::string empty = "\"\" (an empty word)";
    for (const std::vector<std::string>& words : std::vector<std::vector<std::string>>{
             {""}, {"", "--help"}, {"help", ""}, {"help", "", "--help"}, {"help", "", "", "--help"}}) {
        Args a = parse_args(words);
        EXPECT_EQ(a.exit_code, kUsage);
        EXPECT_EQ(a.error, "unknown command " + empty);
    }
    EXPECT_EQ(parse_args({"estimate", "--model", ""}).error, "--model needs a value, got " + empty);
    EXPECT_EQ(parse_args({"estimate", "--model", "x", "--gpu="}).error, "--gpu needs a value, got " + empty);
    EXPECT_EQ(parse_args({"params", "--hf-config", ""}).error, "--hf-config needs a value, got " + empty);
    EXPECT_EQ(parse_args({"estimate", "", "--model", "x"}).error, "estimate takes no argument " + empty);
    EXPECT_EQ(parse_args({"validate", ""}).error, "validate FILE: got " + empty);
    EXPECT_EQ(parse_args({"table", ""}).error, "table MODEL: got " + empty);
    Args dtype = parse_args({"estimate", "--model", "x", "--dtype", ""});
    EXPECT_EQ(dtype.exit_code, kInvalid);
    EXPECT_NE(dtype.error.find("got " + empty), std::string::npos) << dtype.error;
    // A value that is only spaces is not empty: it is read (and refused) as what it is.
    EXPECT_EQ(parse_args({"estimate", "--model", " "}).error, "");
}

// A huge word is answered at once and shown bounded: the near-miss search for options runs only
// on words of 64 characters or fewer, and messages show words through display_text.
TEST(CliArgs, AHugeWordIsAnsweredAtOnceAndShownBounded) {
    const std::string huge(std::size_t{1} << 20, 'x');
    const auto start = std::chrono::steady_clock::now();
    for (const std::vector<std::string>& words :
         std::vector<std::vector<std::string>>{{huge},
                                               {"help", huge},
                                               {"estimate", "--model", "x", "--" + huge},
                                               {"estimate", "--model", "x", "--seq-len" + huge + "=3"},
                                               {"estimate", "--model", "x", "--dtype", huge},
                                               {"estimate", "--model", "x", "--precision", huge},
                                               {"estimate", "--model", "x", "--weight-format", huge},
                                               {"estimate", huge, "--model", "x"},
                                               {"quick", "7", huge},
                                               {"table", "x", huge}}) {
        Args a = parse_args(words);
        EXPECT_NE(a.exit_code, kOk) << words[1].substr(0, 20);
        EXPECT_LT(a.error.size(), 1000u) << a.error.substr(0, 200);
        EXPECT_NE(a.error.find("xxx..."), std::string::npos) << a.error.substr(0, 200);
    }
    // A line break in a word is shown escaped, not as a second line of the message.
    EXPECT_EQ(parse_args({"frob\nNOTICE: fits"}).error, "unknown command frob\\nNOTICE: fits");
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_LT(seconds, 10.0);
}
