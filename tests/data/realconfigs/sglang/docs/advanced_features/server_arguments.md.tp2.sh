python -m sglang.launch_server --model-path meta-llama/Meta-Llama-3-8B-Instruct --tp 2
