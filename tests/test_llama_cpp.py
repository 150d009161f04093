"""Our exported adapter and merged model, loaded by llama.cpp (llama-cpp-python),
give the logits our session gives with the adapters applied. Skips when
llama_cpp is not importable."""
import numpy as np
import pytest

import toy
from toy.merge import merge_lora
from toy.recipes import LoRA

llama_cpp = pytest.importorskip("llama_cpp")

PROMPT = [1, 504, 3458, 282, 260, 2489, 30, 378, 1115, 314, 253, 1352]


@pytest.fixture(scope="module")
def tuned(smollm2, tmp_path_factory):
    """A few LoRA steps on q,v of SmolLM2, so the adapter changes the logits."""
    out = tmp_path_factory.mktemp("tuned")
    T = len(PROMPT)
    recipe = LoRA("cpu", threads=2)
    recipe.realize(smollm2, None, 8, toy.RecipeOptions(t_seq=T, t_batch=1, seed=0), targets=("q", "v"))
    ids = np.array([PROMPT + [2]], dtype=np.int32)
    positions = np.arange(T, dtype=np.int32)[None]
    for step in range(1, 6):
        recipe.step(ids[:, :-1], positions, ids[:, 1:], toy.adamw_hp(step, 1e-2), step == 1)
    logits, _ = recipe.evaluate(ids[:, :-1], positions)
    with recipe.adapters_off():
        base_logits, _ = recipe.evaluate(ids[:, :-1], positions)
    recipe.save_adapter(out / "adapter.gguf")
    return out, logits[0], base_logits[0]


def llama_cpp_logits(model_path, lora_path=None):
    kwargs = dict(model_path=str(model_path), n_ctx=64, logits_all=True, n_threads=2, verbose=False,
                  seed=0, flash_attn=False)
    if lora_path is not None:
        kwargs["lora_path"] = str(lora_path)
    llm = llama_cpp.Llama(**kwargs)
    llm.eval(PROMPT)
    return np.array(llm.scores[: len(PROMPT)], dtype=np.float32)


def assert_close_logits(got, expected):
    # both run ggml's Q4_1 kernels, but llama.cpp batches and fuses differently
    assert np.corrcoef(got.ravel(), expected.ravel())[0, 1] > 0.999
    assert np.abs(got - expected).max() < 0.5
    assert (got.argmax(-1) == expected.argmax(-1)).mean() >= 0.9


def test_llama_cpp_runs_the_base_as_we_do(smollm2, tuned):
    _, _, base_logits = tuned
    assert_close_logits(llama_cpp_logits(smollm2), base_logits)


def test_llama_cpp_loads_our_adapter_with_matching_logits(smollm2, tuned):
    out, logits, base_logits = tuned
    assert np.abs(logits - base_logits).max() > 1.0          # the adapter does something
    assert_close_logits(llama_cpp_logits(smollm2, out / "adapter.gguf"), logits)


@pytest.mark.parametrize("dtype", ["f16", "base"])
def test_llama_cpp_loads_the_merged_model(smollm2, tuned, dtype):
    out, logits, _ = tuned
    merged = merge_lora(smollm2, out / "adapter.gguf", out / f"merged-{dtype}.gguf", dtype)
    got = llama_cpp_logits(merged)
    # requantizing the merged weights to Q4_1 adds its own rounding
    assert np.corrcoef(got.ravel(), logits.ravel())[0, 1] > (0.999 if dtype == "f16" else 0.99)
