"""WarmStart: a small model whose embedding starts from SmolLM2's."""

import json

import gguf
import numpy as np
import pytest

import reference_llama as ref
import toy
from cli_helpers import GATE_THREADS, golden_log, toy_train
from gguf_fixtures import write_llama_gguf
from toy.recipes import WarmStart


@pytest.mark.parametrize("init", ["scratch", "donor", "pca"])
def test_each_init_mode_matches_its_golden_log(smollm2, tmp_path, init):
    result = toy_train("warm-start", "--init", init, "--threads", GATE_THREADS, "--out", str(tmp_path / "run"))
    assert result.returncode == 0, result.stderr
    assert result.stdout == golden_log(f"warm-start-{init}-cpu.txt")


def test_the_saved_model_is_a_plain_llama_with_the_lens_folded_in(smollm2, tmp_path):
    out = tmp_path / "run"
    assert toy_train("warm-start", "--steps", "1", "--out", str(out)).returncode == 0
    reader = gguf.GGUFReader(str(out / "model.gguf"))
    shapes = {t.name: tuple(int(n) for n in t.shape) for t in reader.tensors}
    assert shapes["token_embd.weight"] == (64, 49152) and "token_embd_proj.weight" not in shapes
    assert shapes["output.weight"] == (64, 49152)


@pytest.mark.slow
def test_pca_warm_start_beats_scratch_on_the_same_batches(smollm2, tmp_path):
    def last_losses(init):
        result = toy_train("warm-start", "--init", init, "--steps", "60", "--json", "--out", str(tmp_path / init))
        assert result.returncode == 0, result.stderr
        return np.mean(json.loads(result.stdout)["losses"][-10:])

    scratch, pca = last_losses("scratch"), last_losses("pca")
    print(f"mean loss of steps 51-60: scratch {scratch:.3f}, pca {pca:.3f}")
    assert pca < scratch - 0.3


def small_config(**changes):
    return toy.ModelConfig(
        **{**dict(vocab=300, d_model=16, n_layers=1, n_heads=2, n_kv_heads=1, d_ff=32, donor_d_in=576), **changes}
    )


def test_the_warm_window_runs_from_realize_scratch_to_build(smollm2):
    recipe = WarmStart("cpu", threads=1)
    with pytest.raises(toy.ToyError, match="before realize_scratch"):
        recipe.realize_warm(smollm2, small_config())
    recipe.realize_scratch(small_config(), toy.RecipeOptions(t_seq=8, t_batch=1))
    embd = recipe.session.find("token_embd.weight")
    random_init = recipe.session.download(embd)
    table = recipe.realize_warm(smollm2)
    assert table.shape == (300, 576)
    np.testing.assert_array_equal(recipe.session.download(embd), table)
    assert not np.array_equal(random_init, table)
    recipe.init_lens_pca(table)
    recipe.build()
    with pytest.raises(toy.ToyError, match="after build"):
        recipe.realize_warm(smollm2)


def test_donor_embed_width_reads_the_donor(smollm2):
    assert WarmStart.donor_embed_width(smollm2) == 576


def test_pca_lens_keeps_the_top_principal_directions():
    from toy.formats.donor import pca_lens

    rng = np.random.default_rng(0)
    # variance concentrated on two known directions of a 6-wide table
    basis = np.linalg.qr(rng.normal(size=(6, 6)))[0]
    table = (rng.normal(size=(500, 2)) * [5.0, 2.0]) @ basis[:, :2].T + 0.01 * rng.normal(size=(500, 6))
    lens = pca_lens(table.astype(np.float32), 2)  # [d_model, d_in]
    assert lens.shape == (2, 6)
    np.testing.assert_allclose(np.abs(lens @ basis[:, :2]), np.eye(2), atol=1e-2)


def assert_input_error(result, *phrases):
    assert result.returncode == 2, (result.returncode, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    for phrase in phrases:
        assert phrase in lines[0], lines[0]


def donor_gguf(tmp_path, drop=(), vocab=300, width=32, arch="llama"):
    cfg = ref.Config(vocab=vocab, d_model=width, n_layers=1, n_heads=2, n_kv_heads=1, d_ff=64)
    params = {k: v for k, v in ref.init_params(cfg, np.random.default_rng(0)).items() if k not in drop}
    return write_llama_gguf(tmp_path / "donor.gguf", params, cfg, arch=arch)


def test_cli_errors_name_the_donor_problem(smollm2, tmp_path):
    tokens = tmp_path / "t.tok"
    np.tile(np.arange(300, dtype="<i4"), 3).tofile(tokens)

    def run(donor, *extra):
        return toy_train("warm-start", "--donor", str(donor), "--corpus", str(tokens), "--steps", "1", *extra)

    assert_input_error(run(tmp_path / "missing.gguf"), "donor file not found")
    junk = tmp_path / "junk.gguf"
    junk.write_bytes(b"not a gguf" * 20)
    assert_input_error(run(junk), "not a GGUF")
    assert_input_error(run(donor_gguf(tmp_path, arch="gpt2")), "no llama.embedding_length")
    assert_input_error(run(donor_gguf(tmp_path, drop=("token_embd.weight",))), "no tensor token_embd.weight")
    assert_input_error(run(donor_gguf(tmp_path, vocab=100)), "100 rows", "vocab of 300")
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(smollm2.read_bytes()[:5_000_000])
    assert_input_error(run(cut), str(cut))


def test_width_mismatch_names_both_widths(smollm2):
    recipe = WarmStart("cpu", threads=1)
    recipe.realize_scratch(small_config(donor_d_in=512), toy.RecipeOptions(t_seq=8, t_batch=1))
    with pytest.raises(toy.ToyError, match="llama.embedding_length is 576, expected 512"):
        recipe.realize_warm(smollm2)


def test_donor_flags_need_warm_start():
    assert_input_error(toy_train("--init", "pca"), "warm-start")
