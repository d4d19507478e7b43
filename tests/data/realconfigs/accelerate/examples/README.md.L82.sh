torchrun --nproc_per_node 2 ./nlp_example.py
