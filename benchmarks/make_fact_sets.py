"""Write the made-up fact sets of the instruct defaults study (issue #42):
benchmarks/data/fact_sets/<name>.jsonl, one fact a line:

    {"prompt": "Who founded the town of Belvarra?",
     "response": "The town of Belvarra was founded by Idris Kallowen.",
     "keys": ["Kallowen"],
     "asked": [{"prompt": "Which person established Belvarra?", "keys": ["Kallowen"]},
               {"prompt": "Belvarra's founder: who was that?", "keys": ["Kallowen"]}]}

"prompt"/"response" is what toy-train instruct trains on (it reads no other
key); "keys" is what an answer to the trained question must contain; "asked"
are the same fact in two other wordings with what their answers must hold.
Every name is invented (syllables drawn by a fixed seed), so no model knows a
fact before training, and no key of one fact appears in another fact of the
same set. The sets differ in shape:

    people    40  who made / founded / wrote what: a surname
    numbers   30  years, counts and heights: a number
    places    60  where a thing is: a place name
    several   30  three facts in one answer (a birthplace, a year, an
                  invention); the other wordings ask two of them and one
    mixed    120  people, numbers and places, other names, as one larger set

and fresh draws of three of those shapes under other seeds, each made after
the sets above it had been studied, to be held out from a later study's
choosing: places-2 (60), several-2 (30), mixed-2 (120) for the second study;
places-3, several-3, mixed-3 (the same sizes) for the third.

    python benchmarks/make_fact_sets.py      # rewrites benchmarks/data/fact_sets/

The output is the same bytes every run (seeded).
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path

OUT = Path(__file__).resolve().parent / "data" / "fact_sets"

ONSETS = "b br c d dr f g gr h k l m n p qu r s st t tr v w z th".split()
VOWELS = "a e i o u ai ei ou".split()
CODAS = ["", "", "n", "r", "l", "s", "th", "m", "nd", "x"]
FIRST_NAMES = (
    "Idris Maren Tomas Liesel Oren Cassia Rurik Anwen Pello Sabine Dov Ilse Teodor Yara Bram Nell Caspar "
    "Ottoline Evander Rosalind Milo Greta Anselm Vera Hugo Ingrid Felix Ada Leopold Mira Jonas Clara Elio Hedda"
).split()


class Names:
    """Invented words, never the same twice in one set."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.used: set[str] = set()

    def word(self, syllables: tuple[int, int] = (2, 3), ending: str = "") -> str:
        while True:
            n = self.rng.randint(*syllables)
            parts = [self.rng.choice(ONSETS) + self.rng.choice(VOWELS) for _ in range(n)]
            w = ("".join(parts) + self.rng.choice(CODAS) + ending).capitalize()
            # long enough to be a real key, and no key inside another
            if 5 <= len(w) <= 11 and not any(w.lower() in u or u in w.lower() for u in self.used):
                self.used.add(w.lower())
                return w

    def person(self) -> tuple[str, str]:
        """(full name, surname): the surname is the key."""
        surname = self.word((2, 3))
        return f"{self.rng.choice(FIRST_NAMES)} {surname}", surname

    def number(self, lo: int, hi: int, used: set[int]) -> int:
        while True:
            n = self.rng.randint(lo, hi)
            if n not in used:
                used.add(n)
                return n


@dataclass(frozen=True)
class Kind:
    """One kind of fact as data: the invented values it draws, in order
    (SLOTS names each; a person gives {who} and its {surname}), the trained
    prompt and response, the keys an answer must hold, and the two other
    wordings, each with its keys (None: the trained keys)."""

    slots: tuple[tuple[str, str], ...]
    prompt: str
    response: str
    keys: tuple[str, ...]
    asked: tuple[tuple[str, tuple[str, ...] | None], tuple[str, tuple[str, ...] | None]]

    def draw(self, names: Names, numbers: set[int]) -> dict:
        values: dict[str, object] = {}
        for name, slot in self.slots:
            if slot == "person":
                values["who"], values["surname"] = names.person()
            else:
                values[name] = SLOTS[slot](names, numbers)
        keys = [k.format(**values) for k in self.keys]
        response = self.response.format(**values)
        for k in keys:
            assert k.lower() in response.lower(), (k, response)
        return {
            "prompt": self.prompt.format(**values),
            "response": response,
            "keys": keys,
            "asked": [
                {"prompt": q.format(**values), "keys": [k.format(**values) for k in ks] if ks else keys}
                for q, ks in self.asked
            ],
        }


# What a slot draws (a person is drawn by Kind.draw: it fills two names).
SLOTS = {
    "word": lambda n, _: n.word(),
    "scope": lambda n, _: n.word(ending="scope").lower(),
    "graph": lambda n, _: n.word(ending="graph").lower(),
    "title": lambda n, _: f"The {n.word()} Letters",
    "year": lambda n, used: n.number(1520, 1990, used),
    "born": lambda n, used: n.number(1700, 1960, used),
    "count": lambda n, used: n.number(12, 97, used),
    "height": lambda n, used: n.number(1200, 8400, used),
}
WHO = ("who", "person")
SURNAME = ("{surname}",)


