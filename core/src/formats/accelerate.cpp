// accelerate's config file (`accelerate launch --config_file`) and `accelerate launch`'s own flags,
// read and written through one table (format.h). Keys follow huggingface/accelerate v1.14.0
// (commands/config/config_args.py ClusterConfig, commands/launch.py): the launch flags have the
// config's names, fsdp_config keys as fsdp_* flags and deepspeed_config keys verbatim.
#include <algorithm>
#include <string>

#include "formats/format.h"

namespace gpumem::detail {

namespace {

bool is_deepspeed(const Run& r) { return r.engine == "deepspeed"; }

// Tensor or context parallelism: accelerate's parallelism_config, written with FSDP2 sharding the
// data-parallel ranks.
bool nd_parallel(const Run& r) { return r.tp > 1 || r.cp > 1; }

std::string upper(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::toupper(c); });
    return s;
}

void read_nothing(Reader&) {}

// FSDP1's sharding strategies, by name or by accelerate's 1-5 index (utils/constants.py).
const char* const kSharding[][2] = {{"FULL_SHARD", "full_shard"},
                                    {"SHARD_GRAD_OP", "shard_grad_op"},
                                    {"NO_SHARD", "no_shard"},
                                    {"HYBRID_SHARD", "hybrid_shard"},
                                    {"HYBRID_SHARD_ZERO2", "hybrid_shard_zero2"}};

