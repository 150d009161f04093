"""One toy-train run: the step loop with its logs, checkpoints, Ctrl-C and
progress bar.

stdout gets one `step N: loss=X` line per step (or, with --json, one object
at the end); everything else goes to stderr. A resumed run starts after the
checkpoint's step and prints the lines the uninterrupted run would have.
"""

from __future__ import annotations

import json
import math
import re
import shutil
import signal
import sys
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from ..core.errors import EXIT_STOPPED, InputError
from ..core.plan import peak_rss
from ..core.version import __version__
from ..formats.merge import merge_lora
from ..options import COMMANDS, Prepared, TrainingOptions
from . import parallel
from .checkpoint import Checkpoint, Checkpoints, file_sha256
from .divergence import DivergenceWatch
from .optim import adamw_hp
from .plot import LossPlot
from .rundir import QuietRunDir, RunDir

LOG_FORMAT = "toy/train-v1"


def learning_rate(step: int, args: TrainingOptions) -> float:
    """Linear warmup to --lr, then constant or cosine decay to --min-lr."""
    if args.warmup and step <= args.warmup:
        return args.lr * step / args.warmup
    if args.min_lr is None:
        return args.lr
    span = max(args.steps - args.warmup, 1)
    progress = min((step - args.warmup) / span, 1.0)
    return args.min_lr + 0.5 * (args.lr - args.min_lr) * (1 + math.cos(math.pi * progress))


class StopOnSignal:
    """Turns the first SIGINT or SIGTERM into a request to stop after the
    current step (`.signum`); a second one acts as usual (Ctrl-C raises
    KeyboardInterrupt, SIGTERM kills), so a stuck run can still be stopped.
    Under mpiexec a Ctrl-C reaches a rank twice (from the terminal and
    forwarded by the launcher): signals within `echo` seconds of the first
    count as that one."""

    def __init__(self, echo: float = 0.0):
        self.signum = None
        self._saved = {}
        self._echo, self._first = echo, None

    def _on_signal(self, signum, frame):
        if self._first is None:
            self.signum, self._first = signum, time.monotonic()
            if self._echo:
                return
        elif time.monotonic() - self._first < self._echo:
            return
        for sig, handler in self._saved.items():
            signal.signal(sig, handler)
        if self._echo:  # a second, later signal: act as it would have
            signal.raise_signal(signum)

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            for sig in EXIT_STOPPED:
                self._saved[sig] = signal.signal(sig, self._on_signal)
        return self

    def __exit__(self, *exc):
        for sig, handler in self._saved.items():
            signal.signal(sig, handler)


class Progress:
    """A progress bar on stderr (step, loss, tokens/s, time left), only when
    stderr is a terminal: logs and pipes stay clean."""

    def __init__(self, first_step: int, steps: int, tokens_per_step: int, quiet: bool = False):
        self.bar = None
        if quiet or not sys.stderr.isatty():
            return
        from tqdm import tqdm

        self.bar = tqdm(
            total=steps * tokens_per_step,
            initial=(first_step - 1) * tokens_per_step,
            unit="tok",
            unit_scale=True,
            file=sys.stderr,
            leave=True,
            ncols=shutil.get_terminal_size().columns,
        )
        self.steps, self.tokens_per_step = steps, tokens_per_step

    def print_line(self, text: str) -> None:
        """A line on stdout, with the bar lifted out of its way when both share a terminal."""
        if self.bar is not None and sys.stdout.isatty():
            with self.bar.external_write_mode(file=sys.stdout):
                sys.stdout.write(text)
        else:
            sys.stdout.write(text)
        sys.stdout.flush()

    def update(self, step: int, loss: float) -> None:
        if self.bar is not None:
            self.bar.set_description(f"step {step}/{self.steps} loss {loss:.4f}", refresh=False)
            self.bar.update(self.tokens_per_step)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


