"""Plots people read: a run's loss.svg (ticks, eval loss, learning rate,
written at checkpoints and on a stop) and `toy-train plot` overlaying runs."""

import json
import math
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from toy.cli import plot as plot_cli
from toy.training.plot import RunEvents, write_loss_svg

SVG = "{http://www.w3.org/2000/svg}"
# a few milliseconds a step (one thread: two spin-wait on each other on a loaded machine)
SMALL = ("--threads", "1", "--d-model", "32", "--layers", "1", "--heads", "4")


def write_events(run: Path, events) -> Path:
    run.mkdir(parents=True, exist_ok=True)
    (run / "events.jsonl").write_text("".join(json.dumps(e, sort_keys=True) + "\n" for e in events))
    return run


def step_events(n, loss=lambda s: 5.5 - 0.06 * s, lr=lambda s: 1e-3 * min(1.0, s / 4)):
    return [{"step": s, "loss": loss(s), "lr": lr(s), "tokens": 64, "seconds": 0.01} for s in range(1, n + 1)]


def svg(path: Path) -> ET.Element:
    return ET.fromstring(Path(path).read_bytes())  # well-formed XML, or this raises


def labels(root, group: str) -> list[str]:
    return [t.text for t in root.iter(f"{SVG}g") if t.get("class") == group for t in t.iter(f"{SVG}text")]


def polylines(root, kind: str) -> list[list[tuple[float, float]]]:
    return [
        [tuple(map(float, p.split(","))) for p in line.get("points").split()]
        for line in root.iter(f"{SVG}polyline")
        if line.get("class") == kind
    ]


def texts(root) -> list[str]:
    return [t.text for t in root.iter(f"{SVG}text")]


# ---- a run's loss.svg -----------------------------------------------------------


def test_loss_svg_has_round_ticks_on_steps_loss_and_learning_rate(tmp_path):
    run = write_events(tmp_path / "run", step_events(40))  # loss 5.44 .. 3.10, lr up to 1e-3
    root = svg(write_loss_svg(run))
    assert labels(root, "x-ticks") == ["0", "10", "20", "30", "40"]
    assert labels(root, "y-ticks") == ["3.0", "3.5", "4.0", "4.5", "5.0", "5.5"]
    assert labels(root, "lr-ticks") == ["0", "2e-4", "4e-4", "6e-4", "8e-4", "1e-3"]
    assert {"step", "loss", "learning rate", "training loss", "learning rate (right axis)"} <= set(texts(root))
    [train] = polylines(root, "train")
    assert len(train) == 40 and train[0][1] < train[-1][1]  # falling loss: y grows downwards
    assert len(polylines(root, "lr")) == 1 and not polylines(root, "eval")


def test_the_same_events_draw_the_same_bytes(tmp_path):
    run = write_events(tmp_path / "run", step_events(30))
    first = write_loss_svg(run).read_bytes()
    assert write_loss_svg(run).read_bytes() == first
    assert not (run / "loss.svg.tmp").exists()


