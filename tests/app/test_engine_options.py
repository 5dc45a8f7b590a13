"""Issue 13, the dashboard side: the engine picker and its widgets come from the declarations, spec headers map onto
options generically, and no dashboard file names an engine or words a monitor concept itself."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from fairaudit import engines
from fairaudit.core import explain
from fairaudit.core.engine import Option
from fairaudit.ui import options as ui_options

ROOT = Path(__file__).resolve().parents[2]
FRONT = sorted([ROOT / "app.py", *(ROOT / "pages").glob("*.py"), *(ROOT / "fairaudit" / "ui").glob("*.py")])
# what only the monitor may say (it supplies these words through its declarations and guarantee)
MONITOR_WORDS = [r"monitor", r"AVOIR", r"(?-i:Δ)", r"δ split", r"hoeffding", r"betting", r"observations?", r"batch",
                 r"optimi[sz](e|ed|er|ation)\b", r"equal split"]


@pytest.mark.parametrize("path", FRONT, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_dashboard_file_names_an_engine_or_words_a_monitor_concept(path):
    """Comments count too: a file that needs the words gets them from the engine (a module's import path is not a
    word the reader sees)."""
    text = re.sub(r"fairaudit(\.\w+)+", "", path.read_text(encoding="utf-8"))
    for name in engines.names():  # an engine named in code ("monitor", 'dataset', ...) is a branch on it
        assert not re.search(rf"[\"']{re.escape(name)}[\"']", text), f"{path.name} names the engine {name!r}"
    for word in MONITOR_WORDS:
        found = re.search(word, text, re.IGNORECASE)
        assert found is None, f"{path.name} says {found.group(0)!r} (line {text[:found.start()].count(chr(10)) + 1})"


def test_widget_kinds_follow_the_declarations():
    assert ui_options.widget_kind(Option("x", str, "a", "h", choices=("a", "b"))) == "select"
    assert ui_options.widget_kind(Option("x", bool, False, "h")) == "checkbox"
    assert ui_options.widget_kind(Option("x", int, 1, "h", min=1)) == "number"
    assert ui_options.widget_kind(Option("x", float, 0.5, "h")) == "number"
    assert ui_options.widget_kind(Option("x", str, None, "h")) == "text"
    # strict bounds are checked by the declaration, not the widget; whole numbers fit a browser's number field
    assert ui_options.number_bounds(Option("x", float, 0.5, "h", min=0, max=1, exclusive=True)) == (None, None)
    assert ui_options.number_bounds(Option("x", float, 0.5, "h", min=0, max=1)) == (0.0, 1.0)
    lo, hi = ui_options.number_bounds(Option("x", int, 0, "h", min=0, max=2**63 - 1))
    assert lo == 0 and hi == 2**53 - 1 and isinstance(lo, int)
    assert ui_options.number_step(Option("x", float, 0.5, "h")) == 0.01
    assert ui_options.number_step(Option("x", float, 0.5, "h", step=5.0)) == 5.0


def test_option_keys_name_the_engine():
    keys = {ui_options.option_key(e.name, o.name) for e in engines.all_engines() for o in e.all_options()}
    assert len(keys) == sum(len(e.all_options()) for e in engines.all_engines())  # no engine shares a key
    for engine in engines.all_engines():
        assert all(engine.name in ui_options.option_key(engine.name, o.name) for o in engine.all_options())


def test_engine_options_are_validated_by_their_declarations():
    for engine in engines.all_engines():
        options, errors = ui_options.engine_options(engine, {})
        assert not errors and options == engine.resolve_options({})
    monitor = engines.get("monitor")
    bad = {ui_options.option_key("monitor", "delta"): 0.0, ui_options.option_key("monitor", "seed"): 3}
    options, errors = ui_options.engine_options(monitor, bad)
    assert "delta" in errors and "delta" not in options and options["seed"] == 3
    # an empty optional text is "unset"
    assert ui_options.engine_options(monitor, {ui_options.option_key("monitor", "time_budget"): None})[0][
        "time_budget"] is None


def test_engine_choices_say_why_an_engine_cannot_run():
    from fairaudit.spec import parse

    choices = ui_options.engine_choices(parse("E[pred] < 0.5"), None)
    assert [c.name for c in choices] == list(engines.names())
    assert all(c.title and c.summary for c in choices)
    # every engine that bounds E[...] leaves can take this spec (fairquant bounds Fair[...] only)
    assert all(c.available for c in choices if "expect" in engines.get(c.name).leaf_kinds)

    class NoDecisions:  # an Inputs stand-in with a dataset and nothing else
        decisions = reprediction_model = model = pred = population = None
        rows: dict = {}

        def has(self, need):
            return need == "dataset"

    reasons = {c.name: c.reasons for c in ui_options.engine_choices(parse("Fair[sex] > 0.9"), NoDecisions())}
    assert all(reasons.values())  # every engine says why, in its own words


def test_options_line_is_generated():
    for engine in engines.all_engines():
        line = ui_options.options_line(engine, engine.resolve_options({}))
        assert line.startswith(engine.title)
        for option in engine.options:
            if not option.advanced:
                assert f"{option.title}: {option.show(option.default)}" in line


def test_headers_become_widget_values_generically():
    text = ('# engine: dataset\n# where: workclass == "Federal-gov"\n# delta: 0.15\n# order: given\n'
            "E[pred] < 0.5\n")
    wanted = ui_options.header_values(text)
    assert wanted[ui_options.ENGINE_KEY] == "dataset"
    assert wanted[ui_options.WHERE_KEY] == 'workclass == "Federal-gov"'
    # each engine's header options land on its own widgets
    for engine in engines.all_engines():
        for option in engine.header_options():
            if option.name in ("delta", "order"):
                assert ui_options.option_key(engine.name, option.name) in wanted
    delta_key = ui_options.option_key("monitor", "delta")
    assert wanted[delta_key] == pytest.approx(0.15)
    note = ui_options.header_note(wanted, engines.get("monitor"))
    assert "engine" in note and "row filter" in note and engines.get("monitor").option("delta").title in note


def test_header_errors_are_refused_all_at_once():
    from fairaudit.core.preflight import ValidationError

    with pytest.raises(ValidationError) as err:
        ui_options.header_values("# delt: 0.1\n# engine: nosuch\n# order: sideways\nE[pred] < 0.5\n")
    messages = " ".join(e.message for e in err.value.errors)
    assert "delt" in messages and "nosuch" in messages and "sideways" in messages


def test_a_header_value_is_undone_when_the_header_goes_unless_it_was_changed():
    key, other = "audit_opt_x_a", "audit_opt_x_b"
    defaults = {key: 1.0, other: "p"}
    first = ui_options.header_changes({key: 2.0, other: "q"}, {}, {}, defaults)
    assert first == {key: 2.0, other: "q"}
    # the header went; the analyst had changed `other` since: kept; `key` unchanged: back to its default
    gone = ui_options.header_changes({}, {key: 2.0, other: "q"}, {key: 2.0, other: "r"}, defaults)
    assert gone == {key: 1.0}


def test_companions_are_the_exact_engines():
    choices = ui_options.engine_choices(None, None)
    for engine in engines.all_engines():
        kind = engine.guarantee(engine.resolve_options({}), None).kind
        beside = ui_options.companions(engine, choices)
        if kind == "exact":
            assert beside == []
        else:
            assert beside and all(e.guarantee(e.resolve_options({}), None).kind == "exact" for e in beside)


def test_compare_rows_put_two_results_side_by_side():
    from fairaudit import audit, data

    dataset = data.load("adult")
    spec = 'p: E[pred | sex == "Male"] - E[pred | sex == "Female"] < 0.1\n'
    runs = {}
    for engine in engines.all_engines():
        # the row-based engines that take a decision expression (not those of a population program or a model)
        if "dataset" in engine.requires and "model" not in engine.requires:
            runs[engine.name] = audit(dataset, spec, engine=engine.name, pred='income == ">50K"')
    first, second = runs.values()
    rows = explain.compare_rows(first, second)
    assert [r["part"] for r in rows][:1] == ["p"] and len(rows) == 3  # the comparison (with its difference), two leaves
    columns = list(rows[0])
    assert columns[1].startswith(explain.engine_title(first)) and first.guarantee.caption in columns[1]
    assert columns[2].startswith(explain.engine_title(second)) and second.guarantee.caption in columns[2]
    exact = next(r for r in runs.values() if r.guarantee.kind == "exact")
    leaf = next(n for n in exact.nodes if n["kind"] == "expect")
    value = explain.number(leaf["final"]["estimate"])
    assert any(value == row[c] for row in rows for c in columns[1:])  # an exact leaf is one number
