// The one table of tools: each format's reader and writer (formats/<tool>.cpp).
#include "formats/format.h"

namespace gpumem::detail {

const Tool& tool(ConfigFormat f) {
    switch (f) {
        case ConfigFormat::Deepspeed:
            return kDeepspeedTool;
        case ConfigFormat::Accelerate:
            return kAccelerateTool;
        case ConfigFormat::Torchrun:
            return kTorchrunTool;
        case ConfigFormat::Torchtune:
            return kTorchtuneTool;
        case ConfigFormat::Axolotl:
            return kAxolotlTool;
        case ConfigFormat::Litgpt:
            return kLitgptTool;
        case ConfigFormat::Vllm:
            return kVllmTool;
        case ConfigFormat::Sglang:
            return kSglangTool;
        case ConfigFormat::Tgi:
            return kTgiTool;
        case ConfigFormat::TensorrtLlm:
            return kTensorrtLlmTool;
        case ConfigFormat::LlamaCpp:
            return kLlamaCppTool;
    }
    return kDeepspeedTool;  // not reached: every format is a case
}

}  // namespace gpumem::detail
