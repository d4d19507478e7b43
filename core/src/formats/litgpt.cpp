// LitGPT's fine-tuning configs (config_hub/finetune/*.yaml) and `litgpt finetune_* CHECKPOINT_DIR
// --flag value` lines, read and written through one table (format.h): jsonargparse gives the YAML
// keys and the flags one spelling ("train.micro_batch_size"). Facts from Lightning-AI/litgpt v0.5.13
// (litgpt/finetune/lora.py and full.py setup(), litgpt/args.py TrainArgs; tests/data/formats/litgpt.json).
#include <algorithm>
#include <string>

#include "formats/format.h"

namespace gpumem::detail {

namespace {

std::uint64_t devices(const Writer& w) { return std::min(w.r.world(), w.per_node); }
std::uint64_t litgpt_nodes(const Writer& w) { return nodes_for(w.r.world(), w.per_node); }

// Lightning's precision strings: "-true" holds the weights in the dtype, "-mixed" autocasts fp32 ones.
void read_precision(Reader& r) {
    auto v = r.string();
    if (!v) return;
    static const char* const kMap[][3] = {{"bf16-true", "bf16", "pure"},
                                          {"bf16-mixed", "bf16", "amp_fp32_weights"},
                                          {"16-true", "fp16", "pure"},
                                          {"16-mixed", "fp16", "amp_fp32_weights"},
                                          {"32-true", "fp32", "pure"},
                                          {"32", "fp32", "pure"},
                                          {"bf16", "bf16", "amp_fp32_weights"},
                                          {"16", "fp16", "amp_fp32_weights"},
                                          {"transformer-engine", "fp8", "amp_fp32_weights"}};
    for (const auto& row : kMap)
        if (*v == row[0]) {
            r.set("training.dtype", row[1]);
            r.set("training.precision", row[2]);
            return;
        }
    r.issue("must be one of Lightning's precisions: bf16-true, bf16-mixed, 16-true, 16-mixed, 32-true");
}

bool lora_flag(Reader& r, const char* module) {
    auto v = r.boolean();
    if (!v) return false;
    json targets = r.get("training.lora.target_modules");
    if (!targets.is_array()) targets = json::array();
    json kept = json::array();
    for (const json& t : targets)
        if (t != module) kept.push_back(t);
    if (*v) kept.push_back(module);
    r.set("training.lora.target_modules", kept);
    return true;
}

std::optional<ojson> lora_on(const Writer& w, std::initializer_list<const char*> modules) {
    if (!w.r.adapters()) return std::nullopt;
    bool on = false;
    for (const char* m : modules) on = on || w.r.targets(m);
    return on;
}

const Key kKeys[] = {
    {"checkpoint_dir", "model",
     [](Reader& r) {
         auto v = r.string();
         if (!v) return;
         // checkpoints/ORG/NAME, as `litgpt download ORG/NAME` lays it out.
         std::string dir = *v;
         while (!dir.empty() && dir.back() == '/') dir.pop_back();
         const std::size_t at = dir.rfind("checkpoints/");
         r.out().model = at == std::string::npos ? dir : dir.substr(at + 12);
     },
     [](Writer& w) -> std::optional<ojson> { return w.r.model; }, "@model"},
    {"devices", "hardware.num_gpus",
     [](Reader& r) {
         if (r.value().is_string() && (r.value() == "auto" || r.value() == "-1")) {
             r.assume("devices " + r.value().get<std::string>() + ": every visible GPU");
             return;
         }
         if (auto v = r.uint(1, 1024)) r.set("hardware.gpus_per_node", *v);
     },
     [](Writer& w) -> std::optional<ojson> { return devices(w); }},
    {"num_nodes", "hardware.num_gpus",
     [](Reader& r) {
         if (auto v = r.uint(1, 1 << 16)) r.out().scenario["_nodes"] = *v;
     },
     [](Writer& w) -> std::optional<ojson> {
         return litgpt_nodes(w) > 1 ? std::optional<ojson>(litgpt_nodes(w)) : std::nullopt;
     }},
    {"precision", "training.dtype", read_precision,
     [](Writer& w) -> std::optional<ojson> {
         const Run& r = w.r;
         if (r.dtype == "fp32") return "32-true";
         return (r.dtype == "bf16" ? std::string("bf16") : std::string("16")) +
                (r.precision == "pure" ? "-true" : "-mixed");
     }},
    {"quantize", "training.quantization",
     [](Reader& r) {
         if (r.value().is_null()) return;
         auto v = r.string();
         if (!v) return;
         static const char* const kMap[][3] = {{"bnb.nf4", "nf4", "false"},
                                               {"bnb.nf4-dq", "nf4", "true"},
                                               {"bnb.fp4", "fp4", "false"},
                                               {"bnb.fp4-dq", "fp4", "true"},
                                               {"bnb.int8-training", "int8", "false"}};
         for (const auto& row : kMap)
             if (*v == row[0]) {
                 r.set("training.method", "qlora");
                 r.set("training.quantization", row[1]);
                 r.set("training.double_quant", std::string(row[2]) == "true");
                 return;
             }
         r.issue("must be bnb.nf4, bnb.nf4-dq, bnb.fp4, bnb.fp4-dq or bnb.int8-training");
     },
     [](Writer& w) -> std::optional<ojson> {
         if (w.r.method != "qlora") return std::nullopt;
         const std::string q = w.r.s["training"]["quantization"];
         if (q == "int8") return "bnb.int8-training";
         return "bnb." + q + (w.r.double_quant ? "-dq" : "");
     }},
    {"train.micro_batch_size", "training.batch_size", read_micro_batch, write_micro_batch},
    // TrainArgs.gradient_accumulation_iters: global / (devices x nodes) / micro.
    {"train.global_batch_size", "training.gradient_accumulation_steps",
     [](Reader& r) {
         if (auto v = r.uint(1, 1ULL << 40)) r.out().scenario["_global_batch"] = *v;
     },
     [](Writer& w) -> std::optional<ojson> { return w.r.batch * w.r.accumulation * w.r.dp; }},
    {"train.max_seq_length", "training.seq_len",
     [](Reader& r) {
         if (r.value().is_null()) {
             r.assume(
                 "train.max_seq_length is null: the longest sample of the data sets the length; give "
                 "--seq-len it");
             return;
         }
         if (auto v = r.uint(1, 1 << 24)) r.set("training.seq_len", *v);
     },
     [](Writer& w) -> std::optional<ojson> { return w.r.seq_len; }},
    {"lora_r", "training.lora.rank", read_lora_rank, write_lora_rank},
    {"lora_alpha", "training.lora.alpha", read_lora_alpha, write_lora_alpha},
    {"lora_dropout", "training.lora.dropout", read_lora_dropout, write_lora_dropout},
    {"lora_query", "training.lora.target_modules", [](Reader& r) { lora_flag(r, "q_proj"); },
     [](Writer& w) { return lora_on(w, {"q_proj"}); }},
    {"lora_key", "training.lora.target_modules", [](Reader& r) { lora_flag(r, "k_proj"); },
     [](Writer& w) { return lora_on(w, {"k_proj"}); }},
    {"lora_value", "training.lora.target_modules", [](Reader& r) { lora_flag(r, "v_proj"); },
     [](Writer& w) { return lora_on(w, {"v_proj"}); }},
    {"lora_projection", "training.lora.target_modules", [](Reader& r) { lora_flag(r, "o_proj"); },
     [](Writer& w) { return lora_on(w, {"o_proj"}); }},
    {"lora_mlp", "training.lora.target_modules",
     [](Reader& r) {
         if (lora_flag(r, "gate_proj")) {
             lora_flag(r, "up_proj");
             lora_flag(r, "down_proj");
         }
     },
     [](Writer& w) {
         return lora_on(w, {"gate_proj", "up_proj", "down_proj"});
     }},
    {"lora_head", "training.lora.target_modules", [](Reader& r) { lora_flag(r, "lm_head"); },
     [](Writer& w) { return lora_on(w, {"lm_head"}); }},
    // --optimizer AdamW, or {class_path: torch.optim.AdamW, init_args: {...}} in a config.
    {"optimizer", "training.optimizer",
     [](Reader& r) {
         auto v = r.string();
         if (!v) return;
         std::string cls = v->substr(v->find_last_of('.') == std::string::npos ? 0 : v->find_last_of('.') + 1);
         static const char* const kMap[][2] = {{"AdamW", "adamw"},
                                               {"Adam", "adam"},
                                               {"SGD", "sgd"},
                                               {"AdamW8bit", "adamw_8bit"},
                                               {"PagedAdamW8bit", "paged_adamw_8bit"},
                                               {"PagedAdamW", "paged_adamw_32bit"},
                                               {"Adafactor", "adafactor"}};
         for (const auto& row : kMap)
             if (cls == row[0]) {
                 r.set("training.optimizer", row[1]);
                 return;
             }
         r.warn("optimizer " + *v + " is not one gpumem models; the scenario's optimizer is used");
     },
     [](Writer& w) -> std::optional<ojson> {
         static const char* const kMap[][2] = {{"adamw", "AdamW"},
                                               {"adam", "Adam"},
                                               {"sgd", "SGD"},
                                               {"adamw_8bit", "bitsandbytes.optim.AdamW8bit"},
                                               {"paged_adamw_8bit", "bitsandbytes.optim.PagedAdamW8bit"},
                                               {"paged_adamw_32bit", "bitsandbytes.optim.PagedAdamW"}};
         for (const auto& row : kMap)
             if (w.r.optimizer == row[0]) return std::string(row[1]);
         return std::nullopt;
     },
     "optimizer.class_path"},
};

const char* const kIgnored[] = {"out_dir",
                                "data",
                                "data.",
                                "train.save_interval",
                                "train.log_interval",
                                "train.lr_warmup_steps",
                                "train.lr_warmup_fraction",
                                "train.epochs",
                                "train.max_tokens",
                                "train.max_steps",
                                "train.max_time",
                                "train.max_norm",
                                "train.min_lr",
                                "train.tie_embeddings",
                                "eval.",
                                "log.",
                                "logger_name",
                                "seed",
                                "access_token",
                                "optimizer.init_args.",
                                "resume"};

void refuse(Writer& wr) {
    const Run& r = wr.r;
    Written& w = wr.w;
    refuse_megatron(wr, "litgpt");
    if (r.tp > 1 || r.pp > 1 || r.cp > 1 || r.ep > 1)
        w.refuse("parallelism",
                 "litgpt's fine-tuning shards with FSDP only; tensor, pipeline, context and expert sizes must be 1",
                 "tp " + std::to_string(r.tp) + ", pp " + std::to_string(r.pp) + ", cp " + std::to_string(r.cp) +
                     ", ep " + std::to_string(r.ep));
    if (r.framework != "litgpt")
        w.refuse("training.framework", "a litgpt command runs litgpt's loop: the framework must be litgpt",
                 r.framework);
    if (r.world() > 1 && r.engine != "fsdp")
        w.refuse("engine.type", "litgpt runs several GPUs with FSDP (Lightning's FSDPStrategy)", r.engine);
    if (r.world() == 1 && r.engine != "none" && r.engine != "fsdp")
        w.refuse("engine.type", "litgpt runs one GPU without an engine, or FSDP", r.engine);
    if (r.method == "frozen") w.refuse("training.method", "litgpt fine-tunes full, lora or qlora", r.method);
    if (r.dtype == "fp8") w.refuse("training.dtype", "gpumem writes litgpt's bf16, fp16 and fp32 precisions", r.dtype);
    // finetune/lora.py setup(): quantization with several devices, or with a "-mixed" precision, raise.
    if (r.method == "qlora" && r.world() > 1)
        w.refuse("training.method",
                 "litgpt's finetune_lora refuses --quantize on several devices (NotImplementedError)",
                 std::to_string(r.world()) + " GPUs");
    if (r.method == "qlora" && r.dtype != "fp32" && r.precision != "pure")
        w.refuse("training.precision",
                 "litgpt refuses --quantize with a -mixed precision (\"Quantization and mixed precision is not "
                 "supported\"): pure (bf16-true)",
                 r.precision);
    if (r.precision == "mixed_master_fp32" || r.precision == "mixed_fp32_grads")
        w.refuse("training.precision",
                 "Lightning holds the weights in the dtype (pure, -true) or in fp32 with "
                 "autocast (amp_fp32_weights, -mixed)",
                 r.precision);
    if (r.fsdp_sharding != "full_shard" && r.engine == "fsdp")
        w.refuse("engine.fsdp_sharding", "litgpt's FSDPStrategy shards fully (its default, FULL_SHARD)",
                 r.fsdp_sharding);
    if (r.offload_param != "none" || r.offload_optimizer != "none")
        w.refuse("engine.offload_param", "litgpt's FSDPStrategy is built with cpu_offload=False", r.offload_param);
    // Activation checkpointing: under FSDP litgpt checkpoints every Block (activation_checkpointing_policy);
    // on one device it never does.
    if (r.world() > 1 && r.checkpointing != "full")
        w.refuse("training.activation_checkpointing",
                 "litgpt's FSDPStrategy checkpoints every block (activation_checkpointing_policy={Block}): full",
                 r.checkpointing);
    if (r.world() == 1 && r.checkpointing != "none")
        w.refuse("training.activation_checkpointing", "litgpt on one device does not checkpoint activations: none",
                 r.checkpointing);
    if (r.loss != "chunked")
        w.refuse("training.loss",
                 "litgpt's fine-tuning computes its loss with chunked_cross_entropy (litgpt/utils.py): chunked",
                 r.loss);
    const std::string o = r.optimizer;
    if (o != "adamw" && o != "adam" && o != "sgd" && o != "adamw_8bit" && o != "paged_adamw_8bit" &&
        o != "paged_adamw_32bit")
        w.refuse("training.optimizer",
                 "litgpt's --optimizer takes a torch.optim or bitsandbytes class: adamw, adam, sgd, adamw_8bit, "
                 "paged_adamw_8bit, paged_adamw_32bit",
                 o);
}

void finish_write(Writer& wr, ojson& doc) {
    const Run& r = wr.r;
    Written& w = wr.w;
    ojson flags = ojson::object();
    for (auto it = doc.begin(); it != doc.end(); ++it) {
        if (it.key() == "checkpoint_dir") continue;
        const ojson& v = it.value();
        flags[it.key()] = v.is_boolean() ? ojson(v.get<bool>() ? "true" : "false") : v;
    }
    w.file_name = "litgpt.sh";
    w.text = command_text({"litgpt", r.method == "full" ? "finetune_full" : "finetune_lora", r.model}, flags);
    w.notes.push_back("litgpt reads its checkpoint from checkpoints/" + r.model + ": `litgpt download " +
                      shell_word(r.model) + "` first");
}

void finish_read(Reader& r) {
    json& s = r.out().scenario;
    s["mode"] = "training";
    r.set("training.framework", "litgpt");
    const Doc& d = r.doc();
    if (d.contains("_args") && d["_args"].is_array() && !d["_args"].empty() && r.out().model.empty()) {
        std::string dir = d["_args"][0];
        while (!dir.empty() && dir.back() == '/') dir.pop_back();
        const std::size_t at = dir.rfind("checkpoints/");
        r.out().model = at == std::string::npos ? dir : dir.substr(at + 12);
    }
    std::uint64_t nodes = 1;
    if (s.contains("_nodes")) {
        nodes = s["_nodes"];
        s.erase("_nodes");
    }
    std::uint64_t per_node = r.has("hardware.gpus_per_node") ? r.get("hardware.gpus_per_node").get<std::uint64_t>() : 1;
    const std::uint64_t world = per_node * nodes;
    r.set("hardware.num_gpus", world);
    if (s.contains("_global_batch")) {
        const std::uint64_t global = s["_global_batch"];
        s.erase("_global_batch");
        const std::uint64_t micro =
            r.has("training.batch_size") ? r.get("training.batch_size").get<std::uint64_t>() : 1;
        const std::uint64_t per_rank = global / world;
        r.set("training.gradient_accumulation_steps", std::max<std::uint64_t>(1, per_rank / micro));
    }
    const std::string command =
        d.contains("_command") && d["_command"].is_string() ? d["_command"].get<std::string>() : "";
    if (command == "finetune_full" || command == "finetune") {
        if (command == "finetune_full") r.set("training.method", "full");
    }
    if (!r.has("training.method"))
        r.set("training.method",
              r.has("training.lora.rank") || command.rfind("finetune_lora", 0) == 0 ? "lora" : "full");
    // finetune/full.py, lora.py and adapter.py compute the loss with chunked_cross_entropy (litgpt/utils.py
    // @00af8b0d), whatever the config says; no key changes it.
    r.set("training.loss", "chunked");
    r.set("engine.type", world > 1 ? "fsdp" : "none");
    r.set("training.activation_checkpointing", world > 1 ? "full" : "none");
    r.assume(world > 1 ? "litgpt under FSDP checkpoints every block (activation_checkpointing_policy)"
                       : "litgpt on one device does not checkpoint activations");
    if (!r.has("training.precision")) r.assume("no precision: litgpt picks bf16-true where the GPU has bf16");
    if (!r.has("training.dtype")) {
        r.set("training.dtype", "bf16");
        r.set("training.precision", "pure");
    }
}

}  // namespace

extern const Tool kLitgptTool = {ConfigFormat::Litgpt, "command", "litgpt.sh",  kKeys,      std::size(kKeys), kIgnored,
                                 std::size(kIgnored),  refuse,    finish_write, finish_read};

}  // namespace gpumem::detail
