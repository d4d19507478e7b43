// A torchrun (or deepspeed / python) launch of an HF Trainer script, read and written through one
// table (format.h): torchrun's own flags (torch/distributed/run.py), transformers' TrainingArguments
// (training_args.py) and the fine-tuning flags of TRL's `trl sft` script (trl/trainer/sft_config.py
// SFTConfig.max_length, trl/trainer/model_config.py ModelConfig: use_peft, lora_*, load_in_4bit,
// torch_dtype), which is what most HF fine-tuning scripts parse.
#include <algorithm>
#include <string>

#include "formats/format.h"

namespace gpumem::detail {

namespace {

void read_nothing(Reader&) {}

// torchrun's processes per node: equal on every node, so a world that does not fill whole nodes of
// `per_node` spreads over the fewest nodes it divides evenly (12 GPUs on nodes of 8: 2 x 6).
std::uint64_t launch_nodes(const Run& r, std::uint64_t per_node) {
    const std::uint64_t world = r.world();
    for (std::uint64_t n = nodes_for(world, per_node); n <= world; ++n)
        if (world % n == 0) return n;
    return world;
}

std::optional<ojson> bool_text(bool on) { return on ? std::optional<ojson>("True") : std::nullopt; }

void read_half(Reader& r, const char* dtype) {
    if (auto on = r.boolean(); on && *on) r.set("training.dtype", dtype);
}

const Key kKeys[] = {
    // torchrun
    {"nproc-per-node", "hardware.gpus_per_node",
     [](Reader& r) {
         if (r.value().is_string() && (r.value() == "gpu" || r.value() == "auto")) {
             r.assume(r.key() + " is " + r.value().get<std::string>() + ": one process per visible GPU");
             r.out().scenario["_nproc_auto"] = true;
             return;
         }
         if (auto v = r.uint(1, 1024)) r.set("hardware.gpus_per_node", *v);
     },
     [](Writer& w) -> std::optional<ojson> { return w.r.world() / launch_nodes(w.r, w.per_node); }, "nproc_per_node"},
    {"nnodes", "hardware.num_gpus",
     [](Reader& r) {
         // "2" or an elastic range "1:4" (the upper bound is the most it runs on).
         std::string v = r.value().is_string() ? r.value().get<std::string>() : r.value().dump();
         const std::size_t colon = v.find(':');
         if (colon != std::string::npos) v = v.substr(colon + 1);
         ojson n = v;
         Reader sub = r;
         sub.at(r.key(), n);
         if (auto x = sub.uint(1, 1 << 16)) r.out().scenario["_nodes"] = *x;
     },
     [](Writer& w) -> std::optional<ojson> { return launch_nodes(w.r, w.per_node); }},
    {"rdzv-backend", "", read_nothing,
     [](Writer& w) -> std::optional<ojson> {
         return launch_nodes(w.r, w.per_node) > 1 ? std::optional<ojson>("c10d") : std::nullopt;
     },
     "rdzv_backend"},
    {"rdzv-endpoint", "", read_nothing,
     [](Writer& w) -> std::optional<ojson> {
         return launch_nodes(w.r, w.per_node) > 1 ? std::optional<ojson>("MASTER_HOST:29500") : std::nullopt;
     },
     "rdzv_endpoint"},
    // The script
    {"@script", "", read_nothing, [](Writer& w) -> std::optional<ojson> { return w.script; }},
    {"model_name_or_path", "model", [](Reader& r) { r.out().model = r.string().value_or(""); },
     [](Writer& w) -> std::optional<ojson> { return w.r.model; }, "model_id,model"},
    {"per_device_train_batch_size", "training.batch_size", read_micro_batch, write_micro_batch,
     "per_gpu_train_batch_size"},
    {"gradient_accumulation_steps", "training.gradient_accumulation_steps", read_accumulation, write_accumulation},
    {"max_length", "training.seq_len",
     [](Reader& r) {
         if (auto v = r.uint(1, 1 << 24)) r.set("training.seq_len", *v);
     },
     [](Writer& w) -> std::optional<ojson> { return w.r.seq_len; }, "max_seq_length,block_size,model_max_length"},
    {"bf16", "training.dtype", [](Reader& r) { read_half(r, "bf16"); },
     [](Writer& w) { return bool_text(w.r.dtype == "bf16"); }, "", false},
    {"fp16", "training.dtype", [](Reader& r) { read_half(r, "fp16"); },
     [](Writer& w) { return bool_text(w.r.dtype == "fp16"); }},
    // The weights' dtype: bf16 weights are the "pure" recipe; fp32 weights with bf16 autocast, AMP.
    {"torch_dtype", "training.precision",
     [](Reader& r) {
         auto v = r.string();
         if (!v) return;
         if (*v == "auto") {
             r.assume("torch_dtype auto: the checkpoint's dtype (bf16 for current models), weights held in it");
             r.set("training.precision", "pure");
         } else if (*v == "bfloat16" || *v == "float16") {
             r.set("training.precision", "pure");
         } else if (*v == "float32") {
             r.set("training.precision", "amp_fp32_weights");
         } else {
             r.issue("must be auto, bfloat16, float16 or float32");
         }
     },
     [](Writer& w) -> std::optional<ojson> {
         if (w.r.precision == "pure" && w.r.dtype != "fp32") return torch_dtype_name(w.r.dtype);
         return std::nullopt;
     },
     "dtype"},
    {"gradient_checkpointing", "training.activation_checkpointing",
     [](Reader& r) {
         if (auto v = r.boolean()) r.set("training.activation_checkpointing", *v ? "full" : "none");
     },
     [](Writer& w) { return bool_text(w.r.checkpointing == "full"); }},
    {"optim", "training.optimizer", read_hf_optimizer, write_hf_optimizer},
    {"use_liger_kernel", "training.loss",
     [](Reader& r) {
         if (auto v = r.boolean(); v && *v) r.set("training.loss", "fused");
     },
     [](Writer& w) { return bool_text(w.r.loss == "fused"); }},
    {"attn_implementation", "training.attention",
     [](Reader& r) {
         auto v = r.string();
         if (!v) return;
         if (auto a = parse_setting<Attention>(*v)) r.set("training.attention", name(*a));
         else r.warn("attention " + *v + " is not one gpumem models (eager, sdpa, flash_attention_2)");
     },
     [](Writer& w) -> std::optional<ojson> {
         if (w.r.attention == "sdpa") return std::nullopt;  // transformers' default
         return w.r.attention == "flash" ? "flash_attention_2" : "eager";
     }},
    // "full_shard auto_wrap offload": FSDP, its strategy, and the offload of weights + optimizer.
    {"fsdp", "engine.type",
     [](Reader& r) {
         auto v = r.string();
         if (!v || v->empty()) return;
         r.set("engine.type", "fsdp");
         std::string words = " " + *v + " ";
         for (const char* s : {"full_shard", "shard_grad_op", "hybrid_shard_zero2", "hybrid_shard", "no_shard"})
             if (words.find(std::string(" ") + s + " ") != std::string::npos) {
                 r.set("engine.fsdp_sharding", s);
                 break;
             }
         const bool offload = words.find(" offload ") != std::string::npos;
         r.set("engine.offload_param", offload ? "cpu" : "none");
         r.set("engine.offload_optimizer", offload ? "cpu" : "none");
         if (words.find(" auto_wrap ") == std::string::npos)
             r.warn("no auto_wrap: the whole model is one FSDP unit; gpumem assumes one unit per layer");
     },
     [](Writer& w) -> std::optional<ojson> {
         if (w.r.engine != "fsdp") return std::nullopt;
         std::string fsdp = w.r.fsdp_sharding + " auto_wrap";
         if (w.r.offload_param == "cpu") fsdp += " offload";
         return fsdp;
     }},
    {"deepspeed", "engine.type", read_deepspeed_file, write_deepspeed_file, "deepspeed_config"},
    // TRL's ModelConfig: LoRA and the quantized base.
    {"use_peft", "training.method",
     [](Reader& r) {
         if (auto v = r.boolean(); v && *v && !r.has("training.method")) r.set("training.method", "lora");
     },
     [](Writer& w) { return bool_text(w.r.adapters()); }},
    {"lora_r", "training.lora.rank", read_lora_rank, write_lora_rank},
    {"lora_alpha", "training.lora.alpha", read_lora_alpha, write_lora_alpha},
    {"lora_dropout", "training.lora.dropout", read_lora_dropout, write_lora_dropout},
    {"lora_target_modules", "training.lora.target_modules",
     [](Reader& r) {
         // A list, or words ("q_proj v_proj"), or "all-linear" (PEFT's spelling).
         std::vector<std::string> targets;
         if (r.value().is_array()) {
             for (const ojson& x : r.value())
                 if (x.is_string()) targets.push_back(x.get<std::string>());
         } else if (auto v = r.string()) {
             std::string word;
             for (char c : *v + " ") {
                 if (c == ' ' || c == ',') {
                     if (!word.empty()) targets.push_back(word == "all-linear" ? "all_linear" : word);
                     word.clear();
                 } else {
                     word += c;
                 }
             }
         }
         r.set("training.lora.target_modules", targets);
     },
     [](Writer& w) -> std::optional<ojson> {
         if (!w.r.adapters()) return std::nullopt;
         std::string words;
         for (const std::string& t : w.r.lora_targets())
             words += (words.empty() ? "" : " ") + (t == "all_linear" ? std::string("all-linear") : t);
         return words;
     }},
    {"load_in_4bit", "training.quantization",
     [](Reader& r) {
         if (auto v = r.boolean(); v && *v) {
             r.set("training.method", "qlora");
             if (!r.has("training.quantization")) r.set("training.quantization", "fp4");  // bitsandbytes' default
         }
     },
     [](Writer& w) -> std::optional<ojson> {
         if (w.r.method != "qlora" || w.r.s["training"]["quantization"] == "int8") return std::nullopt;
         return "True";
     }},
    {"load_in_8bit", "training.quantization",
     [](Reader& r) {
         if (auto v = r.boolean(); v && *v) {
             r.set("training.method", "qlora");
             r.set("training.quantization", "int8");
         }
     },
     [](Writer& w) -> std::optional<ojson> {
         return w.r.method == "qlora" && w.r.s["training"]["quantization"] == "int8" ? std::optional<ojson>("True")
                                                                                     : std::nullopt;
     }},
    {"bnb_4bit_quant_type", "training.quantization",
     [](Reader& r) {
         auto v = r.string();
         if (v && (*v == "nf4" || *v == "fp4")) r.set("training.quantization", *v);
         else if (v) r.issue("must be nf4 or fp4");
     },
     [](Writer& w) -> std::optional<ojson> {
         if (w.r.method != "qlora" || w.r.s["training"]["quantization"] == "int8") return std::nullopt;
         return w.r.s["training"]["quantization"];
     }},
    {"use_bnb_nested_quant", "training.double_quant",
     [](Reader& r) {
         if (auto v = r.boolean()) r.set("training.double_quant", *v);
     },
     [](Writer& w) -> std::optional<ojson> {
         return w.r.method == "qlora" && w.r.double_quant ? std::optional<ojson>("True") : std::nullopt;
     }},
    // The evaluation's batch: gpumem estimates the training step; a larger eval batch can peak higher.
    {"per_device_eval_batch_size", "",
     [](Reader& r) {
         r.warn(
             "the evaluation's batch is not in the estimate, which is the training step's; an eval batch "
             "above the micro-batch can peak higher");
     },
     [](Writer&) -> std::optional<ojson> { return std::nullopt; }},
};

const char* const kIgnored[] = {"output_dir",
                                "overwrite_output_dir",
                                "do_train",
                                "do_eval",
                                "do_predict",
                                "eval_strategy",
                                "evaluation_strategy",
                                "learning_rate",
                                "weight_decay",
                                "adam_beta1",
                                "adam_beta2",
                                "adam_epsilon",
                                "max_grad_norm",
                                "num_train_epochs",
                                "max_steps",
                                "lr_scheduler_type",
                                "lr_scheduler_kwargs",
                                "warmup_ratio",
                                "warmup_steps",
                                "log_level",
                                "logging_dir",
                                "logging_strategy",
                                "logging_first_step",
                                "logging_steps",
                                "save_strategy",
                                "save_steps",
                                "save_total_limit",
                                "save_only_model",
                                "seed",
                                "data_seed",
                                "tf32",
                                "local_rank",
                                "dataloader_num_workers",
                                "dataloader_pin_memory",
                                "dataloader_drop_last",
                                "run_name",
                                "report_to",
                                "push_to_hub",
                                "hub_*",
                                "eval_steps",
                                "load_best_model_at_end",
                                "metric_for_best_model",
                                "greater_is_better",
                                "remove_unused_columns",
                                "ddp_find_unused_parameters",
                                "ddp_timeout",
                                "ddp_backend",
                                "label_names",
                                "resume_from_checkpoint",
                                "dataset_name",
                                "dataset_config",
                                "dataset_config_name",
                                "dataset_text_field",
                                "dataset_*",
                                "train_file",
                                "validation_file",
                                "preprocessing_num_workers",
                                "cache_dir",
                                "trust_remote_code",
                                "use_fast_tokenizer",
                                "model_revision",
                                "token",
                                "streaming",
                                "validation_split_percentage",
                                "overwrite_cache",
                                "include_num_input_tokens_seen",
                                "bf16_full_eval",
                                "fp16_full_eval",
                                "disable_tqdm",
                                "use_cpu",
                                "master-addr",
                                "master-port",
                                "master_addr",
                                "master_port",
                                "node-rank",
                                "node_rank",
                                "max-restarts",
                                "max_restarts",
                                "standalone",
                                "rdzv-id",
                                "rdzv_id",
                                "rdzv-conf",
                                "rdzv_conf",
                                "monitor-interval",
                                "log-dir",
                                "redirects",
                                "tee",
                                "role",
                                "run-path",
                                "no-python",
                                "module",
                                "m",
                                "num_proc",
                                "packing",
                                "completion_only_loss",
                                "assistant_only_loss",
                                "chat_template_path",
                                "eos_token",
                                "pad_token",
                                "lora_task_type",
                                "lora_modules_to_save",
                                "use_rslora",
                                "use_dora"};

void refuse(Writer& wr) {
    const Run& r = wr.r;
    Written& w = wr.w;
    refuse_megatron(wr, "torchrun + HF Trainer");
    if (r.tp > 1 || r.pp > 1 || r.cp > 1 || r.ep > 1)
        w.refuse("parallelism",
                 "HF Trainer under torchrun runs data parallelism (DDP, FSDP, DeepSpeed ZeRO); tensor, pipeline, "
                 "context and expert sizes must be 1",
                 "tp " + std::to_string(r.tp) + ", pp " + std::to_string(r.pp) + ", cp " + std::to_string(r.cp) +
                     ", ep " + std::to_string(r.ep));
    if (r.framework != "transformers")
        w.refuse("training.framework", "torchrun's flags here are HF Trainer's: the framework must be transformers",
                 r.framework);
    if (hf_optim(r.optimizer).empty())
        w.refuse("training.optimizer",
                 "HF Trainer's --optim has no such optimizer; one of adamw, adamw_fused, adamw_8bit, "
                 "paged_adamw_8bit, paged_adamw_32bit, adafactor, sgd, adagrad, rmsprop, lion",
                 r.optimizer);
    if (r.loss == "chunked")
        w.refuse("training.loss", "HF Trainer has no chunked cross-entropy flag (fused: use_liger_kernel)", r.loss);
    if (r.checkpointing == "selective")
        w.refuse("training.activation_checkpointing", "HF Trainer checkpoints whole layers: full or none",
                 r.checkpointing);
    if (r.engine == "fsdp" && r.offload_optimizer != r.offload_param)
        w.refuse("engine.offload_optimizer",
                 "FSDP's offload moves weights, gradients and the optimizer step together: offload_optimizer and "
                 "offload_param must be the same",
                 r.offload_optimizer);
    if (r.method == "frozen")
        w.refuse("training.method", "a Trainer script's flags train full, LoRA or QLoRA (TRL's use_peft)", r.method);
    if (r.dtype != "fp32" && r.precision != "pure" && r.precision != "amp_fp32_weights" &&
        !(r.engine == "deepspeed" && r.precision == "mixed_master_fp32"))
        w.refuse("training.precision",
                 "HF Trainer holds the weights in their loaded dtype (pure, --torch_dtype) or in fp32 with autocast "
                 "(amp_fp32_weights); DeepSpeed keeps its fp32 master copy (mixed_master_fp32)",
                 r.precision);
}

void finish_write(Writer& wr, ojson& doc) {
    const Run& r = wr.r;
    Written& w = wr.w;
    ojson launcher = ojson::object(), script = ojson::object();
    bool past_script = false;
    for (auto it = doc.begin(); it != doc.end(); ++it) {
        if (it.key() == "@script") past_script = true;
        (past_script ? script : launcher)[it.key()] = it.value();
    }
    w.file_name = "train.sh";
    std::string text = command_text({"torchrun"}, launcher);
    text.pop_back();
    std::string rest = command_text({}, script);
    w.text = text + " \\\n  " + rest;
    w.notes.push_back(
        "--max_length, --use_peft, --lora_*, --load_in_4bit and --torch_dtype are the flags of TRL's `trl sft` "
        "(SFTConfig, ModelConfig); a script of your own must read them, or set the same in code");
    if (r.engine == "deepspeed")
        w.notes.push_back("ds_config.json: gpumem export deepspeed with the same options writes it");
    if (launch_nodes(r, wr.per_node) > 1)
        w.notes.push_back("MASTER_HOST: the first node's address; run the same line on every node");
}

void finish_read(Reader& r) {
    json& s = r.out().scenario;
    s["mode"] = "training";
    if (!r.has("training.framework")) r.set("training.framework", "transformers");
    // HF TrainingArguments.gradient_checkpointing defaults to False, whatever gpumem assumes for adapters.
    if (!r.has("training.activation_checkpointing")) r.set("training.activation_checkpointing", "none");
    std::uint64_t nodes = 1;
    if (s.contains("_nodes")) {
        nodes = s["_nodes"];
        s.erase("_nodes");
    }
    if (s.contains("_nproc_auto")) s.erase("_nproc_auto");
    if (r.has("hardware.gpus_per_node"))
        r.set("hardware.num_gpus", r.get("hardware.gpus_per_node").get<std::uint64_t>() * nodes);
    if (r.doc().contains("_program") && r.doc()["_program"] == "script" && !r.has("training.dtype") &&
        r.doc().size() > 2)
        r.assume("no --bf16/--fp16: HF Trainer computes in fp32");
}

}  // namespace

extern const Tool kTorchrunTool = {ConfigFormat::Torchrun, "command",  "train.sh",          kKeys,
                                   std::size(kKeys),       kIgnored,   std::size(kIgnored), refuse,
                                   finish_write,           finish_read};

}  // namespace gpumem::detail
