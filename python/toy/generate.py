"""Text generation from a llama GGUF (with optional LoRA adapter) or from a
recipe being trained: greedy at temperature 0, seeded sampling otherwise,
stopping at EOS or a stop string, over a KV cache."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from .config import RecipeOptions
from .corpus import InputError
from .recipes import LoRA
from .tokenizer import GGUFTokenizer


def load_model(gguf_path, adapter_path=None, device: str = "cpu", threads: int | None = None) -> LoRA:
    """A session on a GGUF base, with the adapter's A and B loaded when given."""

    rank, alpha, targets, tensors = 1, 2.0, ("q",), {}
    if adapter_path is not None:
        from .merge import _read_adapter
        alpha, pairs = _read_adapter(adapter_path)
        if not pairs:
            raise InputError(f"{adapter_path} holds no LoRA tensors")
        slot = {"attn_q": "q", "attn_k": "k", "attn_v": "v", "attn_output": "o",
                "ffn_gate": "gate", "ffn_up": "up", "ffn_down": "down"}
        targets = tuple(sorted({slot[name.split(".")[2]] for name in pairs}))
        rank = next(iter(pairs.values()))[0].shape[0]
        tensors = pairs
    recipe = LoRA(device, threads)
    recipe.realize(gguf_path, None, rank, RecipeOptions(t_seq=1, t_batch=1), alpha=alpha, targets=targets)
    for weight, (a, b) in tensors.items():
        recipe.engine.upload(recipe.engine.find(weight + ".lora_a"), a)
        recipe.engine.upload(recipe.engine.find(weight + ".lora_b"), b)
    recipe.gguf_path = Path(gguf_path)
    return recipe


def _pick(logits: np.ndarray, temperature: float, top_k: int, rng) -> int:
    if temperature <= 0:
        return int(np.argmax(logits))
    logits = logits.astype(np.float64) / temperature
    if 0 < top_k < logits.size:
        cutoff = np.partition(logits, -top_k)[-top_k]
        logits = np.where(logits >= cutoff, logits, -np.inf)
    probs = np.exp(logits - logits.max())
    probs /= probs.sum()
    return int(rng.choice(logits.size, p=probs))


def generate(model, prompt: str, max_new_tokens: int = 64, temperature: float = 0.0, top_k: int = 0,
             stop: tuple[str, ...] = (), seed: int = 0, tokenizer: GGUFTokenizer | None = None,
             chat: bool = False) -> str:
    """The text generated after prompt. model: a recipe (its current weights,
    adapters included) or a GGUF path. chat=True wraps prompt as a user turn
    in the model's chat template."""
    if isinstance(model, (str, Path)):
        model = load_model(model)
    source = getattr(model, "gguf_path", None) or getattr(model, "base_path", None)
    if tokenizer is None:
        if source is None:
            raise InputError("generate needs a tokenizer for a model that was not loaded from a GGUF")
        tokenizer = GGUFTokenizer.from_gguf(source)
    if chat:
        from .instruct import ChatFormatter
        prompt = ChatFormatter.from_gguf(source, tokenizer).render(
            [{"role": "user", "content": prompt}], add_generation_prompt=True)
    ids = tokenizer.encode(prompt)
    if not ids:
        raise InputError("the prompt is empty")
    engine, vocab = model.engine, model.cfg.vocab
    needed = len(ids) + max_new_tokens
    if engine.n_ctx == 0:
        engine.kv_init(max(needed, 512))
    elif needed > engine.n_ctx:
        raise InputError(f"prompt + max_new_tokens ({needed}) exceeds this model's {engine.n_ctx}-token cache")
    rng = np.random.default_rng(seed)
    logits = engine.decode(ids, 0, vocab)
    out: list[int] = []
    n_past = len(ids)
    for _ in range(max_new_tokens):
        token = _pick(logits, temperature, top_k, rng)
        if token == tokenizer.eos_id:
            break
        out.append(token)
        text = tokenizer.decode(out)
        hit = [text.index(s) for s in stop if s and s in text]
        if hit:
            return text[: min(hit)]
        logits = engine.decode([token], n_past, vocab)
        n_past += 1
    return tokenizer.decode(out)
