"""A probabilistic guarantee never reads stronger than it is: "probability ≥ 1" would say certainty."""
import pytest

from fairaudit.core.guarantee import Guarantee


@pytest.mark.parametrize("delta", [0.05, 0.1, 0.15000000000000002, 1e-3, 4e-7, 1e-9, 1e-15])
def test_confidence_is_never_rounded_up(delta):
    g = Guarantee("probabilistic", delta)
    shown = g.phrase.split("≥ ")[1]
    assert float(shown) <= 1 - delta
    assert g.caption.split("≥ ")[1] == shown
    assert shown != "1"


def test_the_usual_levels_read_as_before():
    assert Guarantee("probabilistic", 0.05).phrase == "with probability ≥ 0.95"
    assert Guarantee("probabilistic", 0.15000000000000002).caption == "probability ≥ 0.85"
