"""Data files as records, in the formats data sets ship in: JSON Lines, one
JSON array (a .json file starting with "["), Parquet, and Arrow (what the Hub's `datasets` write and
download; both need pyarrow, toy's `data` extra).

Each record comes with where it is ("file:line", "file: item N", "file:
row N"), so that a record of the wrong shape is refused in one line naming
it, whatever the format. --columns renames a file's columns to the names
toy reads ("prompt=question,response=answer"), as TRL's
dataset_text_field names a data set's text column.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..core.errors import InputError, one_line
from ..core.machine import check_fits

PARQUET_SUFFIXES = (".parquet", ".pq")
ARROW_SUFFIXES = (".arrow", ".feather", ".ipc")
FORMATS_HELP = "JSON Lines, a JSON array, Parquet or Arrow"

# records converted from Arrow at a time: a large file is never whole in Python objects and in Arrow at once
_ROWS_AT_ONCE = 4096


def parse_columns(text: str | None, names: tuple[str, ...]) -> dict[str, str]:
    """--columns "name=column,...": the file's column for each of toy's names."""
    if not text:
        return {}
    columns: dict[str, str] = {}
    for item in text.split(","):
        name, sep, column = (part.strip() for part in item.partition("="))
        if not sep or not name or not column:
            raise InputError(f"--columns {text!r}: each item is NAME=COLUMN, e.g. prompt=question,response=answer")
        if name not in names:
            raise InputError(f"--columns: {name!r} is not a name this recipe reads (names: {', '.join(names)})")
        if name in columns:
            raise InputError(f"--columns names {name!r} twice")
        columns[name] = column
    return columns


def read_records(path, columns: dict[str, str] | None = None) -> list[tuple[object, str]]:
    """Each record of the data file at path with where it is, columns renamed."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"data file not found: {path} (give an existing --data PATH)")
    if path.suffix.lower() in PARQUET_SUFFIXES:
        records = _read_parquet(path, columns or {})
    elif path.suffix.lower() in ARROW_SUFFIXES:
        records = _read_arrow(path, columns or {})
    elif path.suffix.lower() == ".json" and _starts_with_bracket(path):
        records = _read_json_array(path)
    else:
        records = read_jsonl_objects(path)
    if not records:
        raise InputError(f"{path} holds no samples")
    return [(_renamed(obj, columns, where), where) for obj, where in records] if columns else records


def _renamed(obj, columns: dict[str, str], where: str):
    if not isinstance(obj, dict):
        return obj
    missing = [column for column in columns.values() if column not in obj]
    if missing:
        raise InputError(
            f"{where}: no {missing[0]!r} (named by --columns); this record has {', '.join(map(repr, obj)) or 'nothing'}"
        )
    renamed = {key: value for key, value in obj.items() if key not in columns.values()}
    renamed.update({name: obj[column] for name, column in columns.items()})
    return renamed


def _read_bytes(path: Path, copies: int) -> bytes:
    # the bytes, their text and the parsed objects: about `copies` times the file at the peak
    check_fits(copies * path.stat().st_size, f"reading {path}", "give a smaller --data file")
    data = path.read_bytes()
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise InputError(f"{path} is UTF-16 text: save it as UTF-8 (JSON is UTF-8)")
    return data.removeprefix(b"\xef\xbb\xbf")  # a UTF-8 byte-order mark, as Windows editors write


def _starts_with_bracket(path: Path) -> bool:
    """Whether the file's first character (past a byte-order mark and blanks)
    is "[": a .json file that is one JSON array, not JSON Lines. (A .jsonl
    file is always read by line: a line of arrays is one line's error.)"""
    with open(path, "rb") as f:
        head = f.read(4096).removeprefix(b"\xef\xbb\xbf").lstrip()
    return head.startswith(b"[")


