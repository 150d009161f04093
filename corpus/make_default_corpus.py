"""Generate the default training corpus embedded in the ``toy`` package.

The corpus is simple, varied English text produced from small hand-written
grammars and templates in this file (short stories, counting, colours, simple
facts, dialogue, days of the week, arithmetic sentences). It uses no external
data and no network, only the standard library and a fixed seed
(``random.Random(0)``), so every run produces byte-identical output.

Outputs (paths relative to the repository root):

* ``corpus/default.txt``: the plain ASCII source text, committed so people can
  read it.
* ``python/toy/data/default_corpus.tok``: the same text tokenized at the byte
  level (token id = byte value, 0..255), stored as packed little-endian int32.
  This is the file the package ships.

To regenerate both files, run from the repository root::

    python corpus/make_default_corpus.py
"""

import os
import random
import struct

TARGET_BYTES = 250_000

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TXT_PATH = os.path.join(REPO, "corpus", "default.txt")
TOK_PATH = os.path.join(REPO, "python", "toy", "data", "default_corpus.tok")

# ---------------------------------------------------------------- vocabulary

PEOPLE = [
    ("Anna", "she", "her"), ("Ben", "he", "his"), ("Lily", "she", "her"),
    ("Tom", "he", "his"), ("Mia", "she", "her"), ("Sam", "he", "his"),
    ("Rosa", "she", "her"), ("Max", "he", "his"),
]
ANIMALS = ["cat", "dog", "bird", "fox", "rabbit", "duck", "frog", "horse",
           "mouse", "owl", "goat", "bear"]
ANIMAL_SOUND = {
    "cat": "meow", "dog": "woof", "bird": "tweet", "fox": "yip",
    "rabbit": "squeak", "duck": "quack", "frog": "ribbit", "horse": "neigh",
    "mouse": "squeak", "owl": "hoot", "goat": "baa", "bear": "growl",
}
ANIMAL_HOME = {
    "cat": "house", "dog": "kennel", "bird": "nest", "fox": "den",
    "rabbit": "burrow", "duck": "pond", "frog": "pond", "horse": "stable",
    "mouse": "hole", "owl": "tree", "goat": "barn", "bear": "cave",
}
ANIMAL_FOOD = {
    "cat": "fish", "dog": "bones", "bird": "seeds", "fox": "berries",
    "rabbit": "carrots", "duck": "bread", "frog": "flies", "horse": "hay",
    "mouse": "cheese", "owl": "mice", "goat": "grass", "bear": "honey",
}
PLACES = ["the park", "the forest", "the beach", "the market", "the farm",
          "the garden", "the hill", "the river", "the school", "the village",
          "the lake", "the library"]
COLOURS = ["red", "blue", "green", "yellow", "white", "black", "brown",
           "pink", "orange", "purple", "grey"]
THINGS = ["box", "ball", "hat", "cup", "kite", "book", "boat", "shoe",
          "apple", "flower", "stone", "bag", "leaf", "cake", "toy"]
PLURAL = {"box": "boxes", "leaf": "leaves", "toy": "toys", "fox": "foxes",
          "mouse": "mice", "goat": "goats"}
ADJ = ["big", "small", "old", "new", "soft", "shiny", "round", "tall",
       "tiny", "happy", "sleepy", "quiet"]
FEELINGS = ["happy", "sad", "tired", "excited", "scared", "hungry", "proud",
            "calm", "surprised"]
WEATHER = ["sunny", "rainy", "windy", "cold", "warm", "cloudy", "snowy"]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday",
        "Sunday"]
MONTHS = ["January", "February", "March", "April", "May", "June", "July",
          "August", "September", "October", "November", "December"]
TIMES = ["In the morning", "At noon", "In the afternoon", "In the evening",
         "At night", "One day", "Later", "After lunch", "Before dinner"]
