"""ModelSlim's quant_model_description.json as the model probe reads it: tensor schemes and the
KV cache's scheme, a top-level key of its own."""
import json

from doctor.probes.model import probe_model


def test_the_kv_cache_scheme_is_read_apart_from_the_tensor_schemes(tmp_path):
    model = tmp_path / "m"
    model.mkdir()
    (model / "config.json").write_text(json.dumps({"model_type": "qwen2", "num_hidden_layers": 1}))
    (model / "quant_model_description.json").write_text(json.dumps({
        "model_quant_type": "W8A8", "model.layers.0.mlp.down_proj.weight": "W8A8", "model.norm.weight": "FLOAT",
        "kv_cache_type": "C8", "version": "1.0.0", "group_size": 0}))
    m = probe_model(str(model), str(model), "--model", verify=False, sample=0)
    assert m.quant_types == ["W8A8"] and m.kv_quant_types == ["C8"]
    (model / "quant_model_description.json").write_text(json.dumps({"model_quant_type": "W8A8", "kv_quant_type": "C8"}))
    assert probe_model(str(model), str(model), "--model", verify=False, sample=0).kv_quant_types == ["C8"]
