export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7

export PYTHONPATH=$PYTHONPATH:/vllm-workspace/vllm

export LD_LIBRARY_PATH=/usr/local/Ascend/ascend-toolkit/latest/python/site-packages:$LD_LIBRARY_PATH
export MOONCAKE_CONFIG_PATH="/opt/files/src/kv-cache/conf/mooncake_vllm.json"
export ACL_OP_INIT_MODE=1
export ASCEND_BUFFER_POOL=4:8
export ASCEND_CONNECT_TIMEOUT=10000
export ASCEND_TRANSFER_TIMEOUT=10000


vllm serve /opt/models/Qwen2p5-7B-Instruct/     --served-model-name qwen2p5-7b-mooncake     --dtype bfloat16      --max-model-len 32768      --tensor-parallel-size 1     --host 0.0.0.0      --port 31001      --enforce-eager      --enable-prefix-caching      --block-size 128      --max-num-batched-tokens 8192      --gpu-memory-utilization 0.59      --kv-transfer-config '{        "kv_connector": "MooncakeConnectorStoreV1",        "kv_role": "kv_both",        "kv_connector_extra_config": {            "use_layerwise": false,            "mooncake_rpc_port": "0",            "load_async": true,            "register_buffer": true        }    }'
