vllm serve Qwen/Qwen2.5-1.5B-Instruct
