// axolotl's YAML config, read and written through one table (format.h). Keys follow
// axolotl-ai-cloud/axolotl v0.18.0 (src/axolotl/utils/schemas: AxolotlInputConfig and its bases;
// loaders/adapter.py for lora/qlora; tests/data/formats/axolotl.json lists them). A `deepspeed:`
// file is read as DeepSpeed's, under this one.
#include <algorithm>
#include <string>

#include "formats/format.h"

namespace gpumem::detail {

namespace {

void read_nothing(Reader&) {}

std::string quantization(const Run& r) { return r.s["training"].value("quantization", std::string("nf4")); }

// axolotl's 8-bit base is `adapter: lora` + `load_in_8bit` (it refuses qlora with 8 bits); gpumem
// calls any LoRA over a quantized base qlora.
bool eight_bit(const Run& r) { return r.method == "qlora" && quantization(r) == "int8"; }

void set_targets(Reader& r, const std::vector<std::string>& targets) { r.set("training.lora.target_modules", targets); }

// axolotl's attention switches: attn_implementation, or the older booleans it maps to it.
void read_attention(Reader& r, const char* implementation) {
    if (auto v = r.boolean(); v && *v) {
        if (auto a = parse_setting<Attention>(implementation)) r.set("training.attention", name(*a));
        else r.warn(std::string(implementation) + " attention is not one gpumem models (eager, sdpa, flash)");
    }
}

const Key kKeys[] = {
    {"base_model", "model", [](Reader& r) { r.out().model = r.string().value_or(""); },
     [](Writer& w) -> std::optional<ojson> { return w.r.model; }},
    {"adapter", "training.method",
     [](Reader& r) {
         auto v = r.string();
         if (!v) return;
         if (*v == "lora") {
             if (r.get("training.method") != json("qlora")) r.set("training.method", "lora");
         } else if (*v == "qlora") {
             r.set("training.method", "qlora");
             if (!r.has("training.quantization")) r.set("training.quantization", "nf4");
         } else {
             r.issue("gpumem reads lora and qlora adapters");
         }
     },
     [](Writer& w) -> std::optional<ojson> {
         if (!w.r.adapters()) return std::nullopt;
         return eight_bit(w.r) ? "lora" : w.r.method;
     }},
    {"load_in_4bit", "training.quantization",
     [](Reader& r) {
         if (auto v = r.boolean(); v && *v) {
             r.set("training.method", "qlora");
             // axolotl's BitsAndBytesConfig: bnb_4bit_quant_type nf4 unless bnb_config_kwargs says otherwise.
             if (!r.has("training.quantization")) r.set("training.quantization", "nf4");
         }
     },
     [](Writer& w) -> std::optional<ojson> {
         if (w.r.method != "qlora" || eight_bit(w.r)) return std::nullopt;
         return true;
     }},
    {"load_in_8bit", "training.quantization",
     [](Reader& r) {
         if (auto v = r.boolean(); v && *v) {
             r.set("training.method", "qlora");
             r.set("training.quantization", "int8");
         }
     },
     [](Writer& w) -> std::optional<ojson> { return eight_bit(w.r) ? std::optional<ojson>(true) : std::nullopt; }},
    {"bnb_config_kwargs.bnb_4bit_quant_type", "training.quantization",
     [](Reader& r) {
         auto v = r.string();
         if (v && (*v == "nf4" || *v == "fp4")) r.set("training.quantization", *v);
         else if (v) r.issue("must be nf4 or fp4");
     },
     [](Writer& w) -> std::optional<ojson> {
         if (w.r.method != "qlora" || quantization(w.r) != "fp4") return std::nullopt;
         return "fp4";
     }},
    {"bnb_config_kwargs.bnb_4bit_use_double_quant", "training.double_quant",
     [](Reader& r) {
         if (auto v = r.boolean()) r.set("training.double_quant", *v);
     },
     [](Writer& w) -> std::optional<ojson> {
         if (w.r.method != "qlora" || eight_bit(w.r)) return std::nullopt;
         return w.r.double_quant;
     }},
    {"lora_r", "training.lora.rank", read_lora_rank, write_lora_rank},
    {"lora_alpha", "training.lora.alpha", read_lora_alpha, write_lora_alpha},
    {"lora_dropout", "training.lora.dropout", read_lora_dropout, write_lora_dropout},
    {"lora_target_linear", "training.lora.target_modules",
     [](Reader& r) {
         if (auto v = r.boolean(); v && *v) set_targets(r, {"all_linear"});
     },
     [](Writer& w) -> std::optional<ojson> {
         if (!w.r.adapters() || !w.r.targets("all_linear")) return std::nullopt;
         return true;
     }},
    {"lora_target_modules", "training.lora.target_modules",
     [](Reader& r) {
         if (r.get("training.lora.target_modules") == json::array({"all_linear"})) return;  // lora_target_linear
         std::vector<std::string> targets;
         if (r.value().is_array()) {
             for (const ojson& x : r.value())
                 if (x.is_string()) targets.push_back(x.get<std::string>());
         } else if (auto v = r.string()) {
             targets.push_back(*v);
         }
         set_targets(r, targets);
     },
     [](Writer& w) -> std::optional<ojson> {
         if (!w.r.adapters() || w.r.targets("all_linear")) return std::nullopt;
         return w.r.lora_targets();
     }},
    {"sequence_len", "training.seq_len",
     [](Reader& r) {
         if (auto v = r.uint(1, 1 << 24)) r.set("training.seq_len", *v);
     },
     [](Writer& w) -> std::optional<ojson> { return w.r.seq_len; }},
    {"micro_batch_size", "training.batch_size", read_micro_batch, write_micro_batch},
    {"gradient_accumulation_steps", "training.gradient_accumulation_steps", read_accumulation, write_accumulation},
    {"bf16", "training.dtype",
     [](Reader& r) {
         if (r.is_auto("bf16 where the GPU supports it (Ampere or newer): read as bf16")) {
             r.set("training.dtype", "bf16");
             return;
         }
         if (auto v = r.boolean(); v && *v) r.set("training.dtype", "bf16");
     },
     [](Writer& w) -> std::optional<ojson> { return w.r.dtype == "bf16"; }, "bfloat16"},
    {"fp16", "training.dtype",
     [](Reader& r) {
         if (auto v = r.boolean(); v && *v) r.set("training.dtype", "fp16");
     },
     [](Writer& w) -> std::optional<ojson> { return w.r.dtype == "fp16"; }, "float16"},
    {"gradient_checkpointing", "training.activation_checkpointing",
     [](Reader& r) {
         if (r.value().is_string()) {
             const std::string v = r.value();
             if (v == "offload" || v == "offload_disk" || v == "unsloth") {
                 r.set("training.activation_checkpointing", "full");
                 r.set("training.activation_offloading", true);
                 return;
             }
         }
         if (auto v = r.boolean()) r.set("training.activation_checkpointing", *v ? "full" : "none");
     },
     [](Writer& w) -> std::optional<ojson> {
         if (w.r.checkpointing == "full" && w.r.activation_offloading) return "offload";
         return w.r.checkpointing == "full";
     }},
    {"optimizer", "training.optimizer", read_hf_optimizer, write_hf_optimizer},
    {"attn_implementation", "training.attention",
     [](Reader& r) {
         auto v = r.string();
         if (!v) return;
         if (auto a = parse_setting<Attention>(*v)) r.set("training.attention", name(*a));
         else r.warn("attention " + *v + " is not one gpumem models (eager, sdpa, flash_attention_2)");
     },
     [](Writer& w) -> std::optional<ojson> {
         return w.r.attention == "flash" ? "flash_attention_2" : w.r.attention == "sdpa" ? "sdpa" : "eager";
     }},
    {"flash_attention", "training.attention", [](Reader& r) { read_attention(r, "flash"); },
     [](Writer&) -> std::optional<ojson> { return std::nullopt; }},
    {"sdp_attention", "training.attention", [](Reader& r) { read_attention(r, "sdpa"); },
     [](Writer&) -> std::optional<ojson> { return std::nullopt; }},
    {"eager_attention", "training.attention", [](Reader& r) { read_attention(r, "eager"); },
     [](Writer&) -> std::optional<ojson> { return std::nullopt; }},
    {"liger_fused_linear_cross_entropy", "training.loss",
     [](Reader& r) {
         if (auto v = r.boolean(); v && *v) r.set("training.loss", "fused");
     },
     [](Writer& w) -> std::optional<ojson> { return w.r.loss == "fused" ? std::optional<ojson>(true) : std::nullopt; }},
    {"plugins", "training.loss", read_nothing,
     [](Writer& w) -> std::optional<ojson> {
         if (w.r.loss != "fused") return std::nullopt;
         return ojson::array({"axolotl.integrations.liger.LigerPlugin"});
     }},
    {"cut_cross_entropy", "training.loss",
     [](Reader& r) {
         if (auto v = r.boolean(); v && *v) r.set("training.loss", "fused");
     },
     [](Writer&) -> std::optional<ojson> { return std::nullopt; }},
    {"chunked_cross_entropy", "training.loss",
     [](Reader& r) {
         if (auto v = r.boolean(); v && *v) r.set("training.loss", "chunked");
     },
     [](Writer& w) -> std::optional<ojson> {
         return w.r.loss == "chunked" ? std::optional<ojson>(true) : std::nullopt;
     }},
    {"deepspeed", "engine.type", read_deepspeed_file, write_deepspeed_file},
    // FSDP, older spelling: fsdp: [full_shard, auto_wrap, offload].
    {"fsdp", "engine.type",
     [](Reader& r) {
         if (!r.value().is_array()) {
             r.issue("must be a list such as [full_shard, auto_wrap]");
             return;
         }
         r.set("engine.type", "fsdp");
         for (const ojson& x : r.value()) {
             if (!x.is_string()) continue;
             const std::string w = x;
             if (w == "offload") {
                 r.set("engine.offload_param", "cpu");
                 r.set("engine.offload_optimizer", "cpu");
             } else if (w != "auto_wrap") {
                 if (auto s = parse_setting<FsdpSharding>(w)) r.set("engine.fsdp_sharding", name(*s));
             }
         }
     },
     [](Writer& w) -> std::optional<ojson> {
         if (w.r.engine != "fsdp") return std::nullopt;
         ojson a = ojson::array({w.r.fsdp_sharding, "auto_wrap"});
         if (w.r.offload_param == "cpu") a.push_back("offload");
         return a;
     }},
    {"fsdp_version", "engine.type",
     [](Reader& r) {
         if (auto v = r.uint(1, 2)) r.set("engine.type", "fsdp");
     },
     [](Writer&) -> std::optional<ojson> { return std::nullopt; }},
    {"fsdp_config.offload_params", "engine.offload_param",
     [](Reader& r) {
         if (auto v = r.boolean()) {
             r.set("engine.offload_param", *v ? "cpu" : "none");
             r.set("engine.offload_optimizer", *v ? "cpu" : "none");
         }
     },
     [](Writer& w) -> std::optional<ojson> {
         return w.r.engine == "fsdp" ? std::optional<ojson>(w.r.offload_param == "cpu") : std::nullopt;
     },
     "fsdp_config.fsdp_offload_params"},
    {"fsdp_config.reshard_after_forward", "engine.fsdp_sharding",
     [](Reader& r) {
         if (auto v = r.boolean()) r.set("engine.fsdp_sharding", *v ? "full_shard" : "shard_grad_op");
     },
     [](Writer&) -> std::optional<ojson> { return std::nullopt; }, "fsdp_config.fsdp_reshard_after_forward"},
    {"fsdp_config.sharding_strategy", "engine.fsdp_sharding",
     [](Reader& r) {
         auto v = r.string();
         if (!v) return;
         std::string s = *v;
         std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
         if (auto x = parse_setting<FsdpSharding>(s)) r.set("engine.fsdp_sharding", name(*x));
         else r.issue(allowed_text<FsdpSharding>());
     },
     [](Writer&) -> std::optional<ojson> { return std::nullopt; }, "fsdp_config.fsdp_sharding_strategy"},
    {"fsdp_config.auto_wrap_policy", "", read_nothing,
     [](Writer& w) -> std::optional<ojson> {
         return w.r.engine == "fsdp" ? std::optional<ojson>("TRANSFORMER_BASED_WRAP") : std::nullopt;
     },
     "fsdp_config.fsdp_auto_wrap_policy"},
    {"fsdp_config.state_dict_type", "", read_nothing,
     [](Writer& w) -> std::optional<ojson> {
         return w.r.engine == "fsdp" ? std::optional<ojson>("SHARDED_STATE_DICT") : std::nullopt;
     },
     "fsdp_config.fsdp_state_dict_type"},
    {"fsdp_config.activation_checkpointing", "training.activation_checkpointing",
     [](Reader& r) {
         if (auto v = r.boolean(); v && *v) r.set("training.activation_checkpointing", "full");
     },
     [](Writer& w) -> std::optional<ojson> {
         return w.r.engine == "fsdp" ? std::optional<ojson>(w.r.checkpointing == "full") : std::nullopt;
     },
     "fsdp_config.fsdp_activation_checkpointing"},
    {"tensor_parallel_size", "parallelism.tensor_parallel_size",
     [](Reader& r) {
         if (auto v = r.uint(1, 1 << 16)) r.set("parallelism.tensor_parallel_size", *v);
     },
     [](Writer& w) -> std::optional<ojson> { return w.r.tp > 1 ? std::optional<ojson>(w.r.tp) : std::nullopt; }},
    {"context_parallel_size", "parallelism.context_parallel_size",
     [](Reader& r) {
         if (auto v = r.uint(1, 1 << 16)) r.set("parallelism.context_parallel_size", *v);
     },
     [](Writer& w) -> std::optional<ojson> { return w.r.cp > 1 ? std::optional<ojson>(w.r.cp) : std::nullopt; },
     "sequence_parallel_degree"},
    // Sample packing fills every row to sequence_len; without it rows are padded to the batch's longest.
    {"sample_packing", "", read_nothing, [](Writer&) -> std::optional<ojson> { return std::nullopt; }},
    // true, or "legacy" / "disk": the checkpointed activations leave the GPU either way.
    {"activation_offloading", "training.activation_offloading",
     [](Reader& r) {
         if (r.value().is_string() && r.value() != "true" && r.value() != "false") {
             r.set("training.activation_offloading", true);
             return;
         }
         if (auto v = r.boolean()) r.set("training.activation_offloading", *v);
     },
     [](Writer&) -> std::optional<ojson> { return std::nullopt; }},
};

const char* const kIgnored[] = {"base_model_config",
                                "model_type",
                                "tokenizer_type",
                                "tokenizer_config",
                                "trust_remote_code",
                                "is_llama_derived_model",
                                "is_mistral_derived_model",
                                "is_qwen_derived_model",
                                "strict",
                                "datasets",
                                "test_datasets",
                                "dataset_prepared_path",
                                "dataset_processes",
                                "val_set_size",
                                "output_dir",
                                "hub_model_id",
                                "push_dataset_to_hub",
                                "wandb_*",
                                "mlflow_*",
                                "comet_*",
                                "num_epochs",
                                "max_steps",
                                "learning_rate",
                                "lr_scheduler",
                                "lr_scheduler_kwargs",
                                "cosine_min_lr_ratio",
                                "warmup_steps",
                                "warmup_ratio",
                                "weight_decay",
                                "max_grad_norm",
                                "adam_beta1",
                                "adam_beta2",
                                "adam_epsilon",
                                "logging_steps",
                                "evals_per_epoch",
                                "eval_steps",
                                "saves_per_epoch",
                                "save_steps",
                                "save_strategy",
                                "save_total_limit",
                                "save_safetensors",
                                "save_first_step",
                                "eval_sample_packing",
                                "eval_table_size",
                                "eval_max_new_tokens",
                                "eval_batch_size",
                                "special_tokens",
                                "tokens",
                                "chat_template",
                                "chat_template_jinja",
                                "default_system_message",
                                "train_on_inputs",
                                "group_by_length",
                                "early_stopping_patience",
                                "resume_from_checkpoint",
                                "auto_resume_from_checkpoints",
                                "local_rank",
                                "seed",
                                "tf32",
                                "xformers_attention",
                                "debug",
                                "pad_to_sequence_len",
                                "lora_model_dir",
                                "lora_fan_in_fan_out",
                                "lora_modules_to_save",
                                "peft_use_dora",
                                "peft_use_rslora",
                                "gradient_checkpointing_kwargs",
                                "fsdp_config.transformer_layer_cls_to_wrap",
                                "fsdp_config.fsdp_transformer_layer_cls_to_wrap",
                                "fsdp_config.sync_module_states",
                                "fsdp_config.use_orig_params",
                                "fsdp_config.cpu_ram_efficient_loading",
                                "fsdp_config.fsdp_cpu_ram_efficient_loading",
                                "fsdp_config.fsdp_sync_module_states",
                                "fsdp_config.fsdp_use_orig_params",
                                "fsdp_config.final_state_dict_type",
                                "fsdp_config.fsdp_version",
                                "fsdp_final_state_dict_type",
                                "shuffle_merged_datasets",
                                "remove_unused_columns",
                                "dataloader_num_workers",
                                "dataloader_pin_memory",
                                "dataloader_prefetch_factor",
                                "torch_compile_backend",
                                "rl",
                                "dpo_*",
                                "orpo_*",
                                "kto_*",
                                "liger_rope",
                                "liger_rms_norm",
                                "liger_glu_activation",
                                "liger_layer_norm",
                                "unfrozen_parameters",
                                "embeddings_skip_upcast",
                                "ddp_timeout",
                                "ddp_bucket_cap_mb",
                                "ddp_broadcast_buffers",
                                "gptq",
                                "loss_watchdog_threshold",
                                "loss_watchdog_patience",
                                "profiler_steps",
                                "include_tokens_per_second",
                                "use_tensorboard",
                                "sequence_parallel_degree_kwargs",
                                "heads_k_stride",
                                "ring_attn_func",
                                "dp_shard_size",
                                "sample_packing_eff_est",
                                "total_num_tokens",
                                "multipack_real_batches",
                                "sample_packing_group_size",
                                "sample_packing_bin_size",
                                "flash_attn_cross_entropy",
                                "flash_attn_rms_norm",
                                "flash_attn_fuse_qkv",
                                "flash_attn_fuse_mlp",
                                "torch_compile",
                                "micro_batch_size_eval"};

void refuse(Writer& wr) {
    const Run& r = wr.r;
    Written& w = wr.w;
    refuse_megatron(wr, "axolotl");
    if (r.pp > 1 || r.ep > 1)
        w.refuse("parallelism",
                 "axolotl runs data, tensor and context parallelism (tensor_parallel_size, context_parallel_size); "
                 "pipeline and expert sizes must be 1",
                 "pp " + std::to_string(r.pp) + ", ep " + std::to_string(r.ep));
    if (r.framework != "transformers")
        w.refuse("training.framework", "axolotl trains with HF Trainer: the framework must be transformers",
                 r.framework);
    if (hf_optim(r.optimizer).empty())
        w.refuse("training.optimizer",
                 "axolotl's optimizer is one of HF Trainer's: adamw, adamw_fused, adamw_8bit, paged_adamw_8bit, "
                 "paged_adamw_32bit, adafactor, sgd, adagrad, rmsprop, lion",
                 r.optimizer);
    // axolotl loads the weights in its bf16/fp16 dtype; under DeepSpeed, its bf16/fp16 engine keeps
    // an fp32 master copy of what trains (runtime/bf16_optimizer.py), which the estimate must count.
    const char* want = r.engine == "deepspeed" ? "mixed_master_fp32" : "pure";
    if (r.dtype != "fp32" && r.precision != want)
        w.refuse("training.precision",
                 r.engine == "deepspeed"
                     ? "axolotl under DeepSpeed: half weights and DeepSpeed's fp32 master copy (mixed_master_fp32)"
                     : "axolotl loads the weights in its bf16/fp16 dtype (pure)",
                 r.precision);
    if (r.method == "frozen") w.refuse("training.method", "axolotl trains full, lora or qlora", r.method);
    if (r.checkpointing == "selective")
        w.refuse("training.activation_checkpointing", "axolotl checkpoints whole layers: full or none",
                 r.checkpointing);
    if (r.engine == "fsdp" && r.offload_optimizer != r.offload_param)
        w.refuse("engine.offload_optimizer",
                 "axolotl's FSDP offload_params moves weights, gradients and the optimizer step together",
                 r.offload_optimizer);
    if (r.dtype == "fp8") w.refuse("training.dtype", "gpumem writes axolotl's bf16, fp16 or fp32 runs", r.dtype);
}

void finish_write(Writer& wr, ojson& doc) {
    const Run& r = wr.r;
    Written& w = wr.w;
    w.text = yaml_text(nest(doc));
    if (r.engine == "deepspeed")
        w.notes.push_back("ds_config.json: gpumem export deepspeed with the same options writes it");
    w.notes.push_back(
        "add datasets:, output_dir: and the learning rate; set sample_packing: true to fill every row "
        "to sequence_len (the estimate's length); launch on " +
        std::to_string(r.world()) + " GPU(s) with `axolotl train axolotl.yaml`" +
        (r.world() > 1 ? " (it starts one process per visible GPU)" : ""));
}

void finish_read(Reader& r) {
    json& s = r.out().scenario;
    s["mode"] = "training";
    r.set("training.framework", "transformers");
    // axolotl's own default (its config schema: gradient_checkpointing False), not gpumem's for adapters.
    if (!r.has("training.activation_checkpointing")) r.set("training.activation_checkpointing", "none");
    const Doc& d = r.doc();
    // Weights in the training dtype (pure); DeepSpeed adds its fp32 master copy.
    if (r.get("engine.type") == json("deepspeed")) r.set("training.precision", "mixed_master_fp32");
    else if (r.has("training.dtype") && r.get("training.dtype") != json("fp32")) r.set("training.precision", "pure");
    if (!r.has("training.dtype")) r.assume("no bf16/fp16: axolotl trains in fp32");
    const bool packed = d.contains("sample_packing") && d["sample_packing"] == true;
    if (packed) r.assume("sample_packing: every row is filled to sequence_len");
    else if (r.has("training.seq_len"))
        r.assume(
            "no sample_packing: rows are padded to the batch's longest sample (at most sequence_len); the "
            "estimate is for rows of sequence_len, the peak");
    const bool visible = d.contains("_env") && d["_env"].contains("CUDA_VISIBLE_DEVICES");
    if (!r.has("hardware.num_gpus") && !visible)
        r.assume(
            "axolotl starts one process per visible GPU, which the file does not say: give --num-gpus (1 "
            "unless told)");
    // No adapter: axolotl fine-tunes every weight (lora_* keys then do nothing).
    if (!r.has("training.method")) r.set("training.method", "full");
}

}  // namespace

extern const Tool kAxolotlTool = {ConfigFormat::Axolotl, "yaml", "axolotl.yaml", kKeys,      std::size(kKeys), kIgnored,
                                  std::size(kIgnored),   refuse, finish_write,   finish_read};

}  // namespace gpumem::detail
