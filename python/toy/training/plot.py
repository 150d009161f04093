"""Loss curves as small self-contained SVGs (no plotting dependency).

A run's `loss.svg` is drawn from its `events.jsonl`, the record of the run
(so a resumed run's plot covers the whole run): the training loss per step,
the held-out loss where the run reports one (`eval_loss`, or instruct's
`eval_perplexity` as ln(perplexity)), and the learning rate on a second axis
on the right. `toy-train plot` overlays several runs (toy.cli.plot).

The bytes depend on the events alone (and the run's name): the same events
draw the same file. Non-finite losses are left out of the lines and counted
in a note under the title.
"""

from __future__ import annotations

import itertools
import json
import math
import sys
from pathlib import Path
from xml.sax.saxutils import escape

import numpy as np

from ..core.errors import InputError, ToyError
from ..core.files import write_whole

# the first element after the root: what tells a plot toy wrote (toy-train plot replaces those)
MARK = "<desc>toy-train plot</desc>"

PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf")
LR_COLOUR = "#7f7f7f"

WIDTH, LEFT, RIGHT, TOP, PLOT_H = 720, 72, 72, 56, 300
PLOT_W = WIDTH - LEFT - RIGHT
Y_PAD = 8  # between the end ticks of a y axis and the frame
CHAR_W = 7.0  # a 12px sans-serif character, about: for the legend's layout


# ---- events.jsonl -------------------------------------------------------------


class RunEvents:
    """The figures a plot needs from a run's events.jsonl, as (step, value)
    lists in file order, finite values only: `loss` (training), `lr`,
    `eval_loss`; `bad_loss` the steps whose training loss is not finite,
    `steps` the first and last step of any loss. read() takes the lines written since the last read, so a
    running run redraws without reading its whole history again. A last line
    without its newline (being written, or cut short by a kill) waits for
    the next read. Damaged lines are skipped, or, strict, refused
    (InputError naming the line)."""

    def __init__(self, path, strict: bool = False):
        self.path, self.strict = Path(path), strict
        self._reset()

    def _reset(self) -> None:
        self.loss: list[tuple[int, float]] = []
        self.lr: list[tuple[int, float]] = []
        self.eval_loss: list[tuple[int, float]] = []
        self.bad_loss: list[int] = []
        self.steps: list[int] = []  # [first, last]: the x extent, non-finite losses too
        self._offset = self._lines = 0

    def read(self) -> RunEvents:
        try:
            with open(self.path, "rb") as f:
                size = f.seek(0, 2)
                if size < self._offset:  # rewritten (a resume cut it back): start over
                    self._reset()
                f.seek(self._offset)
                data = f.read()
        except FileNotFoundError:
            if self.strict:
                raise
            return self
        whole = data.rfind(b"\n") + 1
        for line in data[:whole].split(b"\n")[:-1]:
            self._lines += 1
            self._take(line)
        self._offset += whole
        return self

    def _take(self, line: bytes) -> None:
        if not line.strip():
            return
        try:
            event = json.loads(line)
        except (ValueError, RecursionError):
            return self._damaged("not JSON")
        if not isinstance(event, dict):
            return self._damaged("not a JSON object")
        figures = {}
        for key in ("loss", "lr", "eval_loss", "eval_perplexity"):
            if key in event:
                value = _number(event[key])
                if value is None:
                    return self._damaged(f"its {key} {str(event[key])[:40]!r} is not a number")
                figures[key] = value
        if not figures:
            return  # an event a plot does not draw
        step = event.get("step")
        if type(step) is not int or step < 0:
            return self._damaged(f"its step {str(step)[:40]!r} is not a whole number")
        if "lr" in figures and math.isfinite(figures["lr"]):
            self.lr.append((step, figures["lr"]))
        if "loss" in figures:
            self._extend(step)
            if math.isfinite(figures["loss"]):
                self.loss.append((step, figures["loss"]))
            else:
                self.bad_loss.append(step)
        ppl = figures.get("eval_perplexity")
        value = figures.get("eval_loss", math.log(ppl) if ppl is not None and ppl > 0 else math.nan)
        if "eval_loss" in figures or ppl is not None:
            self._extend(step)
            if math.isfinite(value):
                self.eval_loss.append((step, value))

    def _extend(self, step: int) -> None:
        self.steps = [min(self.steps[0], step), max(self.steps[1], step)] if self.steps else [step, step]

    def _damaged(self, why: str) -> None:
        if self.strict:
            raise InputError(
                f"{self.path} line {self._lines} is damaged ({why}); a run writes whole "
                "JSON lines: remove that line or plot another run"
            )


