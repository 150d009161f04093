"""Bad input to the C core comes back as ToyError, never an abort."""
import numpy as np
import pytest

import toy
from toy.engine import LlamaSeqEngine
from toy.recipes import FromScratch

SMALL = toy.LlamaConfig(vocab=16, d_model=8, n_layers=1, n_heads=2, n_kv_heads=1, d_ff=16)
OPTS = toy.RecipeOptions(t_seq=4, t_batch=2)


def built_engine() -> LlamaSeqEngine:
    engine = LlamaSeqEngine("cpu", threads=1)
    engine.realize(SMALL, OPTS)
    engine.build()
    return engine


def test_the_step_runs_in_the_cpu_library():
    engine = built_engine()
    assert toy._native.ffi.string(engine.lib.tnn_backend_name()) == b"cpu"
    assert engine.info(engine.loss).name == "loss"


@pytest.mark.parametrize("change,message", [
    (dict(n_heads=3), "even head width"),
    (dict(n_kv_heads=3, n_heads=2), "must divide"),
    (dict(vocab=0), "vocab must be between"),
    (dict(rope_base=-1.0), "rope_base"),
])
def test_bad_config_is_refused(change, message):
    cfg = toy.LlamaConfig(**{**SMALL.to_dict(), **change})
    with pytest.raises(toy.ToyError, match=message):
        LlamaSeqEngine("cpu", threads=1).realize(cfg, OPTS)


def test_calls_out_of_order_are_refused():
    engine = LlamaSeqEngine("cpu", threads=1)
    with pytest.raises(toy.ToyError, match="before realize"):
        engine.build()
    engine.realize(SMALL, OPTS)
    with pytest.raises(toy.ToyError, match="realize called twice"):
        engine.realize(SMALL, OPTS)
    with pytest.raises(toy.ToyError, match="before build"):
        engine.compute_backward()
    engine.build()
    with pytest.raises(toy.ToyError, match="before graph_reset"):
        engine.compute_backward()
    with pytest.raises(toy.ToyError, match="first graph_reset"):
        engine.reset_grads_only()
    with pytest.raises(toy.ToyError, match="twice"):
        engine.build()


def test_bad_uploads_are_refused():
    engine = built_engine()
    with pytest.raises(toy.ToyError, match="no tensor with handle"):
        engine.upload(999, np.zeros(8, np.int32))
    with pytest.raises(toy.ToyError, match="expected 32 bytes"):
        engine.upload(engine.tokens, np.zeros(3, np.int32))
    with pytest.raises(toy.ToyError, match="outside the vocabulary"):
        engine.upload(engine.tokens, np.full(8, 16, np.int32))
    with pytest.raises(toy.ToyError, match="labels.*outside the vocabulary"):
        engine.upload(engine.labels, np.full(8, -2, np.int32))
    with pytest.raises(toy.ToyError, match="no tensor named"):
        engine.find("blk.7.attn_q.weight")
    with pytest.raises(toy.ToyError, match="has no gradient"):
        engine.grad_of(engine.tokens)


def test_weight_dtype_other_than_f32_cannot_train():
    with pytest.raises(toy.ToyError, match="f32"):
        FromScratch("cpu", 1).realize(SMALL, toy.RecipeOptions(t_seq=4, t_batch=2, weight_dtype="q4_1"))


def test_save_to_an_unwritable_place_fails_cleanly(tmp_path):
    recipe = FromScratch("cpu", 1)
    recipe.realize(SMALL, OPTS)
    target = tmp_path / "no" / "such" / "dir" / "model.gguf"
    with pytest.raises(toy.ToyError, match="could not write"):
        recipe.save(target)
    assert not target.parent.exists()
