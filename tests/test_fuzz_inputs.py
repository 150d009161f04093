"""Every kind of input toy reads, fuzzed for a bounded number of seeded
cases (tests/fuzz/harness.py runs them in a watched child process): the
command line's own options, instruct and preference JSONL, chat templates, LoRA adapters,
checkpoints and image folders. Each case must end as a user may see it --
success, or exit 2 with one line (a one-line ToyError from the Python API)
-- never a traceback, another exit status, a crash or a hang.

The counts keep the whole file near a minute on a 2-core machine (CI's time
is shared with the rest of the suite); more cases, or another seed, from tests/:

    python -m fuzz.harness fuzz.fuzz_jsonl --cases 10000 --seed 7
"""

import pytest

from fuzz import harness

# module, cases, harness options
FUZZERS = [
    ("fuzz.fuzz_cli", 40, {"case_seconds": 20}),
    ("fuzz.fuzz_jsonl", 800, {}),
    ("fuzz.fuzz_pairs", 300, {}),
    ("fuzz.fuzz_template", 80, {}),
    ("fuzz.fuzz_adapter", 1500, {}),
    ("fuzz.fuzz_images", 400, {}),
    ("fuzz.fuzz_checkpoint", 400, {}),
]


@pytest.mark.slow
@pytest.mark.parametrize("module,cases,options", FUZZERS, ids=[m.split(".")[-1] for m, _, _ in FUZZERS])
def test_every_fuzzed_input_ends_in_success_or_one_line(module, cases, options):
    report = harness.run(module, cases, seed=0, timeout=900, **options)
    print(report.summary())
    assert report.cases == cases
    assert not report.failures, report.summary() + "\n" + report.details()
    # the cases reach both ends: inputs that work, and inputs refused
    assert report.succeeded > 0 and report.refused > 0, report.summary()