def test_instruct_eval_perplexity_is_drawn_as_eval_loss(tmp_path):
    events = [{"epoch": 0, "step": 0, "train_perplexity": 30.0, "eval_perplexity": math.exp(3.4)}]
    for s in range(1, 21):
        events += step_events(s)[-1:]
        if s % 10 == 0:
            events.append(
                {"epoch": s // 10, "step": s, "train_perplexity": 9.0, "eval_perplexity": math.exp(3.4 - 0.05 * s)}
            )
    run = write_events(tmp_path / "run", events)
    parsed = RunEvents(run / "events.jsonl", strict=True).read()
    assert [(s, round(v, 9)) for s, v in parsed.eval_loss] == [(0, 3.4), (10, 2.9), (20, 2.4)]
    root = svg(write_loss_svg(run))
    [evals] = polylines(root, "eval")
    assert len(evals) == 3
    assert "eval loss (held out)" in texts(root)
    assert labels(root, "x-ticks")[0] == "0"  # the base model's report at step 0


def test_vit_accuracy_is_not_drawn_as_a_loss(tmp_path):
    events = step_events(10) + [{"epoch": 1, "step": 10, "eval_accuracy": 0.9, "eval_correct": 9, "eval_images": 10}]
    root = svg(write_loss_svg(write_events(tmp_path / "run", events)))
    assert not polylines(root, "eval") and "eval loss (held out)" not in texts(root)


def test_non_finite_losses_are_left_out_and_counted(tmp_path):
    run = write_events(tmp_path / "run", step_events(10, loss=lambda s: math.nan if s in (4, 5) else 3.0 - s / 10))
    root = svg(write_loss_svg(run))
    [train] = polylines(root, "train")
    assert len(train) == 8
    assert "2 non-finite training losses (steps 4, 5) not drawn" in texts(root)


def test_a_run_whose_losses_are_all_nan_gives_a_valid_svg_saying_so(tmp_path):
    run = write_events(tmp_path / "run", step_events(5, loss=lambda s: math.nan))
    root = svg(write_loss_svg(run))
    assert not polylines(root, "train")
    assert "no finite training loss to draw: all 5 are nan or infinite" in texts(root)


# ---- loss.svg during a run --------------------------------------------------------


def start(*args, cwd):
    return subprocess.Popen(
        [sys.executable, "-m", "toy.cli.train", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=cwd,
    )


def test_a_run_stopped_by_sigint_leaves_its_loss_svg_and_a_resume_redraws_it_whole(tmp_path):
    # --save-every 0: no checkpoint but the stop's, so the plot comes from the stop path
    run = start(*SMALL, "--steps", "200", "--save-every", "0", "--out", "run", cwd=tmp_path)
    printed = []
    for line in run.stdout:
        printed.append(line)
        if len(printed) == 2:
            run.send_signal(signal.SIGINT)
    _, err = run.communicate(timeout=120)
    assert run.returncode == 130, err
    [train] = polylines(svg(tmp_path / "run/loss.svg"), "train")
    assert len(train) == len(printed)

    rest = subprocess.run(
        [sys.executable, "-m", "toy.cli.train", "--resume", "run"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert rest.returncode == 0, rest.stderr
    [train] = polylines(svg(tmp_path / "run/loss.svg"), "train")
    assert len(train) == 200


def test_loss_svg_is_redrawn_at_each_checkpoint(tmp_path):
    run = start(*SMALL, "--steps", "100000", "--save-every", "3", "--out", "run", cwd=tmp_path)
    plot = tmp_path / "run/loss.svg"
    try:
        deadline = time.monotonic() + 60
        while not (plot.exists() and len(polylines(svg(plot), "train")[0]) >= 6):
            assert time.monotonic() < deadline and run.poll() is None, "no loss.svg before the end"
            time.sleep(0.02)
    finally:
        run.kill()
        run.communicate()
    assert not (tmp_path / "run/model.gguf").exists()  # drawn in the middle of the run
    [train] = polylines(svg(plot), "train")
    assert len(train) % 3 == 0  # as of a checkpoint's step


# ---- toy-train plot ---------------------------------------------------------------


def test_plot_overlays_two_runs_with_their_names(tmp_path, monkeypatch, capsys):
    write_events(tmp_path / "alpha", step_events(20))
    write_events(tmp_path / "beta", step_events(30, loss=lambda s: 4.0 - 0.03 * s))
    monkeypatch.chdir(tmp_path)
    assert plot_cli.main(["alpha", "beta"]) == 0
    assert "wrote plot.svg (2 runs)" in capsys.readouterr().err
    root = svg(tmp_path / "plot.svg")
    lines = polylines(root, "train")
    assert sorted(map(len, lines)) == [20, 30]
    assert {"alpha", "beta"} <= set(labels(root, "legend"))
    colours = {line.get("stroke") for line in root.iter(f"{SVG}polyline")}
    assert len(colours) == 2
    assert labels(root, "x-ticks")[-1] == "30"


def test_plot_draws_eval_loss_dashed_in_the_runs_colour(tmp_path):
    events = step_events(10) + [{"epoch": 1, "step": 10, "train_perplexity": 9.0, "eval_perplexity": 12.0}]
    write_events(tmp_path / "inst", events)
    write_events(tmp_path / "plain", step_events(10))
    assert plot_cli.main([str(tmp_path / "inst"), str(tmp_path / "plain"), "-o", str(tmp_path / "o.svg")]) == 0
    root = svg(tmp_path / "o.svg")
    assert len(polylines(root, "train")) == 2
    [marker] = [c for c in root.iter(f"{SVG}circle") if c.get("fill") == "#1f77b4"]  # one eval point
    assert "eval loss" in labels(root, "legend")


def test_plot_replaces_its_own_output_but_not_another_file(tmp_path, monkeypatch, capsys):
    write_events(tmp_path / "a", step_events(5))
    monkeypatch.chdir(tmp_path)
    assert plot_cli.main(["a"]) == 0
    assert plot_cli.main(["a"]) == 0  # its own plot: replaced
    (tmp_path / "notes.svg").write_text("mine")
    capsys.readouterr()
    assert plot_cli.main(["a", "-o", "notes.svg"]) == 2
    assert "--overwrite" in capsys.readouterr().err
    assert (tmp_path / "notes.svg").read_text() == "mine"
    assert plot_cli.main(["a", "-o", "notes.svg", "--overwrite"]) == 0
    assert (tmp_path / "notes.svg").read_text().startswith("<svg")


def test_plot_tolerates_a_last_line_being_written(tmp_path):
    run = write_events(tmp_path / "a", step_events(5))
    with open(run / "events.jsonl", "a") as f:
        f.write('{"step": 6, "lo')
    assert plot_cli.main([str(run), "-o", str(tmp_path / "o.svg")]) == 0
    assert len(polylines(svg(tmp_path / "o.svg"), "train")[0]) == 5


def _damaged(tmp_path):
    run = write_events(tmp_path / "d", step_events(3))
    text = (run / "events.jsonl").read_text().splitlines(keepends=True)
    (run / "events.jsonl").write_text(text[0] + '{"step": 2, "loss": "high"}\n' + text[2])
    return "d"


@pytest.mark.parametrize(
    "setup, phrase",
    [
        (lambda tmp: "nowhere", "RUN nowhere does not exist"),
        (lambda tmp: (tmp / "file.txt").write_text("x") and "file.txt", "is a file, not a run directory"),
        (lambda tmp: (tmp / "empty").mkdir() or "empty", "empty is not a toy-train run directory"),
        (_damaged, "events.jsonl line 2 is damaged"),
    ],
    ids=["missing", "a-file", "no-events", "damaged-line"],
)
def test_plot_refuses_a_bad_run_in_one_line(tmp_path, monkeypatch, capsys, setup, phrase):
    monkeypatch.chdir(tmp_path)
    run = setup(tmp_path)
    assert plot_cli.main([run, "-o", "o.svg"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("toy-train plot: error: ") and phrase in err, err
    assert not (tmp_path / "o.svg").exists()


def test_plot_refuses_an_unwritable_output_in_one_line_from_the_command_line(tmp_path):
    write_events(tmp_path / "a", step_events(3))
    result = subprocess.run(
        [sys.executable, "-m", "toy.cli.plot", "a", "-o", "no/such/dir/o.svg"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
    )
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "cannot write -o no/such/dir/o.svg" in result.stderr
