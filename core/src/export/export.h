// What a user would otherwise type by hand: a scenario written as the config file or command line
// of the framework or serving engine that runs it (a DeepSpeed JSON, an accelerate YAML, a `vllm
// serve` line, ...), and a DeepSpeed JSON read back into a scenario. Each format writes only what
// the estimate depends on, with the values that make the estimate true, and says in notes what the
// user still has to give (data, learning rate) or set in code.
#pragma once

#include "scenario/fields.h"
#include "settings.h"

namespace gpumem::detail {

enum class ExportFormat {
    Deepspeed,
    Accelerate,
    Torchrun,
    Torchtune,
    Axolotl,
    Litgpt,
    Vllm,
    LlamaCpp,
    Sglang,
    Tgi,
    TensorrtLlm
};
inline constexpr Setting<ExportFormat> kExportFormats[] = {
    {ExportFormat::Deepspeed, "deepspeed", "ds_config", "DeepSpeed ds_config.json",
     "the DeepSpeed JSON: micro-batch, accumulation, bf16/fp16, ZeRO stage, offload, bucket sizes"},
    {ExportFormat::Accelerate, "accelerate", "", "accelerate config (YAML)",
     "an accelerate config file for `accelerate launch --config_file`: FSDP, DeepSpeed or DDP"},
    {ExportFormat::Torchrun, "torchrun", "", "torchrun + HF Trainer",
     "a torchrun line with transformers TrainingArguments flags (FSDP, DeepSpeed, optimizer, precision)"},
    {ExportFormat::Torchtune, "torchtune", "tune", "torchtune recipe",
     "a `tune run` line: the recipe, its config and the overrides"},
    {ExportFormat::Axolotl, "axolotl", "", "axolotl config (YAML)", "an axolotl config's training keys"},
    {ExportFormat::Litgpt, "litgpt", "", "LitGPT command", "a `litgpt finetune_*` line"},
    {ExportFormat::Vllm, "vllm", "", "vllm serve", "a `vllm serve` line with the memory flags of the estimate"},
    {ExportFormat::LlamaCpp, "llama.cpp", "llamacpp,llama_server", "llama-server (llama.cpp)",
     "a `llama-server` line: GPU layers, context, parallel sequences, KV cache type"},
    {ExportFormat::Sglang, "sglang", "", "SGLang launch_server",
     "a `python -m sglang.launch_server` line: mem_fraction_static, context, running requests, TP"},
    {ExportFormat::Tgi, "tgi", "text_generation_inference", "text-generation-launcher (TGI)",
     "a `text-generation-launcher` line: max total and prefill tokens, memory fraction, shards"},
    {ExportFormat::TensorrtLlm, "tensorrt_llm", "trtllm,trtllm_serve", "trtllm-serve (TensorRT-LLM)",
     "a `trtllm-serve` line: KV cache's free-memory fraction, batch, tokens per step, TP/PP"},
};
constexpr SettingRows<ExportFormat> rows(ExportFormat) { return rows_of(kExportFormats); }

// {"format": "vllm", "scenario": {...}, "gpus_per_node": 8, "script": "train.py"} ->
// {"ok": true, "format", "kind": "json" | "yaml" | "command", "file_name", "text", "notes": [...],
//  "scenario": <the resolved scenario>, "estimate": <estimate() of it>}
// A field the format needs and the scenario leaves out is set to the format's own (the serving
// engine, the framework, the engine type); a field set to something the format cannot express is
// an error naming it.
json export_config(const json& request);

// A DeepSpeed config (ds_config.json) as the scenario fields it decides:
// {"ok": true, "scenario": {"training": {...}, "engine": {...}, "parallelism": {...}}, "notes": [...]}.
// "auto" values (the HF Trainer integration fills them in) are left out and noted.
json import_deepspeed(const json& ds_config);

}  // namespace gpumem::detail
