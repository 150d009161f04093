"""toy-train dpo and orpo: preference data in TRL's layouts, its bad lines,
the log (loss, reward margin, accuracy) and the run end to end."""

import json
from pathlib import Path

import numpy as np
import pytest

import toy
from cli_helpers import GATE_THREADS, golden_log, toy_train
from toy.core.errors import InputError
from toy.datasets.preference import fit_pairs, pair_rows, read_pairs, tokenize_pairs
from toy.text.chat import ChatFormatter
from toy.text.tokenizer import GGUFTokenizer

DATA = Path(__file__).parent / "data" / "preferences-small.jsonl"
SMALL_RUN = (
    "--threads",
    GATE_THREADS,
    "--data",
    str(DATA),
    "--seq",
    "64",
    "--batch",
    "2",
    "--rank",
    "8",
    "--targets",
    "q,v",
    "--eval-split",
    "0.34",
    "--steps",
    "3",
)


def test_every_layout_reads_as_a_prompt_and_two_answers():
    pairs = read_pairs(DATA)
    assert len(pairs) == 6
    chosen, rejected, where = pairs[0]
    assert chosen == [
        {"role": "user", "content": "Name a colour of the sky."},
        {"role": "assistant", "content": "Blue, on a clear day."},
    ]
    assert rejected[-1] == {"role": "assistant", "content": "Green."} and where == f"{DATA}:1"
    chosen, rejected, _ = pairs[3]  # conversational, with a system turn
    assert [m["role"] for m in chosen] == ["system", "user", "assistant"] and rejected[:2] == chosen[:2]
    chosen, rejected, _ = pairs[5]  # no prompt: the answers carry the conversation
    assert chosen[0] == rejected[0] == {"role": "user", "content": "How many legs has a spider?"}


@pytest.mark.parametrize(
    "line, phrase",
    [
        ('{"prompt": "a", "chosen": "b"}', "no 'rejected'"),
        ('{"prompt": "a", "rejected": "b"}', "no 'chosen'"),
        ('{"prompt": "a", "chosen": " ", "rejected": "b"}', "the chosen answer is empty"),
        ('{"prompt": "", "chosen": "b", "rejected": "c"}', "the prompt is empty"),
        ('{"prompt": 3, "chosen": "b", "rejected": "c"}', "'prompt' must be a string or a non-empty list"),
        (
            '{"prompt": "a", "chosen": [{"role": "user", "content": "b"}], "rejected": "c"}',
            "the last message must be the assistant's response",
        ),
        ('{"chosen": "b", "rejected": "c"}', "holds no prompt"),
        ('["prompt", "chosen"]', "expected a JSON object"),
    ],
)
def test_bad_lines_name_file_and_line(tmp_path, line, phrase):
    path = tmp_path / "pairs.jsonl"
    path.write_text('{"prompt": "a", "chosen": "b", "rejected": "c"}\n' + line + "\n")
    with pytest.raises(InputError, match=phrase) as err:
        read_pairs(path)
    assert str(err.value).startswith(f"{path}:2: ")


@pytest.fixture(scope="module")
def formatter(smollm2):
    return ChatFormatter.from_gguf(smollm2, GGUFTokenizer.from_gguf(smollm2))


def test_a_pairs_rows_share_the_prompt_and_only_the_answers_carry_labels(formatter):
    pairs = fit_pairs(tokenize_pairs(read_pairs(DATA), formatter), 64)
    ids, positions, labels = pair_rows(pairs[:2], 6, 64, pad_id=0)
    assert ids.shape == labels.shape == positions.shape == (6, 64)
    for k, pair in enumerate(pairs[:2]):
        prompt = pair.chosen.last_response_start()
        assert prompt == pair.rejected.last_response_start()
        assert (ids[2 * k, :prompt] == ids[2 * k + 1, :prompt]).all()
        for row, sample in ((2 * k, pair.chosen), (2 * k + 1, pair.rejected)):
            labelled = np.flatnonzero(labels[row] >= 0)
            # position t predicts token t + 1: the answer's tokens, and nothing else
            assert labelled[0] == prompt - 1 and labelled[-1] == len(sample.tokens) - 2
            assert (labels[row, labelled] == sample.tokens[labelled + 1]).all()
    assert (labels[4:] == -1).all()  # the third pair is padding


