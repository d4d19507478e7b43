// The one table of tools: each format's reader and writer (formats/<tool>.cpp).
#include "formats/format.h"

namespace gpumem::detail {

const Tool& tool(ConfigFormat f) {
    switch (f) {
        case ConfigFormat::Deepspeed:
            return kDeepspeedTool;
        default:
            return kDeepspeedTool;
    }
}

}  // namespace gpumem::detail
