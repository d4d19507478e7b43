// torchtune's recipe configs (YAML) and `tune run RECIPE --config CONFIG key=value ~key` lines, read
// and written through one table (format.h). The keys are the configs' dotted keys, which the
// command line's overrides name too (torchtune v0.6.1: recipes/configs/*.yaml, the four fine-tuning
// recipes' setup code; tests/data/formats/torchtune.json lists them).
#include <algorithm>
#include <string>

#include "formats/format.h"

namespace gpumem::detail {

namespace {

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

// The Hub checkpoint torchtune's configs of a model directory download (their `tune download` line).
struct TuneHub {
    const char* config_dir;
    const char* hub_id;
};
const TuneHub kTuneHub[] = {
    {"llama3_1/8B", "meta-llama/Llama-3.1-8B-Instruct"},
    {"llama3_1/70B", "meta-llama/Llama-3.1-70B-Instruct"},
    {"llama3_1/405B", "meta-llama/Llama-3.1-405B-Instruct"},
    {"llama3_2/1B", "meta-llama/Llama-3.2-1B-Instruct"},
    {"llama3_2/3B", "meta-llama/Llama-3.2-3B-Instruct"},
    {"llama3_3/70B", "meta-llama/Llama-3.3-70B-Instruct"},
    {"llama3/8B", "meta-llama/Meta-Llama-3-8B-Instruct"},
    {"llama3/70B", "meta-llama/Meta-Llama-3-70B-Instruct"},
    {"llama2/7B", "meta-llama/Llama-2-7b-hf"},
    {"llama2/13B", "meta-llama/Llama-2-13b-hf"},
    {"llama2/70B", "meta-llama/Llama-2-70b-chat-hf"},
    {"qwen2_5/0.5B", "Qwen/Qwen2.5-0.5B-Instruct"},
    {"qwen2_5/1.5B", "Qwen/Qwen2.5-1.5B-Instruct"},
    {"qwen2_5/3B", "Qwen/Qwen2.5-3B-Instruct"},
    {"qwen2_5/7B", "Qwen/Qwen2.5-7B-Instruct"},
    {"qwen2_5/14B", "Qwen/Qwen2.5-14B-Instruct"},
    {"qwen2_5/32B", "Qwen/Qwen2.5-32B-Instruct"},
    {"qwen2_5/72B", "Qwen/Qwen2.5-72B-Instruct"},
    {"qwen2/0.5B", "Qwen/Qwen2-0.5B-Instruct"},
    {"qwen2/1.5B", "Qwen/Qwen2-1.5B-Instruct"},
    {"qwen2/7B", "Qwen/Qwen2-7B-Instruct"},
    {"gemma/2B", "google/gemma-2b"},
    {"gemma/7B", "google/gemma-7b"},
    {"gemma2/2B", "google/gemma-2-2b"},
    {"gemma2/9B", "google/gemma-2-9b"},
    {"gemma2/27B", "google/gemma-2-27b"},
    {"mistral/7B", "mistralai/Mistral-7B-v0.1"},
    {"phi3/mini", "microsoft/Phi-3-mini-4k-instruct"},
    {"phi4/14B", "microsoft/phi-4"},
};

// A model builder's name ("lora_llama3_1_8b") is its config directory in lower case with '/' and
// '.' as '_' ("llama3_1/8B"), behind "lora_" or "qlora_" for the adapters' builders.
std::string builder_of(const std::string& config_dir) {
    std::string b = lower_case(config_dir);
    std::replace(b.begin(), b.end(), '/', '_');
    std::replace(b.begin(), b.end(), '.', '_');
    return b;
}

const char* config_dir_of(const std::string& model) {
    const std::string base = lower_case(model.substr(model.find('/') == std::string::npos ? 0 : model.find('/') + 1));
    for (const TuneModel& m : kTuneModels)
        if (base.rfind(lower_case(m.id_prefix), 0) == 0) return m.config_dir;
    return nullptr;
}

bool distributed(const Run& r) { return r.world() > 1; }
std::uint64_t tune_nodes(const Writer& w) { return nodes_for(w.r.world(), w.per_node); }
std::optional<ojson> text(bool on) { return on ? "True" : "False"; }
void read_nothing(Reader&) {}

void read_flag(Reader& r, const char* field, const char* on, const char* off) {
    if (auto v = r.boolean()) r.set(field, *v ? on : off);
}

// torch.optim / bitsandbytes optimizer components.
const char* const kOptimizers[][2] = {{"adamw", "torch.optim.AdamW"},
                                      {"adam", "torch.optim.Adam"},
                                      {"sgd", "torch.optim.SGD"},
                                      {"adamw_8bit", "bitsandbytes.optim.AdamW8bit"},
                                      {"paged_adamw_8bit", "bitsandbytes.optim.PagedAdamW8bit"},
                                      {"paged_adamw_32bit", "bitsandbytes.optim.PagedAdamW"}};
bool bitsandbytes(const std::string& optimizer) {
    return optimizer == "adamw_8bit" || optimizer == "paged_adamw_8bit" || optimizer == "paged_adamw_32bit";
}

const char* const kAttnModules[][2] = {
    {"q_proj", "q_proj"}, {"k_proj", "k_proj"}, {"v_proj", "v_proj"}, {"output_proj", "o_proj"}};

const Key kKeys[] = {
    // tune run's torchrun flags
    {"nnodes", "hardware.num_gpus",
     [](Reader& r) {
         if (auto v = r.uint(1, 1 << 16)) r.out().scenario["_nodes"] = *v;
     },
     [](Writer& w) -> std::optional<ojson> {
         return distributed(w.r) ? std::optional<ojson>(tune_nodes(w)) : std::nullopt;
     }},
    {"nproc_per_node", "hardware.num_gpus",
     [](Reader& r) {
         if (auto v = r.uint(1, 1024)) r.set("hardware.gpus_per_node", *v);
     },
     [](Writer& w) -> std::optional<ojson> {
         return distributed(w.r) ? std::optional<ojson>(w.r.world() / tune_nodes(w)) : std::nullopt;
     },
     "nproc-per-node"},
    {"rdzv_endpoint", "", read_nothing,
     [](Writer& w) -> std::optional<ojson> {
         return distributed(w.r) && tune_nodes(w) > 1 ? std::optional<ojson>("MASTER_HOST:29500") : std::nullopt;
     },
     "rdzv-endpoint"},
    // The config
    {"model._component_", "model",
     [](Reader& r) {
         auto v = r.string();
         if (!v) return;
         const std::string builder = v->substr(v->find_last_of('.') + 1);
         std::string base = builder;
         // Qwen2.5's builders name the variant: qwen2_5_7b_instruct, qwen2_5_7b_base (same shape).
         for (const char* variant : {"_instruct", "_base"}) {
             const std::string v = variant;
             if (base.size() > v.size() && base.compare(base.size() - v.size(), v.size(), v) == 0)
                 base = base.substr(0, base.size() - v.size());
         }
         if (base.rfind("qlora_", 0) == 0) {
             r.set("training.method", "qlora");
             r.set("training.quantization", "nf4");  // torchtune's quantize_base: NF4 (torchao)
             base = base.substr(6);
         } else if (base.rfind("lora_", 0) == 0) {
             r.set("training.method", "lora");
             base = base.substr(5);
         }
         for (const TuneHub& h : kTuneHub)
             if (builder_of(h.config_dir) == base) {
                 r.out().model = h.hub_id;
                 return;
             }
         r.warn("model builder " + builder + " is not one gpumem maps to a Hub id; give --model");
     },
     [](Writer& w) -> std::optional<ojson> {
         const char* dir = config_dir_of(w.r.model);
         if (!dir) return std::nullopt;
         std::string family = dir;
         family = family.substr(0, family.find('/'));
         const std::string prefix = w.r.method == "qlora" ? "qlora_" : w.r.method == "lora" ? "lora_" : "";
         return "torchtune.models." + family + "." + prefix + builder_of(dir);
     },
     "model"},
    {"batch_size", "training.batch_size", read_micro_batch, write_micro_batch},
    {"gradient_accumulation_steps", "training.gradient_accumulation_steps", read_accumulation, write_accumulation},
    {"tokenizer.max_seq_len", "training.seq_len",
     [](Reader& r) {
         if (r.value().is_null()) {
             r.assume("tokenizer.max_seq_len is null: samples keep their own length; give --seq-len the longest");
             return;
         }
         if (auto v = r.uint(1, 1 << 24)) r.set("training.seq_len", *v);
     },
     [](Writer& w) -> std::optional<ojson> { return w.r.seq_len; }},
    {"dtype", "training.dtype",
     [](Reader& r) {
         auto v = r.string();
         if (v && (*v == "bf16" || *v == "fp32")) r.set("training.dtype", *v);
         else if (v) r.issue("must be bf16 or fp32 (torchtune refuses fp16)");
     },
     [](Writer& w) -> std::optional<ojson> { return w.r.dtype == "bf16" ? "bf16" : "fp32"; }},
    {"enable_activation_checkpointing", "training.activation_checkpointing",
     [](Reader& r) { read_flag(r, "training.activation_checkpointing", "full", "none"); },
     [](Writer& w) { return text(w.r.checkpointing != "none"); }},
    {"enable_activation_offloading", "training.activation_offloading",
     [](Reader& r) {
         if (auto v = r.boolean()) r.set("training.activation_offloading", *v);
     },
     [](Writer& w) { return text(w.r.activation_offloading); }},
    {"compile", "training.compile", [](Reader& r) { read_flag(r, "training.compile", "layers_and_loss", "none"); },
     [](Writer& w) { return text(w.r.compile != "none"); }},
    {"optimizer._component_", "training.optimizer",
     [](Reader& r) {
         auto v = r.string();
         if (!v) return;
         for (const auto& row : kOptimizers)
             if (*v == row[1]) {
                 if (!(row[0] == std::string("adamw") && r.get("training.optimizer") == json("adamw_fused")))
                     r.set("training.optimizer", row[0]);
                 return;
             }
         r.warn("optimizer " + *v + " is not one gpumem models; the scenario's optimizer is used");
     },
     [](Writer& w) -> std::optional<ojson> {
         for (const auto& row : kOptimizers)
             if (w.r.optimizer == row[0] || (w.r.optimizer == "adamw_fused" && row[0] == std::string("adamw")))
                 return std::string(row[1]);
         return std::nullopt;
     },
     "optimizer"},
    // torch.optim.AdamW(fused=True): one kernel, no step temporaries. bitsandbytes' classes take no
    // `fused` (TypeError at instantiate), so with them the key is deleted (~optimizer.fused).
    {"optimizer.fused", "training.optimizer",
     [](Reader& r) {
         auto v = r.boolean();
         if (!v) return;
         const json o = r.get("training.optimizer");
         if (*v && (o.is_null() || o == json("adamw"))) r.set("training.optimizer", "adamw_fused");
         if (*v && o.is_string() && bitsandbytes(o.get<std::string>()))
             r.issue(
                 "bitsandbytes' optimizers take no `fused` argument (TypeError when torchtune builds it); "
                 "delete it with ~optimizer.fused");
     },
     [](Writer& w) -> std::optional<ojson> {
         if (bitsandbytes(w.r.optimizer)) return std::nullopt;
         return text(w.r.optimizer == "adamw_fused");
     }},
    {"optimizer_in_bwd", "training.optimizer_in_backward",
     [](Reader& r) {
         if (auto v = r.boolean()) r.set("training.optimizer_in_backward", *v);
     },
     [](Writer& w) { return text(w.r.optimizer_in_backward); }},
    {"loss._component_", "training.loss",
     [](Reader& r) {
         auto v = r.string();
         if (!v) return;
         if (v->find("CEWithChunkedOutputLoss") != std::string::npos ||
             v->find("LinearCrossEntropyLoss") != std::string::npos)
             r.set("training.loss", "chunked");
         else if (v->find("CrossEntropyLoss") != std::string::npos) r.set("training.loss", "standard");
         else r.warn("loss " + *v + " is not one gpumem models");
     },
     [](Writer& w) -> std::optional<ojson> {
         return w.r.loss == "standard" ? "torch.nn.CrossEntropyLoss" : "torchtune.modules.loss.CEWithChunkedOutputLoss";
     },
     "loss"},
    {"fsdp_cpu_offload", "engine.offload_param",
     [](Reader& r) {
         if (auto v = r.boolean()) {
             r.set("engine.offload_param", *v ? "cpu" : "none");
             r.set("engine.offload_optimizer", *v ? "cpu" : "none");
         }
     },
     [](Writer& w) -> std::optional<ojson> {
         return distributed(w.r) ? text(w.r.offload_param == "cpu") : std::nullopt;
     }},
    {"model.lora_attn_modules", "training.lora.target_modules",
     [](Reader& r) {
         std::vector<std::string> targets;
         const json prior = r.get("training.lora.target_modules");
         if (prior.is_array())
             for (const json& t : prior)
                 if (t != "q_proj" && t != "k_proj" && t != "v_proj" && t != "o_proj") targets.push_back(t);
         std::vector<std::string> given;
         if (r.value().is_array()) {
             for (const ojson& x : r.value())
                 if (x.is_string()) given.push_back(x.get<std::string>());
         } else if (auto v = r.string()) {  // "[q_proj,v_proj]" from a command line
             std::string word;
             for (char c : *v + ",") {
                 if (c == ',' || c == '[' || c == ']' || c == ' ' || c == '\'' || c == '"') {
                     if (!word.empty()) given.push_back(word);
                     word.clear();
                 } else {
                     word += c;
                 }
             }
         }
         for (const std::string& g : given) {
             bool known = false;
             for (const auto& row : kAttnModules)
                 if (g == row[0]) targets.push_back(row[1]), known = true;
             if (!known) r.warn("LoRA module " + g + " is not q_proj, k_proj, v_proj or output_proj");
         }
         r.set("training.lora.target_modules", targets);
     },
     [](Writer& w) -> std::optional<ojson> {
         if (!w.r.adapters()) return std::nullopt;
         std::string attn;
         for (const auto& row : kAttnModules)
             if (w.r.targets(row[1])) attn += (attn.empty() ? "" : ",") + std::string(row[0]);
         return "[" + attn + "]";
     }},
    {"model.apply_lora_to_mlp", "training.lora.target_modules",
     [](Reader& r) {
         auto v = r.boolean();
         if (!v || !*v) return;
         json targets = r.get("training.lora.target_modules");
         if (!targets.is_array()) targets = json::array();
         for (const char* m : {"gate_proj", "up_proj", "down_proj"}) targets.push_back(m);
         r.set("training.lora.target_modules", targets);
     },
     [](Writer& w) -> std::optional<ojson> {
         if (!w.r.adapters()) return std::nullopt;
         return text(w.r.targets("gate_proj") || w.r.targets("up_proj") || w.r.targets("down_proj"));
     }},
    {"model.apply_lora_to_output", "training.lora.target_modules",
     [](Reader& r) {
         auto v = r.boolean();
         if (!v || !*v) return;
         json targets = r.get("training.lora.target_modules");
         if (!targets.is_array()) targets = json::array();
         targets.push_back("lm_head");
         r.set("training.lora.target_modules", targets);
     },
     [](Writer& w) -> std::optional<ojson> {
         if (!w.r.adapters()) return std::nullopt;
         return text(w.r.targets("lm_head"));
     }},
    {"model.lora_rank", "training.lora.rank", read_lora_rank, write_lora_rank},
    {"model.lora_alpha", "training.lora.alpha", read_lora_alpha, write_lora_alpha},
    {"model.lora_dropout", "training.lora.dropout", read_lora_dropout, write_lora_dropout},
    {"checkpointer.checkpoint_dir", "model",
     [](Reader& r) {
         auto v = r.string();
         if (!v || !r.out().model.empty()) return;
         r.out().scenario["_checkpoint_dir"] = *v;
     },
     [](Writer&) -> std::optional<ojson> { return std::nullopt; }},
};

const char* const kIgnored[] = {"output_dir",
                                "seed",
                                "shuffle",
                                "epochs",
                                "max_steps_per_epoch",
                                "lr_scheduler.",
                                "optimizer.lr",
                                "optimizer.weight_decay",
                                "optimizer.betas",
                                "optimizer.eps",
                                "optimizer.momentum",
                                "metric_logger.",
                                "log_every_n_steps",
                                "log_peak_memory_stats",
                                "log_level",
                                "profiler.",
                                "checkpointer.",
                                "tokenizer.path",
                                "tokenizer._component_",
                                "tokenizer.merges_file",
                                "tokenizer.prompt_template",
                                "dataset.",
                                "device",
                                "resume_from_checkpoint",
                                "save_adapter_weights_only",
                                "clip_grad_norm",
                                "custom_sharded_layers",
                                "loss.num_output_chunks",
                                "run_val_every_n_steps",
                                "dataset_val.",
                                "batch_size_val",
                                "collate_fn",
                                "model.quantize_base",
                                "model.use_dora",
                                "low_cpu_ram",
                                "cudnn_deterministic_mode",
                                "lr_scheduler._component_",
                                "_recipe"};

void refuse(Writer& wr) {
    const Run& r = wr.r;
    Written& w = wr.w;
    refuse_megatron(wr, "torchtune");
    if (r.tp > 1 || r.pp > 1 || r.cp > 1 || r.ep > 1)
        w.refuse("parallelism",
                 "torchtune's fine-tuning recipes shard with FSDP only; tensor, pipeline, context and expert sizes "
                 "must be 1",
                 "tp " + std::to_string(r.tp) + ", pp " + std::to_string(r.pp) + ", cp " + std::to_string(r.cp) +
                     ", ep " + std::to_string(r.ep));
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
    if (r.method == "qlora" && r.s["training"]["quantization"] != "nf4")
        w.refuse("training.quantization", "torchtune's QLoRA quantizes the base to NF4 (torchao)",
                 r.s["training"]["quantization"].dump());
    if (r.engine == "fsdp" && r.offload_optimizer != r.offload_param)
        w.refuse("engine.offload_optimizer",
                 "torchtune's fsdp_cpu_offload moves the weights, gradients and optimizer states together: "
                 "offload_optimizer and offload_param must be the same",
                 r.offload_optimizer);
    bool known = false;
    for (const auto& row : kOptimizers) known = known || r.optimizer == row[0];
    if (!known && r.optimizer != "adamw_fused")
        w.refuse("training.optimizer",
                 "torchtune's configs use torch.optim or bitsandbytes optimizers: adamw, adamw_fused, adam, sgd, "
                 "adamw_8bit, paged_adamw_8bit, paged_adamw_32bit",
                 r.optimizer);
    if (r.loss == "fused")
        w.refuse("training.loss", "torchtune has no fused head + loss; its chunked loss is `chunked`", r.loss);
    if (r.checkpointing == "selective")
        w.refuse("training.activation_checkpointing",
                 "torchtune's enable_activation_checkpointing checkpoints whole layers: full or none", r.checkpointing);
    if (r.compile == "layers")
        w.refuse("training.compile", "torchtune's compile: True compiles the layers and the loss (layers_and_loss)",
                 r.compile);
}

void finish_write(Writer& wr, ojson& doc) {
    const Run& r = wr.r;
    Written& w = wr.w;
    const bool single = !distributed(r);
    const std::string kind = r.method == "full" ? "full" : r.method == "qlora" ? "qlora" : "lora";
    const char* recipe =
        r.method == "full" ? (single ? kFullSingle : kFullDistributed) : (single ? kLoraSingle : kLoraDistributed);
    std::string config = tune_config(r.model, recipe, kind);
    if (config.empty()) {
        config = "CONFIG";
        w.notes.push_back("CONFIG: torchtune 0.6.1 ships no " + std::string(recipe) + " config for " + r.model + " (" +
                          kind + "); copy the closest one (tune cp) and point its model and tokenizer at this model");
    }
    std::vector<std::string> head = {"tune", "run"};
    ojson overrides = ojson::object();
    std::string launch;
    for (auto it = doc.begin(); it != doc.end(); ++it) {
        const std::string& k = it.key();
        if (k == "nnodes" || k == "nproc_per_node" || k == "rdzv_endpoint") {
            head.push_back("--" + k);
            head.push_back(it->is_string() ? it->get<std::string>() : it->dump());
        } else {
            overrides[k] = it.value();
        }
    }
    if (!single && tune_nodes(wr) > 1) {
        head.insert(head.end() - 2, {"--rdzv_backend", "c10d"});
        w.notes.push_back("MASTER_HOST: the first node's address; run the same line on every node");
    }
    head.push_back(recipe);
    head.push_back("--config");
    head.push_back(config);
    w.file_name = "tune.sh";
    std::string text = command_text(head, overrides, true);
    if (bitsandbytes(r.optimizer)) {
        text.pop_back();
        text += " \\\n  '~optimizer.fused'\n";
    }
    w.text = text;
    if (r.checkpointing == "none" && r.activation_offloading)
        w.notes.push_back(
            "activation offloading moves the checkpointed activations: torchtune offloads only with "
            "enable_activation_checkpointing");
}

void finish_read(Reader& r) {
    json& s = r.out().scenario;
    s["mode"] = "training";
    r.set("training.framework", "torchtune");
    r.set("training.precision", "pure");  // torchtune holds the weights in its dtype
    // The recipes read cfg.get("enable_activation_checkpointing", False): off when the config leaves it out.
    if (!r.has("training.activation_checkpointing")) r.set("training.activation_checkpointing", "none");
    const Doc& d = r.doc();
    std::uint64_t nodes = 1;
    if (s.contains("_nodes")) {
        nodes = s["_nodes"];
        s.erase("_nodes");
    }
    if (r.has("hardware.gpus_per_node"))
        r.set("hardware.num_gpus", r.get("hardware.gpus_per_node").get<std::uint64_t>() * nodes);
    if (s.contains("_checkpoint_dir")) {
        std::string dir = s["_checkpoint_dir"];
        s.erase("_checkpoint_dir");
        while (!dir.empty() && dir.back() == '/') dir.pop_back();
        const std::string base = dir.substr(dir.find_last_of('/') + 1);
        if (r.out().model.empty() && !base.empty()) {
            r.out().model = base;
            r.assume("the model is the checkpoint folder's name, " + base + " (checkpointer.checkpoint_dir)");
        }
    }
    // A built-in config's name says the model and the method: "llama3_2/3B_qlora_single_device".
    if (d.contains("_config") && d["_config"].is_string()) {
        const std::string config = d["_config"];
        for (const TuneHub& h : kTuneHub) {
            const std::string dir = std::string(h.config_dir) + "_";
            if (config.rfind(dir, 0) != 0) continue;
            if (r.out().model.empty()) r.out().model = h.hub_id;
            const std::string rest = config.substr(dir.size());
            if (!r.has("training.method")) {
                if (rest.rfind("qlora", 0) == 0) {
                    r.set("training.method", "qlora");
                    r.set("training.quantization", "nf4");
                } else if (rest.rfind("lora", 0) == 0) {
                    r.set("training.method", "lora");
                } else if (rest.rfind("full", 0) == 0) {
                    r.set("training.method", "full");
                }
            }
            break;
        }
    }
    if (d.contains("_recipe") && d["_recipe"].is_string()) {
        const std::string recipe = d["_recipe"];
        if (recipe.find("distributed") != std::string::npos) r.set("engine.type", "fsdp");
        if (recipe.find("single_device") != std::string::npos) r.set("engine.type", "none");
        if (recipe.rfind("full_finetune", 0) == 0) r.set("training.method", "full");
        if (recipe.rfind("lora_finetune", 0) == 0 && !r.has("training.method")) r.set("training.method", "lora");
    }
    if (r.has("engine.type") && r.get("engine.type") == json("fsdp")) r.set("engine.fsdp_sharding", "full_shard");
    if (d.contains("dataset.packed") && d["dataset.packed"] == true)
        r.assume("dataset.packed: every row is filled to tokenizer.max_seq_len");
    else if (r.has("training.seq_len"))
        r.assume(
            "samples are padded to the batch's longest, at most tokenizer.max_seq_len: the estimate is for rows "
            "of that length (the peak)");
    if (!r.has("training.method")) r.set("training.method", "full");
}

}  // namespace

extern const Tool kTorchtuneTool = {
    ConfigFormat::Torchtune, "command", "tune.sh",    kKeys,      std::size(kKeys), kIgnored,
    std::size(kIgnored),     refuse,    finish_write, finish_read};

}  // namespace gpumem::detail
