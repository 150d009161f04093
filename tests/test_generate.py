"""Generation over the KV cache, toy.generate and toy-generate."""

import subprocess
import sys

import numpy as np
import pytest

import reference_llama as ref
import toy
from gguf_fixtures import write_llama_gguf
from toy.generation.chat import Chat
from toy.recipes import LoRA


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    cfg = ref.Config(vocab=50, d_model=32, n_layers=2, n_heads=4, n_kv_heads=2, d_ff=64, untied=True)
    params = ref.init_params(cfg, np.random.default_rng(0), scale=0.3)
    path = write_llama_gguf(tmp_path_factory.mktemp("g") / "tiny.gguf", params, cfg)
    return path, params, cfg


def trained_tiny_lora(path):
    """A LoRA session on the tiny model after 3 steps: (recipe, ids, its logits)."""
    recipe = LoRA("cpu", threads=1)
    recipe.realize(path, None, 4, toy.RecipeOptions(t_seq=6, t_batch=1), targets=("q", "v", "down"))
    ids = np.array([[3, 7, 11, 2, 9, 4, 5]], dtype=np.int32)
    for step in range(1, 4):
        recipe.step(ids[:, :-1], np.arange(6)[None], ids[:, 1:], toy.adamw_hp(step, 5e-2), step == 1)
    trained, _ = recipe.evaluate(ids[:, :-1], np.arange(6)[None])
    return recipe, ids, trained


def test_kv_cache_decoding_matches_the_reference_forward(tiny):
    path, params, cfg = tiny
    ids = list(np.random.default_rng(1).integers(0, 50, 9))
    full = ref.forward(params, cfg, np.array([ids]), np.arange(9)[None])[0]
    model = toy.load_model(path, threads=1)
    model.session.kv_init(64)
    np.testing.assert_allclose(model.session.decode(ids[:5], 0, 50), full[4], atol=1e-4)
    for i in range(5, 9):  # one token at a time, reading the cache
        np.testing.assert_allclose(model.session.decode(ids[i : i + 1], i, 50), full[i], atol=1e-4)


def test_decode_refuses_what_does_not_fit(tiny):
    model = toy.load_model(tiny[0], threads=1)
    with pytest.raises(toy.ToyError, match="before kv_init"):
        model.session.decode([1], 0, 50)
    model.session.kv_init(8)
    with pytest.raises(toy.ToyError, match="does not fit"):
        model.session.decode(list(range(9)), 0, 50)
    with pytest.raises(toy.ToyError, match="outside the vocabulary"):
        model.session.decode([50], 0, 50)


def test_greedy_is_deterministic_and_sampling_is_seeded(smollm2):
    model = toy.load_model(smollm2, threads=2)
    greedy = toy.generate(model, "Once upon a time", 12)
    assert greedy == toy.generate(model, "Once upon a time", 12) and len(greedy) > 10
    a = toy.generate(model, "Once upon a time", 12, temperature=0.9, top_k=40, seed=5)
    assert a == toy.generate(model, "Once upon a time", 12, temperature=0.9, top_k=40, seed=5)


def test_stop_strings_end_the_text(smollm2):
    model = toy.load_model(smollm2, threads=2)
    text = toy.generate(model, "Count: one, two, three,", 20)
    stop = text.strip()[:3]
    cut = toy.generate(model, "Count: one, two, three,", 20, stop=(stop,))
    assert stop not in cut and text.startswith(cut)


def test_an_adapter_file_loads_into_the_same_logits_as_its_session(tiny, tmp_path):
    path = tiny[0]
    recipe, ids, trained = trained_tiny_lora(path)
    recipe.save_adapter(tmp_path / "adapter.gguf")
    loaded = toy.load_model(path, tmp_path / "adapter.gguf", threads=1)
    loaded.session.kv_init(16)
    np.testing.assert_allclose(loaded.session.decode(ids[0, :-1], 0, 50), trained[0, -1], atol=1e-4)