const Key kKeys[] = {
    {"distributed_type", "engine.type",
     [](Reader& r) {
         auto v = r.string();
         if (!v) return;
         const std::string t = upper(*v);
         if (t == "NO") r.set("engine.type", "none");
         else if (t == "MULTI_GPU") r.set("engine.type", "ddp");
         else if (t == "FSDP") r.set("engine.type", "fsdp");
         else if (t == "DEEPSPEED") r.set("engine.type", "deepspeed");
         else if (t == "MEGATRON_LM") r.set("engine.type", "megatron");
         else r.issue("gpumem reads NO, MULTI_GPU, FSDP, DEEPSPEED and MEGATRON_LM (GPU training)");
     },
     [](Writer& w) -> std::optional<ojson> {
         const Run& r = w.r;
         return r.engine == "fsdp" ? "FSDP" : is_deepspeed(r) ? "DEEPSPEED" : r.world() > 1 ? "MULTI_GPU" : "NO";
     }},
    // `accelerate launch --use_fsdp / --use_deepspeed / --multi_gpu`: distributed_type as flags.
    {"use_fsdp", "engine.type", [](Reader& r) { r.set("engine.type", "fsdp"); },
     [](Writer&) -> std::optional<ojson> { return std::nullopt; }, "", true},
    {"use_deepspeed", "engine.type", [](Reader& r) { r.set("engine.type", "deepspeed"); },
     [](Writer&) -> std::optional<ojson> { return std::nullopt; }, "", true},
    {"multi_gpu", "engine.type",
     [](Reader& r) {
         if (!r.has("engine.type")) r.set("engine.type", "ddp");
     },
     [](Writer&) -> std::optional<ojson> { return std::nullopt; }, "", true},
    {"mixed_precision", "training.dtype",
     [](Reader& r) {
         auto v = r.string();
         if (!v) return;
         if (*v == "no") r.set("training.dtype", "fp32");
         else if (*v == "fp16" || *v == "bf16" || *v == "fp8") r.set("training.dtype", *v);
         else r.issue("must be no, fp16, bf16 or fp8");
     },
     [](Writer& w) -> std::optional<ojson> { return w.r.dtype == "fp32" ? "no" : w.r.dtype; }},
    {"num_machines", "hardware.num_gpus",
     [](Reader& r) {
         if (auto v = r.uint(1, 1 << 16)) r.out().scenario["_nodes"] = *v;
     },
     [](Writer& w) -> std::optional<ojson> { return nodes_for(w.r.world(), w.per_node); }},
    // The processes of every machine together (accelerate's num_processes is the world size).
    {"num_processes", "hardware.num_gpus",
     [](Reader& r) {
         if (auto v = r.uint(1, 1 << 20)) r.set("hardware.num_gpus", *v);
     },
     [](Writer& w) -> std::optional<ojson> { return w.r.world(); }},
    // A run on several machines needs the first machine's address (else accelerate builds "None:29500").
    {"main_process_ip", "", read_nothing,
     [](Writer& w) -> std::optional<ojson> {
         if (nodes_for(w.r.world(), w.per_node) < 2) return std::nullopt;
         return "MAIN_NODE_IP";
     }},
    {"main_process_port", "", read_nothing,
     [](Writer& w) -> std::optional<ojson> {
         if (nodes_for(w.r.world(), w.per_node) < 2) return std::nullopt;
         return 29500;
     }},
    {"fsdp_config.fsdp_sharding_strategy", "engine.fsdp_sharding",
     [](Reader& r) {
         std::string v =
             r.value().is_number_unsigned() ? std::to_string(r.value().get<std::uint64_t>()) : r.string().value_or("");
         if (v.size() == 1 && v[0] >= '1' && v[0] <= '5') {
             r.set("engine.fsdp_sharding", kSharding[v[0] - '1'][1]);
             return;
         }
         for (const auto& row : kSharding)
             if (upper(v) == row[0]) {
                 r.set("engine.fsdp_sharding", row[1]);
                 return;
             }
         r.issue("must be FULL_SHARD, SHARD_GRAD_OP, NO_SHARD, HYBRID_SHARD or HYBRID_SHARD_ZERO2 (or 1-5)");
     },
     [](Writer& w) -> std::optional<ojson> {
         if (w.r.engine != "fsdp") return std::nullopt;
         return upper(w.r.fsdp_sharding);
     },
     "fsdp_sharding_strategy"},
    // FSDP2's spelling of the same choice: resharding after the forward is FULL_SHARD.
    {"fsdp_config.fsdp_reshard_after_forward", "engine.fsdp_sharding",
     [](Reader& r) {
         if (auto v = r.boolean()) r.set("engine.fsdp_sharding", *v ? "full_shard" : "shard_grad_op");
     },
     [](Writer&) -> std::optional<ojson> { return std::nullopt; }, "fsdp_reshard_after_forward"},
    // FSDP offloads the weights, their gradients and the optimizer step together.
    {"fsdp_config.fsdp_offload_params", "engine.offload_param",
     [](Reader& r) {
         if (auto v = r.boolean()) {
             r.set("engine.offload_param", *v ? "cpu" : "none");
             r.set("engine.offload_optimizer", *v ? "cpu" : "none");
         }
     },
     [](Writer& w) -> std::optional<ojson> {
         if (w.r.engine != "fsdp") return std::nullopt;
         return w.r.offload_param == "cpu";
     },
     "fsdp_offload_params"},
    // Without a wrap policy the whole model is one FSDP unit, gathered whole in the forward.
    {"fsdp_config.fsdp_auto_wrap_policy", "",
     [](Reader& r) {
         auto v = r.string();
         if (v && upper(*v) == "NO_WRAP")
             r.warn(
                 "NO_WRAP: the whole model is one FSDP unit, its weights gathered whole; gpumem assumes one unit "
                 "per layer");
     },
     [](Writer& w) -> std::optional<ojson> {
         if (w.r.engine != "fsdp") return std::nullopt;
         return "TRANSFORMER_BASED_WRAP";
     },
     "fsdp_auto_wrap_policy"},
    {"fsdp_config.fsdp_activation_checkpointing", "training.activation_checkpointing",
     [](Reader& r) {
         if (auto v = r.boolean()) r.set("training.activation_checkpointing", *v ? "full" : "none");
     },
     [](Writer& w) -> std::optional<ojson> {
         if (w.r.engine != "fsdp") return std::nullopt;
         return w.r.checkpointing == "full";
     },
     "fsdp_activation_checkpointing"},
    // BACKWARD_PRE: the next layer's weights are gathered while this one's gradients are computed.
    {"fsdp_config.fsdp_backward_prefetch", "", read_nothing,
     [](Writer& w) -> std::optional<ojson> {
         if (w.r.engine != "fsdp") return std::nullopt;
         return "BACKWARD_PRE";
     },
     "fsdp_backward_prefetch"},
    {"fsdp_config.fsdp_state_dict_type", "", read_nothing,
     [](Writer& w) -> std::optional<ojson> {
         if (w.r.engine != "fsdp") return std::nullopt;
         return "SHARDED_STATE_DICT";
     },
     "fsdp_state_dict_type"},
    {"fsdp_config.fsdp_use_orig_params", "", read_nothing,
     [](Writer& w) -> std::optional<ojson> {
         if (w.r.engine != "fsdp") return std::nullopt;
         return true;
     },
     "fsdp_use_orig_params"},
    {"deepspeed_config.zero_stage", "engine.zero_stage",
     [](Reader& r) {
         if (auto v = r.uint(0, 3)) r.set("engine.zero_stage", *v);
     },
     [](Writer& w) -> std::optional<ojson> {
         if (!is_deepspeed(w.r)) return std::nullopt;
         return w.r.zero_stage;
     },
     "zero_stage"},
    {"deepspeed_config.offload_optimizer_device", "engine.offload_optimizer",
     [](Reader& r) {
         if (auto v = r.string()) {
             if (auto o = parse_setting<Offload>(*v)) r.set("engine.offload_optimizer", name(*o));
             else r.issue(allowed_text<Offload>());
         }
     },
     [](Writer& w) -> std::optional<ojson> {
         if (!is_deepspeed(w.r)) return std::nullopt;
         return w.r.offload_optimizer;
     },
     "offload_optimizer_device"},
    {"deepspeed_config.offload_param_device", "engine.offload_param",
     [](Reader& r) {
         if (auto v = r.string()) {
             if (auto o = parse_setting<Offload>(*v)) r.set("engine.offload_param", name(*o));
             else r.issue(allowed_text<Offload>());
         }
     },
     [](Writer& w) -> std::optional<ojson> {
         if (!is_deepspeed(w.r)) return std::nullopt;
         return w.r.offload_param;
     },
     "offload_param_device"},
    {"deepspeed_config.gradient_accumulation_steps", "training.gradient_accumulation_steps",
     [](Reader& r) {
         if (auto v = r.uint(1, 1 << 20)) r.set("training.gradient_accumulation_steps", *v);
     },
     [](Writer& w) -> std::optional<ojson> {
         if (!is_deepspeed(w.r)) return std::nullopt;
         return w.r.accumulation;
     },
     "gradient_accumulation_steps"},
    // accelerate's ND parallelism (ParallelismConfig, accelerate >= 1.10: utils/dataclasses.py), over FSDP2.
    {"parallelism_config.parallelism_config_tp_size", "parallelism.tensor_parallel_size",
     [](Reader& r) {
         if (auto v = r.uint(1, 1 << 16)) r.set("parallelism.tensor_parallel_size", *v);
     },
     [](Writer& w) -> std::optional<ojson> { return nd_parallel(w.r) ? std::optional<ojson>(w.r.tp) : std::nullopt; },
     "parallelism_config_tp_size"},
    {"parallelism_config.parallelism_config_cp_size", "parallelism.context_parallel_size",
     [](Reader& r) {
         if (auto v = r.uint(1, 1 << 16)) r.set("parallelism.context_parallel_size", *v);
     },
     [](Writer& w) -> std::optional<ojson> { return nd_parallel(w.r) ? std::optional<ojson>(w.r.cp) : std::nullopt; },
     "parallelism_config_cp_size"},
    {"parallelism_config.parallelism_config_dp_shard_size", "parallelism.data_parallel_size",
     [](Reader& r) {
         if (auto v = r.uint(1, 1 << 20)) r.out().scenario["_dp_shard"] = *v;
     },
     [](Writer& w) -> std::optional<ojson> { return nd_parallel(w.r) ? std::optional<ojson>(w.r.dp) : std::nullopt; },
     "parallelism_config_dp_shard_size"},
    {"parallelism_config.parallelism_config_dp_replicate_size", "parallelism.data_parallel_size",
     [](Reader& r) {
         if (auto v = r.uint(1, 1 << 20)) r.out().scenario["_dp_replicate"] = *v;
     },
     [](Writer& w) -> std::optional<ojson> { return nd_parallel(w.r) ? std::optional<ojson>(1) : std::nullopt; },
     "parallelism_config_dp_replicate_size"},
    {"fsdp_config.fsdp_version", "", read_nothing,
     [](Writer& w) -> std::optional<ojson> { return nd_parallel(w.r) ? std::optional<ojson>(2) : std::nullopt; },
     "fsdp_version"},
    // ZeRO-3's zero.Init: the model is built already partitioned (never whole on one GPU).
    {"deepspeed_config.zero3_init_flag", "", read_nothing,
     [](Writer& w) -> std::optional<ojson> {
         if (!is_deepspeed(w.r)) return std::nullopt;
         return w.r.zero_stage == 3;
     },
     "zero3_init_flag"},
    // A ds_config.json of its own: read as DeepSpeed's, under this file's settings.
    {"deepspeed_config.deepspeed_config_file", "",
     [](Reader& r) {
         if (auto v = r.string()) r.out().references.push_back(*v);
     },
     [](Writer&) -> std::optional<ojson> { return std::nullopt; }, "deepspeed_config_file"},
};