def test_a_prompt_that_fills_the_sequence_is_refused_with_its_line(smollm2, tmp_path):
    path = tmp_path / "pairs.jsonl"
    path.write_text(DATA.read_text() + json.dumps({"prompt": "word " * 80, "chosen": "a", "rejected": "b"}) + "\n")
    result = toy_train("orpo", "--data", str(path), "--seq", "64")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"toy-train: error: {path}:7: the prompt alone takes 111 tokens of --seq 64, leaving no room for "
        "the answers (give a larger --seq or a shorter prompt)"
    ]


def test_cli_bad_data_exits_2_in_one_line(tmp_path):
    path = tmp_path / "pairs.jsonl"
    path.write_text('{"prompt": "a", "chosen": "b"}\n')
    result = toy_train("dpo", "--data", str(path))
    assert result.returncode == 2 and result.stderr.strip().splitlines() == [
        f"toy-train: error: {path}:1: no 'rejected': a preference record needs 'chosen' and 'rejected' "
        "answers (and a 'prompt'); this one has 'prompt', 'chosen' (--columns names other columns, e.g. chosen=good)"
    ]


@pytest.mark.parametrize("recipe", ["dpo", "orpo"])
def test_the_log_matches_its_golden_bytes_and_the_run_reports_held_out_pairs(smollm2, tmp_path, recipe):
    out = tmp_path / "run"
    result = toy_train(recipe, *SMALL_RUN, "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert result.stdout == golden_log(f"{recipe}-smollm2-cpu.txt")
    lines = result.stdout.splitlines()
    assert all(
        line.startswith(f"step {i}: loss=") and " margin=" in line and " accuracy=" in line
        for i, line in enumerate(lines, start=1)
    )
    if recipe == "dpo":  # the adapters start at zero: the policy is the reference, h = 0
        assert lines[0] == "step 1: loss=0.693147 margin=0.000000 accuracy=0.000000"
        assert "reference log-probabilities of 6 pairs from the base model" in result.stderr
    events = [json.loads(line) for line in (out / "events.jsonl").read_text().splitlines()]
    held_out = events[-1]
    assert held_out["eval_pairs"] == 2 and held_out["step"] == 3
    assert {"eval_loss", "eval_margin", "eval_accuracy"} <= set(held_out)
    assert "toy-train: held-out (2 pairs): loss " in result.stderr
    config = json.loads((out / "config.json").read_text())
    assert config["objective"] == recipe and config["beta"] == 0.1 and config["train_pairs"] == 4
    assert (out / "adapter.gguf").is_file()


def test_python_recipes_refuse_what_the_core_refuses(smollm2):
    recipe = toy.DPO("cpu", threads=1)
    with pytest.raises(toy.ToyError, match="even t_batch"):
        recipe.realize(smollm2, None, 4, toy.RecipeOptions(t_seq=8, t_batch=3), beta=0.1)
    with pytest.raises(toy.ToyError, match="beta must be a positive number"):
        toy.ORPO("cpu", threads=1).realize(smollm2, None, 4, toy.RecipeOptions(t_seq=8, t_batch=2), beta=0.0)


TURNS = (
    "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}<|end|>{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)


def tiny_gguf(tmp_path, arch: str) -> Path:
    """A random-weight GGUF of arch with a byte-level tokenizer (and, for
    qwen2, a chat template; gemma3 takes Gemma's turn format)."""
    import reference_llama as ref
    from gguf_fixtures import tiny_tokenizer, write_llama_gguf

    vocab, head_dim = 300, 8
    cfg = ref.Config(
        vocab=vocab, d_model=32, n_layers=2, n_heads=4, n_kv_heads=2, d_ff=48, untied=False, qkv_bias=arch == "qwen2"
    )
    params = ref.init_params(cfg, np.random.default_rng(0), scale=0.1)
    extra = {}
    if arch == "gemma3":
        for i in range(cfg.n_layers):
            for name, width in (
                ("attn_q_norm", head_dim),
                ("attn_k_norm", head_dim),
                ("post_attention_norm", cfg.d_model),
                ("post_ffw_norm", cfg.d_model),
            ):
                params[f"blk.{i}.{name}.weight"] = np.full(width, 0.1)
        extra = {"head_dim": head_dim, "extra_u32": {"attention.sliding_window": 4}}
    return write_llama_gguf(
        tmp_path / f"{arch}.gguf",
        params,
        cfg,
        arch=arch,
        tokenizer=tiny_tokenizer(vocab),
        chat_template=TURNS if arch == "qwen2" else None,
        **extra,
    )


@pytest.mark.parametrize("arch", ["qwen2", "gemma3"])
def test_dpo_and_orpo_train_qwen2_and_gemma3_ggufs(tmp_path, arch):
    path = tiny_gguf(tmp_path, arch)
    for recipe in ("dpo", "orpo"):
        out = tmp_path / recipe
        result = toy_train(
            recipe,
            "--model",
            str(path),
            "--data",
            str(DATA),
            "--seq",
            "128",
            "--steps",
            "2",
            "--eval-split",
            "0",
            "--threads",
            GATE_THREADS,
            "--out",
            str(out),
        )
        assert result.returncode == 0, result.stderr
        lines = result.stdout.splitlines()
        assert len(lines) == 2 and all(" margin=" in line for line in lines)
        if recipe == "dpo":
            assert lines[0] == "step 1: loss=0.693147 margin=0.000000 accuracy=0.000000"
        assert (out / "adapter.gguf").is_file()


def test_finetune_from_python_runs_orpo_on_pairs(smollm2, tmp_path):
    run = toy.finetune(
        data=DATA, recipe="orpo", steps=2, seq=64, rank=4, targets="q", eval_split=0, threads=2, out=tmp_path / "run"
    )
    assert run.recipe == "orpo" and run.adapter.is_file() and len(run.losses) == 2
    assert run.config["objective"] == "orpo" and run.config["train_pairs"] == 6
    assert isinstance(run.generate("Opposite of hot?", max_new_tokens=4), str)


def test_pairs_packed_in_rows_train_as_the_pairs_one_answer_a_row(smollm2, tmp_path):
    """The four training pairs in one micro-batch either way: --batch 4 one
    answer a row, or packed two pairs a row of --seq 192. The step's ORPO
    loss, reward margin and accuracy (of the base model: the adapters start
    at zero) agree to the int8 rounding of the activations, which turns the
    order of the sums into a difference near 1e-5."""
    run = ("orpo", "--threads", GATE_THREADS, "--data", str(DATA), "--seq", "192", "--rank", "8", "--targets", "q,v")
    run += ("--eval-split", "0.34", "--steps", "1")
    unpacked = toy_train(*run, "--batch", "4", "--packing", "off", "--out", str(tmp_path / "off"))
    packed = toy_train(*run, "--batch", "2", "--packing", "on", "--out", str(tmp_path / "on"))
    assert unpacked.returncode == 0 and packed.returncode == 0, packed.stderr
    assert "4 training pairs, one answer a row" in unpacked.stderr
    assert "4 training pairs packed into 2 rows of 192" in packed.stderr
    expected, got = (
        {k: float(v) for k, v in (item.split("=") for item in r.stdout.split(": ")[1].split())}
        for r in (unpacked, packed)
    )
    assert got["loss"] == pytest.approx(expected["loss"], rel=1e-4)
    assert got["margin"] == pytest.approx(expected["margin"], abs=1e-4)
    assert got["accuracy"] == expected["accuracy"]
    config = json.loads((tmp_path / "on" / "config.json").read_text())
    assert config["packing"] == "on" and config["packed_rows"] == 2
    assert "toy-train: held-out (2 pairs): loss " in packed.stderr


def test_packing_auto_packs_pairs_only_where_none_is_cut_and_rows_fall(formatter):
    from toy.datasets.batches import PreferenceSource
    from toy.options.preference import DPOOptions

    pairs = fit_pairs(tokenize_pairs(read_pairs(DATA), formatter), 64)
    # the longest pair takes 107 places: at --seq 64 auto cannot pack without cutting
    assert not PreferenceSource(pairs, str(DATA), DPOOptions(seq=64, eval_split=0.0), 0, True).packed
    wide = PreferenceSource(pairs, str(DATA), DPOOptions(seq=512, batch=1, eval_split=0.0), 0, True)
    assert wide.packed and [sorted(row) for row in wide.layout["train"]] == [list(range(6))]
    # a row: each pair's chosen answer then its rejected, from position 0 each;
    # the reference follows the samples
    wide.reference["train"] = np.arange(12.0).reshape(6, 2)[[2, 0, 1, 3, 4, 5]]
    indices, (ids, positions, reference, labels) = wide._batch("train", [0])
    assert ids.shape == (2, 512) and reference.shape == (256,)
    starts = np.flatnonzero(positions[0] == 0)
    lengths = [
        n for p in (wide.train[i] for i in indices) for n in (len(p.chosen.tokens) - 1, len(p.rejected.tokens) - 1)
    ]
    assert list(np.diff(starts)) == lengths[:-1]
    assert reference[:12].tolist() == wide.reference["train"][indices].ravel().tolist()
    assert (labels[1] == -1).all()  # the second row is padding