def test_toy_generate_cli(smollm2):
    def run(*a):
        return subprocess.run([sys.executable, "-m", "toy.cli.generate", *a], capture_output=True, text=True)

    result = run("Once upon a time", "--max-new-tokens", "8")
    assert result.returncode == 0 and len(result.stdout.strip()) > 5
    bad = run("hi", "--adapter", "/nonexistent/adapter.gguf")
    assert bad.returncode == 2 and "--adapter file not found" in bad.stderr


@pytest.mark.parametrize("attention", ["flash", "matmul"])
def test_one_reused_graph_decodes_across_windows_and_rewinds(tiny, monkeypatch, attention):
    """The decode graph is built once per shape and reused at every position:
    its cache rows, mask and positions are inputs. Both attention paths
    (flash attention, and mul_mat + softmax for backends without it) must
    match the reference across the 256-position window where the graph is
    rebuilt, and after rewinding to position 0 over a cache that still holds
    a longer sequence."""
    path, params, cfg = tiny
    if attention == "matmul":
        monkeypatch.setenv("TNN_DECODE_ATTENTION", "matmul")
    ids = list(np.random.default_rng(2).integers(0, 50, 300))
    full = ref.forward(params, cfg, np.array([ids]), np.arange(300)[None])[0]
    model = toy.load_model(path, threads=1)
    model.session.kv_init(320)
    np.testing.assert_allclose(model.session.decode(ids[:250], 0, 50), full[249], atol=1e-4)
    for i in range(250, 300):
        np.testing.assert_allclose(
            model.session.decode(ids[i : i + 1], i, 50), full[i], atol=1e-4, err_msg=f"position {i}"
        )
    other = list(np.random.default_rng(3).integers(0, 50, 7))
    want = ref.forward(params, cfg, np.array([other]), np.arange(7)[None])[0]
    np.testing.assert_allclose(model.session.decode(other[:3], 0, 50), want[2], atol=1e-4)
    for i in range(3, 7):
        np.testing.assert_allclose(model.session.decode(other[i : i + 1], i, 50), want[i], atol=1e-4)


def test_the_tokenizer_and_chat_template_are_read_once_per_model(smollm2, monkeypatch):
    from toy.text.chat import ChatFormatter
    from toy.text.tokenizer import GGUFTokenizer

    calls = {"tokenizer": 0, "chat": 0}
    read_tokenizer, read_chat = GGUFTokenizer.from_gguf.__func__, ChatFormatter.from_gguf.__func__

    def counted_tokenizer(cls, path):
        calls["tokenizer"] += 1
        return read_tokenizer(cls, path)

    def counted_chat(cls, path, tokenizer):
        calls["chat"] += 1
        return read_chat(cls, path, tokenizer)

    monkeypatch.setattr(GGUFTokenizer, "from_gguf", classmethod(counted_tokenizer))
    monkeypatch.setattr(ChatFormatter, "from_gguf", classmethod(counted_chat))
    model = toy.load_model(smollm2, threads=2)
    first = toy.generate(model, "What is the capital of France?", 10, chat=True)
    second = toy.generate(model, "What is the capital of France?", 10, chat=True)
    plain = toy.generate(model, "Once upon a time", 6)
    assert calls == {"tokenizer": 1, "chat": 1}
    assert first == second and len(first) > 5 and len(plain) > 3
    # the same answer as with a tokenizer and template read afresh
    tokenizer = read_tokenizer(GGUFTokenizer, smollm2)
    fresh = toy.load_model(smollm2, threads=2)
    assert toy.generate(fresh, "What is the capital of France?", 10, chat=True, tokenizer=tokenizer) == first


def test_a_stop_string_spanning_several_tokens_cuts_at_its_first_occurrence(smollm2):
    model = toy.load_model(smollm2, threads=2)
    text = toy.generate(model, "Once upon a time", 24)
    words = text.split()
    stop = " ".join(words[2:5])  # several tokens, well inside the text
    assert len(stop) > 6 and stop in text
    cut = toy.generate(model, "Once upon a time", 24, stop=(stop, "never-generated"))
    assert cut == text[: text.index(stop)]


