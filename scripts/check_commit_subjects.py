"""Every commit's subject says what changed in at most 72 characters, from
issue 66 on (the figures and the reasons go in the body): the subjects of
the commits after SINCE, on the current branch, are checked.

    python3 scripts/check_commit_subjects.py [--since COMMIT]

Exits 1 naming each subject that is too long or empty. Outside a git
checkout it checks nothing; in a shallow clone that lacks SINCE, HEAD's
subject alone; it says which."""

from __future__ import annotations

import argparse
import subprocess
import sys

# main's tip before the rule: the commits before it wrote whole paragraphs as subjects
SINCE = "4e8301b1120729ce6899f79b6b4c0725be4f99e9"
MAX_SUBJECT = 72


def git(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], capture_output=True, text=True)


def subjects(since: str) -> tuple[list[tuple[str, str]], str]:
    """(commit, subject) of each commit after since, and a note on what was read."""
    known = git("cat-file", "-e", f"{since}^{{commit}}").returncode == 0
    span = [f"{since}..HEAD"] if known else ["-1", "HEAD"]
    log = git("log", "--format=%h%x00%s", *span)
    if log.returncode != 0:
        return [], "not a git checkout: nothing to check"
    pairs = [tuple(line.split("\0", 1)) for line in log.stdout.splitlines() if line]
    note = f"{len(pairs)} commits after {since[:12]}" if known else f"{since[:12]} not in this clone: HEAD alone"
    return pairs, note  # type: ignore[return-value]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--since", default=SINCE, help="check the commits after this one")
    args = parser.parse_args(argv)
    pairs, note = subjects(args.since)
    bad = [(commit, subject) for commit, subject in pairs if not subject.strip() or len(subject) > MAX_SUBJECT]
    for commit, subject in bad:
        print(f"{commit}: subject of {len(subject)} characters (at most {MAX_SUBJECT}): {subject[:80]}...")
    print(f"commit subjects: {note}, {len(bad)} too long or empty", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
