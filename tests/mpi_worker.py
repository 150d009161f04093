"""Run under mpiexec by test_parallel.py: 20 data-parallel steps of a small
from-scratch model through toy's own pieces (toy.parallel.Ranks and the
recipe's data-parallel step), then rank 0 prints one JSON line with every
rank's sha256 of its parameters and the losses."""
import hashlib
import json
import sys

import numpy as np
from mpi4py import MPI

import toy
from toy.parallel import Ranks
from toy.recipes import FromScratch

ranks = Ranks(MPI.COMM_WORLD)
recipe = FromScratch("cpu", threads=1)
recipe.realize(toy.LlamaConfig(vocab=64, d_model=32, n_layers=2, n_heads=4, n_kv_heads=2),
               toy.RecipeOptions(t_seq=16, t_batch=2, seed=1, clip_norm=1.0))
rng = np.random.default_rng(5)
losses = []
for step in range(1, 21):
    # the same four micro-batches on every rank; each trains on its two
    tokens = rng.integers(0, 64, (4, 2, 17)).astype(np.int32)
    positions = np.tile(np.arange(16, dtype=np.int32), (2, 1))
    micro = [(t[:, :-1], positions, t[:, 1:]) for t in tokens]
    share = micro[ranks.rank * 2:(ranks.rank + 1) * 2]
    ranks.begin_step(step)
    losses.append(recipe.step_accumulated(share, toy.adamw_hp(step, 3e-3), step == 1, labelled=4 * 32,
                                          sum_over_ranks=ranks.sum))
digest = hashlib.sha256()
for name, handle in recipe.engine.params().items():
    digest.update(recipe.engine.download(handle).tobytes())
hashes = MPI.COMM_WORLD.gather(digest.hexdigest(), root=0)
if ranks.rank == 0:
    print(json.dumps({"hashes": hashes, "losses": losses}))
    sys.stdout.flush()
