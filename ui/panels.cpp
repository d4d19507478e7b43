// The panels: see panels.h. Each is one ShowXxxPanel(AppState&), in the order the page shows them.

#include "panels.h"

#include <algorithm>
#include <cctype>
#include <cfloat>
#include <cstdio>
#include <string>

#include "imgui.h"
#include "widgets.h"

namespace gpumem::ui {

//-----------------------------------------------------------------------------
// [SECTION] Choices and helpers
//-----------------------------------------------------------------------------

namespace {

// One entry of a combo: the scenario value and how the page names it.
struct Choice
{
    const char* value;
    const char* label;
};

const Choice kMethods[] = {
    {"full", "Full fine-tuning"}, {"lora", "LoRA"}, {"qlora", "QLoRA (4-bit base)"}};
const Choice kDtypes[] = {
    {"bf16", "bf16"}, {"fp16", "fp16"}, {"fp32", "fp32"}, {"fp8", "fp8"}};
const Choice kOptimizers[] = {
    {"adamw", "AdamW (foreach)"}, {"adamw_fused", "AdamW (fused)"}, {"adam", "Adam"},
    {"adamw_8bit", "AdamW 8-bit (bitsandbytes)"}, {"paged_adamw_8bit", "Paged AdamW 8-bit"},
    {"paged_adamw_32bit", "Paged AdamW 32-bit"}, {"adafactor", "Adafactor (factored)"}, {"lion", "Lion"},
    {"muon", "Muon"}, {"lamb", "LAMB"}, {"amsgrad", "AMSGrad"}, {"adagrad", "Adagrad"}, {"rmsprop", "RMSprop"},
    {"sgd_momentum", "SGD with momentum"}, {"sgd", "SGD"}, {"shampoo", "Shampoo"}};
const Choice kCheckpointing[] = {
    {"none", "Off"}, {"selective", "Selective (per-op; Megatron: attention)"}, {"full", "Full (every layer)"}};
const Choice kAttention[] = {
    {"eager", "Eager (keeps s x s scores)"}, {"sdpa", "SDPA"}, {"flash", "FlashAttention"}};
const Choice kLosses[] = {
    {"standard", "Standard (fp32 logits)"}, {"chunked", "Chunked"}, {"fused", "Fused (Liger, CCE)"}};
const Choice kEngines[] = {
    {"none", "None (one process)"}, {"ddp", "DDP"}, {"deepspeed", "DeepSpeed ZeRO"}, {"fsdp", "FSDP"}};
const Choice kFsdpSharding[] = {
    {"full_shard", "FULL_SHARD"}, {"shard_grad_op", "SHARD_GRAD_OP"},
    {"hybrid_shard", "HYBRID_SHARD"}, {"no_shard", "NO_SHARD"}};
const Choice kOffload[] = {{"none", "None"}, {"cpu", "CPU"}, {"nvme", "NVMe"}};
const Choice kWeightFormats[] = {
    {"bf16", "bf16"}, {"fp16", "fp16"}, {"fp32", "fp32"}, {"fp8", "fp8 (128x128 block scales)"},
    {"int8", "int8 (LLM.int8)"}, {"int4", "int4 (GPTQ/AWQ, group 128)"}, {"nf4", "NF4 (bitsandbytes)"},
    {"mxfp4", "MXFP4"}, {"nvfp4", "NVFP4"}, {"q8_0", "GGUF Q8_0"}, {"q6_k", "GGUF Q6_K"},
    {"q5_k_m", "GGUF Q5_K_M"}, {"q4_k_m", "GGUF Q4_K_M"}, {"q4_0", "GGUF Q4_0"}};
const Choice kKvDtypes[] = {{"bf16", "bf16"}, {"fp16", "fp16"}, {"fp8", "fp8"}, {"int8", "int8"}};
const Choice kServingEngines[] = {
    {"transformers", "Transformers"}, {"vllm", "vLLM"}, {"llama.cpp", "llama.cpp"}};

// The memory components, in stacking order, as the result names them.
struct Component
{
    const char* key;
    const char* label;
    ImU32       color;
};
const Component kComponents[] = {
    {"weights",          "Weights",          IM_COL32( 66, 133, 244, 255)},
    {"gradients",        "Gradients",        IM_COL32(251, 140,   0, 255)},
    {"optimizer_states", "Optimizer states", IM_COL32(171,  71, 188, 255)},
    {"activations",      "Activations",      IM_COL32( 67, 160,  71, 255)},
    {"logits",           "Logits",           IM_COL32(  0, 172, 193, 255)},
    {"kv_cache",         "KV cache",         IM_COL32(236,  64, 122, 255)},
    {"overheads",        "Overheads",        IM_COL32(144, 164, 174, 255)},
};
constexpr int kComponentCount = IM_ARRAYSIZE(kComponents);

// More bars than this and the rest are summarised in a line: they are the same.
constexpr int kMaxBars = 8;

// Starts a form row: the label (and its help) on the left, the next widget filling the rest.
void FormRow(const char* label, const char* help = nullptr)
{
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted(label);
    if (help != nullptr)
    {
        ImGui::SameLine();
        HelpMarker(help);
    }
    ImGui::SameLine(ImGui::GetFontSize() * 12.5f);
    ImGui::SetNextItemWidth(-FLT_MIN);
}

// j[key], or null when j is not an object or has no such key (const operator[] would be UB).
const nlohmann::json kNull;
const nlohmann::json& At(const nlohmann::json& j, const char* key)
{
    return j.is_object() && j.contains(key) ? j[key] : kNull;
}

std::string Text(const nlohmann::json& j)
{
    return j.is_string() ? j.get<std::string>() : j.dump();
}

// The filled-in scenario's value for section.key, as text ("" when the core has none).
std::string Filled(const AppState& state, const char* section, const char* key)
{
    const nlohmann::json& v = At(At(state.filled, section), key);
    return v.is_null() ? "" : Text(v);
}

const char* LabelOf(const Choice choices[], int count, const std::string& value)
{
    for (int i = 0; i < count; i++)
        if (value == choices[i].value)
            return choices[i].label;
    return nullptr;
}

// A combo over `choices`. With `offer_default`, its first entry is "default (<what the core
// chose>)" and selecting it stores "" so the field is left out of the scenario.
template <int N>
bool ChoiceCombo(const char* id, std::string& value, const Choice (&choices)[N],
                 bool offer_default = true, const std::string& filled = "")
{
    std::string default_label = "default";
    if (!filled.empty())
    {
        const char* filled_label = LabelOf(choices, N, filled);
        default_label += " (" + std::string(filled_label != nullptr ? filled_label : filled.c_str()) + ")";
    }
    const char* current = LabelOf(choices, N, value);
    const std::string preview = value.empty() ? default_label : current != nullptr ? current : value;

    bool changed = false;
    if (ImGui::BeginCombo(id, preview.c_str()))
    {
        if (offer_default && ImGui::Selectable(default_label.c_str(), value.empty()))
        {
            value.clear();
            changed = true;
        }
        for (const Choice& choice : choices)
        {
            const bool selected = value == choice.value;
            if (ImGui::Selectable(choice.label, selected))
            {
                value = choice.value;
                changed = true;
            }
            if (selected)
                ImGui::SetItemDefaultFocus();
        }
        ImGui::EndCombo();
    }
    return changed;
}

std::string Lowercase(std::string s)
{
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

std::uint64_t Bytes(const nlohmann::json& j, const char* key)
{
    const nlohmann::json& v = At(j, key);
    return v.is_number() ? v.get<std::uint64_t>() : 0;
}

double ToGiB(std::uint64_t bytes)
{
    return static_cast<double>(bytes) / static_cast<double>(1ull << 30);
}

// The card the estimate is for, from the catalogue (nullptr when the scenario names none).
const GpuEntry* CurrentGpu(const AppState& state)
{
    const std::string id = Filled(state, "hardware", "gpu");
    for (const GpuEntry& gpu : state.gpus)
        if (gpu.id == id)
            return &gpu;
    return state.gpus.empty() ? nullptr : &state.gpus[state.gpu_index];
}

void BulletWrapped(const std::string& text)
{
    ImGui::Bullet();
    ImGui::TextWrapped("%s", text.c_str());
}

}  // namespace

//-----------------------------------------------------------------------------
// [SECTION] Controls
//-----------------------------------------------------------------------------

void ShowModelPanel(AppState& state)
{
    if (!ImGui::CollapsingHeader("Model", ImGuiTreeNodeFlags_DefaultOpen))
        return;

    FormRow("Model", "A bundled preset: its config.json is compiled into the page, so nothing is downloaded.");
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
    RecordItemRect(state, "preset");

    FormRow("Mode");
    if (ImGui::RadioButton("Training", !state.inference))
        state.inference = false;
    RecordItemRect(state, "mode_training");
    ImGui::SameLine();
    if (ImGui::RadioButton("Inference", state.inference))
        state.inference = true;
    RecordItemRect(state, "mode_inference");
}

void ShowTrainingPanel(AppState& state)
{
    if (!ImGui::CollapsingHeader("Training", ImGuiTreeNodeFlags_DefaultOpen))
        return;

    FormRow("Method", "Full: every weight trains. LoRA: the base is frozen, small adapters train. "
                      "QLoRA: LoRA over a 4-bit quantised base.");
    ChoiceCombo("##method", state.method, kMethods, false);
    if (state.method == "lora" || state.method == "qlora")
    {
        FormRow("LoRA rank", "Rank r of each adapter (A: r x in, B: out x r). Which modules get adapters "
                             "is the core's default, listed under Assumptions.");
        ImGui::SliderInt("##lora_rank", &state.lora_rank, 1, 256, "%d", ImGuiSliderFlags_Logarithmic | ImGuiSliderFlags_AlwaysClamp);
        RecordItemRect(state, "lora_rank");
    }

    FormRow("Precision", "Compute dtype. How weights, gradients and the fp32 master copy are kept follows "
                         "from it and the engine (the precision recipe, listed under Assumptions).");
    ChoiceCombo("##dtype", state.dtype, kDtypes, true, Filled(state, "training", "dtype"));
    FormRow("Optimizer");
    ChoiceCombo("##optimizer", state.optimizer, kOptimizers, true, Filled(state, "training", "optimizer"));
    FormRow("Checkpointing", "Gradient (activation) checkpointing: keep only each layer's input and "
                             "recompute the rest in backward.");
    ChoiceCombo("##checkpointing", state.checkpointing, kCheckpointing, true,
                Filled(state, "training", "activation_checkpointing"));
    FormRow("Attention", "Eager attention keeps the batch x heads x seq x seq scores; SDPA and "
                         "FlashAttention keep only per-row statistics.");
    ChoiceCombo("##attention", state.attention, kAttention, true, Filled(state, "training", "attention"));
    FormRow("Loss", "With a large vocabulary the logits and their fp32 copy are often the peak; "
                    "chunked and fused losses avoid most of it.");
    ChoiceCombo("##loss", state.loss, kLosses, true, Filled(state, "training", "loss"));

    FormRow("Batch size", "Micro-batch per GPU (per data-parallel rank). Gradient accumulation does "
                          "not change the peak.");
    ImGui::SliderInt("##batch_size", &state.batch_size, 1, 512, "%d", ImGuiSliderFlags_Logarithmic | ImGuiSliderFlags_AlwaysClamp);
    RecordItemRect(state, "batch_size");
    FormRow("Sequence length", "Tokens per sample as fed to the model (packed or padded length).");
    ImGui::SliderInt("##seq_len", &state.seq_len, 128, 131072, "%d tokens", ImGuiSliderFlags_Logarithmic | ImGuiSliderFlags_AlwaysClamp);
    RecordItemRect(state, "seq_len");
}

void ShowInferencePanel(AppState& state)
{
    if (!ImGui::CollapsingHeader("Inference", ImGuiTreeNodeFlags_DefaultOpen))
        return;

    FormRow("Weights", "Storage format of the weights. Default: the checkpoint's own dtype or "
                       "quantization_config.");
    ChoiceCombo("##weight_format", state.weight_format, kWeightFormats, true, Filled(state, "inference", "weight_format"));
    FormRow("KV cache dtype");
    ChoiceCombo("##kv_cache_dtype", state.kv_cache_dtype, kKvDtypes, true, Filled(state, "inference", "kv_cache_dtype"));
    FormRow("Engine", "Transformers: weights, the cache as it grows and the prefill's working set. "
                      "vLLM: claims gpu_memory_utilization of the card and fills it with KV blocks. "
                      "llama.cpp: a whole-context cache and one ubatch's compute buffer.");
    ChoiceCombo("##serving_engine", state.serving_engine, kServingEngines, true, Filled(state, "inference", "engine"));

    FormRow("Sequences", "Concurrent sequences (batch size).");
    ImGui::SliderInt("##concurrent_sequences", &state.concurrent_sequences, 1, 512, "%d", ImGuiSliderFlags_Logarithmic | ImGuiSliderFlags_AlwaysClamp);
    RecordItemRect(state, "concurrent_sequences");
    FormRow("Context length", "Prompt plus generated tokens per sequence.");
    ImGui::SliderInt("##context_len", &state.context_len, 128, 131072, "%d tokens", ImGuiSliderFlags_Logarithmic | ImGuiSliderFlags_AlwaysClamp);
    RecordItemRect(state, "context_len");
}

void ShowParallelismPanel(AppState& state)
{
    if (!ImGui::CollapsingHeader("Parallelism", ImGuiTreeNodeFlags_DefaultOpen))
        return;

    if (!state.inference)
    {
        FormRow("Engine", "How state is spread over data-parallel GPUs: DDP replicates it, ZeRO and "
                          "FSDP shard it.");
        ChoiceCombo("##engine", state.engine, kEngines, true, Filled(state, "engine", "type"));
        if (state.engine == "deepspeed")
        {
            FormRow("ZeRO stage", "1: optimizer states sharded over data-parallel GPUs.\n"
                                  "2: + gradients.\n3: + the weights themselves.");
            ImGui::SliderInt("##zero_stage", &state.zero_stage, 0, 3, "%d", ImGuiSliderFlags_AlwaysClamp);
            RecordItemRect(state, "zero_stage");
            FormRow("Offload optimizer", "ZeRO-Offload: optimizer states live in host RAM (or NVMe).");
            ChoiceCombo("##offload_optimizer", state.offload_optimizer, kOffload, true,
                        Filled(state, "engine", "offload_optimizer"));
        }
        if (state.engine == "fsdp")
        {
            FormRow("Sharding");
            ChoiceCombo("##fsdp_sharding", state.fsdp_sharding, kFsdpSharding, true,
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
    }
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
    RecordItemRect(state, "gpu");

    FormRow("Number of GPUs", "All GPUs in the job. Data-parallel size is this divided by tensor x pipeline parallel.");
    if (ImGui::InputInt("##num_gpus", &state.num_gpus))
        state.num_gpus = std::clamp(state.num_gpus, 1, 4096);
    RecordItemRect(state, "num_gpus");
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
    RecordItemRect(state, "peak");
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
    ImGui::TextColored(UtilizationColor(1.0), "This scenario cannot be estimated:");
    const nlohmann::json& errors = At(state.result, "errors");
    if (errors.is_array())
        for (const nlohmann::json& e : errors)
            BulletWrapped(At(e, "message").is_string() ? Text(At(e, "message")) : e.dump());
    ShowScenarioPanel(state);
}

}  // namespace gpumem::ui