def _number(value) -> float | None:
    if type(value) not in (int, float):
        return None  # bool, str, null, ...
    try:
        return float(value)
    except OverflowError:  # an integer beyond float's range
        return None


# ---- axes ---------------------------------------------------------------------


class Axis:
    """A linear axis over [lo, hi] with round ticks (1, 2 or 5 times a power
    of ten) that it spans exactly; the labels are exact decimal strings."""

    def __init__(self, lo: float, hi: float, target: int = 5, integer: bool = False):
        if not (math.isfinite(lo) and math.isfinite(hi)) or hi < lo:
            lo, hi = 0.0, 1.0
        lo, hi = max(lo, -1e300), min(hi, 1e300)  # hi - lo stays a float
        if hi - lo <= 1e-12 * max(abs(lo), abs(hi), 1e-300):
            half = 1.0 if integer else (abs(lo) * 0.05 or 0.5)
            lo, hi = lo - half, hi + half
        raw = (hi - lo) / target
        exp = math.floor(math.log10(raw))
        mant = next((m for m in (1, 2, 5) if m * 10.0**exp >= raw * (1 - 1e-9)), None)
        if mant is None:
            mant, exp = 1, exp + 1
        if integer and exp < 0:
            mant, exp = 1, 0
        self.mant, self.exp = mant, exp
        step = mant * 10.0**exp
        first, last = math.floor(lo / step + 1e-9), math.ceil(hi / step - 1e-9)
        self.ks = list(range(first, max(last, first + 1) + 1))
        self.lo, self.hi = self.value(self.ks[0]), self.value(self.ks[-1])
        big = max(abs(self.ks[0]), abs(self.ks[-1])) * mant * 10.0**exp
        self.scientific = big >= 1e7 or big < 1e-2 or exp < -6

    def value(self, k: int) -> float:
        n = k * self.mant
        return float(n * 10**self.exp) if self.exp >= 0 else n / 10**-self.exp

    def label(self, k: int) -> str:
        n = k * self.mant
        if n == 0:
            return "0"
        sign, digits = ("-" if n < 0 else ""), str(abs(n))
        if self.scientific:
            power = self.exp + len(digits) - 1
            digits = digits.rstrip("0")
            return f"{sign}{digits[0]}{'.' + digits[1:] if len(digits) > 1 else ''}e{power}"
        if self.exp >= 0:
            return sign + digits + "0" * self.exp
        decimals = -self.exp
        digits = digits.rjust(decimals + 1, "0")
        return f"{sign}{digits[:-decimals]}.{digits[-decimals:]}"

    def ticks(self):
        return [(self.value(k), self.label(k)) for k in self.ks]

    def fraction(self, v: float) -> float:
        return (v - self.lo) / (self.hi - self.lo)


# ---- drawing ------------------------------------------------------------------


class Line:
    def __init__(self, kind, label, points, colour, dash=None, width=2.0, markers=False, right=False):
        self.kind, self.label, self.points, self.colour = kind, label, points, colour
        self.dash, self.width, self.markers, self.right = dash, width, markers, right


def _text(value: str) -> str:
    """value as XML character data: escaped, control characters and
    undecodable bytes of a file name shown as escapes."""
    value = "".join(c if c >= " " else f"\\x{ord(c):02x}" for c in str(value))
    return escape(value.encode("utf-8", "backslashreplace").decode("utf-8"))


