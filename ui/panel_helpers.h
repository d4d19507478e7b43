// Helpers the panels share (panels.cpp, tables.cpp): the combos' choices, the component
// colours, the form-row layout and small readers of the core's result JSON. Header-only.
#pragma once

#include <algorithm>
#include <cctype>
#include <cfloat>
#include <cstdint>
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "app.h"
#include "imgui.h"
#include "widgets.h"

namespace gpumem::ui {

// One entry of a combo: the scenario value and how the page names it.
struct Choice
{
    const char* value;
    const char* label;
};

const Choice kMethods[] = {
    {"full", "Full fine-tuning"}, {"lora", "LoRA"}, {"qlora", "QLoRA (4-bit base)"},
    {"frozen", "Partial (top layers train)"}};
const Choice kFrameworks[] = {
    {"transformers", "Transformers / PEFT"}, {"litgpt", "LitGPT"}, {"torchtune", "torchtune"},
    {"torchtitan", "torchtitan"}};
const Choice kOnOff[] = {{"true", "on"}, {"false", "off"}};
const Choice kCompile[] = {
    {"none", "off (eager)"}, {"layers", "the layers"}, {"layers_and_loss", "the layers and the loss"}};
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
    {"none", "None (one process)"}, {"ddp", "DDP"}, {"deepspeed", "DeepSpeed ZeRO"}, {"fsdp", "FSDP"},
    {"megatron", "Megatron-LM"}, {"megatron_deepspeed", "Megatron-DeepSpeed"}};
const Choice kPrecisions[] = {
    {"amp_fp32_weights", "AMP (fp32 weights, bf16/fp16 compute)"}, {"pure", "Pure (weights in the compute dtype)"},
    {"mixed_master_fp32", "Mixed (half weights + fp32 master copy)"}};
const Choice kStateDtypes[] = {{"fp32", "fp32"}, {"bf16", "bf16"}};
const Choice kQuantizations[] = {{"nf4", "NF4 (bitsandbytes)"}, {"fp4", "FP4 (bitsandbytes)"}, {"int8", "int8 (LLM.int8)"}};
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
    {"temporaries",      "Temporaries",      IM_COL32(255, 202,  40, 255)},
    {"overheads",        "Overheads",        IM_COL32(144, 164, 174, 255)},
};
constexpr int kComponentCount = IM_ARRAYSIZE(kComponents);

// More bars than this and the rest are summarised in a line: they are the same.
constexpr int kMaxBars = 8;

// Starts a form row: the label (and its help) on the left, the next widget filling the rest.
inline void FormRow(const char* label, const char* help = nullptr)
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
inline const nlohmann::json& At(const nlohmann::json& j, const char* key)
{
    return j.is_object() && j.contains(key) ? j[key] : kNull;
}

inline std::string Text(const nlohmann::json& j)
{
    return j.is_string() ? j.get<std::string>() : j.dump();
}

// The filled-in scenario's value for section.key, as text ("" when the core has none).
inline std::string Filled(const AppState& state, const char* section, const char* key)
{
    const nlohmann::json& v = At(At(state.filled, section), key);
    return v.is_null() ? "" : Text(v);
}

inline const char* LabelOf(const Choice choices[], int count, const std::string& value)
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

inline std::string Lowercase(std::string s)
{
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

inline std::uint64_t Bytes(const nlohmann::json& j, const char* key)
{
    const nlohmann::json& v = At(j, key);
    return v.is_number() ? v.get<std::uint64_t>() : 0;
}

inline double ToGiB(std::uint64_t bytes)
{
    return static_cast<double>(bytes) / static_cast<double>(1ull << 30);
}

// The card the estimate is for, from the catalogue (nullptr when the scenario names none).
inline const GpuEntry* CurrentGpu(const AppState& state)
{
    const std::string id = Filled(state, "hardware", "gpu");
    for (const GpuEntry& gpu : state.gpus)
        if (gpu.id == id)
            return &gpu;
    return state.gpus.empty() ? nullptr : &state.gpus[state.gpu_index];
}

// A number as the page's combos hold it: "0.05", "0" (printf's %g).
inline std::string NumberText(const nlohmann::json& j)
{
    if (!j.is_number())
        return j.is_null() ? "" : Text(j);
    char text[32];
    std::snprintf(text, sizeof text, "%g", j.get<double>());
    return text;
}

// The messages of a refused result ({"ok": false, "errors": [...]}), joined with "; ".
inline std::string ErrorText(const nlohmann::json& result)
{
    std::string text;
    if (result.contains("errors") && result["errors"].is_array())
        for (const nlohmann::json& e : result["errors"])
            text += (text.empty() ? "" : "; ") + (e.is_object() ? e.value("message", e.dump()) : e.dump());
    return text;
}

inline void BulletWrapped(const std::string& text)
{
    ImGui::Bullet();
    ImGui::TextWrapped("%s", text.c_str());
}

}  // namespace gpumem::ui