ACTIONS = ["played", "walked", "sang", "read a book", "ran", "danced",
           "painted a picture", "looked at the sky", "ate lunch",
           "had a nap", "built a tower", "flew a kite"]

NUMS = ["zero", "one", "two", "three", "four", "five", "six", "seven",
        "eight", "nine", "ten", "eleven", "twelve", "thirteen", "fourteen",
        "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty"]
TENS = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy",
        "eighty", "ninety"]
ORDINALS = ["first", "second", "third", "fourth", "fifth", "sixth",
            "seventh"]

FACTS = [
    "the river flows to the sea",
    "the sun rises in the east",
    "the sun sets in the west",
    "the moon shines at night",
    "fish swim in the water",
    "birds fly in the sky",
    "snow is cold and white",
    "fire is hot",
    "grass is green",
    "the sky is blue on a clear day",
    "rain falls from the clouds",
    "trees grow from small seeds",
    "bees make honey",
    "cows give milk",
    "ice melts in the sun",
    "a week has seven days",
    "a year has twelve months",
    "a day has twenty four hours",
    "an hour has sixty minutes",
    "a triangle has three sides",
    "a square has four sides",
    "a spider has eight legs",
    "a dog has four legs",
    "a bird has two wings",
    "plants need water and light",
    "the earth goes around the sun",
    "leaves fall in the autumn",
    "flowers bloom in the spring",
    "it is hot in the summer",
    "it is cold in the winter",
    "stars come out at night",
    "wood floats on water",
    "stones sink in water",
]


def num_word(n):
    if n <= 20:
        return NUMS[n]
    if n < 100:
        t, u = divmod(n, 10)
        return TENS[t] if u == 0 else TENS[t] + " " + NUMS[u]
    return str(n)


def plural(thing, n):
    if n == 1:
        return thing
    return PLURAL.get(thing, thing + "s")


def a_an(word):
    return ("an " if word[0] in "aeiou" else "a ") + word


def cap(s):
    return s[0].upper() + s[1:]


# ---------------------------------------------------------------- generators

def story(r):
    name, he, his = r.choice(PEOPLE)
    friend, fhe, _ = r.choice([p for p in PEOPLE if p[0] != name])
    animal = r.choice(ANIMALS)
    place = r.choice(PLACES)
    colour = r.choice(COLOURS)
    thing = r.choice(THINGS)
    adj = r.choice(ADJ)
    day = r.choice(DAYS)
    weather = r.choice(WEATHER)
    s = []
    s.append(r.choice([
        f"Once upon a time there was a girl called {name}." if he == "she"
        else f"Once upon a time there was a boy called {name}.",
        f"On {day}, {name} went to {place}.",
        f"It was a {weather} day and {name} was at {place}.",
        f"{name} had {a_an(adj)} {animal}.",
    ]))
    s.append(r.choice([
        f"{cap(he)} saw {a_an(colour)} {thing} near {a_an(animal)}.",
        f"{cap(he)} found {a_an(adj)} {colour} {thing}.",
        f"{cap(he)} met {friend} and a little {animal}.",
        f"The {animal} said {ANIMAL_SOUND[animal]}.",
    ]))
    middle = [
        f"{name} and {friend} {r.choice(ACTIONS)}.",
        f"The {animal} ate some {ANIMAL_FOOD[animal]}.",
        f"{cap(he)} felt {r.choice(FEELINGS)}.",
        f"{r.choice(TIMES)}, {he} {r.choice(ACTIONS)}.",
        f"The {thing} was {colour} and {r.choice(ADJ)}.",
        f"{friend} gave {name} {a_an(r.choice(COLOURS))} {r.choice(THINGS)}.",
        f"The {animal} ran back to its {ANIMAL_HOME[animal]}.",
        f"\"Look at the {thing}!\" said {name}.",
        f"\"Can I play too?\" asked {friend}.",
        f"{cap(fhe)} smiled at the {animal}.",
    ]
    s.extend(r.sample(middle, r.randint(1, 4)))
    s.append(r.choice([
        f"In the end, {name} went home and was {r.choice(FEELINGS)}.",
        f"The {animal} went to sleep in its {ANIMAL_HOME[animal]}.",
        f"{name} and {friend} were good friends.",
        f"{name} kept the {colour} {thing} in {his} room.",
        "The end.",
    ]))
    return " ".join(s)


