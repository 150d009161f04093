"""Every recipe on a device next to the CPU, in one sitting: the losses'
largest relative difference over the steps, tokens/s on each side, and the
host<->device copies per step.

    python benchmarks/bench_devices.py [--device vulkan] [--steps 5] [--recipes a,b]

The recipes and their sizes are tests/test_devices.py's (the commands whose
logs are gated there). On Mesa's lavapipe the device's tokens/s says only how
long a run takes there (its shaders run on the CPU): it is not a GPU's speed.
Take figures on an idle machine. The table ends with the rows in the markdown of
docs/gpus.md's table.
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
from test_devices import RECIPES  # noqa: E402


def cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor()


def train(recipe: str, device: str, steps: int, out: Path) -> tuple[list[float], float, int]:
    """(losses, tokens/s, copies per step) of one run."""
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "toy.cli.train",
            *RECIPES[recipe],
            "--steps",
            str(steps),
            "--threads",
            "2",
            "--device",
            device,
            "--json",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        raise SystemExit(f"{recipe} on {device}: {result.stderr.strip().splitlines()[-1]}")
    summary = json.loads(result.stdout)
    events = [json.loads(line) for line in (out / "events.jsonl").read_text().splitlines()]
    copies = [e["transfers"] for e in events if "transfers" in e]
    return summary["losses"], summary["tokens_per_second"], copies[-1]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default="vulkan")
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--recipes", default=",".join(RECIPES))
    args = p.parse_args()

    from toy.native.library import backend_variant

    print(f"CPU: {cpu_model()}; device {args.device}: {backend_variant(args.device)}; {args.steps} steps, 2 threads")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for recipe in args.recipes.split(","):
            cpu_losses, cpu_tps, _ = train(recipe, "cpu", args.steps, Path(tmp) / f"{recipe}-cpu")
            dev_losses, dev_tps, copies = train(recipe, args.device, args.steps, Path(tmp) / f"{recipe}-dev")
            worst = max(abs(d - c) / abs(c) for d, c in zip(dev_losses, cpu_losses))
            shown = " ".join(str(Path(a).relative_to(REPO)) if a.startswith(str(REPO)) else a for a in RECIPES[recipe])
            rows.append((recipe, shown or "(default)", cpu_losses[-1], dev_losses[-1], worst, cpu_tps, dev_tps, copies))
            print(
                f"{recipe:18s} step {args.steps}: cpu {cpu_losses[-1]:.6f} {args.device} {dev_losses[-1]:.6f}"
                f"  max rel diff {worst:.1e}  tokens/s cpu {cpu_tps:,.0f} {args.device} {dev_tps:,.1f}"
                f"  copies/step {copies}",
                flush=True,
            )
    print()
    print(
        f"| recipe | options | CPU loss at step {args.steps} | {args.device} | largest relative difference, "
        f"steps 1-{args.steps} | CPU tokens/s | {args.device} tokens/s | copies per step |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for recipe, opts, c, d, worst, ctps, dtps, copies in rows:
        print(f"| {recipe} | `{opts}` | {c:.6f} | {d:.6f} | {worst:.1e} | {ctps:,.0f} | {dtps:,.1f} | {copies} |")


if __name__ == "__main__":
    main()
