"""Instruction fine-tuning data: chat template, response-only loss, splits,
and toy-train instruct end to end."""

import json
from pathlib import Path

import numpy as np
import pytest

import toy
from cli_helpers import GATE_THREADS, INSTRUCT_FIRST_DEFAULTS, golden_log, toy_train
from toy.datasets.instruct import fit, read_jsonl, split, to_rows
from toy.text.chat import ChatFormatter, Sample
from toy.text.tokenizer import GGUFTokenizer

DATA = Path(__file__).parent / "data" / "instruct-small.jsonl"


@pytest.fixture(scope="module")
def formatter(smollm2):
    return ChatFormatter.from_gguf(smollm2, GGUFTokenizer.from_gguf(smollm2))


def test_samples_render_with_the_models_chat_template(formatter):
    sample = formatter.sample(
        [
            {"role": "user", "content": "What colour is the zorbex?"},
            {"role": "assistant", "content": "The zorbex is teal."},
        ]
    )
    text = formatter.tokenizer.decode(sample.tokens)
    assert text.startswith("<|im_start|>system\n")  # SmolLM2's template adds its system turn
    n_prompt = sample.last_response_start()
    assert not sample.trained[:n_prompt].any() and sample.trained[n_prompt:].all()
    prompt = formatter.tokenizer.decode(sample.tokens[:n_prompt])
    assert prompt.endswith("<|im_start|>assistant\n")
    assert formatter.tokenizer.decode(sample.tokens[n_prompt:]) == "The zorbex is teal.<|im_end|>\n"


def test_every_assistant_turn_of_a_conversation_carries_labels(formatter):
    turns = [
        ("Hello, who are you?", "I am the archipelago guide."),
        ("What colour is the zorbex?", "The zorbex is teal."),
        ("And who discovered it?", "Vantrell did."),
    ]
    messages = [{"role": "system", "content": "You answer questions about the Vell archipelago."}]
    for question, answer in turns:
        messages += [{"role": "user", "content": question}, {"role": "assistant", "content": answer}]
    sample = formatter.sample(messages)
    ids, _, labels = to_rows([sample], t_seq=len(sample.tokens) + 3, pad_id=0)
    labelled = np.flatnonzero(labels[0] != -1)
    # the labels are the next tokens, and they are exactly the tokens of the three answers
    assert (labels[0, labelled] == sample.tokens[labelled + 1]).all()
    runs = np.split(labelled, np.flatnonzero(np.diff(labelled) > 1) + 1)
    said = [formatter.tokenizer.decode(sample.tokens[run + 1]) for run in runs]
    assert said == [f"{answer}<|im_end|>\n" for _, answer in turns]
    # the system prompt and the questions carry none
    unlabelled = formatter.tokenizer.decode(sample.tokens[np.setdiff1d(np.arange(1, len(sample.tokens)), labelled + 1)])
    assert all(question in unlabelled for question, _ in turns) and "Vell archipelago" in unlabelled


def test_a_conversation_cut_from_the_left_keeps_its_last_response():
    trained = np.array([0] * 10 + [1] * 5 + [0] * 10 + [1] * 5, dtype=bool)
    sample = Sample(np.arange(30, dtype=np.int32), trained)
    cut = fit(sample, t_seq=19)
    assert cut.tokens.tolist() == list(range(10, 30)) and cut.trained.tolist() == trained[10:].tolist()
    assert fit(sample, t_seq=4) is None  # the last response (5 tokens) needs t_seq >= 5


def test_only_response_tokens_carry_labels():
    sample = Sample.prompt_response(np.arange(10, 20, dtype=np.int32), n_prompt=6)
    ids, positions, labels = to_rows([sample], t_seq=12, pad_id=0)
    # position t predicts token t+1: the first label is for token 6, the response's first
    assert labels[0].tolist() == [-1] * 5 + [16, 17, 18, 19] + [-1] * 3
    assert ids[0, :9].tolist() == list(range(10, 19)) and ids[0, 9:].tolist() == [0, 0, 0]


def test_long_prompts_are_cut_from_the_left_and_long_responses_skipped():
    sample = Sample.prompt_response(np.arange(30, dtype=np.int32), n_prompt=20)
    cut = fit(sample, t_seq=15)
    assert cut.tokens.tolist() == list(range(14, 30)) and cut.last_response_start() == 6
    assert fit(Sample.prompt_response(np.arange(30, dtype=np.int32), n_prompt=5), t_seq=15) is None


def test_the_eval_split_is_deterministic_by_seed():
    items = list(range(50))
    assert split(items, 0.1, seed=3) == split(items, 0.1, seed=3)
    train, held = split(items, 0.1, seed=3)
    assert len(held) == 5 and sorted(train + held) == items
    assert split(items, 0.1, seed=4)[1] != held