def counting(r):
    s = []
    for _ in range(r.randint(2, 5)):
        n = r.randint(1, 12)
        colour = r.choice(COLOURS)
        thing = r.choice(THINGS)
        pl = plural(thing, n)
        s.append(r.choice([
            f"{cap(num_word(n))} {colour} {pl}.",
            f"There {'is' if n == 1 else 'are'} {num_word(n)} {colour} {pl} on the table.",
            f"{r.choice(PEOPLE)[0]} has {num_word(n)} {pl}.",
            f"I can see {num_word(n)} {plural(r.choice(ANIMALS), n)} at {r.choice(PLACES)}.",
        ]))
    start = r.randint(1, 10)
    length = r.randint(3, 6)
    seq = ", ".join(num_word(i) for i in range(start, start + length))
    s.append(r.choice([f"Count with me: {seq}.",
                       f"{cap(seq)}."]))
    if r.random() < 0.5:
        n = r.randint(2, 19)
        s.append(f"After {num_word(n)} comes {num_word(n + 1)}.")
    else:
        n = r.randint(1, 19)
        s.append(f"Before {num_word(n + 1)} comes {num_word(n)}.")
    return " ".join(s)


def arithmetic(r):
    s = []
    for _ in range(r.randint(2, 5)):
        op = r.choice(["plus", "plus", "minus", "times"])
        if op == "plus":
            a, b = r.randint(0, 10), r.randint(0, 10)
            c = a + b
        elif op == "minus":
            a = r.randint(0, 20)
            b = r.randint(0, a)
            c = a - b
        else:
            a, b = r.randint(0, 5), r.randint(0, 4)
            c = a * b
        form = r.random()
        if form < 0.6:
            s.append(f"{cap(num_word(a))} {op} {num_word(b)} is {num_word(c)}.")
        elif form < 0.8:
            s.append(f"What is {num_word(a)} {op} {num_word(b)}? It is {num_word(c)}.")
        else:
            sym = {"plus": "+", "minus": "-", "times": "*"}[op]
            s.append(f"{a} {sym} {b} = {c}.")
    if r.random() < 0.5:
        name = r.choice(PEOPLE)[0]
        thing = r.choice(["apple", "cake", "ball", "book", "flower"])
        a, b = r.randint(1, 9), r.randint(1, 9)
        s.append(f"{name} had {num_word(a)} {plural(thing, a)} and got "
                 f"{num_word(b)} more, so now {name} has {num_word(a + b)} "
                 f"{plural(thing, a + b)}.")
    return " ".join(s)


def facts(r):
    picks = r.sample(FACTS, r.randint(2, 5))
    s = [cap(f) + "." for f in picks]
    if r.random() < 0.4:
        a = r.choice(ANIMALS)
        subject = cap(a_an(a))
        s.append(r.choice([f"{subject} says {ANIMAL_SOUND[a]}.", f"{subject} likes to eat {ANIMAL_FOOD[a]}.",
                           f"{subject} lives in a {ANIMAL_HOME[a]}."]))
    return " ".join(s)


def animals(r):
    s = []
    for a in r.sample(ANIMALS, r.randint(2, 4)):
        s.append(r.choice([
            f"The {a} says {ANIMAL_SOUND[a]}.",
            f"The {a} eats {ANIMAL_FOOD[a]}.",
            f"The {a} lives in a {ANIMAL_HOME[a]}.",
            f"The {a} is {r.choice(COLOURS)} and {r.choice(ADJ)}.",
            f"What does the {a} say? The {a} says {ANIMAL_SOUND[a]}.",
            f"Where does the {a} live? It lives in a {ANIMAL_HOME[a]}.",
        ]))
    return " ".join(s)


