"""Fuzzing: random and mutated inputs never raise anything but SpecError (and never hang)."""
import random
from pathlib import Path

from fairaudit.spec import SpecError, parse, parse_event

ROOT = Path(__file__).resolve().parents[2]
SEEDS = [
    'E[pred | sex == "Male"] - E[pred | sex == "Female"] < 0.5 and Fair[sex] >= 0.9',
    "a: E[x and not y | z in {1, 'b', -2}] / E[q] > 1e-3\nb: not (E[w] < 1 or -E[v] * 2 >= 0)",
    "E[`odd name` != \"\\\"\" | (p | q) & r not in {3}] <= .5 # comment",
]
# the bodies (without the header comments) of some example files
SEEDS += ["\n".join(line for line in p.read_text().splitlines() if not line.startswith("#")).strip()
          for p in sorted((ROOT / "specs").glob("*.spec"))[:4]]
PIECES = ["E", "Fair", "[", "]", "(", ")", "{", "}", "|", "&", "and", "or", "not", "in", "<", "<=", "==", "!=",
          ">", ">=", "=", "!", "+", "-", "*", "/", ",", ":", "#", "\"", "'", "`", "\\", "\n", " ", "0", "1.5",
          "1e999", "pred", "label", "score", "sex", '"Male"', "é", "\x00", "\t", "%", "..", "E[", "]]", "(("]


def _mutate(rng: random.Random, text: str) -> str:
    for _ in range(rng.randint(1, 4)):
        choice = rng.random()
        i = rng.randrange(len(text) + 1)
        if choice < 0.3 and text:
            j = min(len(text), i + rng.randint(1, 5))
            text = text[:i] + text[j:]
        elif choice < 0.6:
            text = text[:i] + rng.choice(PIECES) + text[i:]
        elif choice < 0.8 and text:
            j = rng.randrange(len(text) + 1)
            a, b = sorted((i, j))
            text = text[:a] + text[a:b][::-1] + text[b:]
        else:
            text = text[:i]
    return text


def _inputs(count: int, seed: int = 20261122):
    rng = random.Random(seed)
    for n in range(count):
        if n % 4 == 0:
            yield "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 14)))
        else:
            yield _mutate(rng, rng.choice(SEEDS))


def test_fuzz_only_spec_errors():
    outcomes = {"ok": 0, "error": 0}
    for text in _inputs(10_000):
        for function in (parse, parse_event) if len(text) < 40 else (parse,):
            try:
                function(text)
                outcomes["ok"] += 1
            except SpecError as err:
                outcomes["error"] += 1
                assert err.line is not None and err.line >= 1 and err.column >= 1, (text, str(err))
                assert "\n" not in str(err), text
                err.pretty()
    assert outcomes["ok"] > 100 and outcomes["error"] > 5_000