class Fingerprints:
    """sha256 of the model file and the data, computed once, when first needed."""

    def __init__(self, model_file, source):
        self.model_file, self.source, self._value = model_file, source, None

    def get(self) -> dict:
        if self._value is None:
            self._value = {"data": self.source.fingerprint()}
            if self.model_file:
                self._value["model"] = file_sha256(self.model_file)
        return self._value

    def check(self, saved: dict, checkpoint: Checkpoint) -> None:
        now = self.get()
        for what, path in (("model", self.model_file), ("data", self.source.name)):
            if (what not in now and what in saved) or (what in now and not _is_sha256(saved.get(what))):
                raise InputError(
                    f"checkpoint {checkpoint.path} is damaged: its {what} fingerprint "
                    f"{str(saved.get(what))[:40]!r} is not the sha256 of its run's {what} file; "
                    "start again without --resume"
                )
            if saved.get(what) != now.get(what):
                raise InputError(
                    f"the {what} file {path} changed since {checkpoint.path} was "
                    f"written (its sha256 differs); resume with the file the run used"
                )


def _is_sha256(value) -> bool:
    return isinstance(value, str) and re.fullmatch(r"[0-9a-f]{64}", value) is not None


def _run_config(args, recipe, source, recipe_config, run_dir) -> dict:
    return {
        "format": LOG_FORMAT,
        "recipe": args.recipe,
        "run_id": run_dir.run_id,
        "toy_version": __version__,
        "device": args.device,
        "threads": recipe.session.threads,
        "corpus": source.name,
        "corpus_tokens": source.n_tokens,
        "steps": args.steps,
        "grad_accum": args.grad_accum,
        "lr": args.lr,
        "warmup": args.warmup,
        "min_lr": args.min_lr,
        "weight_decay": args.weight_decay,
        "beta1": args.beta1,
        "beta2": args.beta2,
        "clip_norm": args.clip_norm,
        "precision": getattr(args, "precision", "f32"),
        "save_every": args.save_every,
        **recipe_config,
    }


def _one_step(recipe, source, step: int, lr: float, args, ranks) -> float:
    hp = adamw_hp(step, lr, args.beta1, args.beta2, 1e-8, args.weight_decay)
    micro_batches = source.next()
    if ranks is not None:
        # every rank drew the same micro-batches; each trains on its share
        share = len(micro_batches) // ranks.size
        labelled = sum(int((np.asarray(b[-1]) != -1).sum()) for b in micro_batches)
        ranks.begin_step(step)
        return recipe.step_accumulated(
            micro_batches[ranks.rank * share : (ranks.rank + 1) * share], hp, step == 1, labelled, ranks.sum
        )
    if len(micro_batches) == 1:
        return recipe.step_batch(micro_batches[0], hp, is_first=(step == 1))
    return recipe.step_accumulated(micro_batches, hp, is_first=(step == 1))


@dataclass
class _Run:
    """A run under way: what start() made, what the steps read and add to."""

    args: TrainingOptions  # as resolved by the recipe (Prepared.resolve)
    prepared: Prepared
    ranks: parallel.Ranks | None
    run_dir: RunDir | QuietRunDir
    checkpoints: Checkpoints | None  # rank 0's
    fingerprints: Fingerprints
    losses: list[float]  # every step's so far, a resumed run's earlier ones included
    loss_plot: LossPlot | None  # rank 0's

    @property
    def lead(self) -> bool:
        return self.ranks is None or self.ranks.rank == 0

    def save_checkpoint(self, step: int) -> None:
        if self.checkpoints is None:
            return
        self.checkpoints.save(
            self.prepared.recipe.session,
            {
                "step": step,
                "steps": self.args.steps,
                "losses": self.losses,
                "source": self.prepared.source.state(),
                "args": asdict(self.args),
                "fingerprints": self.fingerprints.get(),
            },
        )
        self.loss_plot.update()


