"""Bad input to the C core comes back as ToyError, never an abort."""

import numpy as np
import pytest

import toy
from toy.core.errors import TNN_ERR_ARG, TNN_ERR_STATE
from toy.native.session import ModelDesc, Session
from toy.recipes import FromScratch

SMALL = toy.ModelConfig(vocab=16, d_model=8, n_layers=1, n_heads=2, n_kv_heads=1, d_ff=16)
OPTS = toy.RecipeOptions(t_seq=4, t_batch=2)


def built_session() -> Session:
    session = Session("cpu", threads=1)
    session.realize(ModelDesc.from_scratch(SMALL, OPTS))
    session.build()
    return session


def test_the_step_runs_in_the_cpu_library():
    session = built_session()
    assert toy.native.library.ffi.string(session.lib.tnn_backend_name()) == b"cpu"
    assert session.info(session.loss).name == "loss"


@pytest.mark.parametrize(
    "change,message",
    [
        (dict(n_heads=3), "even head width"),
        (dict(n_kv_heads=3, n_heads=2), "must divide"),
        (dict(vocab=0), "vocab must be a whole number from 1 to"),
        (dict(rope_base=-1.0), "rope_base"),
    ],
)
def test_bad_config_is_refused(change, message):
    cfg = toy.ModelConfig(**{**SMALL.to_dict(), **change})
    with pytest.raises(toy.ToyError, match=message):
        Session("cpu", threads=1).realize(ModelDesc.from_scratch(cfg, OPTS))


def test_calls_out_of_order_are_refused():
    session = Session("cpu", threads=1)
    with pytest.raises(toy.ToyError, match="before realize"):
        session.build()
    session.realize(ModelDesc.from_scratch(SMALL, OPTS))
    with pytest.raises(toy.ToyError, match="realize called twice"):
        session.realize(ModelDesc.from_scratch(SMALL, OPTS))
    with pytest.raises(toy.ToyError, match="before build"):
        session.compute_accumulated_step()
    session.build()
    with pytest.raises(toy.ToyError, match="before graph_reset"):
        session.compute_accumulated_step()
    with pytest.raises(toy.ToyError, match="first graph_reset"):
        session.reset_grads_only()
    with pytest.raises(toy.ToyError, match="twice"):
        session.build()


def test_bad_uploads_are_refused():
    session = built_session()
    with pytest.raises(toy.ToyError, match="no tensor with handle"):
        session.upload(999, np.zeros(8, np.int32))
    with pytest.raises(toy.ToyError, match="expected 32 bytes"):
        session.upload(session.tokens, np.zeros(3, np.int32))
    with pytest.raises(toy.ToyError, match="outside the vocabulary"):
        session.upload(session.tokens, np.full(8, 16, np.int32))
    with pytest.raises(toy.ToyError, match="labels.*outside the vocabulary"):
        session.upload(session.labels, np.full(8, -2, np.int32))
    with pytest.raises(toy.ToyError, match="no tensor named"):
        session.find("blk.7.attn_q.weight")
    with pytest.raises(toy.ToyError, match="has no gradient"):
        session.grad_of(session.tokens)


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


def test_the_gradients_buffer_must_fit_the_gradients():
    session = Session("cpu", threads=1)
    session.realize(ModelDesc.from_scratch(SMALL, OPTS))
    with pytest.raises(toy.ToyError, match="before build_training_step") as refused:
        session.gradients()
    assert refused.value.status == TNN_ERR_STATE
    session.build()
    n = session.gradients_size()
    assert n == sum(session.info(h).nbytes // 4 for h in session.params().values())
    with pytest.raises(toy.ToyError, match=f"the gradients are {n} floats, got a buffer of {n - 1}") as refused:
        session.set_gradients(np.zeros(n - 1, np.float32))
    assert refused.value.status == TNN_ERR_ARG
    with pytest.raises(toy.ToyError, match="a buffer of 0"):
        session.gradients(out=np.zeros(0, np.float32))