const char* const kIgnored[] = {"compute_environment",
                                "machine_rank",
                                "main_training_function",
                                "rdzv_backend",
                                "same_network",
                                "gpu_ids",
                                "use_cpu",
                                "debug",
                                "downcast_bf16",
                                "enable_cpu_affinity",
                                "tpu_*",
                                "commands",
                                "command_file",
                                "num_cpu_threads_per_process",
                                "dynamo_backend",
                                "dynamo_config.",
                                "fsdp_config.fsdp_forward_prefetch",
                                "fsdp_config.fsdp_cpu_ram_efficient_loading",
                                "fsdp_config.fsdp_sync_module_states",
                                "fsdp_config.fsdp_transformer_layer_cls_to_wrap",
                                "fsdp_config.fsdp_min_num_params",
                                "deepspeed_config.gradient_clipping",
                                "deepspeed_config.zero3_save_16bit_model",
                                "deepspeed_config.deepspeed_multinode_launcher",
                                "deepspeed_config.deepspeed_hostfile",
                                "deepspeed_config.offload_optimizer_nvme_path",
                                "deepspeed_config.offload_param_nvme_path",
                                "mixed_precision_fp8*",
                                "fp8_config."};

void refuse(Writer& wr) {
    const Run& r = wr.r;
    Written& w = wr.w;
    refuse_megatron(wr, "accelerate");
    if (r.pp > 1 || r.ep > 1)
        w.refuse("parallelism",
                 "accelerate runs data parallelism, FSDP, DeepSpeed ZeRO and (parallelism_config) tensor and context "
                 "parallelism; pipeline and expert sizes must be 1",
                 "pp " + std::to_string(r.pp) + ", ep " + std::to_string(r.ep));
    if (nd_parallel(r) && (r.engine != "fsdp" || r.fsdp_sharding != "full_shard"))
        w.refuse("engine.type",
                 "accelerate's tensor and context parallelism (parallelism_config) shard the data-parallel ranks "
                 "with FSDP2: engine fsdp, full_shard",
                 r.engine + " " + r.fsdp_sharding);
    const bool ds = is_deepspeed(r);
    const char* want = ds ? "mixed_master_fp32" : "amp_fp32_weights";
    if (r.dtype != "fp32" && r.precision != want && !(r.adapters() && r.precision == "pure"))
        w.refuse(
            "training.precision",
            std::string("accelerate's mixed_precision keeps ") + (ds ? "DeepSpeed's fp32 master copy: mixed_master_fp32"
                                                                     : "fp32 weights and autocasts: amp_fp32_weights"),
            r.precision);
    if (r.engine == "fsdp" && r.offload_optimizer != r.offload_param)
        w.refuse("engine.offload_optimizer",
                 "FSDP offloads the weights, gradients and optimizer step together (fsdp_offload_params): "
                 "offload_optimizer and offload_param must be the same",
                 r.offload_optimizer);
    if (r.checkpointing == "selective")
        w.refuse("training.activation_checkpointing", "accelerate's FSDP checkpoints whole layers: full or none",
                 r.checkpointing);
}

