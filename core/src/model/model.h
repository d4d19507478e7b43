// The model as a list of weight tensors, the one place parameter counts come from.
//
// This directory: config.cpp reads a config.json (read_hf_config, declared in gpumem.h) with the
// family table of families.cpp and the vision towers of vision.cpp, which share reading.h;
// manual.cpp reads a model given by hand or by size; tensors.cpp lists the weight tensors and
// counts.cpp sums them (count_parameters, gpumem.h); quantized.cpp gives each tensor's bytes in the
// checkpoint (its quantization_config's layout), module_pattern.cpp matches its ignore lists.
#pragma once

#include <bitset>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "scenario/fields.h"
#include "gpumem/gpumem.h"

namespace gpumem::detail {

// Vision and Projector: the multimodal tower and its projector, outside the language model's layers.
enum class Group { Embedding, Attention, Mlp, Norm, LmHead, Vision, Projector };
// Which decoder layers hold a tensor: every layer, or only the MoE (or only the dense-MLP) layers,
// or only the decoder half of an encoder-decoder (t5's cross-attention), or only mllama's
// cross-attention layers. Count is not a kind: it sizes arrays indexed by Layers (LayerCounts), so a
// kind added before it is counted everywhere; keep it last.
enum class Layers { None, All, Moe, Dense, Decoder, CrossAttention, Count };
constexpr std::size_t kLayerKinds = static_cast<std::size_t>(Layers::Count);

// One weight (or bias) tensor. A matrix has rows × cols elements; a vector has cols == 1.
struct Tensor {
    std::string name;  // transformers' name inside one layer, or the model-level name
    Group group;
    std::uint64_t rows = 0;
    std::uint64_t cols = 1;
    Layers layers = Layers::None;  // None: one model-level tensor
    bool tp_sharded = false;       // split across tensor-parallel ranks (Megatron column/row parallel)
    bool expert = false;           // inside a routed expert: split across expert-parallel ranks
    bool in_layers() const { return layers != Layers::None; }
    bool is_matrix() const { return cols > 1; }
    std::uint64_t elements() const { return rows * cols; }
};

// Every weight tensor of the model, in module order. Empty for a model known only by its size.
std::vector<Tensor> list_tensors(const ModelSpec& model);
// How many layers hold a tensor of this kind.
std::uint64_t layer_count(const ModelSpec& model, Layers layers);
// A model known only by its size: its declared total over the count of the shape guessed for it,
// which scales the guessed shape's parameters to the declared total; 1 for a counted model.
double declared_scale(const ModelSpec& model);

// A module-name regular expression ("re:" patterns of quantization configs) compiled to an NFA that
// matches in time linear in the name (module_pattern.cpp); nullopt for syntax outside its subset.
struct ModulePattern {
    struct State {
        enum Kind : std::uint8_t { Char, Split, Jump, End, Match } kind = Char;
        std::bitset<256> set;      // Char: the bytes it consumes
        std::size_t x = 0, y = 0;  // Split: both targets; Jump: x
    };
    std::vector<State> states;
    bool matches(const std::string& name) const;  // a match from the name's start, as Python's re.match
};
std::optional<ModulePattern> compile_module_pattern(const std::string& regex);

// Whether every quantized tensor's bytes follow from the quantization_config (quantized.cpp).
bool quantization_exact(const ModelSpec::Quantization& q);
// For each tensor of `tensors` (list_tensors(model)), the bytes the checkpoint stores for it over all
// the layers holding it (one copy for a model-level tensor): the checkpoint's dtype, or the packed
// values, scales and zero points of the layout its quantization_config gives it (quantized.cpp).
// Residency::Vllm: the bytes once vLLM has loaded them (Marlin's repacking drops or adds tensors).
// Residency::Marlin: GPTQ's Marlin repacking alone, as SGLang and TGI load it (quantized.cpp marlin_resident).
enum class Residency { Checkpoint, Vllm, Marlin };
std::vector<std::uint64_t> checkpoint_tensor_bytes(const ModelSpec& model, const std::vector<Tensor>& tensors,
                                                   Residency where = Residency::Checkpoint);

// A model entered by hand (gpu-mem-calculator's model fields) or only by size; fills shapes it can derive and
// reports each guess it made in `defaults_applied`.
ModelRead read_manual_model(const json& model, const std::string& prefix, std::vector<std::string>& defaults_applied);

}  // namespace gpumem::detail
