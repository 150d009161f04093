"""The checkpoint writer killed at random points: whatever instant a kill -9
lands on -- writing the file, syncing it, renaming it, replacing latest.json,
pruning the older file -- the folder's latest checkpoint loads, whole."""

import json
import os
import random
import signal
import time

import pytest

import toy
from toy.recipes import FromScratch
from toy.training.checkpoint import Checkpoint, Checkpoints, find_checkpoint

KILLS = 100


@pytest.fixture(scope="module")
def recipe():
    """A model of about 1.6 M parameters: each checkpoint is ~19 MB, so a save
    takes long enough for kills to land in all of its parts."""
    recipe = FromScratch("cpu", threads=1)
    recipe.realize(
        toy.ModelConfig(vocab=256, d_model=256, n_layers=2, n_heads=4, n_kv_heads=2),
        toy.RecipeOptions(t_seq=8, t_batch=1),
    )
    return recipe


def save_forever(session, run_path) -> None:
    """A child's life: checkpoints of steps 1, 2, 3, ... keeping one, until killed."""
    folder = Checkpoints(run_path, keep=1)
    step = 0
    while True:
        step += 1
        folder.save(
            session,
            {"step": step, "steps": 10**6, "losses": [1.0] * step, "source": {}, "args": {}, "fingerprints": {}},
        )


def latest_step(run) -> int:
    """The step latest.json names (0 before the first save): it is replaced by a rename, so read whole."""
    try:
        return int(json.loads((run / "checkpoint" / "latest.json").read_text())["file"][len("step-") : -len(".npz")])
    except FileNotFoundError:
        return 0


def test_a_kill_at_any_point_of_a_save_leaves_the_previous_checkpoint_loadable(tmp_path, recipe):
    rng = random.Random(27)
    t0 = time.perf_counter()
    Checkpoints(tmp_path / "timing", keep=1).save(
        recipe.session, {"step": 1, "steps": 2, "losses": [1.0], "source": {}, "args": {}, "fingerprints": {}}
    )
    one_save = time.perf_counter() - t0
    steps_seen = []
    for kill in range(KILLS):
        run = tmp_path / f"run-{kill}"
        pid = os.fork()
        if pid == 0:  # the child: only memcpy and file writes, no threads
            try:
                save_forever(recipe.session, run)
            finally:
                os._exit(1)
        # after the child's first, second or third save, whatever its pace (a
        # forked child's saves ran several times the parent's on a busy CI machine)
        target, deadline = rng.randint(1, 3), time.monotonic() + 60
        while latest_step(run) < target:
            assert time.monotonic() < deadline, f"the child wrote no checkpoint {target} in 60 s"
            time.sleep(0.002)
        time.sleep(rng.uniform(0, 3 * one_save))  # anywhere in the next saves
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)

        checkpoint = Checkpoint(find_checkpoint(run))
        assert checkpoint.state["losses"] == [1.0] * checkpoint.state["step"]
        checkpoint.restore(recipe.session)
        leftovers = {p.name for p in (run / "checkpoint").iterdir()} - {"latest.json", checkpoint.path.name}
        # at most the next checkpoint, whole or as its temporary file, and latest.json's temporary
        assert len(leftovers) <= 2, leftovers
        steps_seen.append(checkpoint.state["step"])
    # the kills landed at different points of the save sequence, not all before the second save
    assert len(set(steps_seen)) >= 3, steps_seen
