"""The fairquant layer rules, one at a time (notes §B2.3, §B2.4, §B6.1, §B6.4): concretisation, affine, ReLU
relaxation, the interval gradient; each against the notes' exact numbers and against sampling (soundness)."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

from fairaudit.engines.fairquant.analysis import (ACTIVE, INACTIVE, UNSTABLE, Box, Symbolic, affine_rule,  # noqa: E402
                                        backward_rule, concretize, forward_bounds, relu_rule)

T = torch.tensor


def box(lo, hi, groups=()):
    return Box(torch.from_numpy(np.array([lo], dtype=float)), torch.from_numpy(np.array([hi], dtype=float)),
               list(groups))


def linear(coef, const):
    """One neuron ``coef·x + const`` as a Symbolic with L = U, batch 1."""
    c = T(coef, dtype=torch.float64)[None, :, None]
    d = T([const], dtype=torch.float64)[None, :]
    return Symbolic(c.clone(), d.clone(), c.clone(), d.clone())


def test_concretize_numeric_box():
    s = linear([2.0, -3.0], 1.0)
    low, high = concretize(s.lc, s.ld, box([1, 0], [5, 2]))
    assert low.item() == 1 + 2 * 1 - 3 * 2 and high.item() == 1 + 2 * 5 - 3 * 0


def test_concretize_one_hot_group_is_exact():
    # inputs: x0 numeric in [0, 1], then a group of 4 indicators; codes 1..2 allowed
    c = T([0.5, 3.0, -1.0, 2.0, -7.0], dtype=torch.float64)[None, :, None]
    d = T([[0.0]], dtype=torch.float64)
    allowed = T([[False, True, True, False]])
    low, high = concretize(c, d, Box(T([[0, 0, 0, 0, 0.]], dtype=torch.float64),
                                     T([[1, 0, 0, 0, 0.]], dtype=torch.float64), [(1, 4, allowed)]))
    assert low.item() == -1.0 and high.item() == 0.5 + 2.0  # min/max over codes {1, 2} only, never -7 or 3


@pytest.mark.parametrize("shift, scale, lo, hi", [(0.0, 9 / 14, -1.0, 1.8), (0.7, 25 / 28, -0.3, 2.5)])
def test_relu_rule_single_neuron(shift, scale, lo, hi):
    """§B6.4: box x1 ∈ [1,5], x3 ∈ [0,5], pre-activation −0.2x1 + 0.4x3 (+0.7): L' = λ·z, U' = λ·(z − lo)."""  # noqa
    s = linear([-0.2, 0.4], shift)
    b = box([1, 0], [5, 5])
    low, high = concretize(s.lc, s.ld, b)
    assert low.item() == pytest.approx(lo) and high.item() == pytest.approx(hi)
    out, mask = relu_rule(s, b)
    assert mask.item() == UNSTABLE
    assert out.lc[0, :, 0].tolist() == pytest.approx([-0.2 * scale, 0.4 * scale])
    assert out.ld.item() == pytest.approx(shift * scale)
    assert out.uc[0, :, 0].tolist() == pytest.approx([-0.2 * scale, 0.4 * scale])
    assert out.ud.item() == pytest.approx((shift - lo) * scale)
    # soundness on every point of the box (and the real box by sampling)
    rng = np.random.default_rng(0)
    pts = np.vstack([[[a, c] for a in range(1, 6) for c in range(6)], rng.uniform([1, 0], [5, 5], (500, 2))])
    z = pts @ np.array([-0.2, 0.4]) + shift
    L = pts @ out.lc[0, :, 0].numpy() + out.ld.item()
    U = pts @ out.uc[0, :, 0].numpy() + out.ud.item()
    assert (L <= np.maximum(z, 0) + 1e-12).all() and (np.maximum(z, 0) <= U + 1e-12).all()


def test_relu_rule_stable_cases():
    b = box([0, 0], [1, 1])
    out, mask = relu_rule(linear([1.0, 1.0], -3.0), b)  # always ≤ 0
    assert mask.item() == INACTIVE and out.lc.abs().sum() == 0 and out.ud.item() == 0
    out, mask = relu_rule(linear([1.0, 1.0], 0.0), b)  # low = 0 ≥ 0: active, kept
    assert mask.item() == ACTIVE and out.lc[0, :, 0].tolist() == [1.0, 1.0]


def test_relu_rule_lower_bound_zero_when_lows_up_negative():
    # L = x − 2, U = x + 0.5 over x ∈ [0, 1]: low −2, lowsUp −1 < 0 → L := 0;
    # U over [0.5, 1.5]: upsLow ≥ 0, so U is kept
    s = Symbolic(T([[[1.0]]], dtype=torch.float64), T([[-2.0]], dtype=torch.float64),
                 T([[[1.0]]], dtype=torch.float64), T([[0.5]], dtype=torch.float64))
    out, mask = relu_rule(s, box([0], [1]))
    assert mask.item() == UNSTABLE
    assert out.lc.item() == 0 and out.ld.item() == 0
    assert out.uc.item() == 1.0 and out.ud.item() == 0.5  # upsLow = 0.5 ≥ 0: U kept


def test_affine_rule_splits_positive_and_negative_weights():
    # two neurons with L = [x, 0], U = [x + 1, 2]; z' = 2·n1 − 3·n2 + 1
    s = Symbolic(T([[[1.0, 0.0]]], dtype=torch.float64), T([[0.0, 0.0]], dtype=torch.float64),
                 T([[[1.0, 0.0]]], dtype=torch.float64), T([[1.0, 2.0]], dtype=torch.float64))
    out = affine_rule(s, T([[2.0, -3.0]], dtype=torch.float64), T([1.0], dtype=torch.float64))
    assert out.lc.item() == 2.0 and out.ld.item() == 2 * 0 - 3 * 2 + 1  # 2·L1 − 3·U2 + 1
    assert out.uc.item() == 2.0 and out.ud.item() == 2 * 1 - 3 * 0 + 1  # 2·U1 − 3·L2 + 1


EXAMPLE = [(T([[2.0, 0.5, 1.2], [-0.2, 0.7, 0.4]], dtype=torch.float64), T([0.0, 0.0], dtype=torch.float64)),
           (T([[0.2, -1.0]], dtype=torch.float64), T([0.0], dtype=torch.float64))]


@pytest.mark.parametrize("lo, hi, expected", [
    ([1, 0, 0], [5, 0, 5], (-0.2, 2.642857142857143)),   # root, x2 = 0 (§B6.1)
    ([1, 1, 0], [5, 1, 5], (-0.8, 2.367857142857143)),   # root, x2 = 1
    ([4, 0, 0], [5, 0, 5], (1.490909090909091, 2.654545454545455)),  # child x1 ∈ [4, 5]
    ([4, 1, 0], [5, 1, 5], (1.0, 2.359090909090909)),
])
def test_running_example_output_bounds(lo, hi, expected):
    low, high, masks = forward_bounds(EXAMPLE, box(lo, hi))
    assert (low.item(), high.item()) == pytest.approx(expected, abs=1e-12)


def test_running_example_gradient():
    """§B6.1: masks [active, unstable]; g(x1) = [0.4, 0.6], g(x2) = [−0.6, 0.1], g(x3) = [−0.16, 0.24]."""
    _, _, masks = forward_bounds(EXAMPLE, box([1, 0, 0], [5, 0, 5]))
    assert masks[0].tolist() == [[ACTIVE, UNSTABLE]]
    gl, gu = backward_rule(EXAMPLE, masks)
    assert gl[0].tolist() == pytest.approx([0.4, -0.6, -0.16])
    assert gu[0].tolist() == pytest.approx([0.6, 0.1, 0.24])


def test_forward_bounds_are_sound_on_random_networks():
    rng = np.random.default_rng(1)
    for trial in range(20):
        sizes = [4, int(rng.integers(2, 8)), int(rng.integers(2, 6)), 1]
        layers_np = [(rng.normal(size=(b, a)), rng.normal(size=b)) for a, b in zip(sizes, sizes[1:])]
        layers = [(torch.from_numpy(W), torch.from_numpy(b)) for W, b in layers_np]
        lo = rng.integers(-3, 2, 4).astype(float)
        hi = lo + rng.integers(0, 4, 4)
        low, high, _ = forward_bounds(layers, box(lo, hi))
        pts = rng.uniform(lo, hi, (400, 4))
        h = pts
        for k, (W, b) in enumerate(layers_np):
            h = h @ W.T + b
            if k < len(layers_np) - 1:
                h = np.maximum(h, 0)
        assert (h[:, 0] >= low.item() - 1e-9).all() and (h[:, 0] <= high.item() + 1e-9).all(), trial


def test_rules_are_batched():
    """A batch of boxes gives each box's own bounds (the same as one at a time)."""
    boxes = [([1, 0, 0], [5, 0, 5]), ([4, 1, 0], [5, 1, 5]), ([2, 0, 3], [2, 0, 4])]
    both = Box(T([b[0] for b in boxes], dtype=torch.float64), T([b[1] for b in boxes], dtype=torch.float64))
    low, high, masks = forward_bounds(EXAMPLE, both)
    gl, gu = backward_rule(EXAMPLE, masks)
    for i, (lo, hi) in enumerate(boxes):
        l1, h1, m1 = forward_bounds(EXAMPLE, box(lo, hi))
        g1 = backward_rule(EXAMPLE, m1)
        assert low[i].item() == pytest.approx(l1.item()) and high[i].item() == pytest.approx(h1.item())
        assert gl[i].tolist() == pytest.approx(g1[0][0].tolist()) and gu[i].tolist() == pytest.approx(g1[1][0].tolist())


