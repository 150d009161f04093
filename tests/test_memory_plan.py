"""The memory plan (toy.core.plan.MemoryPlan): measured before anything is
allocated by a measuring session (tnn_set_measure_only), printed before a run,
within 10% of the peak the run then reaches, choosing recomputation when only
that fits (--recompute auto), and refusing in one line what cannot fit."""

import re

import pytest

import toy
from cli_helpers import toy_train
from toy.native import session as native
from toy.native.session import ModelDesc, Session
from toy.recipes import FromScratch, LoRA

ALL_SEVEN = ("q", "k", "v", "o", "gate", "up", "down")


@pytest.mark.parametrize("recompute", [0, 1])
def test_a_measuring_session_lays_out_what_the_real_one_allocates(smollm2, recompute):
    opts = toy.RecipeOptions(t_seq=128, t_batch=2, recompute=recompute, evaluates=False)
    recipe = LoRA("cpu", threads=2)
    recipe.realize(smollm2, None, 8, opts, targets=ALL_SEVEN)
    real = recipe.session.memory()
    measured = recipe.session.plan.parts
    for part in ("graph", "params", "optimizer", "base_copies", "overhead"):
        assert measured[part] == real[part], part
    assert measured["base_released"] > 0  # the packed originals: a step reads the copies


def test_a_model_made_here_is_measured_too():
    cfg = toy.ModelConfig(vocab=128, d_model=64, n_layers=3, n_heads=4, n_kv_heads=2)
    recipe = FromScratch("cpu", threads=1)
    recipe.realize(cfg, toy.RecipeOptions(t_seq=32, t_batch=2))
    real, measured = recipe.session.memory(), recipe.session.plan.parts
    assert (measured["graph"], measured["params"], measured["optimizer"]) == (
        real["graph"],
        real["params"],
        real["optimizer"],
    )
    assert measured["forward"] > 0  # evaluation's buffer, with every logit


def test_a_measuring_session_computes_nothing(smollm2):
    probe = Session("cpu", threads=1)
    desc = ModelDesc.lora(smollm2, toy.RecipeOptions(t_seq=16, t_batch=1), 4, 8.0, ("q",), "fast")
    probe.measure(desc, {})
    for call in (probe.reset, probe.compute_step, probe.compute_forward, lambda: probe.download(probe.loss)):
        with pytest.raises(toy.ToyError, match="a measuring session computes nothing"):
            call()


def planned_and_peak(stderr: str) -> tuple[float, float]:
    planned = re.search(r"planned peak memory ([\d,]+) MB", stderr)
    peak = re.search(r", peak memory ([\d,]+) MB", stderr)
    assert planned and peak, stderr
    return float(planned[1].replace(",", "")), float(peak[1].replace(",", ""))


@pytest.mark.parametrize("recompute", ["off", "blocks"])
def test_the_printed_plan_is_within_ten_percent_of_the_peak(tmp_path, recompute):
    result = toy_train(
        "lora", "--steps", "2", "--seq", "256", "--recompute", recompute, "--threads", "2", "--out", str(tmp_path / "r")
    )
    assert result.returncode == 0, result.stderr
    assert f"recompute {recompute})" in result.stderr
    planned, peak = planned_and_peak(result.stderr)
    assert abs(planned - peak) <= 0.10 * peak, (planned, peak)


def lora_plan(smollm2, recompute: int, available: int | None, monkeypatch, base_compute="fast"):
    monkeypatch.setattr(native, "available_bytes", lambda: available)
    desc = ModelDesc.lora(smollm2, toy.RecipeOptions(t_seq=1024, t_batch=1), 8, 16.0, ALL_SEVEN, base_compute)
    build = {"recompute": recompute}
    return native.plan_memory(desc, build, False, lambda: Session("cpu", threads=1))


