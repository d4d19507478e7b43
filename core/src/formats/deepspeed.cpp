// DeepSpeed's ds_config.json, read and written through one table (format.h). Keys and their
// meaning follow deepspeedai/DeepSpeed v0.19.5 (deepspeed/runtime/config.py, zero/config.py,
// zero/offload_config.py, tensor_parallel/config.py); tests/data/formats/deepspeed.json lists them.
#include <string>

#include "formats/format.h"

namespace gpumem::detail {

namespace {

void read_micro(Reader& r) {
    if (r.is_auto("the HF Trainer fills it from --per_device_train_batch_size; gpumem's default is used")) return;
    if (auto v = r.uint(1, 1 << 20)) r.set("training.batch_size", *v);
}
std::optional<ojson> write_micro(Writer& w) { return w.r.batch; }

void read_accumulation(Reader& r) {
    if (r.is_auto("the HF Trainer fills it from --gradient_accumulation_steps; gpumem's default is used")) return;
    if (auto v = r.uint(1, 1 << 20)) r.set("training.gradient_accumulation_steps", *v);
}
std::optional<ojson> write_accumulation(Writer& w) { return w.r.accumulation; }

// train_batch_size = micro-batch x accumulation x data-parallel ranks (DeepSpeed's batch assertion,
// runtime/config.py _batch_assertion, with the data-parallel world = world / model-parallel size).
// Kept until the end of the reading, where the data-parallel size is derived from it.
void read_global(Reader& r) {
    if (r.is_auto("the HF Trainer fills it in; the data-parallel size comes from the launch")) return;
    if (auto v = r.uint(1, 1ULL << 40)) r.out().scenario["_global_batch"] = *v;
}
std::optional<ojson> write_global(Writer& w) { return w.r.batch * w.r.accumulation * w.r.dp; }

void read_half(Reader& r, const char* dtype) {
    if (r.value().is_string() && r.value().get<std::string>() == "auto") {
        r.assume(r.key() + " is \"auto\": read as on (the HF Trainer turns it on with --" + dtype + ")");
        r.set("training.dtype", dtype);
        return;
    }
    if (auto on = r.boolean()) {
        if (*on) {
            if (r.get("training.dtype") == json(std::string(dtype) == "bf16" ? "fp16" : "bf16"))
                r.issue("bf16 and fp16 are both enabled; DeepSpeed takes one");
            r.set("training.dtype", dtype);
        }
    }
}
void read_bf16(Reader& r) { read_half(r, "bf16"); }
void read_fp16(Reader& r) { read_half(r, "fp16"); }
std::optional<ojson> write_bf16(Writer& w) { return w.r.dtype == "bf16" ? std::optional<ojson>(true) : std::nullopt; }
std::optional<ojson> write_fp16(Writer& w) { return w.r.dtype == "fp16" ? std::optional<ojson>(true) : std::nullopt; }

void read_stage(Reader& r) {
    if (auto v = r.uint(0, 3)) r.set("engine.zero_stage", *v);
}
std::optional<ojson> write_stage(Writer& w) { return w.r.zero_stage; }

void read_offload(Reader& r, const char* field) {
    if (auto v = r.string()) {
        if (auto o = parse_setting<Offload>(*v)) r.set(field, name(*o));
        else r.issue(allowed_text<Offload>());
    }
}
void read_offload_optimizer(Reader& r) { read_offload(r, "engine.offload_optimizer"); }
void read_offload_param(Reader& r) { read_offload(r, "engine.offload_param"); }
std::optional<ojson> write_offload_optimizer(Writer& w) {
    return w.r.offload_optimizer == "none" ? std::nullopt : std::optional<ojson>(w.r.offload_optimizer);
}
std::optional<ojson> write_offload_param(Writer& w) {
    return w.r.offload_param == "none" ? std::nullopt : std::optional<ojson>(w.r.offload_param);
}
// pin_memory and nvme_path: written with an offload; they do not change GPU memory.
void read_no_field(Reader&) {}
std::optional<ojson> write_pin_optimizer(Writer& w) {
    return w.r.offload_optimizer == "none" ? std::nullopt : std::optional<ojson>(true);
}
std::optional<ojson> write_pin_param(Writer& w) {
    return w.r.offload_param == "none" ? std::nullopt : std::optional<ojson>(true);
}
std::optional<ojson> write_nvme_optimizer(Writer& w) {
    return w.r.offload_optimizer == "nvme" ? std::optional<ojson>("/local_nvme") : std::nullopt;
}
std::optional<ojson> write_nvme_param(Writer& w) {
    return w.r.offload_param == "nvme" ? std::optional<ojson>("/local_nvme") : std::nullopt;
}

void read_reduce_bucket(Reader& r) {
    if (r.is_auto("the HF Trainer sets hidden_size^2; gpumem's default is used")) return;
    if (auto v = r.number(1, 1e13)) r.set("overheads.zero_reduce_bucket_elements", *v);
}
std::optional<ojson> write_reduce_bucket(Writer& w) {
    return static_cast<std::uint64_t>(w.r.s["overheads"]["zero_reduce_bucket_elements"].get<double>());
}
void read_prefetch_bucket(Reader& r) {
    if (r.is_auto("the HF Trainer sets 0.9 x hidden_size^2; gpumem's default is used")) return;
    if (auto v = r.number(0, 1e13)) r.set("overheads.zero3_prefetch_elements", *v);
}
std::optional<ojson> write_prefetch_bucket(Writer& w) {
    if (w.r.zero_stage != 3) return std::nullopt;
    return static_cast<std::uint64_t>(w.r.s["overheads"]["zero3_prefetch_elements"].get<double>());
}
void read_contiguous(Reader& r) {
    if (auto v = r.boolean(); v && !*v)
        r.warn("false: gradients stay where the backward puts them; gpumem assumes one contiguous buffer");
}
std::optional<ojson> write_contiguous(Writer&) { return true; }

// AutoTP training (DeepSpeed >= 0.16.4, runtime/tensor_parallel/config.py): the tensor-parallel
// size inside ds_config; the batch assertion then counts data-parallel ranks only.
void read_autotp(Reader& r) {
    if (auto v = r.uint(1, 1 << 16)) r.set("parallelism.tensor_parallel_size", *v);
}
std::optional<ojson> write_autotp(Writer& w) { return w.r.tp > 1 ? std::optional<ojson>(w.r.tp) : std::nullopt; }

// DeepSpeed's own optimizer: "AdamW"/"Adam" build FusedAdam (ops/adam/fused_adam.py), one kernel
// with no step temporaries, i.e. adamw_fused; DeepSpeedCPUAdam when the optimizer is offloaded.
void read_optimizer(Reader& r) {
    auto v = r.string();
    if (!v) return;
    std::string t = *v;
    for (char& c : t) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    static const char* const kMap[][2] = {{"adam", "adamw_fused"},   {"adamw", "adamw_fused"}, {"lamb", "lamb"},
                                          {"onebitadam", "adam"},    {"zerooneadam", "adam"},  {"onebitlamb", "lamb"},
                                          {"adagrad", "adagrad"},    {"lion", "lion"},         {"sgd", "sgd"},
                                          {"muadamw", "adamw_fused"}};
    for (const auto& row : kMap)
        if (t == row[0]) {
            r.set("training.optimizer", row[1]);
            return;
        }
    r.warn("optimizer " + *v + " is not one gpumem knows in DeepSpeed; the scenario's optimizer is used");
}
std::optional<ojson> write_optimizer(Writer& w) {
    if (w.r.optimizer == "adamw_fused") return std::optional<ojson>("AdamW");
    if (w.r.optimizer == "lamb") return std::optional<ojson>("Lamb");
    if (w.r.optimizer == "lion") return std::optional<ojson>("Lion");
    return std::nullopt;  // the script's own optimizer
}

const Key kKeys[] = {
    {"train_micro_batch_size_per_gpu", "training.batch_size", read_micro, write_micro},
    {"gradient_accumulation_steps", "training.gradient_accumulation_steps", read_accumulation, write_accumulation},
    {"train_batch_size", "parallelism.data_parallel_size", read_global, write_global},
    {"bf16.enabled", "training.dtype", read_bf16, write_bf16, "bfloat16.enabled"},
    {"fp16.enabled", "training.dtype", read_fp16, write_fp16},
    // DeepSpeed >= 0.18 (runtime/bf16_optimizer.py): bf16 master weights and gradients (no fp32 copy),
    // and bf16 optimizer states.
    {"bf16.bf16_master_weights_and_grads", "training.precision",
     [](Reader& r) {
         if (auto v = r.boolean(); v && *v) r.out().scenario["_bf16_master"] = true;
     },
     [](Writer& w) -> std::optional<ojson> {
         if (w.r.dtype != "bf16" || w.r.precision != "pure") return std::nullopt;
         return true;
     }},
    {"bf16.bf16_optimizer_states", "training.optimizer_state_dtype",
     [](Reader& r) {
         if (auto v = r.boolean(); v && *v) r.set("training.optimizer_state_dtype", "bf16");
     },
     [](Writer& w) -> std::optional<ojson> {
         if (w.r.dtype != "bf16" || w.r.s["training"].value("optimizer_state_dtype", std::string()) != "bf16")
             return std::nullopt;
         return true;
     }},
    {"optimizer.type", "training.optimizer", read_optimizer, write_optimizer},
    {"zero_optimization.stage", "engine.zero_stage", read_stage, write_stage},
    {"zero_optimization.reduce_bucket_size", "overheads.zero_reduce_bucket_elements", read_reduce_bucket,
     write_reduce_bucket},
    {"zero_optimization.contiguous_gradients", "", read_contiguous, write_contiguous},
    {"zero_optimization.stage3_prefetch_bucket_size", "overheads.zero3_prefetch_elements", read_prefetch_bucket,
     write_prefetch_bucket, "zero_optimization.prefetch_bucket_size"},
    {"zero_optimization.offload_optimizer.device", "engine.offload_optimizer", read_offload_optimizer,
     write_offload_optimizer},
    {"zero_optimization.offload_optimizer.pin_memory", "", read_no_field, write_pin_optimizer},
    {"zero_optimization.offload_optimizer.nvme_path", "", read_no_field, write_nvme_optimizer},
    {"zero_optimization.offload_param.device", "engine.offload_param", read_offload_param, write_offload_param},
    {"zero_optimization.offload_param.pin_memory", "", read_no_field, write_pin_param},
    {"zero_optimization.offload_param.nvme_path", "", read_no_field, write_nvme_param},
    {"tensor_parallel.autotp_size", "parallelism.tensor_parallel_size", read_autotp, write_autotp},
};

// Keys that do not change GPU memory.
const char* const kIgnored[] = {"optimizer.params.",
                                "scheduler.",
                                "gradient_clipping",
                                "steps_per_print",
                                "wall_clock_breakdown",
                                "memory_breakdown",
                                "zero_allow_untested_optimizer",
                                "zero_force_ds_cpu_optimizer",
                                "prescale_gradients",
                                "gradient_predivide_factor",
                                "fp16.loss_scale",
                                "fp16.loss_scale_window",
                                "fp16.initial_scale_power",
                                "fp16.hysteresis",
                                "fp16.min_loss_scale",
                                "fp16.auto_cast",
                                "fp16.consecutive_hysteresis",
                                "bf16.immediate_grad_update",
                                "tensorboard.",
                                "wandb.",
                                "csv_monitor.",
                                "comet.",
                                "comms_logger.",
                                "flops_profiler.",
                                "timers.",
                                "dump_state",
                                "log_level",
                                "zero_optimization.round_robin_gradients",
                                "zero_optimization.stage3_gather_16bit_weights_on_model_save",
                                "zero_optimization.gather_16bit_weights_on_model_save",
                                "zero_optimization.load_from_fp32_weights",
                                "zero_optimization.ignore_unused_parameters",
                                "zero_optimization.offload_optimizer.buffer_count",
                                "zero_optimization.offload_optimizer.fast_init",
                                "zero_optimization.offload_optimizer.ratio",
                                "zero_optimization.offload_optimizer.pipeline_read",
                                "zero_optimization.offload_optimizer.pipeline_write",
                                "zero_optimization.offload_param.buffer_count",
                                "zero_optimization.offload_param.buffer_size",
                                "zero_optimization.offload_param.max_in_cpu",
                                "aio.",
                                "checkpoint.",
                                "dataloader_drop_last",
                                "elasticity."};

void refuse(Writer& wr) {
    const Run& r = wr.r;
    Written& w = wr.w;
    if (r.engine != "deepspeed" && r.engine != "megatron_deepspeed")
        w.refuse("engine.type", "must be deepspeed (or megatron_deepspeed) to write a DeepSpeed config", r.engine);
    if (r.dtype == "fp8")
        w.refuse("training.dtype", "DeepSpeed's JSON has no fp8 switch (fp8 training runs through Transformer Engine)",
                 r.dtype);
    const bool half = r.dtype == "bf16" || r.dtype == "fp16";
    if (half && r.precision != "mixed_master_fp32" && !(r.dtype == "bf16" && r.precision == "pure"))
        w.refuse("training.precision",
                 "DeepSpeed's bf16 and fp16 keep half-precision weights and an fp32 master copy (mixed_master_fp32, "
                 "the default under deepspeed); bf16 without the copy is pure (bf16_master_weights_and_grads, "
                 "DeepSpeed 0.18 or later)",
                 r.precision);
    const std::string states = r.s["training"].value("optimizer_state_dtype", std::string("auto"));
    if (states == "bf16" && r.dtype != "bf16")
        w.refuse("training.optimizer_state_dtype", "DeepSpeed keeps optimizer states in bf16 only under bf16", states);
    if (r.engine == "deepspeed") {
        if (r.pp > 1)
            w.refuse("parallelism.pipeline_parallel_size",
                     "DeepSpeed's pipeline runs a PipelineModule built in code, not from ds_config; export "
                     "megatron_deepspeed's launch instead",
                     std::to_string(r.pp));
        if (r.cp > 1)
            w.refuse("parallelism.context_parallel_size",
                     "DeepSpeed's Ulysses sequence parallelism is set up by the training script (its mpu or "
                     "HF's parallelism_config), not by a ds_config key",
                     std::to_string(r.cp));
        if (r.ep > 1)
            w.refuse("parallelism.expert_parallel_size",
                     "DeepSpeed-MoE's expert-parallel size is an argument of deepspeed.moe.layer.MoE in the model "
                     "code (ep_size), not a ds_config key",
                     std::to_string(r.ep));
        if (r.tp > 1 && r.zero_stage > 2)
            w.refuse("engine.zero_stage",
                     "DeepSpeed's AutoTP training combines with ZeRO stages 0-2 (runtime/engine.py refuses stage 3)",
                     std::to_string(r.zero_stage));
    }
}

void finish_write(Writer& wr, ojson& doc) {
    const Run& r = wr.r;
    Written& w = wr.w;
    w.text = nest(doc).dump(2) + "\n";
    if (r.offload_optimizer == "nvme" || r.offload_param == "nvme")
        w.notes.push_back("nvme_path: set it to a local NVMe mount");
    if (r.engine == "megatron_deepspeed")
        w.notes.push_back("Megatron-DeepSpeed: pass --tensor-model-parallel-size " + std::to_string(r.tp) +
                          " --pipeline-model-parallel-size " + std::to_string(r.pp) + " to its pretrain script");
    if (r.checkpointing == "full")
        w.notes.push_back(
            "activation checkpointing (full): enable it in the training script (HF Trainer: --gradient_checkpointing "
            "True)");
    if (!doc.contains("optimizer.type"))
        w.notes.push_back("the optimizer (" + r.optimizer +
                          ") comes from the training script; DeepSpeed's own (an \"optimizer\" section) would be "
                          "FusedAdam (adamw_fused)");
    if (r.tp > 1 && r.engine == "deepspeed")
        w.notes.push_back("tensor_parallel.autotp_size needs DeepSpeed 0.16.4 or later (AutoTP training)");
}

void finish_read(Reader& r) {
    json& s = r.out().scenario;
    s["mode"] = "training";
    if (!r.has("engine.type")) r.set("engine.type", "deepspeed");
    if (!r.has("training.dtype")) r.set("training.dtype", "fp32");
    // bf16/fp16: half weights and gradients, and DeepSpeed's fp32 master copy of what trains
    // (runtime/bf16_optimizer.py, fp16/fused_optimizer.py).
    if (s.contains("_bf16_master")) {
        s.erase("_bf16_master");
        r.set("training.precision", "pure");  // bf16 master weights: no fp32 copy
    } else if (r.get("training.dtype") != json("fp32")) {
        r.set("training.precision", "mixed_master_fp32");
    }
    if (s.contains("_global_batch")) {
        const std::uint64_t global = s["_global_batch"];
        s.erase("_global_batch");
        const json micro = r.get("training.batch_size"), accumulation = r.get("training.gradient_accumulation_steps");
        if (micro.is_number() && accumulation.is_number()) {
            const std::uint64_t per_rank = micro.get<std::uint64_t>() * accumulation.get<std::uint64_t>();
            if (global % per_rank != 0)
                r.out().issues.push_back({"train_batch_size",
                                          "must be train_micro_batch_size_per_gpu x gradient_accumulation_steps x the "
                                          "data-parallel GPUs",
                                          std::to_string(global)});
            else r.set("parallelism.data_parallel_size", global / per_rank);
        } else if (micro.is_number()) {
            r.assume(
                "gradient_accumulation_steps not given: DeepSpeed derives it from train_batch_size / (micro x "
                "GPUs)");
        }
    }
}

}  // namespace

extern const Tool kDeepspeedTool = {
    ConfigFormat::Deepspeed, "json", "ds_config.json", kKeys,      std::size(kKeys), kIgnored,
    std::size(kIgnored),     refuse, finish_write,     finish_read};

}  // namespace gpumem::detail
