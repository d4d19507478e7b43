// What a user would otherwise type by hand: a scenario written as the config file or command line
// of the framework or serving engine that runs it (a DeepSpeed JSON, an accelerate YAML, a `vllm
// serve` line, ...), and a DeepSpeed JSON read back into a scenario. Each format writes only what
// the estimate depends on, with the values that make the estimate true, and says in notes what the
// user still has to give (data, learning rate) or set in code.
#pragma once

#include "formats/format.h"
#include "scenario/fields.h"
#include "gpumem/settings.h"

namespace gpumem::detail {

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
