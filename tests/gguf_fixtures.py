"""Small llama GGUF files written by the tests, with the gguf package."""

import gguf
import numpy as np


def write_llama_gguf(
    path,
    params,
    cfg,
    arch="llama",
    types=None,
    tokenizer=None,
    head_dim=None,
    extra_u32=None,
    chat_template=None,
    extra_f32=None,
):
    """params: name -> numpy array in (out, in) layout, as in reference_llama.
    types: name -> gguf.GGMLQuantizationType to quantize a tensor (default F32).
    tokenizer: a dict from tiny_tokenizer() to store a GPT-2 style tokenizer
    (without one the file says tokenizer.ggml.model "none": raw token ids).
    head_dim: written as <arch>.attention.key_length.
    extra_u32, extra_f32: more keys, "<arch>." prepended (e.g. {"attention.sliding_window": 4}).
    chat_template: stored as tokenizer.chat_template."""
    writer = gguf.GGUFWriter(str(path), arch)
    writer.add_block_count(cfg.n_layers)
    writer.add_embedding_length(cfg.d_model)
    writer.add_feed_forward_length(cfg.d_ff)
    writer.add_head_count(cfg.n_heads)
    writer.add_head_count_kv(cfg.n_kv_heads)
    writer.add_rope_freq_base(cfg.rope_base)
    # a toy.ModelConfig (norm_eps) or the numpy reference's Config (rms_eps)
    writer.add_layer_norm_rms_eps(cfg.norm_eps if hasattr(cfg, "norm_eps") else cfg.rms_eps)
    writer.add_context_length(2048)
    for key, value in (extra_u32 or {}).items():
        writer.add_uint32(f"{arch}.{key}", value)
    for key, value in (extra_f32 or {}).items():
        writer.add_float32(f"{arch}.{key}", value)
    if head_dim is not None:
        writer.add_key_length(head_dim)
        writer.add_value_length(head_dim)
    if tokenizer is None:
        writer.add_tokenizer_model("none")
        if "token_embd.weight" in params:  # llama.cpp's n_vocab without a vocabulary
            writer.add_vocab_size(params["token_embd.weight"].shape[0])
    elif "scores" in tokenizer:  # SentencePiece (llama.cpp's "llama")
        writer.add_tokenizer_model("llama")
        writer.add_token_list(tokenizer["tokens"])
        writer.add_token_scores(tokenizer["scores"])
        writer.add_token_types(tokenizer["token_types"])
        writer.add_unk_token_id(tokenizer["unk_id"])
        writer.add_add_space_prefix(tokenizer["add_space_prefix"])
        writer.add_bos_token_id(tokenizer["bos_id"])
    else:
        writer.add_tokenizer_model("gpt2")
        writer.add_tokenizer_pre(tokenizer["pre"])
        writer.add_token_list(tokenizer["tokens"])
        writer.add_token_types(tokenizer["token_types"])
        writer.add_token_merges(tokenizer["merges"])
        writer.add_bos_token_id(tokenizer["bos_id"])
        writer.add_eos_token_id(tokenizer["eos_id"])
        writer.add_add_bos_token(False)
    if chat_template is not None:
        writer.add_chat_template(chat_template)
    for name, value in params.items():
        qtype = (types or {}).get(name, gguf.GGMLQuantizationType.F32)
        data = value.astype(np.float32)
        if qtype != gguf.GGMLQuantizationType.F32:
            data = gguf.quants.quantize(data, qtype)
        writer.add_tensor(name, data, raw_dtype=qtype)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def _byte_symbols() -> list[str]:
    """GPT-2's byte-level alphabet: printable Latin-1 bytes stand for
    themselves, the other bytes for the characters from U+0100 on."""
    printable = [b for b in range(256) if ord("!") <= b <= ord("~") or 0xA1 <= b <= 0xAC or 0xAE <= b <= 0xFF]
    symbols, extra = {}, 0
    for b in range(256):
        if b in printable:
            symbols[b] = chr(b)
        else:
            symbols[b] = chr(256 + extra)
            extra += 1
    return [symbols[b] for b in range(256)]


