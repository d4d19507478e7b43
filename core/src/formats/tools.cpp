// The one table of tools: each format's reader and writer (formats/<tool>.cpp).
#include "formats/format.h"

namespace gpumem::detail {

const Tool& tool(ConfigFormat f) {
    switch (f) {
        case ConfigFormat::Deepspeed:
            return kDeepspeedTool;
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
        default:
            return kDeepspeedTool;
    }
}

}  // namespace gpumem::detail
