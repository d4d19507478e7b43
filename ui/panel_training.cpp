// The training and inference panels: the settings of the mode the page is in. Each enumerated
// setting is a SettingCombo over the core's own table; its default entry names what the last
// estimate resolved it to.

#include <algorithm>
#include <cstdio>
#include <string>

#include "app.h"
#include "imgui.h"
#include "panels.h"
#include "widgets.h"

#include <gpumem/gpumem.h>

namespace gpumem::ui {

namespace {

// "0.05": a number as the dropout combo shows one that is none of its choices.
std::string NumberText(double value)
{
    char text[32];
    std::snprintf(text, sizeof text, "%g", value);
    return text;
}

// "q_proj,v_proj": a target list that is none of the combo's choices.
std::string TargetsText(const std::vector<LoraTarget>& targets)
{
    std::string text;
    for (LoraTarget t : targets)
        text += (text.empty() ? "" : ",") + std::string(gpumem::detail::name(t));
    return text;
}

void ShowLoraRows(TrainingSettings& t, const TrainingSettings& resolved, const nlohmann::json& resolved_json)
{
    FormRow("LoRA rank",
            "Rank r of each adapter (A: r x in, B: out x r). Which modules get adapters "
            "is the core's default, listed under Assumptions.");
    NumberSlider("##lora_rank", "LoRA rank", t.lora_rank, 1, 256, Snap::PowersOfTwo);
    FormRow("LoRA alpha",
            "Scaling numerator; it does not change memory. Empty leaves the core's default (2 x rank), shown "
            "as default (value).");
    NumberInputFloat("##lora_alpha", "LoRA alpha", t.lora_alpha, 0.0f, 1e6f,
                     DefaultLabel(ResolvedNumber(resolved_json, {"training", "lora", "alpha"}).c_str()));
    FormRow("LoRA dropout",
            "Dropout on each adapter's input. Above 0 every adapted linear keeps a "
            "dropped-out copy of its input and the mask for the backward pass.");
    static const Choice<double> kDropouts[] = {
        {0.0, "0 (PEFT, torchtune)"}, {0.05, "0.05 (LitGPT, torchtune 0.1)"}, {0.1, "0.1"}};
    ChoiceCombo("##lora_dropout", t.lora_dropout, kDropouts, resolved.lora_dropout, NumberText);
    FormRow("Target modules",
            "Which linear layers get adapters. Each adds its rank x (in + out) "
            "trainable parameters and keeps its input for the backward pass.");
    using T = LoraTarget;
    static const Choice<std::vector<LoraTarget>> kTargets[] = {
        {{T::QProj, T::VProj}, "q, v (PEFT's default)"},
        {{T::QProj, T::KProj, T::VProj, T::OProj}, "attention (q, k, v, o)"},
        {{T::AllLinear}, "all linear layers"},
        {{T::AllLinear, T::LmHead}, "all linear + LM head"}};
    ChoiceCombo("##lora_targets", t.lora_targets, kTargets, resolved.lora_targets, TargetsText);
    if (t.method == Method::Qlora)
    {
        FormRow("Base weights", "How QLoRA stores the frozen base model.");
        SettingCombo("##quantization", t.quantization, resolved.quantization);
    }
}

void ShowPrecisionRows(TrainingSettings& t, const TrainingSettings& resolved)
{
    FormRow("Framework",
            "The training framework's own habits: LitGPT keeps an untied copy of tied "
            "embeddings and the previous step's graph; torchtune and torchtitan step the "
            "optimizer as their recipes do.");
    SettingCombo("##framework", t.framework, resolved.framework);
    FormRow("Release",
            "The framework's release, where an older one allocated otherwise: torchtune 0.1 (fp32 logits, "
            "unfused AdamW, torchao 0.1's NF4) or the HF Trainer of 2022 (PyTorch 1.x). A release sets its "
            "framework when that is left at its default.");
    SettingCombo("##framework_version", t.framework_version, resolved.framework_version);
    FormRow("Precision",
            "Compute dtype. How weights, gradients and the fp32 master copy are kept follows "
            "from it and the engine (the precision recipe, listed under Assumptions).");
    SettingCombo("##dtype", t.dtype, resolved.dtype);
    FormRow("Precision recipe",
            "Where the weights live and whether an fp32 master copy is kept. Default: "
            "what the engine does with this dtype.");
    SettingCombo("##precision", t.precision, resolved.precision);
    FormRow("Optimizer");
    SettingCombo("##optimizer", t.optimizer, resolved.optimizer);
    FormRow("Optimizer states", "The dtype of the optimizer's moments (8-bit optimizers fix their own).");
    SettingCombo("##optimizer_state_dtype", t.optimizer_state_dtype, resolved.optimizer_state_dtype);
    FormRow("Checkpointing",
            "Gradient (activation) checkpointing: keep only each layer's input and "
            "recompute the rest in backward.");
    SettingCombo("##checkpointing", t.checkpointing, resolved.checkpointing);
    FormRow("Attention",
            "Eager attention keeps the batch x heads x seq x seq scores; SDPA and "
            "FlashAttention keep only per-row statistics.");
    SettingCombo("##attention", t.attention, resolved.attention);
    FormRow("Loss",
            "With a large vocabulary the logits and their fp32 copy are often the peak; "
            "chunked and fused losses avoid most of it.");
    SettingCombo("##loss", t.loss, resolved.loss);
}

void ShowTrainingSwitches(TrainingSettings& t, const TrainingSettings& resolved, const nlohmann::json& resolved_json,
                          bool pipeline)
{
    if (!ImGui::TreeNode("More training switches"))
        return;
    FormRow("Optimizer in backward",
            "Each parameter steps from its gradient hook, so only about one "
            "tensor's gradient is alive at a time (torchtune's optimizer_in_bwd).");
    OnOffCombo("##optimizer_in_backward", t.optimizer_in_backward, resolved.optimizer_in_backward);
    FormRow("Activation offload", "Saved activations go to host RAM, leaving about two layers' worth on the GPU.");
    OnOffCombo("##activation_offloading", t.activation_offloading, resolved.activation_offloading);
    FormRow("torch.compile",
            "Inductor fuses each norm (keeping its input and statistics, not its fp32 "
            "copies) and, with the loss compiled, the cross-entropy's fp32 upcast. "
            "torchtune's compile: True compiles both; torchtitan its blocks.");
    SettingCombo("##compile", t.compile, resolved.compile);
    FormRow("Untie embeddings", "Keep the head as its own copy of tied embeddings (LitGPT's checkpoint conversion).");
    OnOffCombo("##untie_embeddings", t.untie_embeddings, resolved.untie_embeddings);
    FormRow("Previous step kept",
            "The training loop holds the last step's loss and logits into the next "
            "forward (LitGPT's loop).");
    OnOffCombo("##retains_previous_step", t.retains_previous_step, resolved.retains_previous_step);
    if (t.method == Method::Qlora)
    {
        FormRow("Double quantization", "bitsandbytes' bnb_4bit_use_double_quant: the scales are quantized too.");
        OnOffCombo("##double_quant", t.double_quant, resolved.double_quant);
    }
    if (pipeline)
    {
        FormRow("Pipeline micro-batches",
                "Micro-batches per step through the pipeline; 0 leaves the default, shown as default (value).");
        // 0 shows the count the core chose (the larger of the accumulation steps and the stages).
        const std::string micro =
            DefaultLabel(ResolvedNumber(resolved_json, {"training", "pipeline_microbatches"}).c_str());
        NumberInput("##pipeline_microbatches", "Pipeline micro-batches", t.pipeline_microbatches, 0, 1 << 20,
                    micro.c_str());
    }
    ImGui::TreePop();
}

// The weights' format: the catalogue's (the core's table) and those the scenario adds under
// "formats"; the default entry names what the last estimate resolved.
void ShowWeightFormatCombo(const AppState& state, InferenceSettings& in)
{
    const std::string resolved = state.last_good.resolved_weight_format;
    const std::optional<WeightFormat> known = gpumem::detail::parse_setting<WeightFormat>(resolved);
    const std::string default_label = DefaultLabel(known ? SettingLabel(*known) : resolved.c_str());
    const std::string preview = !in.own_weight_format.empty() ? gpumem::display_text(in.own_weight_format, kNameChars)
                                : in.weight_format            ? SettingLabel(*in.weight_format)
                                                              : default_label;
    // Tall enough for the catalogue's formats and a few of the scenario's own below them.
    AccessCombo("##weight_format", preview);
    if (!ImGui::BeginCombo("##weight_format", preview.c_str(), ImGuiComboFlags_HeightLarge))
        return;
    if (ImGui::Selectable(default_label.c_str(), !in.weight_format && in.own_weight_format.empty()))
    {
        in.weight_format.reset();
        in.own_weight_format.clear();
    }
    for (const auto& row : gpumem::detail::rows(WeightFormat{}))
        if (row.value != WeightFormat::Auto && SettingSelectable(row, in.weight_format))
            in.own_weight_format.clear();
    const nlohmann::json& formats =
        state.scenario.extra.contains("formats") ? state.scenario.extra["formats"] : nlohmann::json();
    if (formats.is_array())
        for (std::size_t i = 0; i < formats.size(); i++)
        {
            const nlohmann::json& f = formats[i];
            const std::string id =
                f.is_object() && f.contains("id") && f["id"].is_string() ? f["id"].get<std::string>() : "";
            // Its ID is its place in "formats" (###own_format_N, for the tests): ids are the user's text.
            const std::string label = gpumem::display_text(id, kNameChars) + "###own_format_" + std::to_string(i + 1);
            if (!id.empty() && ImGui::Selectable(label.c_str(), in.own_weight_format == id))
            {
                in.own_weight_format = id;
                in.weight_format.reset();
            }
        }
    ImGui::EndCombo();
}

}  // namespace

//-----------------------------------------------------------------------------
// [SECTION] Training and inference
//-----------------------------------------------------------------------------

// Images per sequence, for models with a vision tower (the row is hidden for the others).
void ShowImagesRow(AppState& state)
{
    if (state.view.params_vision == 0 && state.scenario.images == 0)
        return;
    FormRow("Images",
            "Images per sequence: each adds the model's image tokens to the sequence and runs "
            "the vision tower.");
    NumberInput("##images", "Images", state.scenario.images, 0, 1000);
}

void ShowTrainingPanel(AppState& state)
{
    if (!ImGui::CollapsingHeader("Training", ImGuiTreeNodeFlags_DefaultOpen))
        return;
    TrainingSettings& t = state.scenario.training;
    const TrainingSettings& resolved = state.last_good.resolved.training;

    FormRow("Method",
            "Full: every weight trains. LoRA: the base is frozen, small adapters train. "
            "QLoRA: LoRA over a 4-bit quantised base.");
    SettingCombo("##method", t.method);
    if (state.scenario.IsLora())
        ShowLoraRows(t, resolved, state.last_good.resolved_json);
    if (t.method == Method::Frozen)
    {
        FormRow("Trainable layers",
                "The top N decoder layers train; the layers below keep no activations "
                "(nothing needs their gradients).");
        NumberInput("##trainable_layers", "Trainable layers", t.trainable_layers, 0, 4096);
        FormRow("");
        ImGui::Checkbox("The LM head trains too", &t.train_lm_head);
    }
    ShowPrecisionRows(t, resolved);

    FormRow("Batch size",
            "Micro-batch per GPU (per data-parallel rank). Gradient accumulation does "
            "not change the peak.");
    NumberSlider("##batch_size", "Batch size", t.batch_size, 1, 512, Snap::PowersOfTwo);
    FormRow("Sequence length",
            "Tokens per sample as fed to the model: the pack length when samples are packed. When each batch "
            "is padded to its longest sample, the longest sample after truncation: the peak is the step with "
            "the longest batch.");
    NumberSlider("##seq_len", "Sequence length", t.seq_len, 128, 131072, Snap::Tokens, "tokens");
    ShowTrainingSwitches(t, resolved, state.last_good.resolved_json, state.scenario.parallel.pipeline_parallel > 1);
    ShowImagesRow(state);
    FormRow("Grad. accumulation",
            "Gradient accumulation: micro-batches per optimizer step. It multiplies the global batch, "
            "not the peak.");
    NumberInput("##grad_accum", "Gradient accumulation", t.grad_accum, 1, 65536);
}

void ShowInferencePanel(AppState& state)
{
    if (!ImGui::CollapsingHeader("Inference", ImGuiTreeNodeFlags_DefaultOpen))
        return;
    InferenceSettings& in = state.scenario.inference;
    const InferenceSettings& resolved = state.last_good.resolved.inference;

    FormRow("Weights",
            "Storage format of the weights. Default: the checkpoint's own dtype or "
            "quantization_config.");
    ShowWeightFormatCombo(state, in);
    FormRow("KV cache dtype");
    SettingCombo("##kv_cache_dtype", in.kv_cache_dtype, resolved.kv_cache_dtype);
    FormRow("Engine",
            "Transformers: weights, the cache as it grows and the prefill's working set. "
            "vLLM: claims gpu_memory_utilization of the card and fills it with KV blocks. "
            "llama.cpp: a whole-context cache and one ubatch's compute buffer.");
    SettingCombo("##serving_engine", in.engine, resolved.engine);

    FormRow("Sequences", "Concurrent sequences (batch size).");
    NumberSlider("##concurrent_sequences", "Sequences", in.concurrent_sequences, 1, 512, Snap::PowersOfTwo);
    FormRow("Context length", "Prompt plus generated tokens per sequence.");
    NumberSlider("##context_len", "Context length", in.context_len, 128, 131072, Snap::Tokens, "tokens");
    ShowImagesRow(state);
    FormRow("");
    ImGui::Checkbox("Keep a KV cache", &in.kv_cache);
    ImGui::SameLine();
    HelpMarker("Off: every generated token recomputes the whole context (use_cache=False).");
    if (in.engine == InferenceEngine::Vllm)
    {
        FormRow("GPU memory share",
                "vLLM's gpu_memory_utilization: the share of the card it claims, 0.01 to 0.99. "
                "Empty leaves vLLM's default, shown as default (value).");
        NumberInputFloat(
            "##gpu_memory_utilization", "GPU memory share", in.gpu_memory_utilization, 0.0f, 0.99f,
            DefaultLabel(
                ResolvedNumber(state.last_good.resolved_json, {"inference", "gpu_memory_utilization"}).c_str()));
        FormRow("Batched tokens",
                "vLLM's max_num_batched_tokens: the size of its profiling step, whose "
                "activations are kept out of the KV cache. 0 leaves the default, shown as default (value).");
        const std::string batched = DefaultLabel(
            ResolvedNumber(state.last_good.resolved_json, {"inference", "max_num_batched_tokens"}).c_str());
        NumberInput("##max_num_batched_tokens", "Batched tokens", in.max_num_batched_tokens, 0, 1 << 24,
                    batched.c_str());
    }
    if (in.engine == InferenceEngine::LlamaCpp)
    {
        FormRow("GPU layers", "llama.cpp's --n-gpu-layers; the rest stay in host RAM. -1: all of them.");
        NumberInput("##gpu_layers", "GPU layers", in.gpu_layers, -1, 4096);
    }
}

}  // namespace gpumem::ui
