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
        default:
            return kDeepspeedTool;  // the serving engines: formats/<engine>.cpp
    }
}

}  // namespace gpumem::detail
