"""Run under mpiexec by test_parallel.py: 20 data-parallel steps of a small
from-scratch model through toy's own pieces (toy.training.parallel.Ranks and the
recipe's data-parallel step), then rank 0 prints one JSON line with every
rank's sha256 of its parameters and the losses. The model and the batches
are functions, so that the test can run the same steps in one process."""

import hashlib
import json
import sys

import numpy as np

import toy
from toy.recipes import FromScratch

STEPS, MICRO_BATCHES = 20, 4


def small_model() -> FromScratch:
    recipe = FromScratch("cpu", threads=1)
    recipe.realize(
        toy.ModelConfig(vocab=64, d_model=32, n_layers=2, n_heads=4, n_kv_heads=2),
        toy.RecipeOptions(t_seq=16, t_batch=2, seed=1, clip_norm=1.0),
    )
    return recipe


def micro_batches(rng) -> list:
    """One step's four micro-batches of 2 x 16 tokens, as (ids, positions, labels)."""
    tokens = rng.integers(0, 64, (MICRO_BATCHES, 2, 17)).astype(np.int32)
    positions = np.tile(np.arange(16, dtype=np.int32), (2, 1))
    return [(t[:, :-1], positions, t[:, 1:]) for t in tokens]


def main() -> None:
    from mpi4py import MPI

    from toy.training.parallel import Ranks

    ranks = Ranks(MPI.COMM_WORLD)
    recipe = small_model()
    rng = np.random.default_rng(5)
    share = MICRO_BATCHES // ranks.size
    losses = []
    for step in range(1, STEPS + 1):
        mine = micro_batches(rng)[ranks.rank * share : (ranks.rank + 1) * share]
        ranks.begin_step(step)
        losses.append(
            recipe.step_accumulated(
                mine, toy.adamw_hp(step, 3e-3), step == 1, labelled=MICRO_BATCHES * 32, sum_over_ranks=ranks.sum
            )
        )
    digest = hashlib.sha256()
    for handle in recipe.session.params().values():
        digest.update(recipe.session.download(handle).tobytes())
    hashes = MPI.COMM_WORLD.gather(digest.hexdigest(), root=0)
    if ranks.rank == 0:
        print(json.dumps({"hashes": hashes, "losses": losses}))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