void finish_write(Writer& wr, ojson& doc) {
    const Run& r = wr.r;
    Written& w = wr.w;
    ojson head = {{"compute_environment", "LOCAL_MACHINE"}};
    ojson nested = nest(doc);
    for (auto it = nested.begin(); it != nested.end(); ++it) head[it.key()] = it.value();
    head["machine_rank"] = 0;
    w.text = yaml_text(head);
    if (r.engine != "fsdp" && r.checkpointing == "full")
        w.notes.push_back("activation checkpointing (full): model.gradient_checkpointing_enable() in the script");
    w.notes.push_back("micro-batch " + std::to_string(r.batch) + " per GPU: the DataLoader's batch_size; " +
                      std::to_string(r.accumulation) + " accumulation steps: Accelerator(gradient_accumulation_steps=" +
                      std::to_string(r.accumulation) + ")");
    w.notes.push_back("sequences of " + std::to_string(r.seq_len) +
                      " tokens: truncate or pack the data to that length");
    if (nodes_for(r.world(), wr.per_node) > 1)
        w.notes.push_back(
            "main_process_ip: the first machine's address; run it on each machine with its "
            "machine_rank (0 on the first)");
}

void finish_read(Reader& r) {
    json& s = r.out().scenario;
    s["mode"] = "training";
    if (s.contains("_nodes")) {
        const std::uint64_t nodes = s["_nodes"];
        s.erase("_nodes");
        if (r.has("hardware.num_gpus") && nodes > 0 && r.get("hardware.num_gpus").get<std::uint64_t>() % nodes == 0)
            r.set("hardware.gpus_per_node", r.get("hardware.num_gpus").get<std::uint64_t>() / nodes);
    }
    // dp_replicate x dp_shard data-parallel ranks; both over 1 is HSDP (replicated shards).
    const std::uint64_t shard = s.value("_dp_shard", std::uint64_t{0}),
                        replicate = s.value("_dp_replicate", std::uint64_t{0});
    s.erase("_dp_shard");
    s.erase("_dp_replicate");
    if (shard > 0 || replicate > 0) {
        r.set("parallelism.data_parallel_size",
              std::max<std::uint64_t>(shard, 1) * std::max<std::uint64_t>(replicate, 1));
        if (shard > 1 && replicate > 1) r.set("engine.fsdp_sharding", "hybrid_shard");
    }
    if (r.get("engine.type") == json("deepspeed") && r.has("training.dtype") && r.get("training.dtype") != json("fp32"))
        r.set("training.precision", "mixed_master_fp32");  // DeepSpeed's fp32 master copy
    if (r.get("engine.type") == json("deepspeed") && !r.has("engine.zero_stage") && r.out().references.empty()) {
        // utils/dataclasses.py DeepSpeedPlugin.__post_init__: ACCELERATE_DEEPSPEED_ZERO_STAGE, default 2.
        r.set("engine.zero_stage", 2);
        r.assume("DEEPSPEED with no zero_stage: accelerate's default, stage 2");
    }
}

}  // namespace

extern const Tool kAccelerateTool = {ConfigFormat::Accelerate,
                                     "yaml",
                                     "accelerate_config.yaml",
                                     kKeys,
                                     std::size(kKeys),
                                     kIgnored,
                                     std::size(kIgnored),
                                     refuse,
                                     finish_write,
                                     finish_read};

}  // namespace gpumem::detail