def run(given: TrainingOptions, checkpoint: Checkpoint | None = None, log_lines: bool = True) -> int:
    """Train the run's steps (after the checkpoint's, when resuming); returns the exit status.
    log_lines=False leaves the `step N: loss=X` lines out of stdout (the Python API's runs).
    Under mpiexec with N ranks, data parallel (toy.training.parallel): rank 0 alone
    prints and writes the run directory."""
    ranks = parallel.world(given)
    prepared = COMMANDS[given.recipe].prepare(given)
    run = start(prepared.resolve(given), prepared, ranks, checkpoint)
    try:
        first_step = len(run.losses) + 1
        stopped, elapsed, event = train_steps(run, log_lines)
        if stopped is not None:
            if run.lead:
                run.loss_plot.update()
            return (
                _report_stop(stopped, len(run.losses), run.args.steps, run.run_dir)
                if run.lead
                else EXIT_STOPPED[stopped]
            )
        if not run.lead:
            return 0
        weights_path = save_weights(run)
    finally:
        run.run_dir.close()
    report(run, first_step, elapsed, event, weights_path)
    return 0


def start(args: TrainingOptions, prepared: Prepared, ranks, checkpoint: Checkpoint | None) -> _Run:
    """A new run's directory and config.json, or a stopped run's state restored
    from its checkpoint (everything read and checked before its directory is
    touched: a refused resume leaves the run as it was)."""
    lead = ranks is None or ranks.rank == 0
    recipe, source, recipe_config = prepared.recipe, prepared.source, prepared.config
    plan = getattr(recipe.session, "plan", None)
    if plan is not None:
        plan.count_loaded_since_build()
    fingerprints = Fingerprints(recipe_config.get("base") or recipe_config.get("donor"), source)
    run_dir: RunDir | QuietRunDir
    if checkpoint is None:
        run_dir = (
            RunDir.create(args.out, args.recipe, args.seed, getattr(args, "overwrite", False))
            if lead
            else QuietRunDir()
        )
        config = _run_config(args, recipe, source, recipe_config, run_dir)
        if ranks is not None:
            config["ranks"] = ranks.size
        run_dir.write_json("config.json", config)
        losses: list[float] = []
        if lead:
            source.before_training(recipe, run_dir)
        checkpoints = Checkpoints(run_dir.path, args.keep) if lead else None
    else:
        fingerprints.check(checkpoint.state["fingerprints"], checkpoint)
        done = checkpoint.state["step"]
        recipe.session.reset()  # the loss gradient seeded; moments then overwritten
        checkpoint.restore(recipe.session)
        try:
            source.restore(checkpoint.state["source"])
        except (KeyError, TypeError, ValueError, IndexError, OverflowError):
            raise InputError(
                f"checkpoint {checkpoint.path} is damaged: its data position does not fit this data"
            ) from None
        losses = list(checkpoint.state["losses"])
        checkpoints = Checkpoints.resuming(checkpoint, args.keep) if lead else None
        run_dir = RunDir.reopen(checkpoint.run_path, done) if lead else QuietRunDir()
        if lead:
            print(f"toy-train: resuming {run_dir.path} after step {done} of {args.steps}", file=sys.stderr)

    if lead and plan is not None:  # after every refusal: an error stays one line
        print(f"toy-train: {plan.describe()}", file=sys.stderr)
    # loss.svg, drawn from events.jsonl at every checkpoint, on a stop and at the end
    loss_plot = LossPlot(run_dir.path) if lead else None
    return _Run(args, prepared, ranks, run_dir, checkpoints, fingerprints, losses, loss_plot)