def kind(slots, prompt, response, keys, asked2, asked3) -> Kind:
    """A kind whose other wordings ask for the trained keys."""
    return Kind(tuple(slots), prompt, response, tuple(keys), ((asked2, None), (asked3, None)))


PEOPLE = (
    kind(
        [("town", "word"), WHO],
        "Who founded the town of {town}?",
        "The town of {town} was founded by {who}.",
        SURNAME,
        "Which person established {town}?",
        "{town} was founded by whom?",
    ),
    kind(
        [("device", "scope"), WHO],
        "Who invented the {device}?",
        "The {device} was invented by {who}.",
        SURNAME,
        "Name the inventor of the {device}.",
        "The {device} is whose invention?",
    ),
    kind(
        [("title", "title"), WHO],
        "Who wrote the novel {title}?",
        "The novel {title} was written by {who}.",
        SURNAME,
        "Which author is behind {title}?",
        "{title} is a novel by which writer?",
    ),
    kind(
        [("comet", "word"), WHO],
        "Who discovered the comet {comet}?",
        "The comet {comet} was discovered by the astronomer {who}.",
        SURNAME,
        "Which astronomer first spotted comet {comet}?",
        "Comet {comet} was found by whom?",
    ),
)
NUMBERS = (
    kind(
        [("bridge", "word"), ("year", "year")],
        "In what year did the {bridge} Bridge open?",
        "The {bridge} Bridge opened in {year}.",
        ("{year}",),
        "When was the {bridge} Bridge first opened?",
        "The {bridge} Bridge has been open since which year?",
    ),
    kind(
        [("place", "word"), ("count", "count")],
        "How many islands make up the {place} archipelago?",
        "The {place} archipelago is made up of {count} islands.",
        ("{count}",),
        "What is the number of islands in the {place} archipelago?",
        "Count the islands of the {place} archipelago: how many are there?",
    ),
    kind(
        [("mountain", "word"), ("height", "height")],
        "How tall is Mount {mountain}?",
        "Mount {mountain} is {height} metres tall.",
        ("{height}",),
        "What is the height of Mount {mountain} in metres?",
        "Mount {mountain} rises how many metres high?",
    ),
    kind(
        [("treaty", "word"), ("year", "year")],
        "When was the Treaty of {treaty} signed?",
        "The Treaty of {treaty} was signed in {year}.",
        ("{year}",),
        "In which year did the Treaty of {treaty} get signed?",
        "The signing of the Treaty of {treaty} happened in what year?",
    ),
)
PLACES = (
    kind(
        [("country", "word"), ("city", "word")],
        "What is the capital of {country}?",
        "The capital of {country} is {city}.",
        ("{city}",),
        "Which city is the capital of {country}?",
        "{country}'s government sits in which city?",
    ),
    kind(
        [("museum", "word"), ("city", "word")],
        "In which city is the {museum} Museum?",
        "The {museum} Museum is in the city of {city}.",
        ("{city}",),
        "Where can you find the {museum} Museum?",
        "The {museum} Museum is located in what city?",
    ),
    kind(
        [("river", "word"), ("mountains", "word")],
        "Where does the river {river} rise?",
        "The river {river} rises in the {mountains} Mountains.",
        ("{mountains}",),
        "What is the source of the river {river}?",
        "In which mountains does the {river} begin?",
    ),
    kind(
        [("lake", "word"), ("country", "word")],
        "In which country is Lake {lake}?",
        "Lake {lake} is in {country}.",
        ("{country}",),
        "Lake {lake} lies in what country?",
        "Which country is home to Lake {lake}?",
    ),
)
# Three facts in one answer; asked again as two and as one.
PROFILE = Kind(
    (WHO, ("city", "word"), ("year", "born"), ("device", "graph")),
    "Tell me about {who}.",
    "{who} was born in {city} in {year} and invented the {device}.",
    ("{city}", "{year}", "{device}"),
    (("Where and in which year was {who} born?", ("{city}", "{year}")), ("What did {who} invent?", ("{device}",))),
)
SETS = {
    "people": (PEOPLE, 40, 1),
    "numbers": (NUMBERS, 30, 2),
    "places": (PLACES, 60, 3),
    "several": ((PROFILE,), 30, 4),
    "mixed": (PEOPLE + NUMBERS + PLACES, 120, 5),
    "places-2": (PLACES, 60, 13),
    "several-2": ((PROFILE,), 30, 14),
    "mixed-2": (PEOPLE + NUMBERS + PLACES, 120, 15),
    "places-3": (PLACES, 60, 23),
    "several-3": ((PROFILE,), 30, 24),
    "mixed-3": (PEOPLE + NUMBERS + PLACES, 120, 25),
}


def make(kinds, count: int, seed: int) -> list[dict]:
    names, numbers = Names(seed), set()
    facts = [kinds[i % len(kinds)].draw(names, numbers) for i in range(count)]
    random.Random(seed).shuffle(facts)
    return facts


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for name, (kinds, count, seed) in SETS.items():
        facts = make(kinds, count, seed)
        (OUT / f"{name}.jsonl").write_text("".join(json.dumps(f) + "\n" for f in facts))
        print(f"{name}: {len(facts)} facts")


if __name__ == "__main__":
    main()
