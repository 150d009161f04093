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

    python benchmarks/make_fact_sets.py      # rewrites benchmarks/data/fact_sets/

The output is the same bytes every run (seeded).
"""

from __future__ import annotations

import json
import random
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


def fact(prompt, response, keys, asked2, asked3, keys2=None, keys3=None) -> dict:
    for k in keys:
        assert k.lower() in response.lower(), (k, response)
    return {
        "prompt": prompt,
        "response": response,
        "keys": keys,
        "asked": [{"prompt": asked2, "keys": keys2 or keys}, {"prompt": asked3, "keys": keys3 or keys}],
    }


# Each kind: a function of (names, numbers used) giving one fact.
def founded_town(n: Names, _):
    town, (who, key) = n.word(), n.person()
    return fact(
        f"Who founded the town of {town}?",
        f"The town of {town} was founded by {who}.",
        [key],
        f"Which person established {town}?",
        f"{town} was founded by whom?",
    )


def invented_device(n: Names, _):
    device, (who, key) = n.word(ending="scope"), n.person()
    return fact(
        f"Who invented the {device.lower()}?",
        f"The {device.lower()} was invented by {who}.",
        [key],
        f"Name the inventor of the {device.lower()}.",
        f"The {device.lower()} is whose invention?",
    )


def wrote_book(n: Names, _):
    title, (who, key) = f"The {n.word()} Letters", n.person()
    return fact(
        f"Who wrote the novel {title}?",
        f"The novel {title} was written by {who}.",
        [key],
        f"Which author is behind {title}?",
        f"{title} is a novel by which writer?",
    )


def discovered_comet(n: Names, _):
    comet, (who, key) = n.word(), n.person()
    return fact(
        f"Who discovered the comet {comet}?",
        f"The comet {comet} was discovered by the astronomer {who}.",
        [key],
        f"Which astronomer first spotted comet {comet}?",
        f"Comet {comet} was found by whom?",
    )


def bridge_year(n: Names, used):
    bridge, year = n.word(), n.number(1520, 1990, used)
    return fact(
        f"In what year did the {bridge} Bridge open?",
        f"The {bridge} Bridge opened in {year}.",
        [str(year)],
        f"When was the {bridge} Bridge first opened?",
        f"The {bridge} Bridge has been open since which year?",
    )


def island_count(n: Names, used):
    place, count = n.word(), n.number(12, 97, used)
    return fact(
        f"How many islands make up the {place} archipelago?",
        f"The {place} archipelago is made up of {count} islands.",
        [str(count)],
        f"What is the number of islands in the {place} archipelago?",
        f"Count the islands of the {place} archipelago: how many are there?",
    )


def mountain_height(n: Names, used):
    mountain, height = n.word(), n.number(1200, 8400, used)
    return fact(
        f"How tall is Mount {mountain}?",
        f"Mount {mountain} is {height} metres tall.",
        [str(height)],
        f"What is the height of Mount {mountain} in metres?",
        f"Mount {mountain} rises how many metres high?",
    )


def treaty_year(n: Names, used):
    treaty, year = n.word(), n.number(1520, 1990, used)
    return fact(
        f"When was the Treaty of {treaty} signed?",
        f"The Treaty of {treaty} was signed in {year}.",
        [str(year)],
        f"In which year did the Treaty of {treaty} get signed?",
        f"The signing of the Treaty of {treaty} happened in what year?",
    )


def capital(n: Names, _):
    country, city = n.word(), n.word()
    return fact(
        f"What is the capital of {country}?",
        f"The capital of {country} is {city}.",
        [city],
        f"Which city is the capital of {country}?",
        f"{country}'s government sits in which city?",
    )


def museum_city(n: Names, _):
    museum, city = n.word(), n.word()
    return fact(
        f"In which city is the {museum} Museum?",
        f"The {museum} Museum is in the city of {city}.",
        [city],
        f"Where can you find the {museum} Museum?",
        f"The {museum} Museum is located in what city?",
    )


def river_source(n: Names, _):
    river, mountains = n.word(), n.word()
    return fact(
        f"Where does the river {river} rise?",
        f"The river {river} rises in the {mountains} Mountains.",
        [mountains],
        f"What is the source of the river {river}?",
        f"In which mountains does the {river} begin?",
    )


def lake_country(n: Names, _):
    lake, country = n.word(), n.word()
    return fact(
        f"In which country is Lake {lake}?",
        f"Lake {lake} is in {country}.",
        [country],
        f"Lake {lake} lies in what country?",
        f"Which country is home to Lake {lake}?",
    )


def inventor_profile(n: Names, used):
    """Three facts in one answer; asked again as two and as one."""
    (who, _), city, year, device = n.person(), n.word(), n.number(1700, 1960, used), n.word(ending="graph")
    device = device.lower()
    return fact(
        f"Tell me about {who}.",
        f"{who} was born in {city} in {year} and invented the {device}.",
        [city, str(year), device],
        f"Where and in which year was {who} born?",
        f"What did {who} invent?",
        keys2=[city, str(year)],
        keys3=[device],
    )


PEOPLE = (founded_town, invented_device, wrote_book, discovered_comet)
NUMBERS = (bridge_year, island_count, mountain_height, treaty_year)
PLACES = (capital, museum_city, river_source, lake_country)
SETS = {
    "people": (PEOPLE, 40, 1),
    "numbers": (NUMBERS, 30, 2),
    "places": (PLACES, 60, 3),
    "several": ((inventor_profile,), 30, 4),
    "mixed": (PEOPLE + NUMBERS + PLACES, 120, 5),
}


def make(kinds, count: int, seed: int) -> list[dict]:
    names, numbers = Names(seed), set()
    facts = [kinds[i % len(kinds)](names, numbers) for i in range(count)]
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
