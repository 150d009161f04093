"""Write a llama GGUF with random weights, for measuring a shape no package ships.

    python benchmarks/make_random_llama.py OUT.gguf [--d-model 2048] [--layers 16] [--heads 32]
                                           [--kv-heads 8] [--d-ff 8192] [--vocab 32000] [--type Q4_0]

The defaults are the issue's 1.04 B-parameter llama (585 MB as Q4_0): feed it
to `bench_lora.py --model OUT.gguf`. Weights ~ N(0, 0.02^2), norms 1, the head
tied to the embeddings; no tokenizer (raw token ids), which is all a benchmark
on random tokens needs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import gguf
import numpy as np

sys.path.insert(0, str(Path(__file__).parents[1] / "tests"))
import reference_llama as ref  # noqa: E402
from gguf_fixtures import write_llama_gguf  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out")
    p.add_argument("--d-model", type=int, default=2048)
    p.add_argument("--layers", type=int, default=16)
    p.add_argument("--heads", type=int, default=32)
    p.add_argument("--kv-heads", type=int, default=8)
    p.add_argument("--d-ff", type=int, default=8192)
    p.add_argument("--vocab", type=int, default=32000)
    p.add_argument("--type", default="Q4_0", help="the matrices' GGUF type (norms stay F32)")
    args = p.parse_args()
    cfg = ref.Config(
        vocab=args.vocab,
        d_model=args.d_model,
        n_layers=args.layers,
        n_heads=args.heads,
        n_kv_heads=args.kv_heads,
        d_ff=args.d_ff,
        untied=False,
    )
    rng = np.random.default_rng(0)
    params, types = {}, {}
    qtype = gguf.GGMLQuantizationType[args.type]
    for name, shape in ref.param_shapes(cfg).items():
        if name.endswith("norm.weight"):
            params[name] = np.ones(shape, dtype=np.float32)
        else:
            params[name] = rng.standard_normal(shape, dtype=np.float32) * np.float32(0.02)
            types[name] = qtype
    n = sum(v.size for v in params.values())
    write_llama_gguf(args.out, params, cfg, types=types)
    print(f"{args.out}: {n / 1e9:.2f} B parameters, {Path(args.out).stat().st_size / 1e6:.0f} MB")


if __name__ == "__main__":
    main()
