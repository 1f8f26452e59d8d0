vllm serve Qwen2.5-14B-Instruct \
 --tensor-parallel-size 2 \
 --dtype bfloat16 \
 --max-model-len 8192 \
 --gpu-memory-utilization 0.9 \
 --max-num-seqs 64 \
 --block-size 16 \
 --enable-chunked-prefill