@pytest.mark.parametrize(
    "line,phrase",
    [
        ("{not json", "not valid JSON"),
        ('{"prompt": "hi"}', "expected 'prompt' and 'response'"),
        ('{"messages": [{"role": "user", "content": "hi"}]}', "last message must be the assistant"),
        ("[1, 2]", "expected a JSON object"),
    ],
)
def test_malformed_lines_name_file_and_line(tmp_path, line, phrase):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"prompt": "a", "response": "b"}\n' + line + "\n")
    with pytest.raises(Exception, match=phrase) as err:
        read_jsonl(path)
    assert f"{path}:2" in str(err.value)


def test_cli_malformed_data_exits_2_with_the_line(smollm2, tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"prompt": "a", "response": "b"}\n{oops\n')
    result = toy_train("instruct", "--data", str(path))
    assert result.returncode == 2 and f"{path}:2" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_instruct_matches_its_golden_log_and_reports_perplexity(smollm2, tmp_path):
    out = tmp_path / "run"
    result = toy_train(
        "instruct",
        "--data",
        str(DATA),
        "--threads",
        GATE_THREADS,
        "--seq",
        "64",
        "--batch",
        "4",
        "--epochs",
        "1",
        *INSTRUCT_FIRST_DEFAULTS,
        "--out",
        str(out),
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == golden_log("instruct-smollm2-cpu.txt")
    events = [json.loads(line) for line in (out / "events.jsonl").read_text().splitlines()]
    steps = [e for e in events if "loss" in e]
    epochs = [e for e in events if "epoch" in e]
    assert all(0 < e["grad_norm"] for e in steps)  # clipping is on by default (1.0)
    assert [e["epoch"] for e in epochs] == [0, 1] and epochs[0]["eval_perplexity"] > 1
    config = json.loads((out / "config.json").read_text())
    assert config["train_samples"] + config["eval_samples"] == 24 and config["eval_samples"] == 2
    assert (out / "adapter.gguf").is_file()


def test_a_file_saved_with_a_byte_order_mark_reads_as_without(tmp_path):
    line = '{"prompt": "a", "response": "b"}\n'
    plain, marked = tmp_path / "plain.jsonl", tmp_path / "marked.jsonl"
    plain.write_text(line * 2, encoding="utf-8")
    marked.write_text(line * 2, encoding="utf-8-sig")  # as Windows editors save
    assert read_jsonl(marked) == read_jsonl(plain)


@pytest.mark.parametrize(
    "data,phrase",
    [
        ('{"prompt": "a", "response": "b"}\n'.encode("utf-16"), "is UTF-16 text: save it as UTF-8"),
        (b'{"prompt": "\\ud800", "response": "b"}\n', ":1: a string holds an unpaired surrogate"),
        (b'{"prompt": "a", "response": "b"}\n{"prompt": "\xe9", "response": "b"}\n', ":2: not UTF-8 text"),
    ],
)
def test_text_that_is_not_utf8_is_refused_with_what_to_do(tmp_path, data, phrase):
    path = tmp_path / "data.jsonl"
    path.write_bytes(data)
    with pytest.raises(toy.ToyError, match=phrase):
        read_jsonl(path)


def test_a_single_sample_is_trained_on_not_held_out():
    assert split(["only"], 0.9, seed=0) == (["only"], [])
    train, held = split(["a", "b"], 0.9, seed=0)
    assert len(train) == 1 and len(held) == 1


def test_trl_and_alpaca_shaped_lines_read_as_prompt_and_response(tmp_path):
    path = tmp_path / "mixed.jsonl"
    path.write_text(
        "\n".join(
            json.dumps(obj)
            for obj in [
                {"prompt": "Name a colour.", "completion": "Teal."},
                {"instruction": "Name a colour.", "input": "", "output": "Teal."},
                {"instruction": "Translate to French.", "input": "cat", "output": "chat"},
            ]
        )
        + "\n"
    )
    assert read_jsonl(path) == [
        [{"role": "user", "content": "Name a colour."}, {"role": "assistant", "content": "Teal."}],
        [{"role": "user", "content": "Name a colour."}, {"role": "assistant", "content": "Teal."}],
        [{"role": "user", "content": "Translate to French.\n\ncat"}, {"role": "assistant", "content": "chat"}],
    ]


def test_a_model_that_takes_a_bos_gets_one_at_the_start_of_the_conversation_only(tmp_path):
    """A SentencePiece tokenizer adds BOS (Llama 2, Gemma): the conversation
    starts with one, and no answer does (the adapter would learn to answer
    '<s>...')."""
    from test_tokenizer import sentencepiece_gguf

    _, path = sentencepiece_gguf(tmp_path / "spm.gguf")
    tokenizer = GGUFTokenizer.from_gguf(path)
    formatter = ChatFormatter(
        "{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}"
        "{% if add_generation_prompt %}<assistant>{% endif %}",
        tokenizer,
    )
    sample = formatter.sample(
        [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": "the band"},
            {"role": "user", "content": "and"},
            {"role": "assistant", "content": "thing"},
        ]
    )
    assert tokenizer.add_bos and sample.tokens[0] == tokenizer.bos_id
    assert list(sample.tokens).count(tokenizer.bos_id) == 1
    assert tokenizer.decode(sample.tokens[sample.trained]) == "the bandthing"
