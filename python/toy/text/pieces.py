"""A long text cut into pieces that tokenize, one after another, to the
whole text's tokens, so that a corpus of any size is encoded with bounded
memory and on every core (datasets/corpus.py).

A cut changes the tokens wherever a pre-token or a merge would cross it,
and where it does depends on the vocabulary: GPT-2's regex keeps the last
space of a run for the next word, Llama 3's takes a run of newlines whole,
SentencePiece merges across anything its vocabulary holds. So a cut is not
chosen by rule but tried: at a line start (or, in text without one, before
a space, or anywhere), the characters around it are encoded whole and as
two pieces, and the cut is taken only where both give the same tokens.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TextIO

# characters each side of a cut that are encoded to try it: a pre-token
# or a merge that crosses a cut lies within a few characters of it
TRIAL_CHARS = 256

# the places a cut is tried, best first: a line's start, before a space
# between words, between any two characters that are not spaces
_CUT_KINDS = (re.compile(r"(?<=\n)(?=\S)"), re.compile(r"(?<=\S)(?= \S)"), re.compile(r"(?<=\S)(?=\S)"))
_TRIES_PER_KIND = 16
# how long a piece may grow, in pieces, while no cut agrees, before it is cut
# where the tokens may differ from the whole text's (never in real text)
_MOST_PIECES_OF_GROWTH = 64


def cuts_agree(tokenizer, text: str, at: int) -> bool:
    """Whether text cut at `at` tokenizes, around the cut, as the whole does."""
    left, right = text[max(at - TRIAL_CHARS, 0) : at], text[at : at + TRIAL_CHARS]
    whole, head, tail = tokenizer.encode_pieces([left + right, left, right], continuing=True)
    return whole == head + tail


def find_cut(tokenizer, text: str, start: int, end: int) -> int | None:
    """A cut in text at or after start and before end that tokenizes as the
    whole does (cuts_agree), or None."""
    for kind in _CUT_KINDS:
        for tries, found in enumerate(kind.finditer(text, start, end)):
            if tries == _TRIES_PER_KIND:
                break
            if cuts_agree(tokenizer, text, found.start()):
                return found.start()
    return None


def text_pieces(reader: TextIO, tokenizer, piece_chars: int) -> Iterator[str]:
    """reader's text in pieces of about piece_chars characters (longer where
    no cut agrees near one), each cut where cuts_agree. The pieces joined
    are the text; their tokens joined are its tokens (but past
    _MOST_PIECES_OF_GROWTH pieces without a cut that agrees)."""
    text, searched, ended = "", 0, False
    while True:
        while not ended and len(text) < searched + piece_chars + TRIAL_CHARS:
            more = reader.read(piece_chars)
            ended = not more
            text += more
        end = len(text) if ended else len(text) - TRIAL_CHARS
        cut = find_cut(tokenizer, text, max(searched, piece_chars), end) if len(text) > piece_chars else None
        if cut is None and len(text) > _MOST_PIECES_OF_GROWTH * piece_chars:
            cut = end  # no cut agrees in this much text (a run of spaces?): memory stays bounded
        if cut is None:
            if ended:
                if text:
                    yield text
                return
            searched = end  # nothing agreed so far: the piece grows
            continue
        yield text[:cut]
        text, searched = text[cut:], 0