def days(r):
    s = []
    i = r.randrange(7)
    s.append(f"Today is {DAYS[i]}. Tomorrow is {DAYS[(i + 1) % 7]}. "
             f"Yesterday was {DAYS[(i - 1) % 7]}.")
    if r.random() < 0.5:
        j = r.randrange(7)
        s.append(f"{DAYS[j]} is the {ORDINALS[j]} day of the week.")
    if r.random() < 0.5:
        m = r.randrange(12)
        s.append(f"After {MONTHS[m]} comes {MONTHS[(m + 1) % 12]}.")
    for _ in range(r.randint(1, 3)):
        name = r.choice(PEOPLE)[0]
        s.append(r.choice([
            f"On {r.choice(DAYS)}, {name} {r.choice(ACTIONS)}.",
            f"On {r.choice(DAYS)} it was {r.choice(WEATHER)}.",
            f"Every {r.choice(DAYS)}, {name} goes to {r.choice(PLACES)}.",
        ]))
    return " ".join(s)


def dialogue(r):
    (a, _, _), (b, _, _) = r.sample(PEOPLE, 2)
    lines = []
    colour, thing, place = r.choice(COLOURS), r.choice(THINGS), r.choice(PLACES)
    animal = r.choice(ANIMALS)
    pairs = [
        (f"Hello, {b}. How are you?", f"I am {r.choice(FEELINGS)}, thank you."),
        (f"Where are you going?", f"I am going to {place}."),
        (f"What colour is your {thing}?", f"My {thing} is {colour}."),
        (f"Do you like the {animal}?", r.choice(["Yes, I do.", "No, I do not."])),
        (f"What day is it today?", f"It is {r.choice(DAYS)}."),
        (f"How many {plural(thing, 2)} do you have?",
         f"I have {num_word(r.randint(2, 9))} {plural(thing, 2)}."),
        (f"Is it {r.choice(WEATHER)} outside?", r.choice(["Yes, it is.", "No, it is not."])),
        (f"Can we go to {place}?", "Yes, let us go now."),
        (f"What does the {animal} eat?", f"The {animal} eats {ANIMAL_FOOD[animal]}."),
    ]
    for q, ans in r.sample(pairs, r.randint(2, 4)):
        lines.append(f"{a}: {q}")
        lines.append(f"{b}: {ans}")
    if r.random() < 0.5:
        lines.append(f"{a}: {r.choice(['Goodbye!', 'See you tomorrow.', 'Thank you.'])}")
    return "\n".join(lines)


GENERATORS = [
    (story, 5), (counting, 2), (arithmetic, 2), (facts, 2),
    (animals, 1), (days, 1), (dialogue, 2),
]


def make_text():
    r = random.Random(0)
    funcs = [g for g, _ in GENERATORS]
    weights = [w for _, w in GENERATORS]
    paras = []
    size = 0
    while size < TARGET_BYTES:
        p = r.choices(funcs, weights)[0](r)
        paras.append(p)
        size += len(p) + 2
    text = "\n\n".join(paras) + "\n"
    text.encode("ascii")  # fail loudly on any non-ASCII character
    return text


def main():
    text = make_text()
    data = text.encode("ascii")
    os.makedirs(os.path.dirname(TOK_PATH), exist_ok=True)
    with open(TXT_PATH, "wb") as f:
        f.write(data)
    # byte-level tokens, packed little-endian int32
    with open(TOK_PATH, "wb") as f:
        f.write(struct.pack("<%di" % len(data), *data))
    print(f"wrote {TXT_PATH} ({len(data)} bytes)")
    print(f"wrote {TOK_PATH} ({len(data)} tokens, {4 * len(data)} bytes)")


if __name__ == "__main__":
    main()