def test_decoding_without_the_adapters_runs_the_base_alone(tiny):
    path, params, cfg = tiny
    recipe, ids, trained = trained_tiny_lora(path)
    base = ref.forward(params, cfg, ids[:, :-1], np.arange(6)[None])[0]
    assert np.abs(trained[0, -1] - base[-1]).max() > 1e-2  # the adapters changed the logits
    e = recipe.session
    e.kv_init(16)
    np.testing.assert_allclose(e.decode(ids[0, :-1], 0, 50), trained[0, -1], atol=1e-4)
    e.decode_adapters(False)
    np.testing.assert_allclose(e.decode(ids[0, :-1], 0, 50), base[-1], atol=1e-4)
    e.decode_adapters(True)
    np.testing.assert_allclose(e.decode(ids[0, :-1], 0, 50), trained[0, -1], atol=1e-4)
    with pytest.raises(toy.ToyError, match="takes 0"):
        e._check(e.lib.tnn_decode_adapters(e._session, 2))


def test_a_prompt_past_the_models_context_is_refused_before_decoding(smollm2):
    model = toy.load_model(smollm2, threads=2)
    with pytest.raises(toy.InputError, match="more than the model's context of 8,192 tokens"):
        toy.generate(model, "word " * 9000, 4)


def test_a_long_prompt_prefilled_in_pieces_continues_as_in_one(smollm2, monkeypatch):
    import importlib

    generation = importlib.import_module("toy.generation.generate")
    prompt = "The quick brown fox jumps over the lazy dog. " * 70  # about 700 tokens
    in_pieces = toy.generate(toy.load_model(smollm2, threads=2), prompt, 8)
    monkeypatch.setattr(generation, "PREFILL_CHUNK", 100_000)
    assert toy.generate(toy.load_model(smollm2, threads=2), prompt, 8) == in_pieces


def test_llama_cpp_spellings_of_the_prompt_and_options(smollm2):
    ours = subprocess.run(
        [
            sys.executable,
            "-m",
            "toy.cli.generate",
            "The capital of France is",
            "--max-new-tokens",
            "4",
            "--threads",
            "2",
        ],
        capture_output=True,
        text=True,
    )
    theirs = subprocess.run(
        [
            sys.executable,
            "-m",
            "toy.cli.generate",
            "-p",
            "The capital of France is",
            "-n",
            "4",
            "-t",
            "2",
            "-m",
            str(smollm2),
        ],
        capture_output=True,
        text=True,
    )
    assert ours.returncode == 0 and theirs.stdout == ours.stdout, theirs.stderr
    twice = subprocess.run([sys.executable, "-m", "toy.cli.generate", "hi", "-p", "hi"], capture_output=True, text=True)
    assert twice.returncode == 2 and "give the prompt once" in twice.stderr


# ---- llama.cpp's samplers, streaming, chat (toy-generate as llama-cli) --------
# one thread: on a machine shared with other work, two threads wait on each
# other at every op (ten times slower and more)

LOOP = "1 2 3 1 2 3 1 2 3 1 2 3"


def test_top_p_tiny_and_min_p_one_sample_as_greedy(smollm2):
    model = toy.load_model(smollm2, threads=1)
    greedy = toy.generate(model, "Once upon a time", 12)
    plain = toy.generate(model, "Once upon a time", 12, temperature=1.5, seed=3)
    assert plain != greedy  # at this temperature, sampling alone wanders off
    assert toy.generate(model, "Once upon a time", 12, temperature=1.5, seed=3, top_p=1e-6) == greedy
    assert toy.generate(model, "Once upon a time", 12, temperature=1.5, seed=3, min_p=1.0) == greedy
    nucleus = dict(temperature=0.9, top_k=40, top_p=0.9, min_p=0.05, repeat_penalty=1.2, seed=11)
    assert toy.generate(model, "Once upon a time", 12, **nucleus) == toy.generate(
        model, "Once upon a time", 12, **nucleus
    )