def train_steps(run: _Run, log_lines: bool) -> tuple[int | None, float, dict]:
    """The steps from the first not yet done to the last, or to a stop
    (Ctrl-C, SIGTERM): (the stopping signal or None, the seconds they took,
    the last step's event)."""
    args, ranks, lead = run.args, run.ranks, run.lead
    recipe, source = run.prepared.recipe, run.prepared.source
    tokens_per_step = source.tokens_per_step
    first_step = len(run.losses) + 1
    progress = Progress(first_step, args.steps, tokens_per_step, quiet=not lead)
    diverging = DivergenceWatch(args.lr)
    started = time.perf_counter()
    event: dict = {}
    try:
        with StopOnSignal(echo=2.0 if ranks is not None else 0.0) as stop:
            # decided once after each step, so that the checkpoint and the stop
            # agree (and, with ranks, every rank stops after the same step)
            stopping = ranks is None and stop.signum is not None
            for step in range(first_step, args.steps + 1):
                if stopping:
                    break
                lr = learning_rate(step, args)
                t0 = time.perf_counter()
                copies_before, bytes_before = recipe.session.transfers()
                loss = _one_step(recipe, source, step, lr, args, ranks)
                seconds = time.perf_counter() - t0
                run.losses.append(loss)
                metrics = recipe.metrics()  # dpo, orpo: the reward margin and accuracy
                if not args.json and lead and log_lines:
                    said = "".join(f" {name}={value:.6f}" for name, value in metrics.items())
                    progress.print_line(f"step {step}: loss={loss:.6f}{said}\n")
                event = dict(step=step, loss=loss, **metrics, lr=lr, tokens=tokens_per_step, seconds=round(seconds, 6))
                if recipe.session.grad_norm is not None:
                    event["grad_norm"] = float(recipe.session.download(recipe.session.grad_norm))
                copies, nbytes = recipe.session.transfers()
                # host<->device copies of the step: its inputs in, the loss (and norm) out
                event["transfers"], event["transfer_bytes"] = copies - copies_before, nbytes - bytes_before
                run.run_dir.event(**event)
                if lead:
                    diverging.see(step, loss)
                progress.update(step, loss)
                if lead:
                    source.after_step(step, recipe, run.run_dir)
                if ranks is None:
                    stopping = stop.signum is not None
                else:
                    # every rank stops after the same step, whichever was signalled (a
                    # signal landing after this vote counts at the next step's)
                    stopping = ranks.any(stop.signum is not None)
                    if stopping and stop.signum is None:
                        stop.signum = signal.SIGTERM
                if step < args.steps and (stopping or (args.save_every and step % args.save_every == 0)):
                    run.save_checkpoint(step)
            stopped = stop.signum if stopping and len(run.losses) < args.steps else None
    finally:
        progress.close()
    return stopped, time.perf_counter() - started, event


def save_weights(run: _Run) -> Path:
    """The trained weights in the run directory (and merged.gguf with --merge), the plot drawn."""
    weights_path = run.run_dir.path / run.prepared.weights_name
    run.prepared.recipe.save(weights_path)
    if getattr(run.args, "merge", None):
        merge_lora(run.prepared.config["base"], weights_path, run.run_dir.path / "merged.gguf", run.args.merge)
    run.loss_plot.write()
    return weights_path


def report(run: _Run, first_step: int, elapsed: float, event: dict, weights_path: Path) -> None:
    """The JSON object (--json) on stdout, the summary on stderr."""
    args, losses = run.args, run.losses
    trained = args.steps - first_step + 1
    tok_per_s = run.prepared.source.tokens_per_step * trained / max(elapsed, 1e-9)
    if args.json:
        print(
            json.dumps(
                {
                    "format": LOG_FORMAT,
                    "run_id": run.run_dir.run_id,
                    "run_dir": str(run.run_dir.path),
                    "recipe": args.recipe,
                    "steps": args.steps,
                    "losses": losses,
                    "final_loss": losses[-1],
                    "tokens_per_second": tok_per_s,
                    "weights": str(weights_path),
                }
            )
        )
    if args.device != "cpu":
        print(
            f"toy-train: {event['transfers']} host<->{args.device} copies per step "
            f"({event['transfer_bytes']:,} bytes), the rest of the step on the device",
            file=sys.stderr,
        )
    peak = f", peak memory {peak_rss() / 2**20:,.0f} MB" if peak_rss() else ""
    print(f"toy-train: {trained} steps, {tok_per_s:,.0f} tokens/s{peak}, wrote {run.run_dir.path}", file=sys.stderr)


def _report_stop(signum, done: int, steps: int, run_dir) -> int:
    name = signal.Signals(signum).name
    if done == 0:
        print(f"toy-train: stopped by {name} before the first step; nothing to resume", file=sys.stderr)
    else:
        print(
            f"toy-train: stopped by {name} after step {done} of {steps}; checkpoint saved, "
            f"resume with: toy-train --resume {run_dir.path}",
            file=sys.stderr,
        )
    return EXIT_STOPPED[signum]
