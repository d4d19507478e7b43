// The exporters (export.h). Each one reads the resolved scenario of an estimate, so what it writes
// is what was estimated.
#include "export/export.h"

#include "formats/format.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "gpumem/gpumem.h"

namespace gpumem::detail {

namespace {

using ojson = nlohmann::ordered_json;

//-----------------------------------------------------------------------------
// Writing text: shell words, command lines, YAML
//-----------------------------------------------------------------------------

// A command line, one option per continued line.
class Command {
public:
    explicit Command(std::vector<std::string> words) {
        for (const std::string& w : words) head_ += (head_.empty() ? "" : " ") + shell_word(w);
    }
    Command& flag(const std::string& f) {
        lines_.push_back(f);
        return *this;
    }
    Command& option(const std::string& f, const std::string& value) {
        lines_.push_back(f + " " + shell_word(value));
        return *this;
    }
    Command& option(const std::string& f, double value) { return option(f, number_text(value)); }
    // key=value (torchtune's overrides).
    Command& set(const std::string& key, const std::string& value) {
        lines_.push_back(shell_word(key + "=" + value));
        return *this;
    }
    std::string text() const {
        std::string out = head_;
        for (const std::string& l : lines_) out += " \\\n  " + l;
        return out + "\n";
    }

private:
    std::string head_;
    std::vector<std::string> lines_;
};

// Megatron's own engines have their own launchers and arguments: no exporter writes them.
void refuse_layout(const Run& r, Written& w, const char* format) {
    if (r.engine == "megatron" || r.engine == "megatron_deepspeed")
        w.refuse("engine.type",
                 std::string("is not exported as ") + format +
                     ": Megatron-LM runs from its own "
                     "pretrain scripts and arguments (--tensor-model-parallel-size, --pipeline-model-parallel-size)",
                 r.engine);
    if (r.tp > 1 || r.pp > 1 || r.cp > 1)
        w.refuse("parallelism",
                 std::string(format) +
                     " runs data parallelism (and sharding) only: tensor, pipeline and "
                     "context parallel sizes must be 1",
                 "tp " + std::to_string(r.tp) + ", pp " + std::to_string(r.pp) + ", cp " + std::to_string(r.cp));
}

// The activation-checkpointing note for formats that set it in code or elsewhere.
void note_checkpointing(const Run& r, Written& w, const std::string& how) {
    if (r.checkpointing == "full") w.notes.push_back("activation checkpointing (full): " + how);
    if (r.checkpointing == "selective")
        w.refuse("training.activation_checkpointing",
                 "selective checkpointing is Megatron's or torchtune's; this "
                 "format has full or none",
                 r.checkpointing);
}

//-----------------------------------------------------------------------------
// Training formats
//-----------------------------------------------------------------------------

// accelerate's mixed_precision for a compute dtype.
std::string accelerate_precision(const std::string& dtype) { return dtype == "fp32" ? "no" : dtype; }

Written write_accelerate(const Run& r, std::uint64_t per_node) {
    Written w;
    w.kind = "yaml";
    w.file_name = "accelerate_config.yaml";
    refuse_layout(r, w, "accelerate");
    const bool ds = r.engine == "deepspeed";
    const char* want = ds ? "mixed_master_fp32" : "amp_fp32_weights";
    if (r.dtype != "fp32" && r.precision != want && !(r.adapters() && r.precision == "pure"))
        w.refuse(
            "training.precision",
            std::string("accelerate's mixed_precision keeps ") + (ds ? "DeepSpeed's fp32 master copy: mixed_master_fp32"
                                                                     : "fp32 weights and autocasts: amp_fp32_weights"),
            r.precision);
    if (r.engine == "fsdp" && r.offload_optimizer != r.offload_param)
        w.refuse("engine.offload_optimizer",
                 "FSDP offloads the weights, gradients and optimizer step together "
                 "(fsdp_offload_params): offload_optimizer and offload_param must be the same",
                 r.offload_optimizer);
    if (!w.issues.empty()) return w;

    ojson y;
    y["compute_environment"] = "LOCAL_MACHINE";
    y["distributed_type"] = r.engine == "fsdp" ? "FSDP" : ds ? "DEEPSPEED" : r.world() > 1 ? "MULTI_GPU" : "NO";
    y["mixed_precision"] = accelerate_precision(r.dtype);
    y["num_machines"] = nodes_for(r.world(), per_node);
    y["num_processes"] = r.world();
    y["machine_rank"] = 0;
    y["main_training_function"] = "main";
    y["use_cpu"] = false;
    if (r.engine == "fsdp") {
        std::string sharding = r.fsdp_sharding;
        std::transform(sharding.begin(), sharding.end(), sharding.begin(),
                       [](unsigned char c) { return std::toupper(c); });
        y["fsdp_config"] = {{"fsdp_sharding_strategy", sharding},
                            {"fsdp_offload_params", r.offload_param == "cpu"},
                            {"fsdp_auto_wrap_policy", "TRANSFORMER_BASED_WRAP"},
                            {"fsdp_backward_prefetch", "BACKWARD_PRE"},
                            {"fsdp_state_dict_type", "SHARDED_STATE_DICT"},
                            {"fsdp_use_orig_params", true},
                            {"fsdp_cpu_ram_efficient_loading", true},
                            {"fsdp_sync_module_states", true},
                            {"fsdp_activation_checkpointing", r.checkpointing == "full"}};
        if (r.checkpointing == "selective")
            w.refuse("training.activation_checkpointing", "accelerate's FSDP checkpoints whole layers: full or none",
                     r.checkpointing);
    } else if (ds) {
        y["deepspeed_config"] = {{"zero_stage", r.zero_stage},
                                 {"offload_optimizer_device", r.offload_optimizer},
                                 {"offload_param_device", r.offload_param},
                                 {"gradient_accumulation_steps", r.accumulation},
                                 {"zero3_init_flag", r.zero_stage == 3}};
        note_checkpointing(r, w, "model.gradient_checkpointing_enable() in the script");
    } else {
        note_checkpointing(r, w, "model.gradient_checkpointing_enable() in the script");
    }
    std::string text;
    text = yaml_text(y);
    w.text = text;
    w.notes.push_back("micro-batch " + std::to_string(r.batch) + " per GPU: the DataLoader's batch_size; " +
                      std::to_string(r.accumulation) + " accumulation steps: Accelerator(gradient_accumulation_steps=" +
                      std::to_string(r.accumulation) + ")");
    w.notes.push_back("sequences of " + std::to_string(r.seq_len) +
                      " tokens: truncate or pack the data to that length");
    return w;
}

Written write_torchrun(const Run& r, std::uint64_t per_node, const std::string& script) {
    Written w;
    w.file_name = "train.sh";
    refuse_layout(r, w, "torchrun + HF Trainer");
    if (r.framework != "transformers")
        w.refuse("training.framework", "torchrun's flags here are HF Trainer's: the framework must be transformers",
                 r.framework);
    const std::string optim = hf_optim(r.optimizer);
    if (optim.empty())
        w.refuse("training.optimizer",
                 "HF Trainer's --optim has no such optimizer; one of adamw, adamw_fused, "
                 "adamw_8bit, paged_adamw_8bit, paged_adamw_32bit, adafactor, sgd, adagrad, rmsprop, lion",
                 r.optimizer);
    if (r.loss == "chunked")
        w.refuse("training.loss", "HF Trainer has no chunked cross-entropy flag (fused: use_liger_kernel)", r.loss);
    if (r.checkpointing == "selective")
        w.refuse("training.activation_checkpointing", "HF Trainer checkpoints whole layers: full or none",
                 r.checkpointing);
    if (r.engine == "fsdp" && r.offload_optimizer != r.offload_param)
        w.refuse("engine.offload_optimizer",
                 "FSDP's offload moves weights, gradients and the optimizer step together: "
                 "offload_optimizer and offload_param must be the same",
                 r.offload_optimizer);
    if (!w.issues.empty()) return w;

    const std::uint64_t nodes = nodes_for(r.world(), per_node);
    Command c({"torchrun"});
    c.option("--nnodes", static_cast<double>(nodes))
        .option("--nproc-per-node", static_cast<double>(std::min(r.world(), per_node)));
    if (nodes > 1) c.option("--rdzv-backend", "c10d").option("--rdzv-endpoint", "MASTER_HOST:29500");
    c.flag(shell_word(script));
    c.option("--model_name_or_path", r.model);
    c.option("--per_device_train_batch_size", static_cast<double>(r.batch));
    c.option("--gradient_accumulation_steps", static_cast<double>(r.accumulation));
    if (r.dtype == "bf16") c.option("--bf16", "True");
    if (r.dtype == "fp16") c.option("--fp16", "True");
    if (r.checkpointing == "full") c.option("--gradient_checkpointing", "True");
    c.option("--optim", optim);
    if (r.loss == "fused") c.option("--use_liger_kernel", "True");
    if (r.engine == "fsdp") {
        std::string fsdp = r.fsdp_sharding + " auto_wrap";
        if (r.offload_param == "cpu") fsdp += " offload";
        c.option("--fsdp", fsdp);
    }
    if (r.engine == "deepspeed") {
        c.option("--deepspeed", "ds_config.json");
        w.notes.push_back("ds_config.json: gpumem export deepspeed with the same options writes it");
    }
    w.text = c.text();
    if (r.precision == "pure")
        w.notes.push_back("weights in " + r.dtype + ": load the model with torch_dtype=torch." +
                          torch_dtype_name(r.dtype));
    else if (r.dtype != "fp32")
        w.notes.push_back("weights in fp32 with " + r.dtype + " autocast: load the model in float32 (the default)");
    w.notes.push_back("sequences of " + std::to_string(r.seq_len) +
                      " tokens: truncate or pack the data to that length "
                      "(TRL's SFTConfig: max_length)");
    if (r.adapters()) {
        const json& l = r.lora();
        std::string targets;
        for (const std::string& t : r.lora_targets()) targets += (targets.empty() ? "" : ", ") + json(t).dump();
        w.notes.push_back("LoRA in " + script + ": peft.LoraConfig(r=" + l["rank"].dump() +
                          ", lora_alpha=" + number_text(l["alpha"].get<double>()) + ", lora_dropout=" +
                          number_text(l["dropout"].get<double>()) + ", target_modules=[" + targets + "])");
    }
    if (r.method == "qlora")
        w.notes.push_back(std::string("QLoRA base: BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type=\"") +
                          r.s["training"]["quantization"].get<std::string>() +
                          "\", bnb_4bit_use_double_quant=" + (r.double_quant ? "True" : "False") + ")");
    if (r.attention != "sdpa")
        w.notes.push_back("attention: from_pretrained(..., attn_implementation=\"" +
                          std::string(r.attention == "flash" ? "flash_attention_2" : "eager") + "\")");
    return w;
}

// The torchtune config directory of a model ("llama3_1/8B"): its name (org stripped) starts with
// `id_prefix`, compared without case.
struct TuneModel {
    const char* id_prefix;
    const char* config_dir;
};
const TuneModel kTuneModels[] = {
    {"Llama-3.1-8B", "llama3_1/8B"},
    {"Meta-Llama-3.1-8B", "llama3_1/8B"},
    {"Llama-3.1-70B", "llama3_1/70B"},
    {"Meta-Llama-3.1-70B", "llama3_1/70B"},
    {"Llama-3.1-405B", "llama3_1/405B"},
    {"Meta-Llama-3.1-405B", "llama3_1/405B"},
    {"Llama-3.2-1B", "llama3_2/1B"},
    {"Llama-3.2-3B", "llama3_2/3B"},
    {"Llama-3.3-70B", "llama3_3/70B"},
    {"Meta-Llama-3-8B", "llama3/8B"},
    {"Meta-Llama-3-70B", "llama3/70B"},
    {"Llama-2-7b", "llama2/7B"},
    {"Llama-2-13b", "llama2/13B"},
    {"Llama-2-70b", "llama2/70B"},
    {"Qwen2.5-0.5B", "qwen2_5/0.5B"},
    {"Qwen2.5-1.5B", "qwen2_5/1.5B"},
    {"Qwen2.5-3B", "qwen2_5/3B"},
    {"Qwen2.5-7B", "qwen2_5/7B"},
    {"Qwen2.5-14B", "qwen2_5/14B"},
    {"Qwen2.5-32B", "qwen2_5/32B"},
    {"Qwen2.5-72B", "qwen2_5/72B"},
    {"Qwen2-0.5B", "qwen2/0.5B"},
    {"Qwen2-1.5B", "qwen2/1.5B"},
    {"Qwen2-7B", "qwen2/7B"},
    {"gemma-2b", "gemma/2B"},
    {"gemma-7b", "gemma/7B"},
    {"gemma-2-2b", "gemma2/2B"},
    {"gemma-2-9b", "gemma2/9B"},
    {"gemma-2-27b", "gemma2/27B"},
    {"Mistral-7B", "mistral/7B"},
    {"Phi-3-mini", "phi3/mini"},
    {"phi-4", "phi4/14B"},
};

// torchtune v0.6.1's built-in configs of its four fine-tuning recipes, for the directories above
// (torchtune/_recipe_registry.py at tag v0.6.1; tests/data/formats/torchtune.json lists them all).
const char* const kFullSingle = "full_finetune_single_device";
const char* const kFullDistributed = "full_finetune_distributed";
const char* const kLoraSingle = "lora_finetune_single_device";
const char* const kLoraDistributed = "lora_finetune_distributed";
struct TuneConfig {
    const char* recipe;
    const char* name;
};
const TuneConfig kTuneConfigs[] = {{kFullSingle, "llama2/7B_full_low_memory"},
                                   {kFullSingle, "llama3/8B_full_single_device"},
                                   {kFullSingle, "llama3_1/8B_full_single_device"},
                                   {kFullSingle, "llama3_2/1B_full_single_device"},
                                   {kFullSingle, "llama3_2/3B_full_single_device"},
                                   {kFullSingle, "mistral/7B_full_low_memory"},
                                   {kFullSingle, "phi3/mini_full_low_memory"},
                                   {kFullSingle, "phi4/14B_full_low_memory"},
                                   {kFullSingle, "qwen2/0.5B_full_single_device"},
                                   {kFullSingle, "qwen2/1.5B_full_single_device"},
                                   {kFullSingle, "qwen2/7B_full_single_device"},
                                   {kFullSingle, "qwen2_5/0.5B_full_single_device"},
                                   {kFullSingle, "qwen2_5/1.5B_full_single_device"},
                                   {kFullSingle, "qwen2_5/3B_full_single_device"},
                                   {kFullSingle, "qwen2_5/7B_full_single_device"},
                                   {kFullDistributed, "gemma/2B_full"},
                                   {kFullDistributed, "gemma/7B_full"},
                                   {kFullDistributed, "gemma2/27B_full"},
                                   {kFullDistributed, "gemma2/2B_full"},
                                   {kFullDistributed, "gemma2/9B_full"},
                                   {kFullDistributed, "llama2/13B_full"},
                                   {kFullDistributed, "llama2/7B_full"},
                                   {kFullDistributed, "llama3/70B_full"},
                                   {kFullDistributed, "llama3/8B_full"},
                                   {kFullDistributed, "llama3_1/70B_full"},
                                   {kFullDistributed, "llama3_1/8B_full"},
                                   {kFullDistributed, "llama3_2/1B_full"},
                                   {kFullDistributed, "llama3_2/3B_full"},
                                   {kFullDistributed, "llama3_3/70B_full"},
                                   {kFullDistributed, "mistral/7B_full"},
                                   {kFullDistributed, "phi3/mini_full"},
                                   {kFullDistributed, "phi4/14B_full"},
                                   {kFullDistributed, "qwen2/0.5B_full"},
                                   {kFullDistributed, "qwen2/1.5B_full"},
                                   {kFullDistributed, "qwen2/7B_full"},
                                   {kFullDistributed, "qwen2_5/0.5B_full"},
                                   {kFullDistributed, "qwen2_5/1.5B_full"},
                                   {kFullDistributed, "qwen2_5/3B_full"},
                                   {kFullDistributed, "qwen2_5/7B_full"},
                                   {kLoraSingle, "gemma/2B_lora_single_device"},
                                   {kLoraSingle, "gemma/2B_qlora_single_device"},
                                   {kLoraSingle, "gemma/7B_lora_single_device"},
                                   {kLoraSingle, "gemma/7B_qlora_single_device"},
                                   {kLoraSingle, "gemma2/27B_lora_single_device"},
                                   {kLoraSingle, "gemma2/27B_qlora_single_device"},
                                   {kLoraSingle, "gemma2/2B_lora_single_device"},
                                   {kLoraSingle, "gemma2/2B_qlora_single_device"},
                                   {kLoraSingle, "gemma2/9B_lora_single_device"},
                                   {kLoraSingle, "gemma2/9B_qlora_single_device"},
                                   {kLoraSingle, "llama2/13B_qlora_single_device"},
                                   {kLoraSingle, "llama2/7B_lora_single_device"},
                                   {kLoraSingle, "llama2/7B_qlora_single_device"},
                                   {kLoraSingle, "llama3/8B_lora_single_device"},
                                   {kLoraSingle, "llama3/8B_qlora_single_device"},
                                   {kLoraSingle, "llama3_1/8B_lora_single_device"},
                                   {kLoraSingle, "llama3_1/8B_qlora_single_device"},
                                   {kLoraSingle, "llama3_2/1B_lora_single_device"},
                                   {kLoraSingle, "llama3_2/1B_qlora_single_device"},
                                   {kLoraSingle, "llama3_2/3B_lora_single_device"},
                                   {kLoraSingle, "llama3_2/3B_qlora_single_device"},
                                   {kLoraSingle, "mistral/7B_lora_single_device"},
                                   {kLoraSingle, "mistral/7B_qlora_single_device"},
                                   {kLoraSingle, "phi3/mini_lora_single_device"},
                                   {kLoraSingle, "phi3/mini_qlora_single_device"},
                                   {kLoraSingle, "phi4/14B_lora_single_device"},
                                   {kLoraSingle, "phi4/14B_qlora_single_device"},
                                   {kLoraSingle, "qwen2/0.5B_lora_single_device"},
                                   {kLoraSingle, "qwen2/1.5B_lora_single_device"},
                                   {kLoraSingle, "qwen2/7B_lora_single_device"},
                                   {kLoraSingle, "qwen2_5/0.5B_lora_single_device"},
                                   {kLoraSingle, "qwen2_5/1.5B_lora_single_device"},
                                   {kLoraSingle, "qwen2_5/14B_lora_single_device"},
                                   {kLoraSingle, "qwen2_5/3B_lora_single_device"},
                                   {kLoraSingle, "qwen2_5/7B_lora_single_device"},
                                   {kLoraDistributed, "gemma/2B_lora"},
                                   {kLoraDistributed, "gemma/7B_lora"},
                                   {kLoraDistributed, "gemma2/27B_lora"},
                                   {kLoraDistributed, "gemma2/2B_lora"},
                                   {kLoraDistributed, "gemma2/9B_lora"},
                                   {kLoraDistributed, "llama2/13B_lora"},
                                   {kLoraDistributed, "llama2/70B_lora"},
                                   {kLoraDistributed, "llama2/70B_qlora"},
                                   {kLoraDistributed, "llama2/7B_lora"},
                                   {kLoraDistributed, "llama2/7B_qlora"},
                                   {kLoraDistributed, "llama3/70B_lora"},
                                   {kLoraDistributed, "llama3/8B_lora"},
                                   {kLoraDistributed, "llama3_1/405B_qlora"},
                                   {kLoraDistributed, "llama3_1/70B_lora"},
                                   {kLoraDistributed, "llama3_1/8B_lora"},
                                   {kLoraDistributed, "llama3_2/1B_lora"},
                                   {kLoraDistributed, "llama3_2/3B_lora"},
                                   {kLoraDistributed, "llama3_3/70B_lora"},
                                   {kLoraDistributed, "llama3_3/70B_qlora"},
                                   {kLoraDistributed, "mistral/7B_lora"},
                                   {kLoraDistributed, "phi3/mini_lora"},
                                   {kLoraDistributed, "phi4/14B_lora"},
                                   {kLoraDistributed, "qwen2/0.5B_lora"},
                                   {kLoraDistributed, "qwen2/1.5B_lora"},
                                   {kLoraDistributed, "qwen2/7B_lora"},
                                   {kLoraDistributed, "qwen2_5/0.5B_lora"},
                                   {kLoraDistributed, "qwen2_5/1.5B_lora"},
                                   {kLoraDistributed, "qwen2_5/32B_lora"},
                                   {kLoraDistributed, "qwen2_5/3B_lora"},
                                   {kLoraDistributed, "qwen2_5/72B_lora"},
                                   {kLoraDistributed, "qwen2_5/7B_lora"}};

std::string lower_case(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
    return s;
}

// The built-in config of `recipe` for the model and kind ("full", "lora", "qlora"), or "" when
// torchtune ships none.
std::string tune_config(const std::string& model, const char* recipe, const std::string& kind) {
    const std::string base = lower_case(model.substr(model.find('/') == std::string::npos ? 0 : model.find('/') + 1));
    for (const TuneModel& m : kTuneModels) {
        if (base.rfind(lower_case(m.id_prefix), 0) != 0) continue;
        const std::string prefix = std::string(m.config_dir) + "_" + kind;
        for (const TuneConfig& c : kTuneConfigs) {
            const std::string name = c.name;
            if (c.recipe == recipe && name.rfind(prefix, 0) == 0 &&
                (name.size() == prefix.size() || name[prefix.size()] == '_'))
                return name;
        }
    }
    return "";
}

Written write_torchtune(const Run& r) {
    Written w;
    refuse_layout(r, w, "torchtune");
    if (r.framework != "torchtune")
        w.refuse("training.framework", "a torchtune recipe runs torchtune's loop: the framework must be torchtune",
                 r.framework);
    if (r.engine != "none" && r.engine != "fsdp")
        w.refuse("engine.type", "torchtune's recipes run on one GPU (none) or with FSDP (fsdp)", r.engine);
    if (r.engine == "fsdp" && r.fsdp_sharding != "full_shard")
        w.refuse("engine.fsdp_sharding", "torchtune's distributed recipes fully shard (full_shard)", r.fsdp_sharding);
    if (r.dtype != "bf16" && r.dtype != "fp32")
        w.refuse("training.dtype", "torchtune's dtype is bf16 or fp32", r.dtype);
    if (r.precision != "pure")
        w.refuse("training.precision", "torchtune keeps the weights in its dtype (pure)", r.precision);
    if (r.method == "frozen") w.refuse("training.method", "torchtune's recipes are full, lora and qlora", r.method);
    if (r.engine == "fsdp" && r.offload_optimizer != r.offload_param)
        w.refuse("engine.offload_optimizer",
                 "torchtune's fsdp_cpu_offload moves the weights, gradients and optimizer "
                 "states together: offload_optimizer and offload_param must be the same",
                 r.offload_optimizer);
    static const char* const kOptimizers[][2] = {{"adamw", "torch.optim.AdamW"},
                                                 {"adamw_fused", "torch.optim.AdamW"},
                                                 {"adam", "torch.optim.Adam"},
                                                 {"sgd", "torch.optim.SGD"},
                                                 {"adamw_8bit", "bitsandbytes.optim.AdamW8bit"},
                                                 {"paged_adamw_8bit", "bitsandbytes.optim.PagedAdamW8bit"},
                                                 {"paged_adamw_32bit", "bitsandbytes.optim.PagedAdamW"}};
    std::string component;
    for (const auto& row : kOptimizers)
        if (r.optimizer == row[0]) component = row[1];
    if (component.empty())
        w.refuse("training.optimizer",
                 "torchtune's configs use torch.optim or bitsandbytes optimizers: adamw, "
                 "adamw_fused, adam, sgd, adamw_8bit, paged_adamw_8bit, paged_adamw_32bit",
                 r.optimizer);
    if (!w.issues.empty()) return w;

    const bool single = r.world() == 1;
    const std::string kind = r.method == "full" ? "full" : r.method == "qlora" ? "qlora" : "lora";
    const char* recipe =
        r.method == "full" ? (single ? kFullSingle : kFullDistributed) : (single ? kLoraSingle : kLoraDistributed);
    std::string config = tune_config(r.model, recipe, kind);
    if (config.empty()) {
        config = "CONFIG";
        w.notes.push_back("CONFIG: torchtune 0.6.1 ships no " + std::string(recipe) + " config for " + r.model + " (" +
                          kind + "); copy the closest one (tune cp) and point its model and tokenizer at this model");
    }
    w.file_name = "tune.sh";
    Command c({"tune", "run"});
    if (!single) c.option("--nnodes", 1.0).option("--nproc_per_node", static_cast<double>(r.world()));
    c.flag(recipe).option("--config", config);
    c.set("batch_size", std::to_string(r.batch));
    c.set("gradient_accumulation_steps", std::to_string(r.accumulation));
    c.set("tokenizer.max_seq_len", std::to_string(r.seq_len));
    c.set("dtype", r.dtype == "bf16" ? "bf16" : "fp32");
    c.set("enable_activation_checkpointing", r.checkpointing == "none" ? "False" : "True");
    c.set("enable_activation_offloading", r.activation_offloading ? "True" : "False");
    c.set("compile", r.compile == "none" ? "False" : "True");
    c.set("optimizer._component_", component);
    if (r.optimizer == "adamw_fused") c.set("optimizer.fused", "True");
    c.set("optimizer_in_bwd", r.optimizer_in_backward ? "True" : "False");
    c.set("loss._component_",
          r.loss == "standard" ? "torch.nn.CrossEntropyLoss" : "torchtune.modules.loss.CEWithChunkedOutputLoss");
    if (!single) c.set("fsdp_cpu_offload", r.offload_param == "cpu" ? "True" : "False");
    if (r.adapters()) {
        const json& l = r.lora();
        std::string attn;
        for (const char* m : {"q_proj", "k_proj", "v_proj", "output_proj"})
            if (r.targets(std::string(m) == "output_proj" ? "o_proj" : m))
                attn += (attn.empty() ? "" : ",") + std::string(m);
        c.set("model.lora_attn_modules", "[" + attn + "]");
        c.set("model.apply_lora_to_mlp",
              r.targets("gate_proj") || r.targets("up_proj") || r.targets("down_proj") ? "True" : "False");
        c.set("model.apply_lora_to_output", r.targets("lm_head") ? "True" : "False");
        c.set("model.lora_rank", l["rank"].dump());
        c.set("model.lora_alpha", number_text(l["alpha"].get<double>()));
        c.set("model.lora_dropout", number_text(l["dropout"].get<double>()));
    }
    if (r.loss == "fused")
        w.notes.push_back(
            "loss fused: torchtune has no fused head + loss; the chunked loss is written (its logits "
            "stay in chunks)");
    if (r.checkpointing == "selective")
        w.notes.push_back(
            "selective checkpointing: torchtune's enable_activation_checkpointing is per layer; use "
            "ac_mode/ac_option in recipes that have them");
    w.text = c.text();
    return w;
}

Written write_axolotl(const Run& r) {
    Written w;
    w.kind = "yaml";
    w.file_name = "axolotl.yaml";
    refuse_layout(r, w, "axolotl");
    if (r.framework != "transformers")
        w.refuse("training.framework", "axolotl trains with HF Trainer: the framework must be transformers",
                 r.framework);
    const std::string optim = hf_optim(r.optimizer);
    if (optim.empty())
        w.refuse("training.optimizer",
                 "axolotl's optimizer is one of HF Trainer's: adamw, adamw_fused, adamw_8bit, "
                 "paged_adamw_8bit, paged_adamw_32bit, adafactor, sgd, adagrad, rmsprop, lion",
                 r.optimizer);
    if (r.dtype != "fp32" && r.precision != "pure")
        w.refuse("training.precision", "axolotl loads the weights in its bf16/fp16 dtype (pure)", r.precision);
    if (r.method == "frozen") w.refuse("training.method", "axolotl trains full, lora or qlora", r.method);
    if (r.checkpointing == "selective")
        w.refuse("training.activation_checkpointing", "axolotl checkpoints whole layers: full or none",
                 r.checkpointing);
    if (!w.issues.empty()) return w;

    ojson y;
    y["base_model"] = r.model;
    if (r.method == "qlora") {
        const std::string q = r.s["training"]["quantization"];
        if (q == "int8") y["load_in_8bit"] = true;
        else y["load_in_4bit"] = true;
        if (q == "fp4")
            w.notes.push_back("fp4 base: axolotl quantizes to nf4 unless bnb_4bit_quant_type is set in code");
    }
    if (r.adapters()) {
        const json& l = r.lora();
        y["adapter"] = r.method;
        y["lora_r"] = l["rank"];
        y["lora_alpha"] = l["alpha"];
        y["lora_dropout"] = l["dropout"];
        auto targets = r.lora_targets();
        if (std::find(targets.begin(), targets.end(), "all_linear") != targets.end()) y["lora_target_linear"] = true;
        else y["lora_target_modules"] = targets;
    }
    y["sequence_len"] = r.seq_len;
    y["micro_batch_size"] = r.batch;
    y["gradient_accumulation_steps"] = r.accumulation;
    y["bf16"] = r.dtype == "bf16";
    y["fp16"] = r.dtype == "fp16";
    y["gradient_checkpointing"] = r.checkpointing == "full";
    y["optimizer"] = optim;
    y["attn_implementation"] = r.attention == "flash" ? "flash_attention_2" : r.attention == "sdpa" ? "sdpa" : "eager";
    if (r.loss == "fused") {
        y["plugins"] = ojson::array({"axolotl.integrations.liger.LigerPlugin"});
        y["liger_fused_linear_cross_entropy"] = true;
    }
    if (r.loss == "chunked") y["chunked_cross_entropy"] = true;
    if (r.engine == "deepspeed") {
        y["deepspeed"] = "ds_config.json";
        w.notes.push_back("ds_config.json: gpumem export deepspeed with the same options writes it");
    }
    if (r.engine == "fsdp") {
        std::string fsdp = r.fsdp_sharding;
        y["fsdp"] =
            r.offload_param == "cpu" ? ojson::array({fsdp, "auto_wrap", "offload"}) : ojson::array({fsdp, "auto_wrap"});
        y["fsdp_config"] = {{"auto_wrap_policy", "TRANSFORMER_BASED_WRAP"},
                            {"state_dict_type", "SHARDED_STATE_DICT"},
                            {"offload_params", r.offload_param == "cpu"},
                            {"activation_checkpointing", r.checkpointing == "full"}};
    }
    std::string text;
    text = yaml_text(y);
    w.text = text;
    w.notes.push_back("add datasets:, output_dir: and the learning rate; launch on " + std::to_string(r.world()) +
                      " GPU(s) with `axolotl train axolotl.yaml` (accelerate launch for several)");
    return w;
}

Written write_litgpt(const Run& r, std::uint64_t per_node) {
    Written w;
    w.file_name = "litgpt.sh";
    refuse_layout(r, w, "litgpt");
    if (r.framework != "litgpt")
        w.refuse("training.framework", "a litgpt command runs litgpt's loop: the framework must be litgpt",
                 r.framework);
    if (r.engine != "none" && r.engine != "fsdp")
        w.refuse("engine.type", "litgpt runs on one GPU or with FSDP (Lightning's FSDPStrategy)", r.engine);
    if (r.method == "frozen") w.refuse("training.method", "litgpt fine-tunes full, lora or qlora", r.method);
    if (r.dtype == "fp8") w.refuse("training.dtype", "litgpt's --precision has no fp8", r.dtype);
    if (!w.issues.empty()) return w;

    // Lightning's precision: "-true" holds the weights in the dtype, "-mixed" autocasts fp32 weights.
    std::string precision = r.dtype == "fp32" ? "32-true"
                                              : (r.dtype == "bf16" ? std::string("bf16") : std::string("16")) +
                                                    (r.precision == "pure" ? "-true" : "-mixed");
    const std::uint64_t nodes = nodes_for(r.world(), per_node);
    Command c({"litgpt", r.method == "full" ? "finetune_full" : "finetune_lora", r.model});
    c.option("--devices", static_cast<double>(std::min(r.world(), per_node)));
    if (nodes > 1) c.option("--num_nodes", static_cast<double>(nodes));
    c.option("--precision", precision);
    c.option("--train.micro_batch_size", static_cast<double>(r.batch));
    c.option("--train.global_batch_size", static_cast<double>(r.batch * r.accumulation * r.dp));
    c.option("--train.max_seq_length", static_cast<double>(r.seq_len));
    if (r.adapters()) {
        const json& l = r.lora();
        c.option("--lora_r", l["rank"].get<double>());
        c.option("--lora_alpha", l["alpha"].get<double>());
        c.option("--lora_dropout", l["dropout"].get<double>());
        c.option("--lora_query", r.targets("q_proj") ? "true" : "false");
        c.option("--lora_key", r.targets("k_proj") ? "true" : "false");
        c.option("--lora_value", r.targets("v_proj") ? "true" : "false");
        c.option("--lora_projection", r.targets("o_proj") ? "true" : "false");
        c.option("--lora_mlp",
                 r.targets("gate_proj") || r.targets("up_proj") || r.targets("down_proj") ? "true" : "false");
        c.option("--lora_head", r.targets("lm_head") ? "true" : "false");
    }
    if (r.method == "qlora") {
        const std::string q = r.s["training"]["quantization"];
        c.option("--quantize", "bnb." + q + (q == "nf4" && r.double_quant ? "-dq" : ""));
    }
    w.text = c.text();
    w.notes.push_back("litgpt reads its checkpoint from checkpoints/" + r.model + ": `litgpt download " +
                      shell_word(r.model) + "` first");
    note_checkpointing(r, w, "litgpt's FSDPStrategy takes activation_checkpointing_policy={Block} (set in the script)");
    return w;
}

//-----------------------------------------------------------------------------
// The request
//-----------------------------------------------------------------------------

// The inference.engine a serving format runs.
const char* engine_of(ExportFormat f) {
    switch (f) {
        case ExportFormat::LlamaCpp:
            return name(InferenceEngine::LlamaCpp);
        case ExportFormat::Sglang:
            return name(InferenceEngine::Sglang);
        case ExportFormat::Tgi:
            return name(InferenceEngine::Tgi);
        case ExportFormat::TensorrtLlm:
            return name(InferenceEngine::TensorrtLlm);
        default:
            return name(InferenceEngine::Vllm);
    }
}

// Sets section.key to `value` when the scenario leaves it out; an issue when it gives another value.
void require_field(json& scenario, const char* section, const char* key, const std::string& value, const char* format,
                   std::vector<Issue>& issues) {
    json& s = scenario[section];
    if (s.is_null()) s = json::object();
    if (!s.is_object()) return;  // the scenario reader names it
    auto it = s.find(key);
    if (it == s.end() || it->is_null()) {
        s[key] = value;
        return;
    }
    if (it->is_string() && normalize_setting(it->get<std::string>()) == normalize_setting(value)) return;
    issues.push_back({std::string(section) + "." + key,
                      std::string("is not what ") + format + " runs (" + value + "); leave it out or set " + value,
                      show(*it)});
}

Written write(ExportFormat f, const Run& r, std::uint64_t per_node, const std::string& script) {
    switch (f) {
        case ExportFormat::Accelerate:
            return write_accelerate(r, per_node);
        case ExportFormat::Torchrun:
            return write_torchrun(r, per_node, script);
        case ExportFormat::Torchtune:
            return write_torchtune(r);
        case ExportFormat::Axolotl:
            return write_axolotl(r);
        case ExportFormat::Litgpt:
            return write_litgpt(r, per_node);
        case ExportFormat::Deepspeed:
        case ExportFormat::Vllm:
        case ExportFormat::LlamaCpp:
        case ExportFormat::Sglang:
        case ExportFormat::Tgi:
        case ExportFormat::TensorrtLlm:
            return write_run(f, r, per_node, script);  // formats/<tool>.cpp, through the tool's table
    }
    return {};
}

}  // namespace

json export_config(const json& request) {
    std::vector<Issue> issues;
    if (!request.is_object())
        return error_document({{"", "the request must be an object: {\"format\", \"scenario\"}", show(request)}});
    FieldReader reader(request, "", issues);
    std::optional<ExportFormat> format;
    if (!request.contains("format")) issues.push_back({"format", "is required: " + allowed_text<ExportFormat>(), ""});
    else format = reader.setting<ExportFormat>("format");
    std::uint64_t per_node = reader.uint("gpus_per_node", 1, 1024).value_or(0);
    std::string script = reader.string("script").value_or("train.py");
    if (!request.contains("scenario") || !request["scenario"].is_object())
        issues.push_back(
            {"scenario", "is required: the scenario to export (an object)", show(request.value("scenario", json()))});
    if (!issues.empty()) return error_document(issues);

    // What the format runs, where the scenario leaves it open.
    json scenario = request["scenario"];
    const char* fmt = name(*format);
    if (is_serving(*format)) {
        if (!scenario.contains("mode")) scenario["mode"] = "inference";
        require_field(scenario, "inference", "engine", engine_of(*format), fmt, issues);
    } else {
        if (!scenario.contains("mode")) scenario["mode"] = "training";
        if (*format == ExportFormat::Deepspeed &&
            !(scenario.contains("engine") && scenario["engine"].is_object() && scenario["engine"].contains("type")))
            scenario["engine"]["type"] = "deepspeed";
        if (*format == ExportFormat::Torchtune) {
            require_field(scenario, "training", "framework", "torchtune", fmt, issues);
            if (!(scenario["training"].is_object() && scenario["training"].contains("precision")))
                scenario["training"]["precision"] = "pure";  // torchtune holds the weights in its dtype
        }
        if (*format == ExportFormat::Litgpt) require_field(scenario, "training", "framework", "litgpt", fmt, issues);
        if (*format == ExportFormat::Axolotl &&
            !(scenario["training"].is_object() && scenario["training"].contains("precision")))
            scenario["training"]["precision"] = "pure";  // axolotl loads the weights in its bf16/fp16 dtype
    }
    if (!issues.empty()) return error_document(issues);
    const std::string mode = scenario["mode"].is_string() ? scenario["mode"].get<std::string>() : "";
    if (mode != (is_serving(*format) ? "inference" : "training"))
        return error_document({{"mode",
                                std::string(fmt) + " is a " + (is_serving(*format) ? "serving" : "training") +
                                    " format: the mode must be " + (is_serving(*format) ? "inference" : "training"),
                                show(scenario["mode"])}});

    json estimated = estimate(scenario);
    if (!estimated.value("ok", false)) return estimated;
    const Run run(estimated["scenario"]);
    if (per_node == 0) per_node = std::min<std::uint64_t>(run.world(), 8);
    Written w = write(*format, run, per_node, script);
    if (!w.issues.empty()) return error_document(w.issues);
    json notes = w.notes;
    return {{"ok", true},
            {"format", fmt},
            {"kind", w.kind},
            {"file_name", w.file_name},
            {"text", w.text},
            {"notes", notes},
            {"scenario", estimated["scenario"]},
            {"estimate", estimated}};
}

//-----------------------------------------------------------------------------
// Reading a DeepSpeed config
//-----------------------------------------------------------------------------

json import_deepspeed(const json& ds) {
    if (!ds.is_object()) return error_document({{"", "a DeepSpeed config is a JSON object", show(ds)}});
    Loaded loaded = load_structured("ds_config.json", ds.dump());
    if (!loaded.issues.empty()) return error_document(loaded.issues);
    Doc doc = loaded.parts.empty() ? Doc::object() : loaded.parts[0].doc;
    Reading reading = read_doc(ConfigFormat::Deepspeed, doc);
    if (!reading.issues.empty()) return error_document(reading.issues);
    json notes = reading.assumptions;
    for (const std::string& w : reading.warnings) notes.push_back(w);
    return {{"ok", true}, {"scenario", reading.scenario}, {"notes", notes}};
}

}  // namespace gpumem::detail

namespace gpumem {

nlohmann::json export_config(const nlohmann::json& request) { return detail::export_config(request); }

nlohmann::json import_deepspeed(const nlohmann::json& ds_config) { return detail::import_deepspeed(ds_config); }

}  // namespace gpumem