def _thin(points, x_axis: Axis) -> list:
    """Dense lines cut to at most two points (the lowest and the highest, in
    their order) per pixel column: the same picture, a bounded file."""
    if len(points) <= 2 * PLOT_W:
        return points
    xy = np.fromiter(itertools.chain.from_iterable(points), np.float64, count=2 * len(points)).reshape(-1, 2)
    columns = np.floor((xy[:, 0] - x_axis.lo) / (x_axis.hi - x_axis.lo) * PLOT_W).astype(np.int64)
    order = np.lexsort((xy[:, 1], columns))  # by column, then by value (stable: ties keep order)
    ranked = columns[order]
    starts = np.flatnonzero(np.r_[True, ranked[1:] != ranked[:-1]])
    ends = np.r_[starts[1:], len(ranked)] - 1
    keep = np.unique(np.r_[order[starts], order[ends]])
    return [points[i] for i in keep.tolist()]


def _legend(entries) -> tuple[list[list[tuple]], int]:
    """Legend entries flowed into rows as wide as the plot."""
    rows, row, used = [], [], 0.0
    for entry in entries:
        width = 30 + CHAR_W * len(entry[0]) + 18
        if row and used + width > PLOT_W:
            rows.append(row)
            row, used = [], 0.0
        row.append((entry, used))
        used += width
    if row:
        rows.append(row)
    return rows, len(rows)


def _stroke(colour, width, dash) -> str:
    extra = f' stroke-dasharray="{dash}"' if dash else ""
    return f'fill="none" stroke="{colour}" stroke-width="{width:g}"{extra}'


