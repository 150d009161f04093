"""toy-train --arch gpt2 as a user runs it: the golden log, a GGUF in
llama.cpp's GPT-2 layout, and the options that belong to llama only."""

import gguf
import numpy as np
import pytest

import toy
from cli_helpers import GATE_THREADS, golden_log, toy_train
from toy.recipes import FromScratch

GATE = ("--arch", "gpt2", "--threads", GATE_THREADS, "--steps", "20")


def test_gpt2_matches_the_golden_log_and_learns(tmp_path):
    result = toy_train(*GATE, "--out", str(tmp_path / "run"))
    assert result.returncode == 0, result.stderr
    assert result.stdout == golden_log("from-scratch-gpt2-cpu.txt")
    losses = [float(line.split("=")[1]) for line in result.stdout.splitlines()]
    assert losses[-1] < losses[0] - 1.0


def test_gpt2_writes_llama_cpp_gpt2_names_and_keys(tmp_path):
    out = tmp_path / "run"
    result = toy_train("--arch", "gpt2", "--steps", "2", "--layers", "3", "--d-model", "32", "--out", str(out))
    assert result.returncode == 0, result.stderr
    reader = gguf.GGUFReader(out / "model.gguf")
    fields = {name: field.contents() for name, field in reader.fields.items()}
    assert fields["general.architecture"] == "gpt2"
    assert fields["gpt2.block_count"] == 3 and fields["gpt2.embedding_length"] == 32
    assert fields["gpt2.feed_forward_length"] == 4 * 32 and fields["gpt2.context_length"] == 64
    shapes = {t.name: tuple(int(n) for n in t.shape) for t in reader.tensors}  # ggml order
    assert shapes["token_embd.weight"] == (32, 256) and shapes["position_embd.weight"] == (32, 64)
    assert shapes["blk.2.attn_qkv.weight"] == (32, 96) and shapes["blk.2.attn_qkv.bias"] == (96,)
    assert {
        "blk.0.attn_norm.bias",
        "blk.0.attn_output.bias",
        "blk.0.ffn_up.bias",
        "blk.0.ffn_down.bias",
        "output_norm.bias",
    } <= set(shapes)
    assert "output.weight" not in shapes  # the head is the token embedding


@pytest.mark.parametrize("flag", [("--kv-heads", "2"), ("--untied",), ("--qkv-bias",), ("--rope-base", "500")])
def test_llama_only_options_are_refused_for_gpt2(tmp_path, flag):
    result = toy_train("--arch", "gpt2", *flag, "--out", str(tmp_path / "run"))
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "llama option" in result.stderr
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("recipe", ["lora", "instruct", "warm-start", "full", "vit-tiny"])
def test_arch_is_refused_by_recipes_that_do_not_take_it(recipe):
    required = ("--data", "data.jsonl") if recipe == "instruct" else ()
    result = toy_train(recipe, *required, "--arch", "gpt2")
    assert result.returncode == 2
    assert result.stderr.strip() == (
        f"toy-train: error: --arch is an option of from-scratch, not of {recipe} (see toy-train {recipe} --help)"
    )


def test_llama_cpp_runs_our_gpt2_with_our_logits(tmp_path):
    llama_cpp = pytest.importorskip("llama_cpp")
    T = 16
    recipe = FromScratch("cpu", threads=2)
    recipe.realize(
        toy.ModelConfig(arch="gpt2", vocab=256, d_model=64, n_layers=2, n_heads=4),
        toy.RecipeOptions(t_seq=T, t_batch=1, seed=1),
    )
    text = np.frombuffer(b"the quick brown fox jumps over the lazy dog " * 4, dtype=np.uint8).astype(np.int32)
    positions = np.arange(T, dtype=np.int32)[None]
    for step in range(1, 21):
        start = (7 * step) % (len(text) - T - 1)
        window = text[start : start + T + 1][None]
        recipe.step(window[:, :-1], positions, window[:, 1:], toy.adamw_hp(step, 3e-3), step == 1)
    prompt = text[:T]
    ours, _ = recipe.evaluate(prompt[None], positions)
    recipe.save(tmp_path / "model.gguf")

    llm = llama_cpp.Llama(
        model_path=str(tmp_path / "model.gguf"),
        n_ctx=T,
        logits_all=True,
        n_threads=2,
        verbose=False,
        seed=0,
        flash_attn=False,
    )
    llm.eval(prompt.tolist())
    theirs = np.array(llm.scores[:T], dtype=np.float32)
    # llama.cpp's GELU reads a float16 table on the CPU; ours is float32
    np.testing.assert_allclose(theirs, ours[0], atol=2e-2 * np.abs(ours).max())
    assert (theirs.argmax(-1) == ours[0].argmax(-1)).mean() >= 0.9
