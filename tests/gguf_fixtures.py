"""Small llama GGUF files written by the tests, with the gguf package."""
import gguf
import numpy as np


def write_llama_gguf(path, params, cfg, arch="llama", types=None):
    """params: name -> numpy array in (out, in) layout, as in reference_llama.
    types: name -> gguf.GGMLQuantizationType to quantize a tensor (default F32)."""
    writer = gguf.GGUFWriter(str(path), arch)
    writer.add_block_count(cfg.n_layers)
    writer.add_embedding_length(cfg.d_model)
    writer.add_feed_forward_length(cfg.d_ff)
    writer.add_head_count(cfg.n_heads)
    writer.add_head_count_kv(cfg.n_kv_heads)
    writer.add_rope_freq_base(cfg.rope_base)
    writer.add_layer_norm_rms_eps(cfg.rms_eps)
    writer.add_context_length(64)
    for name, value in params.items():
        qtype = (types or {}).get(name, gguf.GGMLQuantizationType.F32)
        data = value.astype(np.float32)
        if qtype != gguf.GGMLQuantizationType.F32:
            data = gguf.quants.quantize(data, qtype)
        writer.add_tensor(name, data, raw_dtype=qtype)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path
