// The panels: see panels.h. Each is one ShowXxxPanel(AppState&), in the order the page shows them.

#include "panels.h"

#include <algorithm>
#include <cfloat>
#include <cstdio>
#include <string>

#include "imgui.h"
#include "panel_helpers.h"
#include "widgets.h"

#include <gpumem/gpumem.h>

namespace gpumem::ui {

//-----------------------------------------------------------------------------
// [SECTION] Controls
//-----------------------------------------------------------------------------

namespace {

void ShowPresetPicker(AppState& state)
{
    FormRow("Preset", "A bundled model: its real config.json is compiled into the page, so nothing is downloaded.");
    const char* preview = state.presets.empty() ? "(no presets)" : state.presets[state.preset_index].id.c_str();
    if (ImGui::BeginCombo("##preset", preview, ImGuiComboFlags_HeightLarge))
    {
        if (ImGui::IsWindowAppearing())
            ImGui::SetKeyboardFocusHere();
        ImGui::SetNextItemWidth(-FLT_MIN);
        ImGui::InputTextWithHint("##filter", "filter, e.g. qwen", state.preset_filter, sizeof(state.preset_filter));
        const std::string filter = Lowercase(state.preset_filter);
        for (int i = 0; i < static_cast<int>(state.presets.size()); i++)
        {
            const PresetEntry& preset = state.presets[i];
            if (!filter.empty() && Lowercase(preset.id).find(filter) == std::string::npos)
                continue;
            const bool selected = i == state.preset_index;
            if (ImGui::Selectable(preset.id.c_str(), selected))
                state.preset_index = i;
            ImGui::SameLine(ImGui::GetWindowContentRegionMax().x - ImGui::CalcTextSize("000.00 B").x);
            ImGui::TextDisabled("%s", FormatCount(preset.total_params).c_str());
            if (selected)
                ImGui::SetItemDefaultFocus();
        }
        ImGui::EndCombo();
    }
}

void ShowHubFetch(AppState& state)
{
    HubState& hub = state.hub;
    FormRow("Hub model", "A model id (Qwen/Qwen3-8B) or its Hub URL. The page fetches its config.json "
                         "straight from the Hub, with no referrer and no cookies.");
    const float button_w = ImGui::CalcTextSize("Fetch").x + ImGui::GetStyle().FramePadding.x * 2.0f;
    ImGui::SetNextItemWidth(-(button_w + ImGui::GetStyle().ItemSpacing.x));
    const bool entered = ImGui::InputTextWithHint("##hub_input", "Qwen/Qwen3-8B or https://huggingface.co/...",
                                                  hub.input, sizeof(hub.input), ImGuiInputTextFlags_EnterReturnsTrue);
    ImGui::SameLine();
    const bool loading = hub.status == HubState::Status::Loading;
    ImGui::BeginDisabled(loading);
    const bool clicked = ImGui::Button("Fetch");
    ImGui::EndDisabled();
    if ((entered || clicked) && !loading)
        RequestHubModel(state);

    FormRow("Revision", "Branch, tag or commit of the model repository.");
    ImGui::InputText("##hub_revision", hub.revision, sizeof(hub.revision));

    switch (hub.status)
    {
    case HubState::Status::Idle:
        ImGui::TextDisabled("Type an id and press Enter or Fetch.");
        break;
    case HubState::Status::Loading:
    {
        static const char* const kSpinner[] = {"|", "/", "-", "\\"};
        ImGui::Text("%s Fetching %s from the Hub...", kSpinner[static_cast<int>(ImGui::GetTime() * 8.0) & 3], hub.input);
        break;
    }
    case HubState::Status::Ready:
    {
        ImGui::TextColored(UtilizationColor(0.0), "Loaded %s (%s).", hub.id.c_str(), hub.loaded_revision.c_str());
        const std::uint64_t ours = Bytes(At(state.result, "parameters"), "total");
        if (hub.api_total > 0 && ours > 0)
        {
            const double diff = (static_cast<double>(ours) - static_cast<double>(hub.api_total)) / static_cast<double>(hub.api_total);
            ImGui::TextWrapped("Parameters: ours %s; the Hub's safetensors count %s (%+.2f %%)", FormatCount(ours).c_str(),
                               FormatCount(hub.api_total).c_str(), diff * 100.0);
            ImGui::SameLine();
            HelpMarker("Ours is counted tensor by tensor from config.json; the Hub's is the number of values stored "
                       "in the checkpoint's safetensors files. They differ when the checkpoint stores extra tensors "
                       "(FP8 scales, rotary buffers, MTP layers) or quantized weights packed several to a value.");
        }
        else if (ours > 0)
            ImGui::TextDisabled("Parameters: %s (the Hub reported no safetensors count to compare with)", FormatCount(ours).c_str());
        break;
    }
    case HubState::Status::Failed:
        TextNotice("##hub_message", UtilizationColor(1.0), hub.message.c_str());
        if (hub.retryable)
        {
            if (ImGui::Button("Retry"))
                RequestHubModel(state);
        }
        if (!hub.bundled_twin.empty())
        {
            if (hub.retryable)
                ImGui::SameLine();
            const std::string label = "Use the bundled " + hub.bundled_twin;
            if (ImGui::Button(label.c_str()))
            {
                for (int i = 0; i < static_cast<int>(state.presets.size()); i++)
                    if (state.presets[i].id == hub.bundled_twin)
                        state.preset_index = i;
                state.source = ModelSource::Preset;
            }
        }
        break;
    }

    const bool open = ImGui::TreeNode("Access token and Hub address");
    if (open)
    {
        FormRow("Token", "For gated or private models: a Hugging Face read token. It is sent only to "
                         "https://huggingface.co, or to another https Hub address once you confirm it for this "
                         "visit; only in the Authorization header, never in the link, the exported scenario or a log.");
        if (ImGui::InputTextWithHint("##hub_token", "hf_...", hub.token, sizeof(hub.token), ImGuiInputTextFlags_Password) &&
            state.page.set_token != nullptr)
            state.page.set_token(hub.token, hub.remember_token);
        FormRow("");
        if (ImGui::Checkbox("Remember the token in this browser", &hub.remember_token) && state.page.set_token != nullptr)
            state.page.set_token(hub.token, hub.remember_token);
        FormRow("");
        ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
        ImGui::TextWrapped(hub.remember_token
                               ? "Kept in this browser's localStorage, which every page of this site's origin can read: "
                                 "on GitHub Pages, every project site of the same USER.github.io."
                               : "Forgotten when you close or reload the page.");
        ImGui::PopStyleColor();
        FormRow("Hub address", "https://huggingface.co, a mirror, or a local server with the Hub's URL layout "
                               "(hub= in a link, for that visit only). The page's security policy allows only the "
                               "Hub, its mirror hf-mirror.com and this computer.");
        if (ImGui::InputText("##hub_base", hub.base, sizeof(hub.base)))
        {
            hub.base_from_link = false;
            hub.token_withheld = false;   // said of the last address, not of this one
        }
        ImGui::TreePop();
    }
}

void ShowConfigLoader(AppState& state)
{
    FormRow("config.json", "A model's config.json: drop the file on the page, open it, or paste it in the box "
                           "under Import in the results.");
    if (ImGui::Button("Open a file..."))
        if (state.page.open_file != nullptr)
            state.page.open_file();
    ImGui::SameLine();
    if (state.config.is_null())
        ImGui::TextDisabled("none loaded yet: drop one on the page");
    else
        ImGui::Text("%s", state.config_name.c_str());
}

void ShowManualModel(AppState& state)
{
    ManualModel& m = state.manual;
    FormRow("Parameters", "Total parameters: \"7B\", \"1.3e9\" or a plain number.");
    ImGui::InputText("##manual_params", m.num_parameters, sizeof(m.num_parameters));
    auto field = [](const char* label, const char* id, int& value, int lo, int hi) {
        FormRow(label);
        if (ImGui::InputInt(id, &value, 0, 0))
            value = std::clamp(value, lo, hi);
    };
    field("Layers", "##manual_layers", m.num_layers, 1, 4096);
    field("Hidden size", "##manual_hidden", m.hidden_size, 1, 1 << 20);
    field("Attention heads", "##manual_heads", m.num_attention_heads, 1, 4096);
    field("KV heads", "##manual_kv_heads", m.num_key_value_heads, 1, 4096);
    field("MLP size", "##manual_mlp", m.intermediate_size, 1, 1 << 22);
    field("Vocabulary", "##manual_vocab", m.vocab_size, 1, 1 << 24);
    FormRow("");
    ImGui::Checkbox("Tied input and output embeddings", &m.tie_word_embeddings);
}

}  // namespace

// A banner under the title while models come from another Hub than huggingface.co (a link's hub=
// or the Hub address typed below), with the one button that lets the token go there; and why a
// link's settings were ignored.
void ShowLinkNotices(AppState& state)
{
    HubState& hub = state.hub;
    const std::string base = hub.base;
    if (base != "https://huggingface.co")
    {
        // scheme://host[:port]: what the browser's origin check and the button name.
        const std::size_t scheme = base.find("://");
        const std::string host = base.substr(0, scheme == std::string::npos ? base.size() : base.find('/', scheme + 3));
        const std::string banner = "Models come from " + host +
                                   (hub.base_from_link ? " (set by this link, for this visit only)." : ".");
        TextNotice("##hub_banner", UtilizationColor(0.9), banner.c_str());
        if (hub.token_withheld && hub.token[0] != '\0')
        {
            const bool https = base.rfind("https://", 0) == 0;
            ImGui::TextWrapped(https ? "Your access token was not sent there." :
                                       "Your access token was not sent there: a token never goes over plain http.");
            if (https && state.page.trust_hub != nullptr)
            {
                const std::string label = "Send my token to " + host + "###trust_hub";
                if (ImGui::Button(label.c_str()))
                {
                    state.page.trust_hub(base);
                    RequestHubModel(state);
                }
                ImGui::SameLine();
            }
        }
        if (ImGui::SmallButton("Use huggingface.co"))
        {
            std::snprintf(hub.base, sizeof(hub.base), "%s", "https://huggingface.co");
            hub.base_from_link = false;
            hub.token_withheld = false;
        }
    }
    if (!state.link_message.empty())
    {
        TextNotice("##link_message", UtilizationColor(1.0), state.link_message.c_str());
        ImGui::SameLine();
        if (ImGui::SmallButton("Dismiss"))
            state.link_message.clear();
    }
}

// Images per sequence, for models with a vision tower (the row is hidden for the others).
void ShowImagesRow(AppState& state)
{
    if (Bytes(At(At(state.result, "parameters"), "per_component"), "vision") == 0 && state.images == 0)
        return;
    FormRow("Images", "Images per sequence: each adds the model's image tokens to the sequence and runs "
                      "the vision tower.");
    if (ImGui::InputInt("##images", &state.images))
        state.images = std::clamp(state.images, 0, 1000);
}

void ShowModelPanel(AppState& state)
{
    if (!ImGui::CollapsingHeader("Model", ImGuiTreeNodeFlags_DefaultOpen))
        return;

    const struct { ModelSource source; const char* label; } kSources[] = {
        {ModelSource::Preset, "Preset"}, {ModelSource::Hub, "Hub"}, {ModelSource::Config, "config.json"},
        {ModelSource::Manual, "By hand"}};
    for (int i = 0; i < IM_ARRAYSIZE(kSources); i++)
    {
        if (i > 0)
            ImGui::SameLine();
        if (ImGui::RadioButton(kSources[i].label, state.source == kSources[i].source))
            state.source = kSources[i].source;
    }

    switch (state.source)
    {
    case ModelSource::Preset: ShowPresetPicker(state); break;
    case ModelSource::Hub:    ShowHubFetch(state); break;
    case ModelSource::Config: ShowConfigLoader(state); break;
    case ModelSource::Manual: ShowManualModel(state); break;
    }
    if (!state.import_message.empty())
    {
        ImGui::PushStyleColor(ImGuiCol_Text, UtilizationColor(1.0));
        ImGui::TextWrapped("%s", state.import_message.c_str());
        ImGui::PopStyleColor();
    }

    FormRow("Mode");
    if (ImGui::RadioButton("Training##mode", !state.inference))
        state.inference = false;
    ImGui::SameLine();
    if (ImGui::RadioButton("Inference##mode", state.inference))
        state.inference = true;
}

void ShowTrainingPanel(AppState& state)
{
    if (!ImGui::CollapsingHeader("Training", ImGuiTreeNodeFlags_DefaultOpen))
        return;

    FormRow("Method", "Full: every weight trains. LoRA: the base is frozen, small adapters train. "
                      "QLoRA: LoRA over a 4-bit quantised base.");
    SettingCombo("##method", state.method, state, "training.method", false);
    if (state.method == "lora" || state.method == "qlora")
    {
        FormRow("LoRA rank", "Rank r of each adapter (A: r x in, B: out x r). Which modules get adapters "
                             "is the core's default, listed under Assumptions.");
        ImGui::SliderInt("##lora_rank", &state.lora_rank, 1, 256, "%d", ImGuiSliderFlags_Logarithmic | ImGuiSliderFlags_AlwaysClamp);
        FormRow("LoRA alpha", "Scaling numerator; it does not change memory. 0 leaves the core's default (2 x rank).");
        if (ImGui::InputFloat("##lora_alpha", &state.lora_alpha, 0.0f, 0.0f, "%g"))
            state.lora_alpha = std::clamp(state.lora_alpha, 0.0f, 1e6f);
        FormRow("LoRA dropout", "Dropout on each adapter's input. Above 0 every adapted linear keeps a "
                                "dropped-out copy of its input and the mask for the backward pass.");
        static const Choice kDropouts[] = {{"0", "0 (PEFT, torchtune)"}, {"0.05", "0.05 (LitGPT)"}, {"0.1", "0.1"}};
        ChoiceCombo("##lora_dropout", state.lora_dropout, kDropouts, true,
                    NumberText(At(At(At(state.filled, "training"), "lora"), "dropout")));
        FormRow("Target modules", "Which linear layers get adapters. Each adds its rank x (in + out) "
                                  "trainable parameters and keeps its input for the backward pass.");
        static const Choice kTargets[] = {
            {"q_proj,v_proj", "q, v (PEFT's default)"}, {"q_proj,k_proj,v_proj,o_proj", "attention (q, k, v, o)"},
            {"all_linear", "all linear layers"}, {"all_linear,lm_head", "all linear + LM head"}};
        ChoiceCombo("##lora_targets", state.lora_targets, kTargets, true,
                    Filled(state, "training", "lora").empty() ? "" : "q_proj,v_proj");
        if (state.method == "qlora")
        {
            FormRow("Base weights", "How QLoRA stores the frozen base model.");
            SettingCombo("##quantization", state.quantization, state, "training.quantization", true, Filled(state, "training", "quantization"));
        }
    }

    if (state.method == "frozen")
    {
        FormRow("Trainable layers", "The top N decoder layers train; the layers below keep no activations "
                                    "(nothing needs their gradients).");
        if (ImGui::InputInt("##trainable_layers", &state.trainable_layers))
            state.trainable_layers = std::clamp(state.trainable_layers, 0, 4096);
        FormRow("");
        ImGui::Checkbox("The LM head trains too", &state.train_lm_head);
    }
    FormRow("Framework", "The training framework's own habits: LitGPT keeps an untied copy of tied "
                         "embeddings and the previous step's graph; torchtune and torchtitan step the "
                         "optimizer as their recipes do.");
    SettingCombo("##framework", state.framework, state, "training.framework", true, Filled(state, "training", "framework"));
    FormRow("Precision", "Compute dtype. How weights, gradients and the fp32 master copy are kept follows "
                         "from it and the engine (the precision recipe, listed under Assumptions).");
    SettingCombo("##dtype", state.dtype, state, "training.dtype", true, Filled(state, "training", "dtype"));
    FormRow("Precision recipe", "Where the weights live and whether an fp32 master copy is kept. Default: "
                                "what the engine does with this dtype.");
    SettingCombo("##precision", state.precision, state, "training.precision", true, Filled(state, "training", "precision"));
    FormRow("Optimizer");
    SettingCombo("##optimizer", state.optimizer, state, "training.optimizer", true, Filled(state, "training", "optimizer"));
    FormRow("Optimizer states", "The dtype of the optimizer's moments (8-bit optimizers fix their own).");
    SettingCombo("##optimizer_state_dtype", state.optimizer_state_dtype, state, "training.optimizer_state_dtype", true,
                Filled(state, "training", "optimizer_state_dtype"));
    FormRow("Checkpointing", "Gradient (activation) checkpointing: keep only each layer's input and "
                             "recompute the rest in backward.");
    SettingCombo("##checkpointing", state.checkpointing, state, "training.activation_checkpointing", true,
                Filled(state, "training", "activation_checkpointing"));
    FormRow("Attention", "Eager attention keeps the batch x heads x seq x seq scores; SDPA and "
                         "FlashAttention keep only per-row statistics.");
    SettingCombo("##attention", state.attention, state, "training.attention", true, Filled(state, "training", "attention"));
    FormRow("Loss", "With a large vocabulary the logits and their fp32 copy are often the peak; "
                    "chunked and fused losses avoid most of it.");
    SettingCombo("##loss", state.loss, state, "training.loss", true, Filled(state, "training", "loss"));

    FormRow("Batch size", "Micro-batch per GPU (per data-parallel rank). Gradient accumulation does "
                          "not change the peak.");
    ImGui::SliderInt("##batch_size", &state.batch_size, 1, 512, "%d", ImGuiSliderFlags_Logarithmic | ImGuiSliderFlags_AlwaysClamp);
    FormRow("Sequence length", "Tokens per sample as fed to the model (packed or padded length).");
    ImGui::SliderInt("##seq_len", &state.seq_len, 128, 131072, "%d tokens", ImGuiSliderFlags_Logarithmic | ImGuiSliderFlags_AlwaysClamp);
    if (ImGui::TreeNode("More training switches"))
    {
        FormRow("Optimizer in backward", "Each parameter steps from its gradient hook, so only about one "
                                         "tensor's gradient is alive at a time (torchtune's optimizer_in_bwd).");
        ChoiceCombo("##optimizer_in_backward", state.optimizer_in_backward, kOnOff, true,
                    Filled(state, "training", "optimizer_in_backward") == "true" ? "true" : "false");
        FormRow("Activation offload", "Saved activations go to host RAM, leaving about two layers' worth on the GPU.");
        ChoiceCombo("##activation_offloading", state.activation_offloading, kOnOff, true,
                    Filled(state, "training", "activation_offloading") == "true" ? "true" : "false");
        FormRow("torch.compile", "Inductor fuses each norm (keeping its input and statistics, not its fp32 "
                                 "copies) and, with the loss compiled, the cross-entropy's fp32 upcast. "
                                 "torchtune's compile: True compiles both; torchtitan its blocks.");
        SettingCombo("##compile", state.compile, state, "training.compile", true, Filled(state, "training", "compile"));
        FormRow("Untie embeddings", "Keep the head as its own copy of tied embeddings (LitGPT's checkpoint conversion).");
        ChoiceCombo("##untie_embeddings", state.untie_embeddings, kOnOff, true,
                    Filled(state, "training", "untie_embeddings") == "true" ? "true" : "false");
        FormRow("Previous step kept", "The training loop holds the last step's loss and logits into the next "
                                      "forward (LitGPT's loop).");
        ChoiceCombo("##retains_previous_step", state.retains_previous_step, kOnOff, true,
                    Filled(state, "training", "retains_previous_step") == "true" ? "true" : "false");
        if (state.method == "qlora")
        {
            FormRow("Double quantization", "bitsandbytes' bnb_4bit_use_double_quant: the scales are quantized too.");
            ChoiceCombo("##double_quant", state.double_quant, kOnOff, true,
                        Filled(state, "training", "double_quant") == "true" ? "true" : "false");
        }
        if (state.pipeline_parallel > 1)
        {
            FormRow("Pipeline micro-batches", "Micro-batches per step through the pipeline; 0 leaves the default.");
            if (ImGui::InputInt("##pipeline_microbatches", &state.pipeline_microbatches))
                state.pipeline_microbatches = std::clamp(state.pipeline_microbatches, 0, 1 << 20);
        }
        ImGui::TreePop();
    }
    ShowImagesRow(state);
    FormRow("Grad. accumulation", "Gradient accumulation: micro-batches per optimizer step. It multiplies the global batch, "
                                     "not the peak.");
    if (ImGui::InputInt("##grad_accum", &state.grad_accum))
        state.grad_accum = std::clamp(state.grad_accum, 1, 65536);
}

void ShowInferencePanel(AppState& state)
{
    if (!ImGui::CollapsingHeader("Inference", ImGuiTreeNodeFlags_DefaultOpen))
        return;

    FormRow("Weights", "Storage format of the weights. Default: the checkpoint's own dtype or "
                       "quantization_config.");
    SettingCombo("##weight_format", state.weight_format, state, "inference.weight_format", true, Filled(state, "inference", "weight_format"));
    FormRow("KV cache dtype");
    SettingCombo("##kv_cache_dtype", state.kv_cache_dtype, state, "inference.kv_cache_dtype", true, Filled(state, "inference", "kv_cache_dtype"));
    FormRow("Engine", "Transformers: weights, the cache as it grows and the prefill's working set. "
                      "vLLM: claims gpu_memory_utilization of the card and fills it with KV blocks. "
                      "llama.cpp: a whole-context cache and one ubatch's compute buffer.");
    SettingCombo("##serving_engine", state.serving_engine, state, "inference.engine", true, Filled(state, "inference", "engine"));

    FormRow("Sequences", "Concurrent sequences (batch size).");
    ImGui::SliderInt("##concurrent_sequences", &state.concurrent_sequences, 1, 512, "%d", ImGuiSliderFlags_Logarithmic | ImGuiSliderFlags_AlwaysClamp);
    FormRow("Context length", "Prompt plus generated tokens per sequence.");
    ImGui::SliderInt("##context_len", &state.context_len, 128, 131072, "%d tokens", ImGuiSliderFlags_Logarithmic | ImGuiSliderFlags_AlwaysClamp);
    ShowImagesRow(state);
    FormRow("");
    ImGui::Checkbox("Keep a KV cache", &state.kv_cache);
    ImGui::SameLine();
    HelpMarker("Off: every generated token recomputes the whole context (use_cache=False).");
    if (state.serving_engine == "vllm")
    {
        FormRow("GPU memory share", "vLLM's gpu_memory_utilization: the share of the card it claims. "
                                    "0 leaves vLLM's default.");
        ImGui::SliderFloat("##gpu_memory_utilization", &state.gpu_memory_utilization, 0.0f, 0.99f, "%.2f",
                           ImGuiSliderFlags_AlwaysClamp);
        FormRow("Batched tokens", "vLLM's max_num_batched_tokens: the size of its profiling step, whose "
                                  "activations are kept out of the KV cache. 0 leaves the default.");
        if (ImGui::InputInt("##max_num_batched_tokens", &state.max_num_batched_tokens))
            state.max_num_batched_tokens = std::clamp(state.max_num_batched_tokens, 0, 1 << 24);
    }
    if (state.serving_engine == "llama.cpp")
    {
        FormRow("GPU layers", "llama.cpp's --n-gpu-layers; the rest stay in host RAM. -1: all of them.");
        if (ImGui::InputInt("##gpu_layers", &state.gpu_layers))
            state.gpu_layers = std::clamp(state.gpu_layers, -1, 4096);
    }
}

void ShowParallelismPanel(AppState& state)
{
    if (!ImGui::CollapsingHeader("Parallelism", ImGuiTreeNodeFlags_DefaultOpen))
        return;

    if (!state.inference)
    {
        FormRow("Engine", "How state is spread over data-parallel GPUs: DDP replicates it, ZeRO and "
                          "FSDP shard it.");
        SettingCombo("##engine", state.engine, state, "engine.type", true, Filled(state, "engine", "type"));
        if (state.engine == "deepspeed" || state.engine == "megatron_deepspeed")
        {
            FormRow("ZeRO stage", "1: optimizer states sharded over data-parallel GPUs.\n"
                                  "2: + gradients.\n3: + the weights themselves.");
            ImGui::SliderInt("##zero_stage", &state.zero_stage, 0, 3, "%d", ImGuiSliderFlags_AlwaysClamp);
            FormRow("Offload optimizer", "ZeRO-Offload: optimizer states live in host RAM (or NVMe).");
            SettingCombo("##offload_optimizer", state.offload_optimizer, state, "engine.offload_optimizer", true,
                        Filled(state, "engine", "offload_optimizer"));
            if (state.zero_stage == 3)
            {
                FormRow("Offload weights", "ZeRO-Infinity: the weights themselves live in host RAM (or NVMe).");
                SettingCombo("##offload_param", state.offload_param, state, "engine.offload_param", true, Filled(state, "engine", "offload_param"));
            }
        }
        if (state.engine == "fsdp")
        {
            FormRow("Sharding");
            SettingCombo("##fsdp_sharding", state.fsdp_sharding, state, "engine.fsdp_sharding", true,
                        Filled(state, "engine", "fsdp_sharding"));
        }
    }

    FormRow("Tensor parallel", "GPUs that split each weight matrix (Megatron / vLLM tensor parallelism).");
    if (ImGui::InputInt("##tensor_parallel", &state.tensor_parallel))
        state.tensor_parallel = std::clamp(state.tensor_parallel, 1, 64);
    if (!state.inference)
    {
        FormRow("Pipeline parallel", "Pipeline stages; the figures are for the heaviest stage.");
        if (ImGui::InputInt("##pipeline_parallel", &state.pipeline_parallel))
            state.pipeline_parallel = std::clamp(state.pipeline_parallel, 1, 64);
        FormRow("Context parallel", "GPUs that split each sequence (ring attention); activations shrink with it.");
        if (ImGui::InputInt("##context_parallel", &state.context_parallel))
            state.context_parallel = std::clamp(state.context_parallel, 1, 64);
        if (state.tensor_parallel > 1)
        {
            FormRow("");
            ImGui::Checkbox("Sequence parallel", &state.sequence_parallel);
            ImGui::SameLine();
            HelpMarker("Megatron's sequence parallelism: the activations outside the tensor-parallel regions "
                       "(norms, dropout) are split over the tensor-parallel GPUs too.");
        }
    }
    FormRow("Expert parallel", "GPUs that split a mixture-of-experts layer's experts.");
    if (ImGui::InputInt("##expert_parallel", &state.expert_parallel))
        state.expert_parallel = std::clamp(state.expert_parallel, 1, 1024);
}

void ShowHardwarePanel(AppState& state)
{
    if (!ImGui::CollapsingHeader("Hardware", ImGuiTreeNodeFlags_DefaultOpen))
        return;

    FormRow("GPU");
    const char* preview = state.gpus.empty() ? "(no GPUs)" : state.gpus[state.gpu_index].name.c_str();
    if (ImGui::BeginCombo("##gpu", preview, ImGuiComboFlags_HeightLarge))
    {
        for (int i = 0; i < static_cast<int>(state.gpus.size()); i++)
        {
            const bool selected = i == state.gpu_index;
            if (ImGui::Selectable(state.gpus[i].name.c_str(), selected))
                state.gpu_index = i;
            ImGui::SameLine(ImGui::GetWindowContentRegionMax().x - ImGui::CalcTextSize("000.0 GiB").x);
            ImGui::TextDisabled("%s", FormatBytes(state.gpus[i].memory_bytes).c_str());
            if (selected)
                ImGui::SetItemDefaultFocus();
        }
        ImGui::EndCombo();
    }

    FormRow("Number of GPUs", "All GPUs in the job. Data-parallel size is this divided by tensor x pipeline parallel.");
    if (ImGui::InputInt("##num_gpus", &state.num_gpus))
        state.num_gpus = std::clamp(state.num_gpus, 1, 4096);
    FormRow("Custom size (GiB)", "A card with this much memory (GiB, 2^30 bytes, as gpu_memory_gb in a scenario) "
                                 "instead of the catalogue's figure: for cards not listed, or memory already "
                                 "taken. 0: the catalogue's.");
    if (ImGui::InputFloat("##gpu_memory_gb", &state.custom_gpu_gb, 0.0f, 0.0f, "%g"))
        state.custom_gpu_gb = std::clamp(state.custom_gpu_gb, 0.0f, 100000.0f);
}

//-----------------------------------------------------------------------------
// [SECTION] Results
//-----------------------------------------------------------------------------

void ShowSummaryPanel(AppState& state)
{
    const nlohmann::json& r = state.result;
    const nlohmann::json& per_gpu = At(r, "per_gpu");
    const std::uint64_t allocated = Bytes(per_gpu, "peak_allocated_bytes");
    const std::uint64_t reserved = Bytes(per_gpu, "peak_reserved_bytes");
    const std::uint64_t device_total = Bytes(per_gpu, "device_total_bytes");
    const double utilization = At(r, "utilization").is_number() ? At(r, "utilization").get<double>() : 0.0;
    const bool fits = At(r, "fits").is_boolean() && At(r, "fits").get<bool>();
    const GpuEntry* gpu = CurrentGpu(state);

    // The headline: what nvidia-smi would show on the busiest GPU.
    state.displayed_peak = FormatBytes(device_total);
    state.displayed_peak_bytes = device_total;
    ImGui::TextDisabled("Per GPU, at the peak of %s", state.inference ? "serving" : "a training step");
    if (state.font_large != nullptr)
        ImGui::PushFont(state.font_large);
    ImGui::TextColored(UtilizationColor(utilization), "%s", state.displayed_peak.c_str());
    if (state.font_large != nullptr)
        ImGui::PopFont();
    ImGui::SameLine();
    ImGui::AlignTextToFramePadding();
    if (gpu != nullptr)
        ImGui::Text("of %s (%s)", FormatBytes(gpu->memory_bytes).c_str(), gpu->name.c_str());

    if (fits)
        ImGui::TextColored(UtilizationColor(utilization), "Fits: %.0f %% of the card.", utilization * 100.0);
    else
        ImGui::TextColored(UtilizationColor(1.0), "Does not fit: %.0f %% of the card.", utilization * 100.0);
    if (At(r, "gpus_needed").is_number())
    {
        ImGui::SameLine();
        ImGui::Text(" GPUs needed: %d", At(r, "gpus_needed").get<int>());
        ImGui::SameLine();
        HelpMarker("The fewest GPUs of this model that would hold the job with the same settings, "
                   "sharding what the engine shards.");
    }

    if (ImGui::BeginTable("figures", 3, ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_RowBg))
    {
        const std::string phase = At(per_gpu, "peak_phase").is_string() ? Text(At(per_gpu, "peak_phase")) : "";
        auto row = [](const char* name, std::uint64_t bytes, const char* help) {
            ImGui::TableNextRow();
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(name);
            ImGui::TableNextColumn();
            ImGui::Text("%s", FormatBytes(bytes).c_str());
            ImGui::TableNextColumn();
            HelpMarker(help);
        };
        row("Allocated peak", allocated,
            "What torch.cuda.max_memory_allocated() would report: the tensors alive at the peak of the step.");
        row("Reserved", reserved,
            "Allocated plus the caching allocator's slack (fragmentation): torch.cuda.max_memory_reserved(). "
            "The slack is an assumed factor, listed under Assumptions.");
        row("Device total", device_total,
            "Reserved plus the CUDA context, kernels and library workspaces: what nvidia-smi shows. "
            "The context size is an assumed figure, listed under Assumptions.");
        ImGui::EndTable();
        if (!phase.empty())
            ImGui::TextDisabled("The peak falls in: %s", phase.c_str());
    }

    if (const nlohmann::json& p = At(r, "parameters"); p.is_object())
    {
        ImGui::Text("Parameters: %s total, %s trainable", FormatCount(Bytes(p, "total")).c_str(),
                    FormatCount(Bytes(p, "trainable")).c_str());
    }
    if (const std::uint64_t host = Bytes(r, "host_bytes"); host > 0)
        ImGui::Text("Host RAM for offloaded state: %s", FormatBytes(host).c_str());
    if (const nlohmann::json& sv = At(r, "serving"); sv.is_object())
    {
        ImGui::Text("KV cache: %s tokens (%s blocks); %s sequences of %s tokens at once",
                    FormatCount(Bytes(sv, "kv_cache_tokens")).c_str(), FormatCount(Bytes(sv, "kv_cache_blocks")).c_str(),
                    FormatCount(Bytes(sv, "max_concurrent_sequences")).c_str(), FormatCount(Bytes(sv, "at_context_len")).c_str());
        ImGui::SameLine();
        HelpMarker("vLLM claims gpu_memory_utilization of the card, keeps the weights and its profiling step's "
                   "activations, and turns every byte left into KV-cache blocks.");
    }
    ImGui::Spacing();
}

void ShowBreakdownPanel(AppState& state)
{
    if (!ImGui::CollapsingHeader("Breakdown per GPU", ImGuiTreeNodeFlags_DefaultOpen))
        return;

    const nlohmann::json& components = At(At(state.result, "per_gpu"), "components");
    const GpuEntry* gpu = CurrentGpu(state);
    const double capacity = gpu != nullptr ? ToGiB(gpu->memory_bytes) : 0.0;

    const char* labels[kComponentCount];
    ImU32 colors[kComponentCount];
    double values[kComponentCount];
    double total = 0.0;
    for (int i = 0; i < kComponentCount; i++)
    {
        labels[i] = kComponents[i].label;
        colors[i] = kComponents[i].color;
        values[i] = ToGiB(Bytes(components, kComponents[i].key));
        total += values[i];
    }

    const int bars = std::min(state.num_gpus, kMaxBars);
    if (BeginStackedBars("##per_gpu", std::max(capacity, total) * 1.05))
    {
        SetupStackedBarsItems(labels, colors, kComponentCount);
        for (int g = 0; g < bars; g++)
        {
            char name[16];
            std::snprintf(name, sizeof(name), "GPU %d", g);
            PlotStackedBar(name, values, kComponentCount, capacity);
        }
        EndStackedBars();
    }
    if (state.num_gpus > bars)
        ImGui::TextDisabled("... and %d more GPUs like these.", state.num_gpus - bars);
    if (state.num_gpus > 1)
    {
        ImGui::TextDisabled("Each bar shows the busiest GPU of the layout.");
        ImGui::SameLine();
        HelpMarker("With pipeline parallelism the first and last stages hold the embeddings and the "
                   "head; the figures are for the heaviest stage, so the others hold at most this.");
    }

    // Legend with values, largest first would reorder the bars' colours: keep stacking order.
    if (ImGui::BeginTable("legend", 4, ImGuiTableFlags_SizingFixedFit))
    {
        for (int i = 0; i < kComponentCount; i++)
        {
            if (values[i] <= 0.0)
                continue;
            ImGui::TableNextRow();
            ImGui::TableNextColumn();
            ImGui::ColorButton(labels[i], ImGui::ColorConvertU32ToFloat4(colors[i]),
                               ImGuiColorEditFlags_NoTooltip | ImGuiColorEditFlags_NoPicker,
                               ImVec2(ImGui::GetFontSize(), ImGui::GetFontSize()));
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(labels[i]);
            ImGui::TableNextColumn();
            ImGui::Text("%8.2f GiB", values[i]);
            ImGui::TableNextColumn();
            ImGui::TextDisabled("%5.1f %%", total > 0.0 ? values[i] / total * 100.0 : 0.0);
        }
        ImGui::EndTable();
    }
    ImGui::Spacing();
}

void ShowAssumptionsPanel(AppState& state)
{
    const nlohmann::json& r = state.result;
    const nlohmann::json& warnings = At(r, "warnings");
    const nlohmann::json& defaults = At(r, "defaults_applied");

    if (warnings.is_array() && !warnings.empty())
    {
        char title[48];
        std::snprintf(title, sizeof(title), "Warnings (%d)###warnings", static_cast<int>(warnings.size()));
        if (ImGui::CollapsingHeader(title, ImGuiTreeNodeFlags_DefaultOpen))
        {
            ImGui::PushStyleColor(ImGuiCol_Text, UtilizationColor(0.9));
            for (const nlohmann::json& w : warnings)
                BulletWrapped(Text(w));
            ImGui::PopStyleColor();
        }
    }

    char title[48];
    std::snprintf(title, sizeof(title), "Assumptions (%d)###assumptions", static_cast<int>(defaults.size()));
    if (ImGui::CollapsingHeader(title, ImGuiTreeNodeFlags_DefaultOpen))
    {
        ImGui::TextDisabled("Defaults the estimate applied because the scenario left them open:");
        if (defaults.is_array())
            for (const nlohmann::json& d : defaults)
                BulletWrapped(Text(d));
        const nlohmann::json& factors = At(r, "assumptions");
        if (factors.is_object() && !factors.empty() && ImGui::TreeNode("Factors"))
        {
            for (const auto& [key, value] : factors.items())
                ImGui::BulletText("%s: %s", key.c_str(), value.dump().c_str());
            ImGui::TreePop();
        }
    }
}

void ShowScenarioPanel(AppState& state)
{
    if (!ImGui::CollapsingHeader("Scenario JSON"))
        return;
    ImGui::TextDisabled("The scenario as sent to the estimator (the CLI reads the same file):");
    const std::string pretty = nlohmann::json::parse(state.scenario_text, nullptr, false).dump(2);
    ImGui::TextUnformatted(pretty.c_str());
    if (ImGui::Button("Copy"))
        ImGui::SetClipboardText(pretty.c_str());
    ImGui::SameLine();
    ImGui::TextDisabled("estimates run: %d", state.estimate_count);
}

void ShowErrorsPanel(AppState& state)
{
    state.displayed_peak.clear();
    state.displayed_peak_bytes = 0;
    const bool waiting = (state.source == ModelSource::Hub && state.hub.config.is_null()) ||
                         (state.source == ModelSource::Config && state.config.is_null());
    if (waiting)
    {
        ImGui::TextWrapped(state.source == ModelSource::Hub
                               ? "No model yet: fetch one from the Hub (Model, on the left), or pick a preset."
                               : "No config.json yet: drop one on the page, open a file, or paste it below.");
        return;
    }
    ImGui::TextColored(UtilizationColor(1.0), "This scenario cannot be estimated:");
    const nlohmann::json& errors = At(state.result, "errors");
    if (errors.is_array())
        for (const nlohmann::json& e : errors)
            BulletWrapped(At(e, "message").is_string() ? Text(At(e, "message")) : e.dump());
    ShowScenarioPanel(state);
}

}  // namespace gpumem::ui
