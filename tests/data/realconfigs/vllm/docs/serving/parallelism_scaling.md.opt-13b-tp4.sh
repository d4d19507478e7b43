vllm serve facebook/opt-13b \
     --tensor-parallel-size 4
