import itertools

import pytest

from fairaudit.viz.layout import tree_layout
from tests.viz.synthetic import big_tree, make_result


def _check(nodes):
    placed = {p.id: p for p in tree_layout(nodes)}
    assert set(placed) == {n["id"] for n in nodes}
    # parent strictly above (smaller depth) each child, one row apart
    for p in placed.values():
        if p.parent is not None:
            assert placed[p.parent].depth == p.depth - 1
    # no two nodes at the same position; nodes on one row at least one unit apart
    for a, b in itertools.combinations(placed.values(), 2):
        assert (a.x, a.depth) != (b.x, b.depth)
        if a.depth == b.depth:
            assert abs(a.x - b.x) >= 1.0 - 1e-9
    # parents centred over their first and last child
    kids = {}
    for n in nodes:
        if n["parent"] is not None:
            kids.setdefault(n["parent"], []).append(n["id"])
    for parent, ch in kids.items():
        assert placed[parent].x == pytest.approx((placed[ch[0]].x + placed[ch[-1]].x) / 2)
    # leaves spread evenly, left to right in list (pre-)order
    leaves = [n["id"] for n in nodes if n["id"] not in kids]
    assert [placed[i].x for i in leaves] == list(range(len(leaves)))
    return placed


def test_small_tree_layout():
    placed = _check(make_result()["nodes"])
    assert placed["n0"].depth == 0 and placed["n3"].depth == 3


@pytest.mark.parametrize("parts", [1, 2, 4, 6])
def test_big_tree_layout(parts):
    nodes = big_tree(parts)
    assert 3 <= len(nodes) <= 40
    _check(nodes)


def test_chain_and_single_node():
    assert tree_layout([{"id": "a", "parent": None}])[0].x == 0
    chain = [{"id": "a", "parent": None}, {"id": "b", "parent": "a"}, {"id": "c", "parent": "b"}]
    placed = _check(chain)
    assert placed["a"].x == placed["b"].x == placed["c"].x


def test_bad_trees_raise():
    with pytest.raises(ValueError):
        tree_layout([{"id": "a", "parent": "zz"}])
    with pytest.raises(ValueError):
        tree_layout([{"id": "a", "parent": None}, {"id": "a", "parent": None}])
    with pytest.raises(ValueError):
        tree_layout([{"id": "a", "parent": "b"}, {"id": "b", "parent": "a"}])
