// gpumem table MODEL: the memory a model needs in each dtype, for inference, full training and LoRA
// (the view vram_calculator.py prints), each cell one estimate() of the core.
//
//   dtype_table(options)   -> {"ok": true, "model", "parameters", "settings", "rows": [...],
//                              "strategies": [...], "gpus": [...], "minimum": {...}, "notes": [...]}
//   table_text(table, gb)  -> the table as the CLI prints it
//   types_list(...)        -> the dtypes and GPUs table MODEL knows (--list-types)
//   read_config_dir(...)   -> data_types.json and gpu_types.json of --config-dir, as catalogue rows
//
// Pure: no printing, no files but through the `read` function the caller passes.

#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/args.h"

namespace gpumem::cli {

struct TableOptions {
    nlohmann::json model;                   // the scenario's "model" section ({"preset": ...} or {"hf_config": ...})
    std::string dtype;                      // "": the eight dtypes (fp32 ... nvfp4) and the user's
    nlohmann::json batch_size = 1;          // sequences at once
    nlohmann::json sequence_length = 2048;  // tokens per sequence (training) and context (inference)
    nlohmann::json lora_rank = 64;          // the LoRA column's rank
    bool detailed = false;                  // the layouts, GPUs and minimum memory too
    nlohmann::json user_dtypes = nlohmann::json::array();  // [{"id", "bytes_per_param", "about"}]
    nlohmann::json user_gpus = nlohmann::json::array();    // [{"id", "name", "memory_gb", "memory_bytes"}]
};

// The table; {"ok": false, "errors": [...]} when the model or a setting is wrong (the core's errors).
nlohmann::json dtype_table(const TableOptions& options);
std::string table_text(const nlohmann::json& table, bool gb);

// {"dtypes": [{"id", "bytes_per_param", "about", "source"}], "gpus": [{"id", "name", "memory_gb", "source"}]}
nlohmann::json types_list(const nlohmann::json& user_dtypes, const nlohmann::json& user_gpus);
std::string types_text(const nlohmann::json& types);

// Reads DIR/data_types.json ({"name": {"bytes_per_param", "description"}} or the catalogue's
// {"formats": [...]}) and DIR/gpu_types.json (one {"name", "memory_gb"} object, a list of them,
// {"gpus": [...]} or {"gpu_types": [...]}); a missing file adds nothing. False with `error` naming
// the file and the entry that is wrong. `notes`: what was read, and what was left alone.
bool read_config_dir(const std::string& dir, const ReadFile& read, nlohmann::json& dtypes, nlohmann::json& gpus,
                     std::vector<std::string>& notes, std::string& error);

}  // namespace gpumem::cli
