// What the estimate tests share: an estimate that must succeed, and the model most of them use.
#pragma once

#include <gtest/gtest.h>

#include <gpumem/gpumem.h>

namespace gpumem::test {

// estimate() of `scenario`, failing the test (with the result) when it is not ok.
inline nlohmann::json run(const nlohmann::json& scenario) {
    nlohmann::json r = gpumem::estimate(scenario);
    EXPECT_TRUE(r["ok"].get<bool>()) << r.dump(2);
    return r;
}

// meta-llama/Llama-3.1-8B as a scenario's "model".
inline const nlohmann::json kLlama8B = {{"preset", "meta-llama/Llama-3.1-8B"}};

// gpu-mem-calculator's configuration file as its README shows it (Llama 2 7B under ZeRO-3 on 8 GPUs):
// sizes as strings, checkpointing as a level.
inline nlohmann::json seed001_config() {
    return nlohmann::json::parse(R"({
      "model": {"name": "llama2-7b", "num_parameters": "7B", "num_layers": 32, "hidden_size": 4096,
                "num_attention_heads": 32, "vocab_size": 32000, "max_seq_len": 4096},
      "training": {"batch_size": 4, "gradient_accumulation_steps": 4, "optimizer": "adamw", "dtype": "bf16",
                   "activation_checkpointing": 1},
      "parallelism": {"tensor_parallel_size": 1, "pipeline_parallel_size": 1, "data_parallel_size": 8,
                      "sequence_parallel": false},
      "engine": {"type": "deepspeed", "zero_stage": 3, "offload_optimizer": "cpu", "offload_param": "none"},
      "hardware": {"num_gpus": 8, "gpu_memory_gb": 80}})");
}

}  // namespace gpumem::test
