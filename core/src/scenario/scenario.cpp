// Reading a v1 scenario (docs/scenario.md lists its settings). One place resolves every default and records it, so
// the CLI and the page can show the assumptions behind a number.

#include "scenario/scenario.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <utility>

#include "model/model.h"
#include "catalogue/presets.h"

namespace gpumem::detail {

namespace {

// The serving engines' own settings: which engine each belongs to and its resolved value. The reader
// refuses one given for another engine; the resolved scenario lists those of its engine.
struct EngineField {
    const char* key;
    InferenceEngine engine;
    json (*value)(const InferenceSettings&);
};
const EngineField kEngineFields[] = {
    {"gpu_memory_utilization", InferenceEngine::Vllm,
     [](const InferenceSettings& i) { return json(i.gpu_memory_utilization); }},
    {"max_num_batched_tokens", InferenceEngine::Vllm,
     [](const InferenceSettings& i) { return json(i.max_num_batched_tokens); }},
    {"block_size", InferenceEngine::Vllm, [](const InferenceSettings& i) { return json(i.block_size); }},
    {"max_num_seqs", InferenceEngine::Vllm, [](const InferenceSettings& i) { return json(i.max_num_seqs); }},
    {"engine_version", InferenceEngine::Vllm, [](const InferenceSettings& i) { return json(i.engine_version); }},
    {"engine_version", InferenceEngine::Sglang, [](const InferenceSettings& i) { return json(i.engine_version); }},
    {"gpu_layers", InferenceEngine::LlamaCpp, [](const InferenceSettings& i) { return json(i.gpu_layers); }},
    {"ubatch", InferenceEngine::LlamaCpp, [](const InferenceSettings& i) { return json(i.ubatch); }},
    {"mem_fraction_static", InferenceEngine::Sglang,
     [](const InferenceSettings& i) { return json(i.mem_fraction_static); }},
    {"chunked_prefill_size", InferenceEngine::Sglang,
     [](const InferenceSettings& i) { return json(i.chunked_prefill_size); }},
    {"max_total_tokens", InferenceEngine::Tgi, [](const InferenceSettings& i) { return json(i.max_total_tokens); }},
    {"max_batch_prefill_tokens", InferenceEngine::Tgi,
     [](const InferenceSettings& i) { return json(i.max_batch_prefill_tokens); }},
    {"cuda_memory_fraction", InferenceEngine::Tgi,
     [](const InferenceSettings& i) { return json(i.cuda_memory_fraction); }},
    {"free_gpu_memory_fraction", InferenceEngine::TensorrtLlm,
     [](const InferenceSettings& i) { return json(i.free_gpu_memory_fraction); }},
    {"max_num_tokens", InferenceEngine::TensorrtLlm, [](const InferenceSettings& i) { return json(i.max_num_tokens); }},
};

// The JSON names of a list of values.
template <typename E>
std::vector<std::string> names_of(const std::vector<E>& values) {
    std::vector<std::string> out;
    for (E v : values) out.emplace_back(name(v));
    return out;
}

// Records a default: "training.batch_size = 1".
struct Defaults {
    std::vector<std::string>& list;
    template <typename T>
    T apply(std::optional<T> given, T fallback, const std::string& field, const std::string& why = "") {
        if (given) return *given;
        std::string text = field + " = " + json(fallback).dump();
        if (!why.empty()) text += " (" + why + ")";
        list.push_back(text);
        return fallback;
    }
};

// The value given for a settings-table field (settings.h); nullopt when absent or not one of the table's.
template <typename E>
std::optional<E> given_setting(FieldReader& r, const Field<E>& f) {
    return r.setting<E>(field_key(f.path));
}

// `given`, else `fallback`, recorded through `d` as the field's default.
template <typename E>
E apply_setting(Defaults& d, std::optional<E> given, E fallback, const char* path) {
    d.apply(given ? std::optional<std::string>(name(*given)) : std::nullopt, std::string(name(fallback)), path);
    return given.value_or(fallback);
}

// A settings-table field: the value given, else its default, recorded.
template <typename E>
E read_setting(FieldReader& r, Defaults& d, const Field<E>& f) {
    return apply_setting(d, given_setting(r, f), f.fallback, f.path);
}

// The object doc[name]; an empty object when absent, and an issue when present but not an object.
const json& section(const json& doc, const char* name, std::vector<Issue>& issues, const std::string& parent = "") {
    static const json empty = json::object();
    auto it = doc.find(name);
    if (it == doc.end() || it->is_null()) return empty;
    if (!it->is_object()) {
        issues.push_back({parent.empty() ? name : parent + "." + name, "must be an object", show(*it)});
        return empty;
    }
    return *it;
}

void read_model(const json& doc, Scenario& s, std::vector<Issue>& issues) {
    const json* mp = doc.contains("model") ? &doc["model"] : nullptr;
    if (!mp || mp->is_null()) {
        issues.push_back({"model",
                          "is required: {\"preset\": \"meta-llama/Llama-3.1-8B\"}, {\"hf_config\": {...}} or "
                          "the model's fields by hand (\"num_parameters\": \"7B\", ...)",
                          ""});
        return;
    }
    const json& m = *mp;
    if (m.is_string()) {  // shorthand: "model": "llama3-8b"
        json wrapped = {{"preset", m}};
        json sub = doc;
        sub["model"] = wrapped;
        read_model(sub, s, issues);
        return;
    }
    if (!m.is_object()) {
        issues.push_back({"model", "must be an object", show(m)});
        return;
    }
    bool has_preset = m.contains("preset") && !m["preset"].is_null();
    bool has_config = m.contains("hf_config") && !m["hf_config"].is_null();
    if (has_preset && has_config) {
        issues.push_back({"model", "give exactly one of preset, hf_config or the model's fields by hand", ""});
        return;
    }
    s.model_input = m;
    ModelRead read;
    std::optional<ParamCount> counted;  // a preset's, counted once with the catalogue
    if (has_preset) {
        if (!m["preset"].is_string()) {
            issues.push_back({"model.preset", "must be a Hub id or alias string", show(m["preset"])});
            return;
        }
        std::string id = m["preset"].get<std::string>();
        const PresetModel* preset = preset_model(id);
        if (!preset) {
            std::string near;
            for (const auto& n : nearest_presets(id, 3)) near += (near.empty() ? " (closest: " : ", ") + n;
            issues.push_back({"model.preset",
                              "is not a bundled preset" + (near.empty() ? "" : near + ")") +
                                  "; give the model's config.json as model.hf_config instead",
                              show(m["preset"])});
            return;
        }
        read = preset->read;
        counted = preset->params;
        s.model_source = "preset " + preset->model_id;
    } else if (has_config) {
        read = read_hf_config(m["hf_config"], "model.hf_config");
        if (read.model && m.contains("name") && m["name"].is_string()) read.model->name = m["name"];
        if (read.model && read.model->name.empty()) read.model->name = "config.json";
        s.model_source = "hf_config";
    } else {
        read = read_manual_model(m, "model", s.defaults_applied);
        s.model_source = "manual";
    }
    issues.insert(issues.end(), read.issues.begin(), read.issues.end());
    s.warnings.insert(s.warnings.end(), read.warnings.begin(), read.warnings.end());
    if (read.model) {
        s.model = std::move(*read.model);
        s.params = counted ? *counted : count_parameters(s.model);  // a declared size is the manual reader's warning
    }
}

// A warning when `tokens` (the field at `path`) is longer than the model's max_position_embeddings.
void warn_if_longer_than_model(Scenario& s, const char* path, std::uint64_t tokens) {
    if (s.model.max_position_embeddings && tokens > s.model.max_position_embeddings)
        s.warnings.push_back(std::string(path) + " " + std::to_string(tokens) + " is longer than the model's " +
                             "max_position_embeddings " + std::to_string(s.model.max_position_embeddings));
}

// Images per sample and tokens per image (image tokens count toward the sequence).
void read_images(FieldReader& r, const Scenario& s, const std::string& section, std::uint64_t& images,
                 std::uint64_t& image_tokens, std::vector<std::string>& defaults_applied) {
    images = r.uint("images", 0, 100000).value_or(0);
    auto tokens = r.uint("image_tokens", 1, 1 << 24);
    if (images == 0) return;
    if (s.model.vision_shape.hidden == 0) {
        r.fail("images", "needs a multimodal model with a known vision tower (llava, gemma3, qwen2_vl)",
               r.get("images"));
        return;
    }
    if (tokens) {
        image_tokens = *tokens;
    } else if (s.model.vision_shape.tokens_per_image) {
        image_tokens = s.model.vision_shape.tokens_per_image;
        defaults_applied.push_back(section + ".image_tokens = " + std::to_string(image_tokens) +
                                   " (from the model's config)");
    } else {
        r.fail("image_tokens", "is needed: this model's tokens per image depend on the image size", nullptr);
    }
}

// gpu-mem-calculator's activation_checkpointing levels 0-4 (its web form: 0 none, 1 "checkpoint attention
// output", 2 "checkpoint attention input", 3 "checkpoint layer + attention", 4 "full checkpointing"; its
// formula keeps 100, 80, 60, 40 and 20% of the activations). Levels 1 and 2 recompute inside the attention
// only, which is our selective; 3 and 4 recompute whole layers, which is our full.
struct CheckpointLevel {
    Checkpointing mode;
    const char* meaning;
};
constexpr CheckpointLevel kCheckpointLevels[] = {
    {Checkpointing::None, "no checkpointing"},
    {Checkpointing::Selective, "checkpoint attention output"},
    {Checkpointing::Selective, "checkpoint attention input"},
    {Checkpointing::Full, "checkpoint layer + attention"},
    {Checkpointing::Full, "full checkpointing"},
};

// training.activation_checkpointing: a name, true/false, or gpu-mem-calculator's integer level (above,
// recorded with its meaning); or gradient_checkpointing as a boolean.
// Left open, an adapter fine-tune (LoRA, QLoRA) checkpoints whole layers, as the example configs people start
// from do: axolotl examples/llama-3/qlora.yml @ba1be71d and lora-8b.yml @9f824ef7 (gradient_checkpointing: true),
// torchtune recipes/configs/llama3_1/8B_qlora_single_device.yaml @0b3e04ad and 8B_lora_single_device.yaml
// @2943c61e (enable_activation_checkpointing: True); other methods keep the field's default (none).
Checkpointing read_checkpointing(FieldReader& r, Defaults& d, std::vector<std::string>& defaults_applied,
                                 Method method) {
    std::optional<Checkpointing> ckpt;
    const json* v = r.get("activation_checkpointing");
    if (v && v->is_boolean()) {
        ckpt = v->get<bool>() ? Checkpointing::Full : Checkpointing::None;
    } else if (v && v->is_number()) {
        const double level = v->get<double>();
        if (level >= 0 && level <= 4 && level == std::floor(level)) {
            const CheckpointLevel& l = kCheckpointLevels[static_cast<std::size_t>(level)];
            ckpt = l.mode;
            defaults_applied.push_back("training.activation_checkpointing = \"" + std::string(name(l.mode)) +
                                       "\" (gpu-mem-calculator's level " + std::to_string(static_cast<int>(level)) +
                                       ": " + l.meaning + ")");
        } else {
            r.fail("activation_checkpointing",
                   allowed_text<Checkpointing>() + ", true, false, or a gpu-mem-calculator level from 0 to 4", v);
        }
    } else {
        ckpt = given_setting(r, kCheckpointingField);
    }
    if (!ckpt && r.get("gradient_checkpointing")) {
        if (auto b = r.boolean("gradient_checkpointing")) ckpt = *b ? Checkpointing::Full : Checkpointing::None;
    }
    if (!ckpt && (method == Method::Lora || method == Method::Qlora)) {
        defaults_applied.push_back(std::string(kCheckpointingField.path) + " = \"full\" (what LoRA and QLoRA " +
                                   "fine-tunes run: axolotl's and torchtune's example configs turn it on)");
        return Checkpointing::Full;
    }
    return apply_setting(d, ckpt, kCheckpointingField.fallback, kCheckpointingField.path);
}

// The step's shape and the settings every method has: batch, sequence, dtype, optimizer,
// checkpointing, attention and loss. Precision and state dtype as given (resolve_precision).
void read_step(FieldReader& r, Defaults& d, Scenario& s) {
    TrainingSettings& x = s.training;
    x.method = read_setting(r, d, kMethodField);
    x.batch_size = d.apply(r.uint("batch_size", 1, 1000000), std::uint64_t{1}, "training.batch_size");
    auto accumulation = r.uint("gradient_accumulation_steps", 1, 1000000);
    const std::uint64_t micro = s.engine.micro_batches;
    // Megatron's micro-batches per step are its gradient accumulation; gpu-mem-calculator's page writes
    // both fields (num_micro_batches 1 by default), so the explicit accumulation wins, said when they differ.
    if (micro > 0 && accumulation && *accumulation != micro)
        s.warnings.push_back("engine.num_micro_batches (" + std::to_string(micro) +
                             ") differs from training.gradient_accumulation_steps (" + std::to_string(*accumulation) +
                             "): the accumulation steps are used");
    if (micro > 0 && !accumulation) {
        accumulation = micro;
        if (micro > 1)
            s.defaults_applied.push_back("training.gradient_accumulation_steps = " + std::to_string(micro) +
                                         " (engine.num_micro_batches)");
    }
    x.gradient_accumulation_steps = d.apply(accumulation, std::uint64_t{1}, "training.gradient_accumulation_steps");
    std::uint64_t fallback_seq =
        std::min<std::uint64_t>(2048, s.model.max_position_embeddings ? s.model.max_position_embeddings : 2048);
    // gpu-mem-calculator's config format has no training sequence length: it trains at model.max_seq_len.
    const bool by_hand_max_seq_len = s.model_source == "manual" && s.model_input.is_object() &&
                                     s.model_input.contains("max_seq_len") && !s.model_input["max_seq_len"].is_null();
    if (by_hand_max_seq_len) fallback_seq = s.model.max_position_embeddings;
    x.seq_len = d.apply(r.uint("seq_len", 1, 100000000), fallback_seq, "training.seq_len",
                        by_hand_max_seq_len ? "model.max_seq_len, as gpu-mem-calculator's config format trains" : "");
    x.dtype = read_setting(r, d, kDtypeField);
    x.precision = given_setting(r, kPrecisionField).value_or(kPrecisionField.fallback);
    // Aliases (settings.h): bitsandbytes' Adam8bit keeps the same state as AdamW8bit; "paged_adamw" is its 32-bit paged
    // AdamW.
    x.optimizer = read_setting(r, d, kOptimizerField);
    x.optimizer_state_dtype = given_setting(r, kStateDtypeField).value_or(kStateDtypeField.fallback);
    x.activation_checkpointing = read_checkpointing(r, d, s.defaults_applied, x.method);
    x.attention = read_setting(r, d, kTrainingAttentionField);
    x.loss = read_setting(r, d, kLossField);
}

// training.lora (lora and qlora): rank, alpha and target modules; the dropout as given (its default
// depends on the framework, read later).
std::optional<double> read_lora(const json& t, Defaults& d, Scenario& s, std::vector<Issue>& issues) {
    TrainingSettings& x = s.training;
    const json& l = section(t, "lora", issues, "training");
    FieldReader lr(l, "training.lora", issues);
    x.lora_rank = d.apply(lr.uint("rank", 1, 65536), std::uint64_t{8}, "training.lora.rank");
    x.lora_alpha = d.apply(lr.number("alpha", 0, 1e6), 2.0 * static_cast<double>(x.lora_rank), "training.lora.alpha");
    std::optional<double> dropout = lr.number("dropout", 0, 0.999);
    const json* tm = lr.get("target_modules");
    if (!tm) {
        s.defaults_applied.push_back(
            "training.lora.target_modules = [\"q_proj\",\"v_proj\"] (PEFT's default for llama)");
        return dropout;
    }
    std::vector<LoraTarget> targets;
    bool ok = tm->is_array() && !tm->empty();
    if (ok)
        for (const json& e : *tm) {
            auto target = e.is_string() ? parse_setting<LoraTarget>(e.get_ref<const std::string&>()) : std::nullopt;
            if (!target) ok = false;
            else targets.push_back(*target);
        }
    if (!ok) lr.fail("target_modules", "must be a non-empty list of " + names_text<LoraTarget>(), tm);
    else if (std::find(targets.begin(), targets.end(), LoraTarget::AllLinear) != targets.end())
        x.lora_targets = {LoraTarget::QProj,    LoraTarget::KProj,  LoraTarget::VProj,   LoraTarget::OProj,
                          LoraTarget::GateProj, LoraTarget::UpProj, LoraTarget::DownProj};
    else x.lora_targets = targets;
    return dropout;
}

// Method "frozen": what trains (the top layers, the head, a module under the first layer); the
// same fields under any other method are an issue.
void read_trained_layers(FieldReader& r, Defaults& d, Scenario& s) {
    TrainingSettings& x = s.training;
    if (x.method != Method::Frozen) {
        for (const char* k : {"trainable_layers", "trainable_input_parameters", "train_lm_head"})
            if (r.get(k)) r.fail(k, "applies to method \"frozen\" only", r.get(k));
        return;
    }
    x.trainable_layers = d.apply(r.uint("trainable_layers", 0, s.model.num_layers), std::uint64_t{0},
                                 "training.trainable_layers", "the top N decoder layers train");
    x.trainable_input_parameters =
        d.apply(r.uint("trainable_input_parameters", 0, std::uint64_t{1} << 50), std::uint64_t{0},
                "training.trainable_input_parameters", "a trainable module feeding the first layer");
    x.train_lm_head = d.apply(r.boolean("train_lm_head"), false, "training.train_lm_head");
    if (x.trainable_layers == 0 && x.trainable_input_parameters == 0 && !x.train_lm_head)
        r.fail("method",
               "\"frozen\" needs something to train: trainable_layers, trainable_input_parameters or train_lm_head",
               r.get("method"));
}

// The training loop and the habits whose defaults it sets (LoRA dropout, litgpt's untied head copy
// and retained previous step), torch.compile, and the switches that follow no framework.
void read_framework(FieldReader& r, Defaults& d, Scenario& s, std::optional<double> lora_dropout) {
    TrainingSettings& x = s.training;
    std::vector<std::string> quiet;
    Defaults q{quiet};
    x.framework_version = read_setting(r, q, kFrameworkVersionField);
    const bool release = x.framework_version != FrameworkVersion::Current;
    const Framework release_of = x.framework_version == FrameworkVersion::Torchtune01 ? Framework::Torchtune
                                 : release                                            ? Framework::Transformers
                                                                                      : kFrameworkField.fallback;
    // A release names its framework: where the framework is left out, it is the release's.
    x.framework = apply_setting(d, given_setting(r, kFrameworkField), release_of, kFrameworkField.path);
    const Framework family_of = release ? release_of : x.framework;
    if (family_of != x.framework)
        r.fail("framework_version",
               std::string("\"") + name(x.framework_version) + "\" is a release of " + name(family_of) +
                   ": it needs training.framework \"" + name(family_of) + "\" (this scenario's is \"" +
                   name(x.framework) + "\")",
               r.get("framework_version"));
    if (x.framework_version == FrameworkVersion::Transformers2022) {
        // The defaults of PyTorch 1.x under the Trainer of 2022, which "overheads" may still override (read after):
        // Optimizer.zero_grad(set_to_none=False) kept the gradients allocated (True is the default from torch 2.0);
        // the Trainer's default optim "adamw_hf" (transformers.optimization.AdamW) steps one parameter at a time,
        // no state-sized foreach temporary; and CUDA loaded every kernel module of libtorch_cuda, cuBLAS and cuDNN
        // when the context was made (lazy loading, CUDA_MODULE_LOADING=LAZY, is PyTorch's default from 2.0 on
        // CUDA 11.7+): transformers' docs/source/en/perf_train_gpu_one.mdx (2022) measures 1343 MiB of GPU memory
        // used after one tiny tensor on a V100-SXM2-16GB.
        s.overheads[Tunable::ZeroGradSetToNone] = 0;
        s.overheads[Tunable::OptimizerStepTempCopies] = 0;
        s.overheads[Tunable::CudaContextGib] = 1343.0 / 1024;
        s.defaults_applied.push_back(
            "overheads.zero_grad_set_to_none = 0, optimizer_step_temp_copies = 0, cuda_context_gib = 1.31 "
            "(transformers_2022: PyTorch 1.x zero_grad, adamw_hf, every CUDA module loaded at start)");
    }
    const bool litgpt = x.framework == Framework::Litgpt;
    // LoRA dropout: PEFT's LoraConfig and torchtune's LoRA builders default to 0, litgpt's finetune/lora.py to 0.05.
    // torchtune's builders defaulted to 0.05 until d7fae9677 (#1492, 2024-09-11), which its 0.1 configs did not
    // override (torchtune/models/llama2/_model_builders.py lora_llama2_7b @fef3ed10d).
    const bool torchtune_01 = x.framework_version == FrameworkVersion::Torchtune01;
    if (x.method == Method::Lora || x.method == Method::Qlora)
        x.lora_dropout = d.apply(lora_dropout, litgpt || torchtune_01 ? 0.05 : 0.0, "training.lora.dropout",
                                 litgpt         ? "litgpt's default"
                                 : torchtune_01 ? "torchtune 0.1's LoRA builders' default (0 from 2024-09-11)"
                                                : "PEFT's and torchtune's default");
    x.optimizer_in_backward = q.apply(r.boolean("optimizer_in_backward"), false, "training.optimizer_in_backward");
    x.activation_offloading = q.apply(r.boolean("activation_offloading"), false, "training.activation_offloading");
    if (const json* c = r.get("compile"); c != nullptr && c->is_boolean())
        x.compile = c->get<bool>() ? Compile::LayersAndLoss : Compile::None;  // torch.compile of the whole step
    else x.compile = read_setting(r, q, kCompileField);
    // litgpt: convert_hf_checkpoint.py copies transformer.wte.weight into lm_head.weight for tied checkpoints,
    // and fit() rebinds `loss` / `logits` only after the next forward.
    Defaults framework_default{s.model.tie_word_embeddings && litgpt ? s.defaults_applied : quiet};
    x.untie_embeddings = framework_default.apply(r.boolean("untie_embeddings"), litgpt, "training.untie_embeddings",
                                                 "litgpt keeps a separate lm_head copy of tied embeddings");
    Defaults litgpt_default{litgpt ? s.defaults_applied : quiet};
    x.retains_previous_step =
        litgpt_default.apply(r.boolean("retains_previous_step"), litgpt, "training.retains_previous_step",
                             "litgpt's loop holds the last loss and logits through the next forward");
    if (x.method == Method::Qlora)
        x.double_quant = d.apply(r.boolean("double_quant"), false, "training.double_quant",
                                 "bitsandbytes' bnb_4bit_use_double_quant default");
    if (x.untie_embeddings && !s.model.tie_word_embeddings)
        s.warnings.push_back("training.untie_embeddings has no effect: the model's embeddings are not tied");
}

// Pipeline micro-batches: the step's micro-batches go through the pipeline; a schedule with fewer
// micro-batches than stages leaves stages idle, so engines split into at least pp of them
// (torchtitan's default n_microbatches = pipeline degree; Megatron needs >= pp for 1F1B).
void read_pipeline_microbatches(FieldReader& r, Scenario& s) {
    std::uint64_t pp = s.parallel.pp;
    auto micro = r.uint("pipeline_microbatches", 1, 1 << 20);
    s.parallel.pipeline_microbatches_given = micro.has_value();
    if (micro) {
        s.parallel.pipeline_microbatches = *micro;
        return;
    }
    s.parallel.pipeline_microbatches = std::max(s.training.gradient_accumulation_steps, pp);
    if (pp > 1)
        s.defaults_applied.push_back(
            "training.pipeline_microbatches = " + std::to_string(s.parallel.pipeline_microbatches) +
            " (max of gradient_accumulation_steps and the pipeline degree)");
}

// The precision recipe ("auto" follows the engine) and the optimizer's state dtype (follows the recipe).
void resolve_precision(Scenario& s) {
    TrainingSettings& x = s.training;
    const bool adapters = x.method == Method::Lora || x.method == Method::Qlora;
    if (x.precision == Precision::Auto) {
        Precision resolved;
        const EngineType e = s.engine.type;
        if (x.dtype == Dtype::Fp32) resolved = Precision::Pure;
        else if (adapters) resolved = Precision::Pure;  // frozen base in the compute dtype; adapters handled apart
        else if (e == EngineType::DeepSpeed) resolved = Precision::MixedMasterFp32;
        else if (e == EngineType::Megatron || e == EngineType::MegatronDeepSpeed) resolved = Precision::MixedFp32Grads;
        else resolved = Precision::AmpFp32Weights;  // HF Trainer bf16=True on a model loaded in fp32
        s.defaults_applied.push_back("training.precision = \"" + std::string(name(resolved)) + "\" (auto for engine " +
                                     name(e) + ")");
        x.precision = resolved;
    }
    if (x.optimizer_state_dtype == StateDtype::Auto) {
        // The compute dtype under a pure recipe (fp8 keeps bf16 moments), int8 for 8-bit optimizers, else fp32.
        StateDtype resolved = StateDtype::Fp32;
        if (x.precision == Precision::Pure && !adapters)
            resolved = x.dtype == Dtype::Fp32   ? StateDtype::Fp32
                       : x.dtype == Dtype::Fp16 ? StateDtype::Fp16
                                                : StateDtype::Bf16;
        if (is_8bit(x.optimizer)) resolved = StateDtype::Int8;
        s.defaults_applied.push_back("training.optimizer_state_dtype = \"" + std::string(name(resolved)) +
                                     "\" (follows the precision recipe)");
        x.optimizer_state_dtype = resolved;
    }
}

// The "training" section, in the order its defaults are listed.
void read_training(const json& doc, Scenario& s, std::vector<Issue>& issues) {
    const json& t = section(doc, "training", issues);
    FieldReader r(t, "training", issues);
    Defaults d{s.defaults_applied};
    TrainingSettings& x = s.training;
    read_step(r, d, s);
    std::optional<double> lora_dropout;
    if (x.method == Method::Lora || x.method == Method::Qlora) lora_dropout = read_lora(t, d, s, issues);
    if (x.method == Method::Qlora) x.quantization = read_setting(r, d, kQuantizationField);
    read_trained_layers(r, d, s);
    read_framework(r, d, s, lora_dropout);
    read_pipeline_microbatches(r, s);
    read_images(r, s, "training", x.images, x.image_tokens, s.defaults_applied);
    if (x.images)
        s.warnings.push_back(
            "training with images: their tokens join the sequence; the vision tower's own activations "
            "are not modelled in training yet");
    resolve_precision(s);
    warn_if_longer_than_model(s, "training.seq_len", x.seq_len);
}

// The weight format a checkpoint's quantization_config stores its layers in; nullopt when it has
// none, or one that is not modelled.
std::optional<WeightFormat> checkpoint_format(const ModelSpec& m) {
    const auto& q = m.quantization;
    if (!q) return std::nullopt;
    if (q->method == "bitsandbytes")
        return q->bits == 4 ? (q->quant_type == "nf4" ? WeightFormat::Nf4 : WeightFormat::Fp4) : WeightFormat::Int8;
    if (q->method == "gptq" || q->method == "awq") return q->bits == 8 ? WeightFormat::Int8 : WeightFormat::Int4;
    if (q->method == "fp8") return WeightFormat::Fp8;
    if (q->method == "mxfp4") return WeightFormat::Mxfp4;
    if (q->method == "modelopt" && !q->schemes.empty()) return q->bits == 4 ? WeightFormat::Nvfp4 : WeightFormat::Fp8;
    // compressed-tensors: its first scheme's values (the layout per tensor is the model's, quantized.cpp).
    if (q->method == "compressed-tensors" && !q->schemes.empty() && q->format != "dense") {
        const auto& w = q->schemes.front();
        if (q->format == "nvfp4-pack-quantized") return WeightFormat::Nvfp4;
        if (q->format == "mxfp4-pack-quantized") return WeightFormat::Mxfp4;
        if (w.bits == 8) return w.is_float ? WeightFormat::Fp8 : WeightFormat::Int8;
        if (w.bits == 4 && !w.is_float) return WeightFormat::Int4;
    }
    return std::nullopt;
}

// inference.weight_format: "auto" resolves to the checkpoint's own format (quantization_config when
// it has one, else its dtype). A format given that equals the checkpoint's quantization is that
// quantization (its unconverted modules and groups too), so a resolved scenario, which names the
// format, gives the same figures. nullptr (and an issue) when the checkpoint's dtype is no format.
const Format* read_weight_format(FieldReader& r, Scenario& s) {
    InferenceSettings& x = s.inference;
    // The table's names (settings.h: "auto" and the catalogue's, in its order), then the scenario's own formats.
    std::vector<std::string> format_ids;
    for (const auto& row : kWeightFormats) format_ids.push_back(row.name);
    for (const Format& f : s.formats)
        if (!parse_setting<WeightFormat>(f.id)) format_ids.push_back(f.id);
    std::string format = r.choice("weight_format", format_ids).value_or("auto");
    auto group = r.uint("group_size", 0, 1 << 20);
    const auto& q = s.model.quantization;
    const std::optional<WeightFormat> quantized_as = checkpoint_format(s.model);
    if (format == "auto") {
        std::string why = !quantized_as ? "the checkpoint's dtype" : "quantization_config: " + q->method;
        if (!quantized_as && q && !q->method.empty())
            s.warnings.push_back("quantization_config method '" + q->method + "' is not modelled: weights taken in " +
                                 s.model.checkpoint_dtype);
        format = quantized_as ? name(*quantized_as) : s.model.checkpoint_dtype;
        s.defaults_applied.push_back("inference.weight_format = \"" + format + "\" (" + why + ")");
    }
    const Format* resolved = s.format(format);
    if (!resolved) {
        r.fail("weight_format", "is needed: the checkpoint's dtype \"" + format + "\" is not a weight format", nullptr);
        return nullptr;
    }
    x.weight_format = static_cast<std::size_t>(resolved - s.formats.data());
    if (quantized_as && resolved->builtin == quantized_as) {
        x.weight_format_from_checkpoint = true;
        if (!group && (q->method == "gptq" || q->method == "awq" || q->method == "compressed-tensors"))
            group = q->group_size;
    }
    if (resolved->builtin == WeightFormat::Int4) {
        x.group_size = group.value_or(128);
        if (!group) s.defaults_applied.push_back("inference.group_size = 128 (GPTQ/AWQ's usual scale group)");
    }
    return resolved;
}

// inference.kv_cache_dtype: "auto" is llama.cpp's f16, else the activation dtype: a plain float
// format's own, else the checkpoint's (bf16 for an fp32 checkpoint, or one no cache dtype names).
void read_kv_cache_dtype(FieldReader& r, const Format& weights, Scenario& s) {
    InferenceSettings& x = s.inference;
    x.kv_cache_dtype = given_setting(r, kKvCacheDtypeField).value_or(kKvCacheDtypeField.fallback);
    if (x.kv_cache_dtype == KvCacheDtype::Auto && x.engine == InferenceEngine::LlamaCpp) {
        x.kv_cache_dtype = KvCacheDtype::Fp16;  // llama.cpp's cache_type_k / cache_type_v default: f16
        s.defaults_applied.push_back("inference.kv_cache_dtype = \"fp16\" (llama.cpp's default cache type)");
    }
    if (x.kv_cache_dtype == KvCacheDtype::Auto) {
        const auto w = weights.builtin;
        bool plain = w == WeightFormat::Fp32 || w == WeightFormat::Fp16 || w == WeightFormat::Bf16;
        auto checkpoint = parse_setting<KvCacheDtype>(s.model.checkpoint_dtype);
        x.kv_cache_dtype = plain                                             ? *parse_setting<KvCacheDtype>(weights.id)
                           : checkpoint && *checkpoint != KvCacheDtype::Fp32 ? *checkpoint
                                                                             : KvCacheDtype::Bf16;
        s.defaults_applied.push_back("inference.kv_cache_dtype = \"" + std::string(name(x.kv_cache_dtype)) +
                                     "\" (the activation dtype)");
    }
}

// SGLang's defaults by card (gpu_mem: MiB as nvidia-smi reports the card, get_device_memory_capacity), from
// python/sglang/srt/server_args.py ServerArgs.__post_init__ / _handle_gpu_memory_settings:
// - chunked_prefill_size: before PR #10975 2048 under 35 GiB, 8192 under 160 GiB, else 16384; from #10975 also
//   4096 from 35 to 60 GiB (A100-40GB, L40).
// - the largest CUDA-graph batch (cuda_graph_max_bs, #10975's table): 8 under 20 GiB; under 35 GiB 24 (80 from
//   TP 4); under 60 GiB 32 (160 from TP 4); under 160 GiB 256 (512 from TP 4); else 512.
struct SglangCardDefaults {
    std::uint64_t chunk = 8192;
    double graph_max_bs = 256;
};
SglangCardDefaults sglang_card_defaults(double gpu_mib, double tp, SglangReserve family) {
    SglangCardDefaults d;
    const bool big_tp = tp >= 4;
    if (family == SglangReserve::ByCard) {
        d.chunk = gpu_mib < 35 * 1024 ? 2048 : gpu_mib < 160 * 1024 ? 8192 : 16384;
    } else {
        d.chunk = gpu_mib < 35 * 1024 ? 2048 : gpu_mib < 60 * 1024 ? 4096 : gpu_mib < 160 * 1024 ? 8192 : 16384;
    }
    d.graph_max_bs = gpu_mib < 20 * 1024    ? 8
                     : gpu_mib < 35 * 1024  ? (big_tp ? 80 : 24)
                     : gpu_mib < 60 * 1024  ? (big_tp ? 160 : 32)
                     : gpu_mib < 160 * 1024 ? (big_tp ? 512 : 256)
                                            : 512;
    return d;
}

// SGLang's default share of the memory for weights and KV pool, (gpu_mem - reserved) / gpu_mem rounded to
// 3 decimals, by family:
// - ByCard (PR #7054, "Simplify the heuristics", merged 2025-06-10): reserved MiB = (2.8 + TP x PP / 10) GiB under
//   35 GiB (T4, A10, L40, 4090), (9.5 + TP x PP / 2) GiB under 90 GiB (H100, A100), (12 + TP x PP / 2) GiB under
//   160 GiB (H20, H200), else 32 GiB (B200, MI300).
// - ByChunkAndGraphs (PR #10975, merged 2025-09-29, with PR #11076's constants, 2025-09-30): reserved MiB = 512
//   (attention backends' metadata) + 1.5 x max(chunked_prefill_size, 2048) (the prefill chunk's activations) +
//   2 x cuda_graph_max_bs (the CUDA graphs) + TP x PP / 8 x 1024. Later releases add a floor of 10 GiB above
//   60 GiB (never binding at the default chunk: 13,440 MiB on an H100) and a piecewise-CUDA-graph term (8 MiB a
//   captured size); neither is modelled (the release that brought them is not known here).
double sglang_mem_fraction_static(double gpu_mib, double tp, double pp, std::uint64_t chunk, SglangReserve family) {
    const double parallel = tp * pp;
    double reserved = 0;
    if (family == SglangReserve::ByCard) {
        reserved = gpu_mib < 35 * 1024    ? (2.8 + parallel / 10) * 1024
                   : gpu_mib < 90 * 1024  ? (9.5 + parallel / 2) * 1024
                   : gpu_mib < 160 * 1024 ? (12 + parallel / 2) * 1024
                                          : 32.0 * 1024;
    } else {
        const SglangCardDefaults d = sglang_card_defaults(gpu_mib, tp, family);
        reserved =
            512 + 1.5 * std::max<double>(static_cast<double>(chunk), 2048) + 2 * d.graph_max_bs + parallel / 8 * 1024;
    }
    return std::round((gpu_mib - reserved) / gpu_mib * 1000) / 1000;
}

// SGLang's, TGI's and TensorRT-LLM's memory settings, each defaulting to its engine's own rule;
// their defaults are listed only for the engine in use.
void read_serving_engine_settings(FieldReader& r, Scenario& s) {
    InferenceSettings& x = s.inference;
    std::vector<std::string> quiet;
    Defaults sglang{x.engine == InferenceEngine::Sglang ? s.defaults_applied : quiet},
        tgi{x.engine == InferenceEngine::Tgi ? s.defaults_applied : quiet},
        trt{x.engine == InferenceEngine::TensorrtLlm ? s.defaults_applied : quiet};
    const double gpu_mib = static_cast<double>(s.hardware.gpu_memory_bytes) / (1 << 20);
    SglangReserve family = SglangReserve::ByChunkAndGraphs;
    if (x.engine == InferenceEngine::Sglang) {
        x.engine_version = sglang.apply(r.string("engine_version"), std::string(kSglangDefaultVersion),
                                        "inference.engine_version", "the newest SGLang family gpumem follows");
        if (auto f = sglang_family(x.engine_version)) family = *f;
        else
            r.fail("engine_version",
                   "must be an SGLang release \"0.4.MINOR\" from 0.4.7 or \"0.5.PATCH\", e.g. \"0.5.3\"",
                   r.get("engine_version"));
    }
    const double tp = static_cast<double>(s.parallel.tp), pp = static_cast<double>(s.parallel.pp);
    x.chunked_prefill_size =
        sglang.apply(r.uint("chunked_prefill_size", 1, 1 << 24), sglang_card_defaults(gpu_mib, tp, family).chunk,
                     "inference.chunked_prefill_size", "SGLang's default by GPU memory");
    const double fraction = sglang_mem_fraction_static(gpu_mib, tp, pp, x.chunked_prefill_size, family);
    x.mem_fraction_static = sglang.apply(
        r.number("mem_fraction_static", 0.01, 1.0), std::max(0.01, fraction), "inference.mem_fraction_static",
        family == SglangReserve::ByCard
            ? "SGLang's rule: the card less a reserve by its memory and TP x PP"
            : "SGLang's rule: the card less 512 MiB + 1.5 x the prefill chunk + 2 x the largest CUDA graph batch + "
              "TP x PP / 8 GiB");
    // TGI's launcher (huggingface/text-generation-inference launcher/src/main.rs, "max_default = 4096"):
    // max_total_tokens is the model's max_position_embeddings capped at 4096, and the warm-up's
    // max_batch_prefill_tokens is max_input_tokens (max_total_tokens - 1) + 50.
    const std::uint64_t mpe = s.model.max_position_embeddings ? s.model.max_position_embeddings : 4096;
    // Raised to the scenario's context, which TGI would otherwise refuse.
    x.max_total_tokens =
        tgi.apply(r.uint("max_total_tokens", 2, 100000000), std::max(x.context_len, std::min<std::uint64_t>(mpe, 4096)),
                  "inference.max_total_tokens", "TGI's launcher: max_position_embeddings up to 4096, or the context");
    x.max_batch_prefill_tokens =
        tgi.apply(r.uint("max_batch_prefill_tokens", 1, 100000000), x.max_total_tokens - 1 + 50,
                  "inference.max_batch_prefill_tokens", "TGI's launcher: max_input_tokens + 50");
    x.cuda_memory_fraction = tgi.apply(r.number("cuda_memory_fraction", 0.01, 1.0), 1.0,
                                       "inference.cuda_memory_fraction", "TGI's launcher default");
    if (x.engine == InferenceEngine::Tgi && x.context_len > x.max_total_tokens)
        r.fail("context_len",
               "must be at most inference.max_total_tokens (" + std::to_string(x.max_total_tokens) +
                   ") for tgi, which refuses longer requests",
               r.get("context_len"));
    // TensorRT-LLM (NVIDIA/TensorRT-LLM tensorrt_llm/llmapi/llm_args.py KvCacheConfig.free_gpu_memory_fraction
    // = 0.9; tensorrt_llm/commands/serve.py --max_num_tokens default 8192).
    x.free_gpu_memory_fraction = trt.apply(r.number("free_gpu_memory_fraction", 0.01, 1.0), 0.9,
                                           "inference.free_gpu_memory_fraction", "KvCacheConfig's default");
    x.max_num_tokens = trt.apply(r.uint("max_num_tokens", 1, 1 << 24), std::uint64_t{8192}, "inference.max_num_tokens",
                                 "trtllm-serve's default");
}

// The serving engines' own settings: vLLM's share of the card, step and block; llama.cpp's GPU
// layers and ubatch. Their defaults are listed only for the engine in use.
void read_engine_settings(FieldReader& r, Scenario& s) {
    InferenceSettings& x = s.inference;
    std::vector<std::string> quiet;
    Defaults vllm{x.engine == InferenceEngine::Vllm ? s.defaults_applied : quiet},
        llamacpp{x.engine == InferenceEngine::LlamaCpp ? s.defaults_applied : quiet};
    x.gpu_memory_utilization =
        vllm.apply(r.number("gpu_memory_utilization", 0.01, 1.0), 0.9, "inference.gpu_memory_utilization");
    // vLLM's engine arguments by card (vllm/engine/arg_utils.py EngineArgs._set_default_args, 0.10 and later):
    // `vllm serve` on a card whose CUDA total is at least 70 GiB and that is not an A100 schedules 8192 tokens
    // and 1024 sequences a step; on other cards 2048 tokens and 256 sequences.
    // (the name test is vLLM's: "a100" not in the lower-cased device name; tests/engine/test_arg_utils.py).
    std::string card_name = s.hardware.gpu;
    std::transform(card_name.begin(), card_name.end(), card_name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    const bool big_card = static_cast<double>(s.hardware.cuda_total_bytes) >= 70.0 * static_cast<double>(kGiB) &&
                          card_name.find("a100") == std::string::npos;
    x.engine_version = vllm.apply(x.engine == InferenceEngine::Vllm ? r.string("engine_version") : std::nullopt,
                                  std::string(kVllmDefaultVersion), "inference.engine_version",
                                  "the newest vLLM family gpumem follows");
    const auto family = vllm_family(x.engine_version);
    if (family) {
        x.vllm_sampler = *family;
    } else {
        r.fail("engine_version",
               "must be a vLLM release \"0.MINOR\" or \"0.MINOR.PATCH\" from 0.10 on (the V1 engine), e.g. "
               "\"0.11.0\", or \"0.8-v0\" / \"0.9.2-v0\" for the V0 engine of 0.8 and 0.9 (VLLM_USE_V1=0; their "
               "default V1 engine is not followed at those releases)",
               r.get("engine_version"));
    }
    if (family == VllmSampler::V0) {
        // The V0 engine (vllm/engine/arg_utils.py EngineArgs._set_default_args_v0 and vllm/config.py
        // SchedulerConfig.__post_init__, 0.8/0.9): 256 sequences a step; chunked prefill on by default only for
        // a max_model_len above 32K on CUDA when the model is neither multimodal nor MLA and has no sliding
        // window (spec decoding, LoRA and pooling also keep it off; gpumem models none of them). With it,
        // 2048 tokens a step (DEFAULT_MAX_NUM_BATCHED_TOKENS); without, max(max_model_len, 2048).
        const ModelSpec& m = s.model;
        const bool multimodal = !m.vision_tower.empty() || !m.vision_model_type.empty();
        const bool chunked = x.context_len > 32768 && !multimodal && m.kv_lora_rank == 0 && m.sliding_window == 0;
        x.max_num_batched_tokens =
            vllm.apply(r.uint("max_num_batched_tokens", 1, 1 << 24),
                       chunked ? std::uint64_t{2048} : std::max<std::uint64_t>(x.context_len, 2048),
                       "inference.max_num_batched_tokens",
                       chunked ? "vLLM V0 with chunked prefill (max_model_len > 32K): 2048"
                               : "vLLM V0 without chunked prefill: max(max_model_len, 2048)");
        x.max_num_seqs = vllm.apply(r.uint("max_num_seqs", 1, 1 << 20), std::uint64_t{256}, "inference.max_num_seqs",
                                    "vLLM V0's default");
    } else {
        x.max_num_batched_tokens =
            vllm.apply(r.uint("max_num_batched_tokens", 1, 1 << 24), std::uint64_t{big_card ? 8192u : 2048u},
                       "inference.max_num_batched_tokens", "vllm serve's default for this card");
        x.max_num_seqs = vllm.apply(r.uint("max_num_seqs", 1, 1 << 20), std::uint64_t{big_card ? 1024u : 256u},
                                    "inference.max_num_seqs", "vllm serve's default for this card");
    }
    x.block_size = vllm.apply(r.uint("block_size", 1, 1 << 16), std::uint64_t{16}, "inference.block_size");
    if (auto layers = r.get("gpu_layers")) {
        if (layers->is_number_integer() && layers->get<std::int64_t>() == -1) x.gpu_layers = -1;
        else if (auto n = r.uint("gpu_layers", 0, s.model.num_layers ? s.model.num_layers : 1))
            x.gpu_layers = static_cast<std::int64_t>(*n);
    } else {
        llamacpp.list.push_back("inference.gpu_layers = -1 (every layer on the GPU)");
    }
    x.ubatch =
        llamacpp.apply(r.uint("ubatch", 1, 1 << 20), std::uint64_t{512}, "inference.ubatch", "llama.cpp's n_ubatch");
    read_serving_engine_settings(r, s);
    // A setting of another engine than the scenario's would change nothing: an error naming its engine.
    for (const EngineField& f : kEngineFields) {
        // A field some engines share (engine_version) is checked once, against all of its engines.
        std::string engines;
        bool ours = false;
        const EngineField* first = nullptr;
        for (const EngineField& g : kEngineFields)
            if (std::string(g.key) == f.key) {
                if (!first) first = &g;
                ours = ours || g.engine == x.engine;
                engines += std::string(engines.empty() ? "" : " or ") + name(g.engine);
            }
        if (!ours && first == &f && r.get(f.key) != nullptr)
            r.fail(
                f.key,
                "applies to inference.engine " + engines + " only (this scenario's engine is " + name(x.engine) + ")",
                r.get(f.key));
    }
}

// The "inference" section, in the order its defaults are listed.
void read_inference(const json& doc, Scenario& s, std::vector<Issue>& issues) {
    const json& t = section(doc, "inference", issues);
    FieldReader r(t, "inference", issues);
    Defaults d{s.defaults_applied};
    InferenceSettings& x = s.inference;
    x.batch_size = d.apply(r.uint("batch_size", 1, 1000000), std::uint64_t{1}, "inference.batch_size");
    std::uint64_t fallback_ctx =
        std::min<std::uint64_t>(4096, s.model.max_position_embeddings ? s.model.max_position_embeddings : 4096);
    x.context_len = d.apply(r.uint("context_len", 1, 100000000), fallback_ctx, "inference.context_len");
    const Format* weights = read_weight_format(r, s);
    if (!weights) return;
    x.kv_cache = d.apply(r.boolean("kv_cache"), true, "inference.kv_cache");
    x.engine = read_setting(r, d, kInferenceEngineField);
    read_kv_cache_dtype(r, *weights, s);
    x.attention = apply_setting(d, given_setting(r, kInferenceAttentionField),
                                x.engine == InferenceEngine::Transformers || x.engine == InferenceEngine::LlamaCpp
                                    ? kInferenceAttentionField.fallback
                                    : Attention::Flash,
                                kInferenceAttentionField.path);
    read_engine_settings(r, s);
    read_images(r, s, "inference", x.images, x.image_tokens, s.defaults_applied);
    warn_if_longer_than_model(s, "inference.context_len", x.context_len);
}

void read_engine(const json& doc, Scenario& s, std::vector<Issue>& issues) {
    const json& e = section(doc, "engine", issues);
    FieldReader r(e, "engine", issues);
    // The engine section is the training engine's: a serving scenario runs its inference.engine, so none of
    // these defaults is listed there (what the serving user would read as the engine is inference.engine).
    std::vector<std::string> quiet;
    const bool training = s.mode == Mode::Training;
    Defaults d{training ? s.defaults_applied : quiet};
    EngineSettings& x = s.engine;
    auto type = given_setting(r, kEngineTypeField);
    if (!training && type && *type != EngineType::None)
        s.warnings.push_back("engine.type \"" + std::string(name(*type)) +
                             "\" is a training engine: a serving scenario runs inference.engine, so it is ignored");
    auto zero = r.uint("zero_stage", 0, 3);
    if (!training) type = EngineType::None;
    if (!type && zero && *zero > 0) {
        type = EngineType::DeepSpeed;
        s.defaults_applied.push_back("engine.type = \"deepspeed\" (implied by zero_stage)");
    }
    x.type = apply_setting(d, type, kEngineTypeField.fallback, kEngineTypeField.path);
    bool zero_engine = x.type == EngineType::DeepSpeed || x.type == EngineType::MegatronDeepSpeed;
    bool offloads = zero_engine || x.type == EngineType::Fsdp;
    // Settings that mean nothing for the chosen engine are not listed as assumptions.
    Defaults relevant{offloads ? s.defaults_applied : quiet};
    x.zero_stage = (zero_engine ? d : relevant).apply(zero, std::uint64_t{0}, "engine.zero_stage");
    Defaults fsdp{x.type == EngineType::Fsdp ? s.defaults_applied : quiet};
    auto sharding = given_setting(r, kFsdpShardingField);
    if (!sharding) sharding = r.setting<FsdpSharding>("sharding_strategy");  // gpu-mem-calculator's key
    x.fsdp_sharding = apply_setting(fsdp, sharding, kFsdpShardingField.fallback, kFsdpShardingField.path);
    x.offload_optimizer = read_setting(r, relevant, kOffloadOptimizerField);
    x.offload_param = read_setting(r, relevant, kOffloadParamField);
    if (!training) x.offload_optimizer = x.offload_param = Offload::None;  // the training engine's, ignored above
    if (x.offload_optimizer != Offload::None && !(zero_engine && x.zero_stage >= 1) && x.type != EngineType::Fsdp)
        r.fail("offload_optimizer", "needs DeepSpeed ZeRO stage 1-3 or FSDP", r.get("offload_optimizer"));
    if (x.offload_param != Offload::None && !(zero_engine && x.zero_stage == 3) && x.type != EngineType::Fsdp)
        r.fail("offload_param", "needs DeepSpeed ZeRO stage 3 or FSDP", r.get("offload_param"));
    if (x.type == EngineType::Fsdp && x.offload_param == Offload::Nvme)
        r.fail("offload_param", "FSDP offloads to cpu only", r.get("offload_param"));
    // Megatron's --use-distributed-optimizer and its micro-batches per step, under the names
    // gpu-mem-calculator's config files give them (its web page writes both for every engine).
    auto distributed = r.boolean("use_distributed_optimizer");
    x.distributed_optimizer = distributed.value_or(true);
    if (distributed && *distributed && x.type != EngineType::Megatron)
        s.warnings.push_back("engine.use_distributed_optimizer applies to megatron only (" + std::string(name(x.type)) +
                             " shards by its own settings): ignored");
    else if (x.type == EngineType::Megatron && !distributed)
        s.defaults_applied.push_back("engine.use_distributed_optimizer = true (Megatron's distributed optimizer)");
    x.micro_batches = r.uint("num_micro_batches", 1, 1000000).value_or(0);
    const bool megatron = x.type == EngineType::Megatron || x.type == EngineType::MegatronDeepSpeed;
    if (x.micro_batches > 1 && (!megatron || s.mode != Mode::Training))
        s.warnings.push_back("engine.num_micro_batches applies to megatron training only: ignored");
    if (!megatron) x.micro_batches = 0;
}

// The inference engine a scenario names (read in full by read_inference), or its default.
InferenceEngine named_inference_engine(const json& doc) {
    auto it = doc.find("inference");
    if (it != doc.end() && it->is_object()) {
        auto e = it->find("engine");
        if (e != it->end() && e->is_string())
            if (auto engine = parse_setting<InferenceEngine>(e->get_ref<const std::string&>())) return *engine;
    }
    return kInferenceEngineField.fallback;
}

// The layout a serving scenario gets when it gives only its GPU count: a serving engine splits the model
// over them by tensor parallelism (vllm serve --tensor-parallel-size, sglang --tp-size, TGI --num-shard,
// TensorRT-LLM tp_size), as large as the heads allow, with replicas for what is left; transformers'
// device_map="auto" and llama.cpp (its default --split-mode layer) put whole layers on each GPU in turn.
// Each default is recorded with its reason, so the layout is never silently replicas.
void serving_layout(Scenario& s, InferenceEngine engine, std::uint64_t gpus, std::optional<std::uint64_t>& tp,
                    std::optional<std::uint64_t>& pp) {
    const ModelSpec& m = s.model;
    const std::string n = std::to_string(gpus);
    if (engine == InferenceEngine::Transformers || engine == InferenceEngine::LlamaCpp) {
        if (m.num_layers && gpus > m.num_layers) return;
        pp = gpus;
        s.defaults_applied.push_back(
            "parallelism.pipeline_parallel_size = " + n + " (num_gpus " + n + ": " +
            (engine == InferenceEngine::LlamaCpp ? "llama.cpp's --split-mode layer" : "device_map=\"auto\"") +
            " puts whole layers on each GPU in turn)");
        return;
    }
    std::uint64_t best = 1;
    for (std::uint64_t t = 2; t <= gpus; ++t) {
        if (gpus % t || (m.num_attention_heads && m.num_attention_heads % t)) continue;
        if (m.num_key_value_heads && m.num_key_value_heads % t && t % m.num_key_value_heads) continue;
        best = t;
    }
    if (best == 1) return;
    tp = best;
    s.defaults_applied.push_back("parallelism.tensor_parallel_size = " + std::to_string(best) + " (num_gpus " + n +
                                 ": one " + name(engine) + " server split over " +
                                 (best == gpus ? "them" : std::to_string(best) + " of them per replica") +
                                 " by tensor parallelism, the largest size the attention heads allow)");
}

// The parallel sizes and the GPU count: data parallelism from num_gpus when only that is given, or when
// num_gpus is a multiple of the layout given (gpu-mem-calculator's config format: num_gpus is the cluster).
void read_layout(FieldReader& pr, FieldReader& hr, const json& p, const json& h, const json& doc, Scenario& s) {
    Parallelism& x = s.parallel;
    const std::uint64_t kMax = 1 << 20;
    auto dp = pr.uint("data_parallel_size", 1, kMax);
    std::vector<std::string> quiet;  // sizes of 1 on one GPU are not worth listing
    bool multi = dp.value_or(1) > 1 || (h.is_object() && h.contains("num_gpus") && h["num_gpus"] != 1) || !p.empty();
    Defaults dd{multi ? s.defaults_applied : quiet};
    auto tp = pr.uint("tensor_parallel_size", 1, kMax), pp = pr.uint("pipeline_parallel_size", 1, kMax);
    if (s.mode == Mode::Inference && !dp && !tp && !pp && !pr.get("context_parallel_size")) {
        // GPUs given for serving and no layout: one server over all of them, as people run it, not replicas.
        const json* gpus = h.is_object() && h.contains("num_gpus") ? &h["num_gpus"] : nullptr;  // read below
        if (gpus && gpus->is_number_integer() && *gpus > 1 && *gpus <= kMax)
            serving_layout(s, named_inference_engine(doc), gpus->get<std::uint64_t>(), tp, pp);
    }
    x.tp = dd.apply(tp, std::uint64_t{1}, "parallelism.tensor_parallel_size");
    x.pp = dd.apply(pp, std::uint64_t{1}, "parallelism.pipeline_parallel_size");
    x.ep = dd.apply(pr.uint("expert_parallel_size", 1, kMax), std::uint64_t{1}, "parallelism.expert_parallel_size");
    x.cp = dd.apply(pr.uint("context_parallel_size", 1, kMax), std::uint64_t{1}, "parallelism.context_parallel_size");
    x.sequence_parallel = dd.apply(pr.boolean("sequence_parallel"), false, "parallelism.sequence_parallel");
    auto gpus = hr.uint("num_gpus", 1, kMax);
    std::uint64_t model_parallel = x.tp * x.pp * x.cp;
    if (dp) {
        x.dp = *dp;
    } else if (gpus && *gpus % model_parallel == 0) {
        x.dp = *gpus / model_parallel;
        s.defaults_applied.push_back("parallelism.data_parallel_size = " + std::to_string(x.dp) +
                                     " (num_gpus / (tensor x pipeline x context))");
    } else {
        x.dp = 1;
        if (multi) s.defaults_applied.push_back("parallelism.data_parallel_size = 1");
    }
    if (dp && gpus && *gpus > x.world() && *gpus % model_parallel == 0) {
        x.dp = *gpus / model_parallel;
        s.defaults_applied.push_back("parallelism.data_parallel_size = " + std::to_string(x.dp) + " (num_gpus " +
                                     std::to_string(*gpus) + " / (tensor x pipeline x context) " +
                                     std::to_string(model_parallel) + "; the " + std::to_string(*dp) + " given makes " +
                                     std::to_string(*dp * model_parallel) + " GPUs)");
    }
    s.hardware.num_gpus = gpus.value_or(x.world());
    if (!gpus && multi)
        s.defaults_applied.push_back("hardware.num_gpus = " + std::to_string(s.hardware.num_gpus) +
                                     " (the layout's size)");
    if (s.hardware.num_gpus != x.world())
        hr.fail("num_gpus",
                "must equal data x tensor x pipeline x context parallel sizes (" + std::to_string(x.world()) +
                    "), or be a multiple of tensor x pipeline x context (" + std::to_string(model_parallel) +
                    ") larger than that, which sets data_parallel_size",
                hr.get("num_gpus"));
}

// The GPU: a catalogue id, or any name with gpu_memory_gb.
void read_gpu(FieldReader& hr, Scenario& s) {
    auto gpu = hr.string("gpu");
    auto mem_gb = hr.number("gpu_memory_gb", 0.1, 100000);
    if (gpu) {
        s.hardware.gpu = *gpu;
        std::string read_as;
        if (auto g = find_gpu(*gpu, &read_as)) {
            s.hardware.gpu = (*g)["id"];
            s.hardware.gpu_memory_bytes = (*g)["memory_bytes"];
            s.hardware.cuda_total_bytes = g->value("cuda_total_bytes", s.hardware.gpu_memory_bytes);
            if (!read_as.empty())
                s.defaults_applied.push_back("hardware.gpu = \"" + s.hardware.gpu + "\" (" + read_as + ")");
        } else if (!mem_gb) {
            std::string ids;
            for (const json& c : list_gpus()) ids += (ids.empty() ? "" : ", ") + c["id"].get<std::string>();
            hr.fail("gpu",
                    read_as.empty() ? "is not in the GPU catalogue (" + ids + "); give gpu_memory_gb for another card"
                                    : read_as + ": give one of them, or gpu_memory_gb for another card",
                    hr.get("gpu"));
        }
    } else if (!mem_gb) {
        auto g = find_gpu("H100-80GB");
        s.hardware.gpu_memory_bytes = g ? (*g)["memory_bytes"].get<std::uint64_t>() : 80 * kGiB;
        s.hardware.cuda_total_bytes =
            g ? g->value("cuda_total_bytes", s.hardware.gpu_memory_bytes) : s.hardware.gpu_memory_bytes;
        s.defaults_applied.push_back("hardware.gpu = \"H100-80GB\"");
    } else {
        s.hardware.gpu = "custom";
    }
    // An explicit size wins over the catalogue (gpu_memory_gb: a marketed size in GiB-sized units).
    // The catalogue card's own size given back (its marketed memory_gb, or the resolved size a resolved
    // scenario repeats) keeps the total CUDA reports for it; any other size is also taken as CUDA's total.
    if (mem_gb) {
        const auto given = static_cast<std::uint64_t>(*mem_gb * static_cast<double>(kGiB));
        const auto card = gpu ? find_gpu(*gpu) : std::nullopt;
        const bool own =
            card && (card->value("memory_gb", 0.0) == *mem_gb ||
                     std::fabs(static_cast<double>(given) - static_cast<double>(s.hardware.gpu_memory_bytes)) <=
                         static_cast<double>(1u << 20));
        if (!own) s.hardware.cuda_total_bytes = given;
        s.hardware.gpu_memory_bytes = given;
    }
}

// The layout against the model: heads and kv heads by TP, layers by PP, experts by EP, EP inside DP x CP.
void check_layout(FieldReader& pr, Scenario& s) {
    const Parallelism& x = s.parallel;
    const ModelSpec& m = s.model;
    if (m.num_attention_heads && x.tp > 1) {
        if (m.num_attention_heads % x.tp != 0)
            pr.fail("tensor_parallel_size",
                    "must divide num_attention_heads (" + std::to_string(m.num_attention_heads) + ")",
                    pr.get("tensor_parallel_size"));
        else if (m.num_key_value_heads % x.tp != 0 && x.tp % m.num_key_value_heads != 0)
            pr.fail("tensor_parallel_size",
                    "must divide num_key_value_heads (" + std::to_string(m.num_key_value_heads) +
                        ") or be a multiple of it",
                    pr.get("tensor_parallel_size"));
    }
    if (m.num_layers && x.pp > m.num_layers)
        pr.fail("pipeline_parallel_size", "must be at most num_layers (" + std::to_string(m.num_layers) + ")",
                pr.get("pipeline_parallel_size"));
    if (x.ep > 1 && m.num_experts == 0)
        pr.fail("expert_parallel_size", "must be 1 for a dense model (no experts)", pr.get("expert_parallel_size"));
    else if (x.ep > 1 && m.num_experts % x.ep != 0)
        pr.fail("expert_parallel_size", "must divide the number of experts (" + std::to_string(m.num_experts) + ")",
                pr.get("expert_parallel_size"));
    else if (x.ep > 1 && (x.dp * x.cp) % x.ep != 0)
        pr.fail("expert_parallel_size",
                "must divide data x context parallel sizes (" + std::to_string(x.dp * x.cp) +
                    "): expert-parallel ranks are drawn from the data-parallel ones",
                pr.get("expert_parallel_size"));
    if (x.sequence_parallel && x.tp == 1)
        s.warnings.push_back("parallelism.sequence_parallel has no effect with tensor_parallel_size 1");
}

// The engine against the layout: ddp when data parallel with none named; a note when model
// parallelism runs under an engine that is not Megatron's.
void engine_for_layout(Scenario& s) {
    const Parallelism& x = s.parallel;
    EngineSettings& e = s.engine;
    if (s.mode != Mode::Training) return;  // serving engines have their own layout (read_layout)
    if (e.type == EngineType::None && x.dp > 1) {
        e.type = EngineType::Ddp;
        s.defaults_applied.push_back("engine.type = \"ddp\" (data_parallel_size > 1 with no engine named)");
    }
    if ((x.tp > 1 || x.pp > 1 || x.cp > 1) && e.type != EngineType::Megatron && e.type != EngineType::MegatronDeepSpeed)
        s.warnings.push_back(
            "tensor/pipeline/context parallelism is modelled the Megatron way (column/row-parallel "
            "matrices, stages of whole layers) for engine " +
            std::string(name(e.type)));
}

void read_parallelism_and_hardware(const json& doc, Scenario& s, std::vector<Issue>& issues) {
    const json& p = section(doc, "parallelism", issues);
    const json& h = section(doc, "hardware", issues);
    FieldReader pr(p, "parallelism", issues), hr(h, "hardware", issues);
    read_layout(pr, hr, p, h, doc, s);
    read_gpu(hr, s);
    // GPUs per node: where FSDP's hybrid_shard stops sharding and starts replicating.
    const bool hybrid = s.engine.type == EngineType::Fsdp && s.engine.fsdp_sharding == FsdpSharding::HybridShard;
    std::vector<std::string> quiet;
    Defaults nodes{hybrid ? s.defaults_applied : quiet};
    s.hardware.gpus_per_node =
        nodes.apply(hr.uint("gpus_per_node", 1, 1024), std::uint64_t{8}, "hardware.gpus_per_node", "an 8-GPU node");
    check_layout(pr, s);
    engine_for_layout(s);
}

// Weight formats: the catalogue's, plus the scenario's own ("formats": [{"id", "bits", ...}]).
void read_formats(const json& doc, Scenario& s, std::vector<Issue>& issues) {
    s.formats = builtin_formats();
    const json* custom = doc.contains("formats") && !doc["formats"].is_null() ? &doc["formats"] : nullptr;
    if (!custom) return;
    if (!custom->is_array()) {
        issues.push_back({"formats",
                          "must be a list of format objects {\"id\", \"bits\", \"group_size\", "
                          "\"scale_bytes\", \"scope\"}",
                          show(*custom)});
        return;
    }
    for (std::size_t i = 0; i < custom->size() && i < 256; ++i) {
        std::string prefix = "formats[" + std::to_string(i) + "]";
        auto f = read_format((*custom)[i], prefix, issues);
        if (!f) continue;
        std::transform(f->id.begin(), f->id.end(), f->id.begin(), [](unsigned char c) { return std::tolower(c); });
        if (s.format(f->id))
            issues.push_back({prefix + ".id", "names a format that exists already", show(json(f->id))});
        else s.formats.push_back(*f);
    }
}

// "overheads": tunables by name (scenario/tunables.h), each a number; an unknown name lists the known ones.
void read_overheads(const json& doc, Scenario& s, std::vector<Issue>& issues) {
    if (!doc.contains("overheads") || doc["overheads"].is_null()) return;
    const json& o = doc["overheads"];
    if (!o.is_object()) {
        issues.push_back({"overheads", "must be an object of tunable name to number", show(o)});
        return;
    }
    FieldReader r(o, "overheads", issues);
    for (auto it = o.begin(); it != o.end(); ++it) {
        auto t = find_tunable(it.key());
        if (!t) {
            std::vector<std::string> known;
            for (const TunableRow& row : kTunables) known.emplace_back(row.name);
            std::sort(known.begin(), known.end());
            std::string names;
            for (const std::string& n : known) names += (names.empty() ? "" : ", ") + n;
            r.fail(it.key(), "is not a tunable (known: " + names + ")", &*it);
        } else if (auto v = r.number(it.key(), 0, 1e15)) {
            s.overheads[*t] = *v;
        }
    }
}

// "calibration": {"name", "hash", "residuals": [runs]}, put there by apply_calibration from a calibration
// file (gpumem calibrate): the runs the error band is drawn from instead of the bundled ones.
void read_calibration(const json& doc, Scenario& s, std::vector<Issue>& issues) {
    if (!doc.contains("calibration") || doc["calibration"].is_null()) return;
    const json& c = doc["calibration"];
    if (!c.is_object()) {
        issues.push_back({"calibration", "must be an object: {\"name\", \"hash\", \"residuals\": [...]}", show(c)});
        return;
    }
    FieldReader r(c, "calibration", issues);
    auto runs = std::make_shared<CalibrationRuns>();
    runs->name = r.string("name").value_or("");
    runs->hash = r.string("hash").value_or("");
    if (c.contains("residuals") && !c["residuals"].is_null())
        runs->runs = read_band_runs(c["residuals"], "calibration.residuals", issues);
    s.calibration = std::move(runs);
}

}  // namespace

std::vector<BandRun> read_band_runs(const json& list, const std::string& prefix, std::vector<Issue>& issues) {
    std::vector<BandRun> out;
    if (!list.is_array()) {
        issues.push_back({prefix,
                          "must be a list of runs {\"id\", \"mode\", \"stack\", \"method\", \"gpus\", "
                          "\"ratio\", \"key\"}",
                          show(list)});
        return out;
    }
    for (std::size_t i = 0; i < list.size(); ++i) {
        const std::string where = prefix + "[" + std::to_string(i) + "]";
        if (!list[i].is_object()) {
            issues.push_back({where,
                              "must be an object {\"id\", \"mode\", \"stack\", \"method\", \"gpus\", "
                              "\"ratio\", \"key\"}",
                              show(list[i])});
            continue;
        }
        const std::size_t before = issues.size();
        FieldReader r(list[i], where, issues);
        BandRun run;
        run.id = r.string("id").value_or("");
        run.mode = r.choice("mode", {"training", "inference"}).value_or("");
        run.stack = r.string("stack").value_or("");
        run.method = r.string("method").value_or("");
        run.gpus = r.choice("gpus", {"single", "multi"}).value_or("");
        // measured / estimated: a run 100 times off is a broken record, not a residual.
        const std::optional<double> ratio = r.number("ratio", 0.01, 100);
        if (!ratio && !r.has("ratio")) r.fail("ratio", "is required: measured / estimated, in [0.01, 100]", nullptr);
        run.ratio = ratio.value_or(1);
        run.key = r.string("key").value_or("");
        if (run.mode.empty() && !r.has("mode")) r.fail("mode", "is required: training or inference", nullptr);
        if (run.gpus.empty() && !r.has("gpus")) r.fail("gpus", "is required: single or multi", nullptr);
        if (issues.size() == before) out.push_back(std::move(run));
    }
    return out;
}

json band_runs_json(const std::vector<BandRun>& runs) {
    json out = json::array();
    for (const BandRun& r : runs)
        out.push_back({{"id", r.id},
                       {"mode", r.mode},
                       {"stack", r.stack},
                       {"method", r.method},
                       {"gpus", r.gpus},
                       {"ratio", r.ratio},
                       {"key", r.key}});
    return out;
}

ScenarioRead read_scenario(const json& doc) {
    ScenarioRead out;
    Scenario& s = out.scenario;
    auto& issues = out.issues;
    if (!doc.is_object()) {
        issues.push_back({"", "a scenario must be a JSON object with at least \"model\"", show(doc)});
        return out;
    }
    if (doc.contains("version") && !(doc["version"].is_number_integer() && doc["version"].get<std::int64_t>() == 1))
        issues.push_back({"version", "must be 1 (the only scenario version so far)", show(doc["version"])});
    read_formats(doc, s, issues);
    read_model(doc, s, issues);
    FieldReader top(doc, "", issues);
    Defaults d{s.defaults_applied};
    s.mode = read_setting(top, d, kModeField);
    s.explain = top.boolean("explain").value_or(false);  // an output option: not echoed in the resolved scenario
    if (!issues.empty()) return out;                     // the rest depends on the model

    read_engine(doc, s, issues);
    read_parallelism_and_hardware(doc, s, issues);
    if (s.mode == Mode::Training) read_training(doc, s, issues);
    else read_inference(doc, s, issues);
    read_overheads(doc, s, issues);
    read_calibration(doc, s, issues);
    return out;
}

json Scenario::to_json() const {
    // The model as it was given (a preset, a config.json or a model by hand), so that this document
    // is a valid scenario that gives the same figures, with what the reader made of it beside.
    json model_json = model_input.is_object() ? model_input : json::object();
    model_json["name"] = model.name;
    model_json["source"] = model_source;
    model_json["model_type"] = model.model_type;
    json out = {{"version", 1}, {"model", model_json}, {"mode", name(mode)}};
    if (mode == Mode::Training) {
        const auto& t = training;
        out["training"] = {{"method", name(t.method)},
                           {"batch_size", t.batch_size},
                           {"gradient_accumulation_steps", t.gradient_accumulation_steps},
                           {"seq_len", t.seq_len},
                           {"dtype", name(t.dtype)},
                           {"precision", name(t.precision)},
                           {"optimizer", name(t.optimizer)},
                           {"optimizer_state_dtype", name(t.optimizer_state_dtype)},
                           {"activation_checkpointing", name(t.activation_checkpointing)},
                           {"attention", name(t.attention)},
                           {"loss", name(t.loss)}};
        if (t.method == Method::Lora || t.method == Method::Qlora)
            out["training"]["lora"] = {{"rank", t.lora_rank},
                                       {"alpha", t.lora_alpha},
                                       {"dropout", t.lora_dropout},
                                       {"target_modules", names_of(t.lora_targets)}};
        if (t.method == Method::Qlora) out["training"]["quantization"] = name(t.quantization);
        if (t.method == Method::Frozen) {
            out["training"]["trainable_layers"] = t.trainable_layers;
            out["training"]["trainable_input_parameters"] = t.trainable_input_parameters;
            out["training"]["train_lm_head"] = t.train_lm_head;
        }
        out["training"]["optimizer_in_backward"] = t.optimizer_in_backward;
        out["training"]["activation_offloading"] = t.activation_offloading;
        out["training"]["compile"] = name(t.compile);
        out["training"]["untie_embeddings"] = t.untie_embeddings;
        out["training"]["framework"] = name(t.framework);
        out["training"]["framework_version"] = name(t.framework_version);
        out["training"]["retains_previous_step"] = t.retains_previous_step;
        if (t.method == Method::Qlora) out["training"]["double_quant"] = t.double_quant;
        if (parallel.pp > 1) out["training"]["pipeline_microbatches"] = parallel.pipeline_microbatches;
        if (t.images) {
            out["training"]["images"] = t.images;
            out["training"]["image_tokens"] = t.image_tokens;
        }
    } else {
        const auto& i = inference;
        out["inference"] = {
            {"batch_size", i.batch_size}, {"context_len", i.context_len},  {"weight_format", weight_format().id},
            {"group_size", i.group_size}, {"kv_cache", i.kv_cache},        {"kv_cache_dtype", name(i.kv_cache_dtype)},
            {"engine", name(i.engine)},   {"attention", name(i.attention)}};
        if (i.images) {
            out["inference"]["images"] = i.images;
            out["inference"]["image_tokens"] = i.image_tokens;
        }
        for (const EngineField& f : kEngineFields)
            if (f.engine == i.engine) out["inference"][f.key] = f.value(i);
    }
    out["parallelism"] = {{"data_parallel_size", parallel.dp},     {"tensor_parallel_size", parallel.tp},
                          {"pipeline_parallel_size", parallel.pp}, {"expert_parallel_size", parallel.ep},
                          {"context_parallel_size", parallel.cp},  {"sequence_parallel", parallel.sequence_parallel}};
    out["engine"] = {{"type", name(engine.type)},
                     {"zero_stage", engine.zero_stage},
                     {"fsdp_sharding", name(engine.fsdp_sharding)},
                     {"offload_optimizer", name(engine.offload_optimizer)},
                     {"offload_param", name(engine.offload_param)}};
    if (engine.type == EngineType::Megatron) out["engine"]["use_distributed_optimizer"] = engine.distributed_optimizer;
    out["hardware"] = {{"gpu", hardware.gpu},
                       {"num_gpus", hardware.num_gpus},
                       {"gpu_memory_gb", static_cast<double>(hardware.gpu_memory_bytes) / static_cast<double>(kGiB)}};
    if (engine.type == EngineType::Fsdp && engine.fsdp_sharding == FsdpSharding::HybridShard)
        out["hardware"]["gpus_per_node"] = hardware.gpus_per_node;
    json o = json::object();
    for (const TunableRow& t : kTunables) o[t.name] = overheads[t.id];
    out["overheads"] = o;
    if (calibration)
        out["calibration"] = {
            {"name", calibration->name}, {"hash", calibration->hash}, {"residuals", band_runs_json(calibration->runs)}};
    return out;
}

// vLLM's budget rules by release (memory/inference.cpp vllm()): "0.MINOR" or "0.MINOR.PATCH" from 0.10 (V1 only).
// 0.10.0 to 0.11.0 sample the profile run with FlashInfer's top-k/top-p kernel (V1's default on CUDA with
// flashinfer installed, as in vLLM's images: vllm/v1/sample/ops/topk_topp_sampler.py, VLLM_USE_FLASHINFER_SAMPLER
// unset); vLLM PR #26859 (merged 2025-10-15, after 0.11.0) made the PyTorch-native sampler, which sorts the
// logits, the default again. An older release without flashinfer samples natively: give "0.12" for it.
namespace {
// Two or three dot-separated numbers of at most 6 digits each; nullopt for anything else.
std::optional<std::vector<unsigned>> release_parts(const std::string& version) {
    std::vector<unsigned> parts;
    std::size_t start = 0;
    while (parts.size() < 4) {
        std::size_t dot = version.find('.', start);
        std::string part = version.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
        if (part.empty() || part.size() > 6 ||
            !std::all_of(part.begin(), part.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
            return std::nullopt;
        parts.push_back(static_cast<unsigned>(std::stoul(part)));
        if (dot == std::string::npos) break;
        start = dot + 1;
    }
    if (parts.size() < 2 || parts.size() > 3) return std::nullopt;
    return parts;
}
}  // namespace

// SGLang's families (sglang_mem_fraction_static): PR #7054 was merged 2025-06-10, taken as first shipped in
// 0.4.7; PRs #10975 and #11076 were merged 2025-09-29/30, taken as first shipped in 0.5.3 (the first release
// after them). The release tags were not checked: SGLang's repository was too large to fetch here. Before 0.4.7 a
// fixed table by TP size applied, which gpumem does not follow.
std::optional<SglangReserve> sglang_family(const std::string& version) {
    auto parts = release_parts(version);
    if (!parts || (*parts)[0] != 0) return std::nullopt;
    const unsigned minor = (*parts)[1], patch = parts->size() == 3 ? (*parts)[2] : 0;
    if (minor == 4 && patch >= 7) return SglangReserve::ByCard;
    if (minor == 5) return patch >= 3 ? SglangReserve::ByChunkAndGraphs : SglangReserve::ByCard;
    return std::nullopt;
}

std::optional<VllmSampler> vllm_family(const std::string& version) {
    // "0.8-v0", "0.9.2-v0": the V0 engine those releases run with VLLM_USE_V1=0, as read in
    // vllm/worker/worker.py and vllm/engine/arg_utils.py (memory/inference.cpp). Their default is V1,
    // which gpumem follows only from 0.10 on: a bare "0.8" or "0.9" is refused (the reader says why).
    const std::string suffix = "-v0";
    const bool v0 =
        version.size() > suffix.size() && version.compare(version.size() - suffix.size(), suffix.size(), suffix) == 0;
    auto given = release_parts(v0 ? version.substr(0, version.size() - suffix.size()) : version);
    if (!given) return std::nullopt;
    const std::vector<unsigned>& parts = *given;
    if (parts[0] != 0) return std::nullopt;
    const unsigned minor = parts[1], patch = parts.size() == 3 ? parts[2] : 0;
    if (v0) return minor == 8 || minor == 9 ? std::optional<VllmSampler>(VllmSampler::V0) : std::nullopt;
    if (minor < 10) return std::nullopt;
    if (minor < 11 || (minor == 11 && patch == 0)) return VllmSampler::FlashInfer;
    return VllmSampler::Native;
}

}  // namespace gpumem::detail
