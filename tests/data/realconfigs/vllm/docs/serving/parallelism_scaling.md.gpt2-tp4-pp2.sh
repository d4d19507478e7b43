vllm serve gpt2 \
     --tensor-parallel-size 4 \
     --pipeline-parallel-size 2