def test_the_repeat_penalty_breaks_a_greedy_loop(smollm2):
    model = toy.load_model(smollm2, threads=1)
    looping = toy.generate(model, LOOP, 16)
    assert "1 2 3 1 2 3" in looping  # greedy repeats the pattern
    penalized = toy.generate(model, LOOP, 16, repeat_penalty=1.5)
    assert penalized != looping and "1 2 3" not in penalized
    # the window: with none of the pattern's tokens in it, the penalty does nothing
    assert toy.generate(model, LOOP, 16, repeat_penalty=1.5, repeat_last_n=0) == looping


def test_the_repeat_penalty_follows_llama_cpp():
    from toy.generation.sampling import Sampler

    logits = np.array([2.0, -2.0, 1.0, 0.5], dtype=np.float32)
    penalized = Sampler(repeat_penalty=2.0, repeat_last_n=3).penalize(logits, [0, 0, 3, 1, 1])
    # tokens 3 and 1 are in the last three: positive divided, negative multiplied, once each
    np.testing.assert_allclose(penalized, [2.0, -4.0, 1.0, 0.25])
    np.testing.assert_allclose(
        Sampler(repeat_penalty=2.0, repeat_last_n=-1).penalize(logits, [0]), [1.0, -2.0, 1.0, 0.5]
    )
    assert Sampler(repeat_penalty=2.0).pick(np.array([3.0, 2.0]), [0]) == 1  # greedy sees it too


def test_top_p_keeps_the_fewest_likeliest_tokens_adding_up_to_p():
    from toy.generation.sampling import Sampler

    logits = np.log(np.array([0.5, 0.3, 0.15, 0.05]))
    assert Sampler(top_p=0.75)._nucleus(logits).tolist() == [True, True, False, False]
    assert Sampler(top_p=0.79)._nucleus(logits).tolist() == [True, True, False, False]
    assert Sampler(top_p=0.81)._nucleus(logits).tolist() == [True, True, True, False]
    assert Sampler(min_p=0.3)._nucleus(logits).tolist() == [True, True, True, False]
    drawn = {Sampler(temperature=1.0, top_p=0.75, seed=s).pick(logits.astype(np.float32)) for s in range(40)}
    assert drawn == {0, 1}
    # a temperature so near 0 that logits / temperature overflow: still the likeliest, no NaN
    assert Sampler(temperature=5e-324).pick(np.array([1.0, 3.0, 2.0], dtype=np.float32)) == 1


def test_options_out_of_range_are_refused_by_the_python_api(smollm2):
    model = toy.load_model(smollm2, threads=1)
    for option, value in (
        ("top_p", 1.5),
        ("min_p", float("nan")),
        ("repeat_penalty", 0.0),
        ("repeat_last_n", -2),
        ("ctx_size", -1),
        ("top_p", float("inf")),
    ):
        with pytest.raises(toy.ToyError, match=f"{option} must be a"):
            toy.generate(model, "Hi", 2, **{option: value})
    with pytest.raises(toy.InputError, match="needs chat=True"):
        toy.generate(model, "Hi", 2, system="Be brief.")


def test_streamed_pieces_add_up_to_the_text(smollm2):
    model = toy.load_model(smollm2, threads=1)
    pieces = []
    text = toy.generate(model, "Once upon a time", 16, on_text=pieces.append)
    assert len(pieces) > 5 and "".join(pieces) == text == toy.generate(model, "Once upon a time", 16)
    stop = " ".join(text.split()[2:4])
    pieces = []
    cut = toy.generate(model, "Once upon a time", 16, stop=(stop,), on_text=pieces.append)
    assert "".join(pieces) == cut == text[: text.index(stop)]