def test_auto_recomputes_only_where_the_step_would_not_fit_otherwise(smollm2, monkeypatch):
    whole = lora_plan(smollm2, 0, None, monkeypatch)
    recomputed = lora_plan(smollm2, 1, None, monkeypatch)
    assert recomputed.new_bytes < whole.new_bytes
    # auto keeps a fifth of the memory for the rest of the machine
    assert lora_plan(smollm2, -1, int(whole.new_bytes / 0.8) + 1, monkeypatch).recompute == 0
    assert lora_plan(smollm2, -1, whole.new_bytes, monkeypatch).recompute == 1
    with pytest.raises(toy.InputError, match=r"--recompute blocks \(or auto\) would need [\d,]+ MB"):
        lora_plan(smollm2, 0, whole.new_bytes - 1, monkeypatch)
    with pytest.raises(toy.InputError, match=r"needs [\d,]+ MB even with --recompute blocks.*a lower --rank"):
        lora_plan(smollm2, -1, recomputed.new_bytes - 1, monkeypatch)


def test_auto_base_compute_trains_on_the_stored_base_only_where_the_copies_would_not_fit(smollm2, monkeypatch):
    """At 256 tokens with every block recomputed SmolLM2's fast copies (228 MB)
    outweigh what the stored base's products keep for the backward. Stored,
    the output head alone keeps its copies (60 MB), which the fused head
    multiplies by."""

    def plan(base_compute):
        monkeypatch.setattr(native, "available_bytes", lambda: None)
        desc = ModelDesc.lora(smollm2, toy.RecipeOptions(t_seq=256, t_batch=1), 8, 16.0, ALL_SEVEN, base_compute)
        return native.plan_memory(desc, {"recompute": 1}, False, lambda: Session("cpu", threads=1))

    fast, stored = plan("fast"), plan("stored")
    assert 0 < stored.parts["base_copies"] < fast.parts["base_copies"] / 3 and stored.new_bytes < fast.new_bytes

    def realized(available):
        monkeypatch.setattr(native, "available_bytes", lambda: available)
        recipe = LoRA("cpu", threads=1)
        options = toy.RecipeOptions(t_seq=256, t_batch=1, recompute=-1, evaluates=False)
        recipe.realize(smollm2, None, 8, options, alpha=16.0, targets=ALL_SEVEN)  # base_compute "auto"
        return recipe

    assert realized(None).base_compute == "fast"
    recipe = realized(fast.new_bytes - 1)
    assert recipe.base_compute == "stored" and recipe.session.plan.parts["base_copies"] == stored.parts["base_copies"]
    # neither fits: refused by the plan that needs less, suggesting no --base-compute
    with pytest.raises(toy.InputError, match=r"even with --recompute blocks") as refused:
        realized(stored.new_bytes - 1)
    assert "--base-compute" not in str(refused.value)


def test_a_run_no_machine_holds_is_refused_before_allocating(tmp_path):
    # 64 sequences of 8,192 tokens: hundreds of GB even with every block recomputed
    result = toy_train("lora", "--seq", "8192", "--batch", "64", "--steps", "1", "--out", str(tmp_path / "r"))
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and re.search(r"needs [\d,]+ MB even with --recompute blocks", lines[0]), lines
    assert not (tmp_path / "r").exists()


def test_a_seq_beyond_the_models_context_is_refused(tmp_path):
    result = toy_train("lora", "--seq", "16384", "--steps", "1", "--out", str(tmp_path / "r"))
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "toy-train: error: --seq 16384 is beyond the 8,192 tokens SmolLM2-135M-Instruct.Q4_1.gguf was trained "
        "on (its context_length): give --seq 8192 or less"
    ]


def test_a_bad_recompute_value_is_one_line(tmp_path):
    result = toy_train("lora", "--recompute", "sometimes", "--steps", "1")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "toy-train: error: argument --recompute: expected auto, off, blocks, or a whole number from 1 to "
        "2,147,483,647, got 'sometimes' (see toy-train lora --help)"
    ]
