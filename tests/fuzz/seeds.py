"""The seed files the mutations start from: small llama GGUFs written with
tests/gguf_fixtures.py, one with a byte-level BPE tokenizer and F32
weights, one with a SentencePiece tokenizer, one with quantized weights and
no tokenizer, one with q/k/v biases."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the fixtures

import gguf  # noqa: E402

import reference_llama as ref  # noqa: E402
from gguf_fixtures import tiny_sentencepiece, tiny_tokenizer, write_llama_gguf  # noqa: E402

Q = gguf.GGMLQuantizationType


def _seed(path, tokenizer=False, types=None, **shape):
    """tokenizer: False, True (byte-level BPE) or "spm" (SentencePiece)."""
    spm = tiny_sentencepiece() if tokenizer == "spm" else None
    cfg = ref.Config(
        **{
            "vocab": len(spm["tokens"]) if spm else 300,
            "d_model": 32,
            "n_layers": 1,
            "n_heads": 2,
            "n_kv_heads": 1,
            "d_ff": 64,
            "untied": True,
            **shape,
        }
    )
    params = ref.init_params(cfg, np.random.default_rng(0))
    write_llama_gguf(
        path, params, cfg, types=types, tokenizer=spm or (tiny_tokenizer(cfg.vocab) if tokenizer else None)
    )
    return path


# name -> (writer, has a tokenizer)
SEEDS = {
    "f32-tokenizer": (lambda p: _seed(p, tokenizer=True), True),
    "spm-tokenizer": (lambda p: _seed(p, tokenizer="spm"), True),
    "quantized": (
        lambda p: _seed(
            p,
            vocab=64,
            n_layers=2,
            n_kv_heads=2,
            untied=False,
            types={
                "token_embd.weight": Q.Q8_0,
                "blk.0.attn_q.weight": Q.Q4_1,
                "blk.0.attn_v.weight": Q.Q8_0,
                "blk.0.ffn_down.weight": Q.Q4_1,
                "blk.1.attn_k.weight": Q.Q4_0,
                "blk.1.ffn_up.weight": Q.Q5_1,
            },
        ),
        False,
    ),
    "qkv-bias": (lambda p: _seed(p, vocab=48, qkv_bias=True, types={"blk.0.ffn_gate.weight": Q.F16}), False),
}


def write_seeds(folder: Path) -> dict[str, tuple[Path, bool]]:
    """name -> (path, has a tokenizer), written into folder."""
    folder.mkdir(parents=True, exist_ok=True)
    return {name: (write(folder / f"{name}.gguf"), tok) for name, (write, tok) in SEEDS.items()}
