text-generation-launcher --model-id bigscience/bloom-560m
