"""Full fine-tuning of an existing GGUF: every weight trained, the model
written back with the base's metadata."""

import json

import gguf
import numpy as np
import pytest
from gguf.quants import dequantize

import reference_llama as ref
import toy
from cli_helpers import GATE_THREADS, toy_train
from gguf_fixtures import write_llama_gguf
from toy.recipes import FullFineTune

Q8_0 = gguf.GGMLQuantizationType.Q8_0


@pytest.fixture
def quantized_tiny(tmp_path):
    """A small llama GGUF with Q8_0 matrices (rows of 32) and F32 norms."""
    cfg = ref.Config(vocab=40, d_model=32, n_layers=2, n_heads=4, n_kv_heads=2, d_ff=64, untied=True, qkv_bias=False)
    params = ref.init_params(cfg, np.random.default_rng(1), scale=0.3)
    types = {name: Q8_0 for name, value in params.items() if value.ndim == 2}
    return cfg, write_llama_gguf(tmp_path / "tiny-q8.gguf", params, cfg, types=types)


def stored_weights(path):
    """The file's weights dequantized, numpy layout, float64."""
    return {t.name: dequantize(t.data, t.tensor_type).astype(np.float64) for t in gguf.GGUFReader(str(path)).tensors}


def test_full_fine_tune_trains_the_files_weights_as_the_reference_does(quantized_tiny):
    cfg, path = quantized_tiny
    recipe = FullFineTune("cpu", threads=1)
    recipe.realize(path, toy.RecipeOptions(t_seq=6, t_batch=2))
    params = stored_weights(path)
    # every weight starts as the file's, dequantized
    start = recipe.weights()
    assert set(start) == set(params)
    for name, value in params.items():
        np.testing.assert_array_equal(start[name], value.astype(np.float32), err_msg=name)

    rng = np.random.default_rng(0)
    tokens = rng.integers(0, 40, size=(2, 6)).astype(np.int32)
    labels = rng.integers(0, 40, size=(2, 6)).astype(np.int32)
    positions = np.tile(np.arange(6, dtype=np.int32), (2, 1))
    e = recipe.session
    recipe._upload_batch(tokens, positions, labels)
    e.reset()
    e.compute_gradients()
    loss_ref, grads_ref = ref.loss_and_grads(params, cfg, tokens, positions, labels)
    assert float(e.download(e.loss)) == pytest.approx(loss_ref, rel=1e-5)
    for name, handle in e.params().items():
        np.testing.assert_allclose(e.download(e.grad_of(handle)), grads_ref[name], rtol=2e-3, atol=2e-5, err_msg=name)


def test_saved_model_keeps_the_base_metadata_and_holds_the_trained_weights(quantized_tiny, tmp_path):
    cfg, path = quantized_tiny
    recipe = FullFineTune("cpu", threads=1)
    recipe.realize(path, toy.RecipeOptions(t_seq=6, t_batch=2))
    rng = np.random.default_rng(2)
    positions = np.tile(np.arange(6, dtype=np.int32), (2, 1))
    for step in range(1, 4):
        batch = rng.integers(0, 40, size=(2, 7)).astype(np.int32)
        recipe.step(batch[:, :-1], positions, batch[:, 1:], toy.adamw_hp(step, 1e-2), is_first=step == 1)
    trained = recipe.weights()
    for dtype, tolerance in (("f32", 0), ("f16", 2e-3), ("base", 0.05)):
        out = recipe.save_model(tmp_path / f"tuned-{dtype}.gguf", dtype)
        base, tuned = gguf.GGUFReader(str(path)), gguf.GGUFReader(str(out))
        assert tuned.fields["llama.block_count"].contents() == cfg.n_layers
        assert set(base.fields) - set(tuned.fields) <= {"GGUF.kv_count", "GGUF.tensor_count"}
        for tensor in tuned.tensors:
            value = dequantize(tensor.data, tensor.tensor_type)
            scale = np.abs(trained[tensor.name]).max()
            np.testing.assert_allclose(
                value, trained[tensor.name], atol=tolerance * scale, err_msg=f"{dtype} {tensor.name}"
            )
            if dtype == "base":
                assert tensor.tensor_type == {t.name: t.tensor_type for t in base.tensors}[tensor.name]
    # the model moved away from the base
    assert not np.allclose(trained["blk.0.attn_q.weight"], stored_weights(path)["blk.0.attn_q.weight"])


def test_toy_train_full_on_smollm2_writes_a_model_toy_generates_with(smollm2, tmp_path):
    out = tmp_path / "run"
    text = tmp_path / "facts.txt"
    text.write_text("The zorbex is a teal bird that lives on the island of Vell. " * 30)
    result = toy_train(
        "full",
        "--corpus",
        str(text),
        "--threads",
        GATE_THREADS,
        "--steps",
        "4",
        "--seq",
        "32",
        "--batch",
        "1",
        "--save-type",
        "f16",
        "--out",
        str(out),
    )
    assert result.returncode == 0, result.stderr
    losses = [float(line.split("=")[1]) for line in result.stdout.splitlines()]
    assert len(losses) == 4 and losses[-1] < losses[0]
    assert "planned peak memory" in result.stderr  # the measured plan comes first
    config = json.loads((out / "config.json").read_text())
    assert config["recipe"] == "full" and config["save_type"] == "f16"
    tuned = gguf.GGUFReader(str(out / "model.gguf"))
    assert "tokenizer.chat_template" in tuned.fields and "tokenizer.ggml.tokens" in tuned.fields
    assert {t.tensor_type for t in tuned.tensors if len(t.shape) == 2} == {gguf.GGMLQuantizationType.F16}
    model = toy.load_model(out / "model.gguf", threads=2)
    assert isinstance(toy.generate(model, "The capital of France is", 4), str)


def test_full_refuses_what_does_not_apply(tmp_path):
    for args, phrase in (
        (("full", "--merge", "f16"), "--merge is an option of lora, instruct, dpo and orpo, not of full"),
        (("lora", "--save-type", "f16"), "--save-type is an option of full, not of lora"),
        (("full", "--data", "x.jsonl", "--corpus", "y.txt"), "not both"),
    ):
        result = toy_train(*args)
        assert result.returncode == 2 and phrase in result.stderr, result.stderr