def _figure(
    title: str,
    notes: list[str],
    lines: list[Line],
    x_extent,
    y_label: str,
    right_label: str | None = None,
    empty: str | None = None,
    legend_extra=(),
) -> str:
    left_lines = [ln for ln in lines if not ln.right]
    right_lines = [ln for ln in lines if ln.right]
    xs = list(x_extent) + [x for ln in lines for x, _ in ln.points[:1] + ln.points[-1:]]
    x_axis = Axis(min(xs), max(xs), target=6, integer=True) if xs else Axis(0, 1, integer=True)
    ys = [y for ln in left_lines for _, y in ln.points]
    y_axis = Axis(min(ys), max(ys)) if ys else Axis(0.0, 1.0)
    r_axis = None
    if right_lines:
        rs = [y for ln in right_lines for _, y in ln.points]
        r_axis = Axis(min(0.0, min(rs)), max(rs)) if rs else Axis(0.0, 1.0)

    bottom = TOP + PLOT_H
    legend = [(ln.label, ln.colour, ln.dash, ln.width, ln.markers) for ln in lines if ln.label]
    legend += list(legend_extra)
    rows, n_rows = _legend(legend)
    height = bottom + 52 + 20 * n_rows + 8

    def px(x):
        return LEFT + PLOT_W * x_axis.fraction(x)

    def py(axis, y):  # a margin inside the frame: a line at an end tick stays clear of it
        return bottom - Y_PAD - (PLOT_H - 2 * Y_PAD) * axis.fraction(y)

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
        f'viewBox="0 0 {WIDTH} {height}" font-family="sans-serif" font-size="12">',
        MARK,
        f"<title>{_text(title)}</title>",
        f'<rect width="{WIDTH}" height="{height}" fill="white"/>',
        f'<text x="{WIDTH / 2:g}" y="22" text-anchor="middle" font-size="14">{_text(title)}</text>',
    ]
    for i, note in enumerate(notes):
        out.append(
            f'<text x="{WIDTH / 2:g}" y="{40 + 14 * i}" text-anchor="middle" font-size="11" '
            f'fill="#555">{_text(note)}</text>'
        )
    # grid and ticks
    out.append('<g stroke="#e6e6e6" stroke-width="1">')
    for v, _ in y_axis.ticks():
        y = py(y_axis, v)
        out.append(f'<line x1="{LEFT}" y1="{y:.1f}" x2="{LEFT + PLOT_W}" y2="{y:.1f}"/>')
    for v, _ in x_axis.ticks():
        out.append(f'<line x1="{px(v):.1f}" y1="{TOP}" x2="{px(v):.1f}" y2="{bottom}"/>')
    out.append("</g>")
    out.append(f'<g class="x-axis" stroke="black"><line x1="{LEFT}" y1="{bottom}" x2="{LEFT + PLOT_W}" y2="{bottom}"/>')
    out += [f'<line x1="{px(v):.1f}" y1="{bottom}" x2="{px(v):.1f}" y2="{bottom + 5}"/>' for v, _ in x_axis.ticks()]
    out.append("</g>")
    out.append('<g class="x-ticks" text-anchor="middle">')
    out += [f'<text x="{px(v):.1f}" y="{bottom + 18}">{label}</text>' for v, label in x_axis.ticks()]
    out.append("</g>")
    out.append(f'<text x="{LEFT + PLOT_W / 2:g}" y="{bottom + 36}" text-anchor="middle">step</text>')
    out.append(f'<g class="y-axis" stroke="black"><line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{bottom}"/>')
    out += [
        f'<line x1="{LEFT - 5}" y1="{py(y_axis, v):.1f}" x2="{LEFT}" y2="{py(y_axis, v):.1f}"/>'
        for v, _ in y_axis.ticks()
    ]
    out.append("</g>")
    out.append('<g class="y-ticks" text-anchor="end">')
    out += [f'<text x="{LEFT - 8}" y="{py(y_axis, v) + 4:.1f}">{label}</text>' for v, label in y_axis.ticks()]
    out.append("</g>")
    out.append(
        f'<text transform="translate(18 {TOP + PLOT_H / 2:g}) rotate(-90)" text-anchor="middle">{_text(y_label)}</text>'
    )
    if r_axis is not None:
        colour = right_lines[0].colour
        right = LEFT + PLOT_W
        out.append(f'<g class="lr-axis" stroke="{colour}"><line x1="{right}" y1="{TOP}" x2="{right}" y2="{bottom}"/>')
        out += [
            f'<line x1="{right}" y1="{py(r_axis, v):.1f}" x2="{right + 5}" y2="{py(r_axis, v):.1f}"/>'
            for v, _ in r_axis.ticks()
        ]
        out.append("</g>")
        out.append(f'<g class="lr-ticks" text-anchor="start" fill="{colour}">')
        out += [f'<text x="{right + 8}" y="{py(r_axis, v) + 4:.1f}">{label}</text>' for v, label in r_axis.ticks()]
        out.append("</g>")
        out.append(
            f'<text transform="translate({WIDTH - 12} {TOP + PLOT_H / 2:g}) rotate(90)" '
            f'text-anchor="middle" fill="{colour}">{_text(right_label or "")}</text>'
        )
    # the lines: the right axis's first, under the losses
    for ln in right_lines + left_lines:
        axis = r_axis if ln.right else y_axis
        points = _thin(ln.points, x_axis)
        coords = [(px(x), py(axis, y)) for x, y in points]
        name = f' class="{ln.kind}"'
        if len(coords) >= 2:
            joined = " ".join(f"{x:.1f},{y:.1f}" for x, y in coords)
            out.append(f'<polyline{name} {_stroke(ln.colour, ln.width, ln.dash)} points="{joined}"/>')
        if (ln.markers and len(coords) <= 200) or len(coords) == 1:
            out += [f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{ln.colour}"/>' for x, y in coords]
    if empty:
        out.append(
            f'<text x="{LEFT + PLOT_W / 2:g}" y="{TOP + PLOT_H / 2:g}" text-anchor="middle" '
            f'font-size="14" fill="#555">{_text(empty)}</text>'
        )
    # the legend, under the axis
    out.append('<g class="legend">')
    for r, row in enumerate(rows):
        y = bottom + 58 + 20 * r
        for (label, colour, dash, width, markers), offset in row:
            x = LEFT + offset
            out.append(
                f'<line x1="{x:.1f}" y1="{y - 4}" x2="{x + 24:.1f}" y2="{y - 4}" {_stroke(colour, width, dash)}/>'
            )
            if markers:
                out.append(f'<circle cx="{x + 12:.1f}" cy="{y - 4}" r="3" fill="{colour}"/>')
            out.append(f'<text x="{x + 30:.1f}" y="{y}">{_text(label)}</text>')
    out.append("</g>")
    out += ["</svg>", ""]
    return "\n".join(out)


def _non_finite_note(events: RunEvents, name: str = "") -> list[str]:
    bad = events.bad_loss
    if not bad or not events.loss:
        return []
    where = (
        f"step {bad[0]}"
        if len(bad) == 1
        else "steps " + ", ".join(map(str, bad))
        if len(bad) <= 3
        else f"steps {bad[0]} to {bad[-1]}"
    )
    return [f"{name}{len(bad)} non-finite training loss{'es' if len(bad) > 1 else ''} ({where}) not drawn"]


def _empty_note(runs: list[RunEvents]) -> str | None:
    if any(ev.loss for ev in runs):
        return None
    n = sum(len(ev.bad_loss) for ev in runs)
    if n == 0:
        return "no training loss recorded yet"
    return f"no finite training loss to draw: all {n} are nan or infinite"


def run_svg(events: RunEvents, title: str) -> str:
    """One run: training loss, eval loss where it has one, learning rate on the right."""
    lines = [Line("train", "training loss", events.loss, PALETTE[0])]
    evals = events.eval_loss
    if evals:
        lines.append(Line("eval", "eval loss (held out)", evals, PALETTE[1], dash="6,4", markers=True))
    lrs = events.lr
    if lrs:
        lines.append(Line("lr", "learning rate (right axis)", lrs, LR_COLOUR, dash="2,3", width=1.5, right=True))
    return _figure(title, _non_finite_note(events), lines, events.steps, "loss", "learning rate", _empty_note([events]))


def overlay_svg(runs: list[tuple[str, RunEvents]]) -> str:
    """Several runs on one pair of axes: a colour each, training loss solid,
    eval loss dashed in the same colour."""
    lines, notes, extent = [], [], []
    any_eval = False
    for i, (name, events) in enumerate(runs):
        colour = PALETTE[i % len(PALETTE)]
        lines.append(Line("train", name, events.loss, colour))
        evals = events.eval_loss
        if evals:
            any_eval = True
            lines.append(Line("eval", None, evals, colour, dash="6,4", markers=True))
        notes += _non_finite_note(events, f"{name}: ")
        extent += events.steps
    title = "training loss" + (" (solid) and eval loss (dashed)" if any_eval else "")
    extra = [("eval loss", "#333333", "6,4", 2.0, True)] if any_eval else []
    if len(notes) > 3:
        notes = notes[:2] + [f"... and {len(notes) - 2} more runs with non-finite losses"]
    return _figure(title, notes, lines, extent, "loss", empty=_empty_note([ev for _, ev in runs]), legend_extra=extra)


# ---- a run's loss.svg -----------------------------------------------------------


def run_title(run_dir: Path) -> str:
    """'<recipe>: <run directory's name>', the recipe from config.json where it reads."""
    name = Path(run_dir).resolve().name
    try:
        recipe = json.loads((Path(run_dir) / "config.json").read_bytes()).get("recipe")
    except (OSError, ValueError, RecursionError, AttributeError):
        recipe = None
    return f"{recipe}: {name}" if isinstance(recipe, str) else name


class LossPlot:
    """A run directory's loss.svg, drawn from its events.jsonl on each
    write() (which reads only the lines added since the last one) and
    replaced whole (temp file + rename)."""

    def __init__(self, run_dir):
        self.run_dir = Path(run_dir)
        self.events = RunEvents(self.run_dir / "events.jsonl")
        self.title = None
        self.warned = False

    def write(self) -> Path:
        if self.title is None:
            self.title = run_title(self.run_dir)
        svg = run_svg(self.events.read(), self.title)
        path = self.run_dir / "loss.svg"
        write_whole(path, svg.encode("utf-8"))
        return path

    def update(self) -> None:
        """write(), for the middle of a run: a failure is one warning on
        stderr (the first time) and the run goes on; loss.svg is drawn again
        at the next checkpoint and at the end."""
        try:
            self.write()
        except (OSError, ToyError) as err:
            if not self.warned:
                self.warned = True
                why = err.strerror if isinstance(err, OSError) and err.strerror else err
                print(
                    f"toy-train: could not write {self.run_dir / 'loss.svg'}: {why}; the run goes on", file=sys.stderr
                )


def write_loss_svg(run_dir) -> Path:
    """Draw run_dir/loss.svg from run_dir/events.jsonl (damaged lines skipped); returns its path."""
    return LossPlot(run_dir).write()
