// What the five serving engines' files (vllm.cpp, sglang.cpp, tgi.cpp, tensorrt_llm.cpp,
// llama_cpp.cpp) share: the model they are told to serve, the inference fields as flag values, the
// weight and KV-cache formats vLLM and SGLang name alike, and the end of a reading (mode, engine,
// the GPUs the parallel sizes make).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "formats/format.h"

namespace gpumem::detail {

// The model as the engine is told it: the Hub id, never a bundled alias ("llama3.1-70b" ->
// "meta-llama/Llama-3.1-70B-Instruct").
std::string served_model(const Run& r);

// An inference field of the resolved scenario ("context_len") as a flag's value.
inline std::optional<ojson> inference_value(const Writer& w, const char* field) { return w.r.inference()[field]; }

// A whole-number or fractional flag into an inference field; "auto" is not a number here.
void read_fraction_into(Reader& r, const char* field);
// A parallel size (tensor, pipeline, data, expert) into parallelism.<field>.
void read_parallel(Reader& r, const char* field);
// A flag naming the model (--model, --model-path, --model-id, -m).
void read_model(Reader& r);
// A flag that would change memory but gpumem does not model: a warning saying what it does.
void warn_unmodelled(Reader& r, const char* what);

// The weights' and the KV cache's formats as vLLM and SGLang take them: --dtype for plain floats,
// --quantization for what they quantize on load, nothing for a checkpoint quantized beforehand
// (they read its quantization_config). Refused (in `w`) where neither can express the format.
struct ServedFormats {
    std::string dtype, quantization, kv;
    bool from_checkpoint = false;
};
ServedFormats served_formats(const Run& r, const char* engine, const char* fp8_kv, Written& w);
void note_quantized_checkpoint(const ServedFormats& f, const Run& r, const char* engine, Written& w);
// --dtype (torch names, "auto") kept until the end of the reading: a --quantization wins over it.
void read_torch_dtype(Reader& r);
// --quantization of vLLM and SGLang: the methods gpumem models as a weight format.
void read_quantization(Reader& r);
// --kv-cache-dtype of vLLM and SGLang ("auto", "fp8", "fp8_e4m3", "bfloat16", ...).
void read_kv_dtype(Reader& r);

// What an engine does with the GPUs CUDA_VISIBLE_DEVICES shows when no parallel size is given.
enum class VisibleGpus {
    One,    // runs on one of them (vLLM, SGLang, TensorRT-LLM: tensor-parallel size 1 by default)
    Shard,  // shards the model tensor-parallel over all of them (TGI)
    Split,  // splits the layers over all of them (llama.cpp --split-mode layer); gpumem models one
};

// The end of every serving reading: mode inference, the engine, the model from the positional
// word or a model flag, --dtype where no quantization was named, the parallel sizes and
// hardware.num_gpus = TP x PP x DP, and what the visible GPUs mean for the engine (said in the
// assumptions or warnings).
void finish_serving(Reader& r, const char* engine, VisibleGpus visible_gpus);

}  // namespace gpumem::detail