def _tokenizers(tmp_path, smollm2):
    from gguf_fixtures import tiny_sentencepiece
    from toy.text.tokenizer import ByteTokenizer, GGUFTokenizer

    cfg = ref.Config(vocab=300, d_model=32, n_layers=1, n_heads=4, n_kv_heads=2, d_ff=64, untied=True)
    params = ref.init_params(cfg, np.random.default_rng(0), scale=0.3)
    params["token_embd.weight"] = np.zeros((len(tiny_sentencepiece()["tokens"]), 32), np.float32)
    sentencepiece = write_llama_gguf(tmp_path / "sp.gguf", params, cfg, tokenizer=tiny_sentencepiece())
    return {
        "byte-level BPE": GGUFTokenizer.from_gguf(smollm2),
        "bytes": ByteTokenizer(),
        "SentencePiece": GGUFTokenizer.from_gguf(sentencepiece),
    }


def test_a_character_split_across_tokens_is_streamed_whole(tmp_path, smollm2):
    from toy.generation.streaming import TextStream

    text = "the cat é 🙂 日本 and ünïcode"
    for name, tokenizer in _tokenizers(tmp_path, smollm2).items():
        ids = tokenizer.encode(text)
        pieces, waited = [], 0
        stream = TextStream(tokenizer, [], pieces.append)
        for n in range(1, len(ids) + 1):
            before = len(pieces)
            assert stream.update(ids[:n]) is None
            waited += len(pieces) == before
        stream.finish(tokenizer.decode(ids))
        assert "".join(pieces) == tokenizer.decode(ids), name
        assert not any("\ufffd" in p for p in pieces), (name, pieces)
        assert waited > 0, name  # some token ended inside a character and sent nothing


def test_text_that_may_begin_a_stop_string_is_held_back():
    from toy.generation.streaming import TextStream
    from toy.text.tokenizer import ByteTokenizer

    tokenizer, pieces = ByteTokenizer(), []
    stream = TextStream(tokenizer, ["STOP", "é!"], pieces.append)
    ids = list("go ST then é STOP more".encode())
    for n in range(1, len(ids) + 1):
        final = stream.update(ids[:n])
        sent = "".join(pieces)
        assert not sent.endswith(("S", "ST", "STO")) or sent.endswith("go ST")  # undecided: held
        if final is not None:
            break
    assert final == "go ST then é " and "".join(pieces) == final


def test_a_chat_renders_every_turn_so_far(smollm2):
    model = toy.load_model(smollm2, threads=1)
    chat = Chat(model, system="Answer in one short sentence.")
    first = chat.prompt_for("What is the capital of France?")
    assert "Answer in one short sentence." in first and first.count("What is the capital") == 1
    answer = chat.say("What is the capital of France?", 12, stop=("\n",))
    assert answer and answer == toy.generate(
        model, "What is the capital of France?", 12, stop=("\n",), chat=True, system="Answer in one short sentence."
    )
    second = chat.prompt_for("And of Italy?")
    assert second.startswith(first + answer) and second.rstrip().endswith("assistant")
    assert second.index("And of Italy?") > second.index(answer)
    again = chat.say("And of Italy?", 12, stop=("\n",))
    assert again and [t["role"] for t in chat.turns] == ["user", "assistant"] * 2


def test_a_chat_past_its_context_drops_its_oldest_turns(smollm2):
    model = toy.load_model(smollm2, threads=1)
    drops = []
    chat = Chat(model, system="Be brief.", ctx_size=80, on_drop=lambda: drops.append(1))
    for question in ("Name a color.", "Name a fruit.", "Name an animal.", "Name a city."):
        chat.say(question, 8)
    assert chat.dropped >= 1 and len(drops) == chat.dropped
    prompt = chat.prompt_for("Name a tree.", 8)
    assert "Be brief." in prompt and "Name a color." not in prompt and "Name a city." in prompt
    assert len(chat.tokenizer.encode(prompt)) + 8 <= 80


def test_ctx_size_widens_or_narrows_the_context(smollm2):
    model = toy.load_model(smollm2, threads=1)
    with pytest.raises(toy.InputError, match="more than the context given of 10 tokens"):
        toy.generate(model, "Once upon a time there was", 8, ctx_size=10)
    # without max_new_tokens, as many as the context leaves
    text = toy.generate(model, "Once upon a time", None, ctx_size=8)
    assert text == toy.generate(model, "Once upon a time", 4)
