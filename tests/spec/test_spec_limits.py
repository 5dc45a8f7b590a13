"""Issue 27 (part 4): specification text is bounded — its length and its set members, all sets together.

``age in {0, 1, ..., 199999}`` took 8 s and 560 MB in ``fairaudit check`` here (51 s in the issue): the parser
built a node per member. Now a text longer than ``limits.SPEC_CHARS`` is refused before it is read, and the first
set member past ``limits.SPEC_SET_MEMBERS`` is refused at its line:column before the parser runs; the message is
one line (a caret under the member, the long line cut around it), exit 2 in the CLI, the same on the dashboard.
"""
from __future__ import annotations

import time

import pytest

from fairaudit.base import limits
from fairaudit.spec import parse, parse_event
from fairaudit.spec.errors import SpecError
from fairaudit.spec.files import load_spec_file
from tests.console import run_main


def _members(n: int, start: int = 0) -> str:
    return ", ".join(str(i) for i in range(start, start + n))


def test_set_members_are_counted_across_sets_and_refused_at_the_first_past_the_limit(monkeypatch):
    monkeypatch.setattr(limits, "SPEC_SET_MEMBERS", 5)
    parse('E[pred | age in {1, 2, 3}] - E[pred | race in {"a", "b"}] < 0.1')  # 5 in all: fine
    text = 'E[pred | age in {1, 2, 3}] -\n  E[pred | race in {"a", "b", "c"}] < 0.1'
    with pytest.raises(SpecError) as err:
        parse(text)
    assert (err.value.line, err.value.column) == (2, 31)  # at "c", the sixth member
    assert str(err.value) == ("2:31: this specification lists more than 5 set members (all its 'in {...}' sets "
                              "together), the limit; compare instead (e.g. 'age >= 18') or list fewer values")
    assert err.value.pretty().splitlines()[-1].strip() == "^"
    with pytest.raises(SpecError, match="this event lists more than 5 set members"):
        parse_event(f"age not in {{{_members(6)}}}")


def test_the_issues_spec_is_refused_fast_and_at_the_member():
    text = f"E[pred | age in {{{_members(200_000)}}}] > 0.1"
    started = time.perf_counter()
    with pytest.raises(SpecError) as err:
        parse(text)
    assert time.perf_counter() - started < 2.0
    assert err.value.line == 1 and "over the limit of 100,000; shorten it" in str(err.value)
    # within the length limit, the member count decides
    text = f"E[pred | age in {{{_members(limits.SPEC_SET_MEMBERS + 1)}}}] > 0.1"
    assert len(text) < limits.SPEC_CHARS
    with pytest.raises(SpecError) as err:
        parse(text)
    assert err.value.column == text.index(f" {limits.SPEC_SET_MEMBERS}}}") + 2
    assert "more than 10,000 set members" in str(err.value)
    shown = err.value.pretty().splitlines()
    assert len(shown) == 3 and len(shown[1]) < 130 and shown[1].strip().startswith("…")  # the line, cut around it
    assert shown[1][shown[2].index("^")] == str(limits.SPEC_SET_MEMBERS)[0]
    parse(f"E[pred | age in {{{_members(limits.SPEC_SET_MEMBERS)}}}] > 0.1")  # at the limit: fine


def test_text_length_is_refused_before_reading_with_its_position(monkeypatch, tmp_path):
    monkeypatch.setattr(limits, "SPEC_CHARS", 40)
    text = "# a comment line\nE[pred | sex == \"Female\"] > 0.5 and E[pred] < 0.9"
    with pytest.raises(SpecError) as err:
        parse(text)
    assert str(err.value) == ("2:24: this specification is 66 characters long, over the limit of 40; shorten it (a "
                              "comparison such as 'age >= 18' replaces a long list of values)")
    big = tmp_path / "big.spec"
    big.write_text("E[pred] > 0.5 " + "#" * 500)
    with pytest.raises(SpecError, match=r"big.spec: the specification file is 514 bytes, over the limit of 40 "
                                        r"characters for a specification; it was not read"):
        load_spec_file(big)


def test_cli_check_refuses_in_one_line_exit_2(tmp_path, capsys):
    path = tmp_path / "many.spec"
    path.write_text(f"E[pred | age in {{{_members(12_000)}}}] > 0.1\n")
    started = time.perf_counter()
    done = run_main(capsys, "check", f"@{path}", "--data", "adult")
    assert done.returncode == 2, done.stderr
    first = done.stderr.splitlines()[0]
    assert first.startswith(f"{path}:1:") and "more than 10,000 set members" in first
    assert len(done.stderr) < 600 and "Traceback" not in done.stderr
    huge = tmp_path / "huge.spec"
    huge.write_text(f"E[pred | age in {{{_members(200_000)}}}] > 0.1\n")
    done = run_main(capsys, "check", f"@{huge}")
    assert done.returncode == 2 and "over the limit of 100,000 characters" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert time.perf_counter() - started < 30  # (was 8 s and 560 MB for the second alone)


def test_the_dashboard_editor_goes_through_the_same_check():
    pytest.importorskip("streamlit")
    from fairaudit.ui import flows

    spec, problems = flows.check_spec(f"E[pred | age in {{{_members(limits.SPEC_SET_MEMBERS + 1)}}}] > 0.1")
    assert spec is None and len(problems) == 1 and problems[0][0] == "error"
    assert "more than 10,000 set members" in problems[0][1]
