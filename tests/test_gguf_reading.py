"""toy reads a GGUF's metadata and tensors itself (toy.formats.gguf_file),
for the weights a full fine-tune starts from, a merge, a donor's embedding.
What a user relies on: every key and every tensor byte as gguf's own reader
(the reference) gives them, and damage refused in one line."""

import gguf
import numpy as np
import pytest

from toy.core.errors import InputError
from toy.formats.gguf_file import read_gguf


def test_every_key_and_tensor_is_what_ggufs_reader_reads(smollm2):
    ours, reference = read_gguf(smollm2), gguf.GGUFReader(str(smollm2))
    assert list(ours.fields) == [k for k in reference.fields if not k.startswith("GGUF.")]
    for key, field in ours.fields.items():
        assert field.types == reference.fields[key].types, key
        assert field.contents() == reference.fields[key].contents(), key
    assert [t.name for t in ours.tensors] == [t.name for t in reference.tensors]
    for mine, theirs in zip(ours.tensors, reference.tensors):
        assert mine.tensor_type == theirs.tensor_type and list(mine.shape) == list(theirs.shape)
        assert mine.data.shape == theirs.data.shape and mine.data.dtype == theirs.data.dtype
        assert np.array_equal(mine.data, theirs.data), mine.name


def test_a_cut_file_is_refused_in_one_line(smollm2, tmp_path):
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(smollm2.read_bytes()[:5_000_000])
    with pytest.raises(InputError) as refused:
        read_gguf(cut, "base ")
    assert "\n" not in str(refused.value) and str(refused.value).startswith("base ")
