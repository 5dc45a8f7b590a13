"""The stream order is drawn with the user's seed and a salt of fairaudit's own (issue 43, item 6): a file whose
rows a user ordered with ``numpy.random.default_rng(seed)`` — the same seed they pass to the audit — cannot line up
with the audit's shuffle."""
import numpy as np

from fairaudit.base.order import ORDER_SALT, order_rng


def _file_ordered_by_the_users_generator(n: int, seed: int) -> np.ndarray:
    """Rows sorted by group (first half group 1), written in the order that undoes ``default_rng(seed)``'s
    permutation (the inverse: a random-looking file)."""
    groups = (np.arange(n) < n // 2).astype(int)
    return groups[np.argsort(np.random.default_rng(seed).permutation(n))]


def test_a_users_own_generator_does_not_line_up_with_the_order():
    n = 20_000
    for seed in (0, 1, 42, 2**40):
        rows = _file_ordered_by_the_users_generator(n, seed)
        assert abs(rows[:2000].mean() - 0.5) < 0.05  # the file itself looks random
        unsalted = rows[np.random.default_rng(seed).permutation(n)]
        assert unsalted[: n // 2].all() and not unsalted[n // 2:].any()  # negative control: the old order sorts it
        stream = rows[order_rng(seed).permutation(n)]
        assert abs(stream[:2000].mean() - 0.5) < 0.05  # the audit's order is random for it


def test_the_order_is_reproducible_and_depends_on_the_seed():
    assert np.array_equal(order_rng(3).permutation(100), order_rng(3).permutation(100))
    assert not np.array_equal(order_rng(3).permutation(100), order_rng(4).permutation(100))
    assert ORDER_SALT == int.from_bytes(__import__("hashlib").sha256(b"fairaudit stream order").digest()[:8], "big")