def test_the_fused_first_layers_equal_the_rules_one_by_one():
    """``first_layers`` (input, ReLU and second affine layer at once) gives the bounds and masks of
    ``input_rule`` → ``relu_rule`` → ``affine_rule``, on random networks, boxes and a one-hot group."""
    from fairaudit.engines.fairquant.analysis import forward_bounds_stepwise

    rng = np.random.default_rng(7)
    for trial in range(30):
        depth = int(rng.integers(1, 4))
        sizes = [6] + [int(rng.integers(1, 9)) for _ in range(depth)] + [1]
        layers = [(torch.from_numpy(rng.normal(size=(b, a))), torch.from_numpy(rng.normal(size=b)))
                  for a, b in zip(sizes, sizes[1:])]
        B = 5
        lo = rng.integers(-3, 2, (B, 6)).astype(float)
        hi = lo + rng.integers(0, 4, (B, 6))
        lo[:, 3:], hi[:, 3:] = 0, 0  # inputs 3..5: a one-hot group of 3 codes
        codes = rng.integers(0, 3, B)
        allowed = torch.from_numpy(np.arange(3)[None, :] >= codes[:, None])
        box = Box(torch.from_numpy(lo), torch.from_numpy(hi), [(3, 3, allowed)])
        a = forward_bounds(layers, box)
        b = forward_bounds_stepwise(layers, box)
        assert np.allclose(a[0].numpy(), b[0].numpy(), atol=1e-9) and np.allclose(a[1].numpy(), b[1].numpy(),
                                                                                  atol=1e-9), trial
        assert all(torch.equal(x, y) for x, y in zip(a[2], b[2])), trial