def tiny_sentencepiece(add_space_prefix: bool = True) -> dict:
    """A SentencePiece BPE vocabulary as llama.cpp stores one (tokenizer
    model "llama"): <unk>, <s>, </s>, the 256 byte-fallback tokens <0xNN>,
    U+2581 and the letters a-z, then pieces merged from them, scored in the
    order they merge."""
    space = "\u2581"
    tokens, scores, types = ["<unk>", "<s>", "</s>"], [0.0, 0.0, 0.0], [2, 3, 3]
    tokens += [f"<0x{b:02X}>" for b in range(256)]
    scores += [0.0] * 256
    types += [6] * 256
    pieces = [space] + [chr(c) for c in range(ord("a"), ord("z") + 1)]
    # merged pieces, best first; each one's parts are pieces too
    pieces += [space + "t", space + "th", space + "the", "an", "and", space + "b", "in", "ing"]
    for rank, piece in enumerate(pieces):
        tokens.append(piece)
        scores.append(-float(rank))
        types.append(1)
    return {
        "tokens": tokens,
        "scores": scores,
        "token_types": types,
        "unk_id": 0,
        "bos_id": 1,
        "eos_id": 2,
        "add_space_prefix": add_space_prefix,
    }


def tiny_tokenizer(vocab: int) -> dict:
    """A byte-level BPE tokenizer of exactly `vocab` tokens (vocab > 257):
    the 256 byte symbols, merges of lowercase letter pairs, and one control
    token at the end that serves as BOS and EOS."""
    tokens = _byte_symbols()
    letters = "etaoinshrdlucmfw"
    pairs = [(a, b) for a in letters for b in letters]
    merges = [f"{a} {b}" for a, b in pairs[: vocab - 257]]
    tokens += [a + b for a, b in pairs[: vocab - 257]]
    tokens.append("<|end|>")
    types = [1] * (vocab - 1) + [3]
    return {
        "tokens": tokens,
        "merges": merges,
        "token_types": types,
        "pre": "gpt-2",  # llama.cpp's name for GPT-2's regex
        "bos_id": vocab - 1,
        "eos_id": vocab - 1,
    }


def small_model_like(source, path, cfg, seed=0):
    """A llama of shape cfg (a reference_llama Config, untied=False, its
    vocab the source's), random weights stored as a Q4_1 GGUF stores them
    (projections Q4_1, the embedding Q8_0), with the source GGUF's
    byte-level BPE tokenizer and chat template: a stand-in for SmolLM2 that
    trains and chats in a fraction of its time."""
    from reference_llama import init_params

    fields = gguf.GGUFReader(str(source)).fields
    tokenizer = {
        "pre": fields["tokenizer.ggml.pre"].contents(),
        "tokens": fields["tokenizer.ggml.tokens"].contents(),
        "token_types": fields["tokenizer.ggml.token_type"].contents(),
        "merges": fields["tokenizer.ggml.merges"].contents(),
        "bos_id": fields["tokenizer.ggml.bos_token_id"].contents(),
        "eos_id": fields["tokenizer.ggml.eos_token_id"].contents(),
    }
    assert len(tokenizer["tokens"]) == cfg.vocab and not cfg.untied
    params = init_params(cfg, np.random.default_rng(seed), scale=0.05)
    types = {name: gguf.GGMLQuantizationType.Q4_1 for name, value in params.items() if value.ndim == 2}
    types["token_embd.weight"] = gguf.GGMLQuantizationType.Q8_0
    chat_template = fields["tokenizer.chat_template"].contents()
    return write_llama_gguf(path, params, cfg, types=types, tokenizer=tokenizer, chat_template=chat_template)


def write_lora_adapter(path, arch: str, tensors: dict, alpha=16.0, alpha_type=gguf.GGUFValueType.FLOAT32):
    """A LoRA adapter GGUF for a base of arch: tensors by name (numpy order)."""
    writer = gguf.GGUFWriter(str(path), arch)
    writer.add_string("general.type", "adapter")
    writer.add_string("adapter.type", "lora")
    writer.add_key_value("adapter.lora.alpha", alpha, alpha_type)
    for name, array in tensors.items():
        writer.add_tensor(name, array)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path