def read_jsonl_objects(path: Path) -> list[tuple[object, str]]:
    """Each line's JSON value with its "file:line"; a malformed line names both.

    The file is hostile input (downloaded data sets): lines are split on
    "\\n" only -- JSON escapes every other line break, and U+2028/U+2029 are
    text inside a JSON string, not line ends -- each line is decoded as UTF-8
    on its own, and nesting too deep for the JSON parser is refused by line."""
    objects = []
    for number, raw in enumerate(_read_bytes(path, 3).split(b"\n"), start=1):
        where = f"{path}:{number}"
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as err:
            raise InputError(
                f"{where}: not UTF-8 text (byte 0x{raw[err.start]:02x} at column "
                f"{err.start + 1}); save the file as UTF-8"
            ) from None
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as err:
            raise InputError(f"{where}: not valid JSON ({err.msg} at column {err.colno})") from None
        except RecursionError:
            raise InputError(f"{where}: JSON nested too deeply to read") from None
        objects.append((obj, where))
    return objects


def _read_json_array(path: Path) -> list[tuple[object, str]]:
    """The items of a file that is one JSON array, "file: item N" each."""
    data = _read_bytes(path, 4)
    try:
        items = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as err:
        raise InputError(f"{path}: not UTF-8 text (byte 0x{data[err.start]:02x} at offset {err.start})") from None
    except json.JSONDecodeError as err:
        raise InputError(
            f"{path}: not valid JSON ({err.msg} at line {err.lineno} column {err.colno}); "
            "a data file is JSON Lines or one JSON array"
        ) from None
    except RecursionError:
        raise InputError(f"{path}: JSON nested too deeply to read") from None
    if not isinstance(items, list):
        raise InputError(f"{path}: a JSON data file is one array of records (or JSON Lines, a record a line)")
    return [(item, f"{path}: item {n}") for n, item in enumerate(items, start=1)]


def _pyarrow(path: Path, kind: str):
    try:
        import pyarrow
    except ImportError:
        raise InputError(
            f"{path}: reading {kind} needs pyarrow (pip install pyarrow, or toy's extra: pip install 'toy[data]')"
        ) from None
    return pyarrow


def _check_columns(path: Path, schema, columns: dict[str, str]) -> None:
    missing = [column for column in columns.values() if column not in schema.names]
    if missing:
        raise InputError(
            f"{path}: no column {missing[0]!r} (named by --columns); its columns: {', '.join(schema.names)}"
        )


def _rows(path: Path, batches) -> list[tuple[object, str]]:
    """Records from record batches, "file: row N" each (N from 1)."""
    records: list[tuple[object, str]] = []
    for batch in batches:
        for start in range(0, batch.num_rows, _ROWS_AT_ONCE):
            for row in batch.slice(start, _ROWS_AT_ONCE).to_pylist():
                records.append((row, f"{path}: row {len(records) + 1}"))
    return records


def _read_parquet(path: Path, columns: dict[str, str]) -> list[tuple[object, str]]:
    pyarrow = _pyarrow(path, "Parquet")
    import pyarrow.parquet as pq

    try:
        with pq.ParquetFile(path) as f:
            meta = f.metadata
            unpacked = sum(meta.row_group(g).total_byte_size for g in range(meta.num_row_groups))
            # the Arrow columns and the Python records made from them
            check_fits(3 * unpacked, f"reading {path}", "give a smaller --data file")
            _check_columns(path, f.schema_arrow, columns)
            return _rows(path, f.iter_batches())
    except (pyarrow.ArrowException, OSError, ValueError) as err:
        raise InputError(f"{path}: not a readable Parquet file ({one_line(err)})") from None


def _read_arrow(path: Path, columns: dict[str, str]) -> list[tuple[object, str]]:
    """An Arrow IPC file, or stream (the `datasets` library's .arrow files are streams)."""
    pyarrow = _pyarrow(path, "Arrow")
    import pyarrow.ipc as ipc

    check_fits(3 * path.stat().st_size, f"reading {path}", "give a smaller --data file")
    try:
        with pyarrow.memory_map(str(path)) as source:
            try:
                reader = ipc.open_file(source)
                batches = [reader.get_batch(i) for i in range(reader.num_record_batches)]
                schema = reader.schema
            except pyarrow.ArrowInvalid:
                source.seek(0)
                stream = ipc.open_stream(source)
                batches, schema = list(stream), stream.schema
            for batch in batches:
                batch.validate(full=True)  # offsets and lengths checked before any value is read
            _check_columns(path, schema, columns)
            return _rows(path, batches)
    except (pyarrow.ArrowException, OSError, ValueError) as err:
        raise InputError(f"{path}: not a readable Arrow file ({one_line(err)})") from None
