llama-server -hf ggml-org/gemma-3-4b-it-GGUF
