"""Instruct and preference data in the formats data sets ship in: JSON Lines,
one JSON array, Parquet and Arrow, with the file's own column names mapped by
--columns; a bad file is one line naming the file and the row."""

import json

import pytest

from cli_helpers import toy_train
from toy.core.errors import InputError
from toy.datasets import samples
from toy.datasets.instruct import INSTRUCT_NAMES, read_jsonl
from toy.datasets.preference import read_pairs
from toy.datasets.records import parse_columns

pa = pytest.importorskip("pyarrow")
import pyarrow.parquet as pq  # noqa: E402

FACTS = samples.path("facts.jsonl")
PAIRS = samples.path("preferences.jsonl")


def records(path):
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def write_as(rows: list[dict], path, fmt: str):
    """rows written as `fmt` at path: jsonl, json (one array), parquet, arrow (an IPC file) or stream."""
    if fmt == "jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    elif fmt == "json":
        path.write_text(json.dumps(rows, indent=1))
    else:
        table = pa.Table.from_pylist(rows)
        if fmt == "parquet":
            pq.write_table(table, path, row_group_size=7)
        else:
            with pa.OSFile(str(path), "wb") as sink:
                writer = (pa.ipc.new_file if fmt == "arrow" else pa.ipc.new_stream)(sink, table.schema)
                writer.write_table(table, max_chunksize=5)
                writer.close()
    return path


SUFFIX = {"jsonl": ".jsonl", "json": ".json", "parquet": ".parquet", "arrow": ".arrow", "stream": ".arrow"}


@pytest.mark.parametrize("fmt", ["json", "parquet", "arrow", "stream"])
def test_every_format_gives_the_same_conversations_and_pairs(tmp_path, fmt):
    facts = write_as(records(FACTS), tmp_path / f"facts{SUFFIX[fmt]}", fmt)
    assert read_jsonl(facts) == read_jsonl(FACTS)
    pairs = write_as(records(PAIRS), tmp_path / f"pairs{SUFFIX[fmt]}", fmt)
    assert [(c, r) for c, r, _ in read_pairs(pairs)] == [(c, r) for c, r, _ in read_pairs(PAIRS)]


def test_messages_as_a_list_column_of_structs(tmp_path):
    turns = [[{"role": "user", "content": f"q{i}"}, {"role": "assistant", "content": f"a{i}"}] for i in range(3)]
    rows = [{"messages": messages} for messages in turns]
    path = write_as(rows, tmp_path / "chat.parquet", "parquet")
    assert [list(c) for c in read_jsonl(path)] == [r["messages"] for r in rows]


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_columns_name_a_files_own_columns(tmp_path, fmt):
    renamed = [{"question": r["prompt"], "answer": r["response"], "id": n} for n, r in enumerate(records(FACTS))]
    path = write_as(renamed, tmp_path / f"qa{SUFFIX[fmt]}", fmt)
    columns = parse_columns("prompt=question, response=answer", INSTRUCT_NAMES)
    assert read_jsonl(path, columns) == read_jsonl(FACTS)


def test_an_instruct_run_on_parquet_logs_what_the_same_run_on_jsonl_logs(smollm2, tmp_path):
    renamed = [{"question": r["prompt"], "answer": r["response"]} for r in records(FACTS)]
    parquet = write_as(renamed, tmp_path / "qa.parquet", "parquet")
    run = ("instruct", "--model", str(smollm2), "--steps", "2", "--seq", "64", "--threads", "2", "--eval-split", "0")
    from_jsonl = toy_train(*run, "--data", str(FACTS), "--out", str(tmp_path / "a"))
    from_parquet = toy_train(
        *run, "--data", str(parquet), "--columns", "prompt=question,response=answer", "--out", str(tmp_path / "b")
    )
    assert from_jsonl.returncode == 0 and from_parquet.returncode == 0, from_parquet.stderr
    assert from_parquet.stdout == from_jsonl.stdout


def test_bad_files_and_columns_are_one_line_naming_file_and_row(tmp_path):
    good = write_as(records(FACTS), tmp_path / "facts.parquet", "parquet")
    corrupt = tmp_path / "corrupt.parquet"
    corrupt.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    arrow = write_as(records(FACTS), tmp_path / "facts.arrow", "arrow")
    broken_arrow = tmp_path / "broken.arrow"
    broken_arrow.write_bytes(arrow.read_bytes()[:300])
    fifth_empty = [{"prompt": "a", "response": "b"}] * 4 + [{"prompt": "a", "response": None}]
    wrong_type = write_as(fifth_empty, tmp_path / "t.parquet", "parquet")
    not_array = tmp_path / "object.json"
    not_array.write_text('{"prompt": "a", "response": "b"}')
    array_bad = tmp_path / "bad.json"
    array_bad.write_text('[{"prompt": "a", "response": "b"}, {"prompt": "a"')
    cases = [
        (("--data", str(corrupt)), f"{corrupt}: not a readable Parquet file"),
        (("--data", str(broken_arrow)), f"{broken_arrow}: not a readable Arrow file"),
        (("--data", str(good), "--columns", "prompt=question"), f"{good}: no column 'question' (named by --columns)"),
        (("--data", str(FACTS), "--columns", "prompt=question"), f"{FACTS}:1: no 'question' (named by --columns)"),
        (("--data", str(wrong_type)), f"{wrong_type}: row 5: expected 'prompt' and 'response'"),
        (("--data", str(array_bad)), f"{array_bad}: not valid JSON"),
        (("--data", str(good), "--columns", "prompt"), "--columns 'prompt': each item is NAME=COLUMN"),
        (("--data", str(good), "--columns", "question=prompt"), "--columns: 'question' is not a name"),
    ]
    assert len(read_jsonl(not_array)) == 1  # one JSON object on one line: JSON Lines of one record
    for args, message in cases:
        result = toy_train(
            "instruct", "--steps", "1", "--seq", "64", "--eval-split", "0", "--out", str(tmp_path / "run"), *args
        )
        lines = result.stderr.strip().splitlines()
        assert result.returncode == 2 and len(lines) == 1 and lines[0].startswith(f"toy-train: error: {message}"), (
            args,
            result.stderr,
        )


def test_a_preference_file_with_other_column_names(tmp_path):
    renamed = [{"question": r["prompt"], "good": r["chosen"], "bad": r["rejected"]} for r in records(PAIRS)]
    path = write_as(renamed, tmp_path / "pairs.parquet", "parquet")
    with pytest.raises(InputError, match=r"row 1: no 'chosen' or 'rejected'.*this one has 'question', 'good', 'bad'"):
        read_pairs(path)
    columns = parse_columns("prompt=question,chosen=good,rejected=bad", ("prompt", "chosen", "rejected"))
    assert [(c, r) for c, r, _ in read_pairs(path, columns)] == [(c, r) for c, r, _ in read_pairs(PAIRS)]
