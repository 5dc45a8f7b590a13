"""Back-substituted linear bounds (CROWN-style) on a ReLU network's single output over a batch of boxes.

The second, tighter pass of ``fairaudit.engines.fairquant.analysis``: given the concrete bounds ``[low, up]`` of
every hidden neuron's pre-activation (from the first pass, the symbolic intervals), the output is bounded by one
linear function of the inputs from below and one from above, obtained backwards from the output layer: each
unstable ReLU (``low < 0 < up``) is replaced by the linear relaxation that suits the sign of its coefficient —
``relu(z) ≤ s·(z − low)`` with the chord's slope ``s = up / (up − low)``, ``relu(z) ≥ α·z`` for any ``α ∈ [0, 1]``
— and every affine layer is folded into the coefficients, down to the inputs. The caller concretizes the linear
function over each box (``analysis.concretize``), so the inputs shared by every term cancel before the box is
applied: that is what makes these bounds tighter than intervals propagated forwards.

The lower relaxation's slopes ``α``: ``adaptive`` (1 where ``up > −low``, else 0: the tangent closest to the ReLU,
CROWN's choice) or ``chord`` (``α = s``, parallel to the upper line: the symbolic intervals' choice). Both are
valid for every neuron, so the caller may keep the best bound of several (a cheap stand-in for optimised slopes).

The k copies of a partition (the protected attribute at each of its values) are rows of the same batch over the
same box: the difference of two copies' outputs is bounded by the difference of their linear functions,
concretized once (``difference_forms``), in which every shared input cancels. Pure torch, any device.
"""
from __future__ import annotations

ALPHAS = ("adaptive", "chord")


def _relu_lines(low, up, alpha: str = "adaptive"):
    """Per neuron with pre-activation bounds ``low, up``: ``(active, unstable, chord, tangent)``, the slopes of the
    lines that bound its ReLU: ``relu(z) ≤ chord·(z − low)`` and ``relu(z) ≥ tangent·z`` on an unstable neuron
    (``low < 0 < up``); an active neuron is ``z`` itself, an inactive one 0."""
    import torch

    inactive = up <= 0
    active = ~inactive & (low >= 0)
    unstable = ~inactive & ~active
    chord = torch.where(unstable, up / torch.where(unstable, up - low, 1.0), 0.0)
    tangent = chord if alpha == "chord" else (up > -low).to(up.dtype)
    return active, unstable, chord, tangent


def _step_back(lam, const, low, up, layer, lower: bool, alpha: str = "adaptive"):
    """One step of back-substitution: coefficients ``lam [..., m]`` of a hidden layer's ReLU outputs (its bounds
    ``low, up`` broadcast to ``lam``) become coefficients of that layer's inputs through ``layer = (W, b)``; each
    ReLU is replaced by the line that suits the sign of its coefficient (a lower bound takes the lower line where
    the coefficient is positive, the upper where it is negative), the lines' intercepts and ``b`` go into
    ``const [...]``."""
    import torch

    active, unstable, chord, tangent = _relu_lines(low, up, alpha)
    use_lower = lam >= 0 if lower else lam <= 0
    slope = torch.where(active, 1.0, torch.where(unstable, torch.where(use_lower, tangent, chord), 0.0))
    intercept = torch.where(unstable & ~use_lower, -chord * low, 0.0)
    const = const + (lam * intercept).sum(dim=-1)
    lam = lam * slope
    W, b = layer
    return lam @ W, const + lam @ b


def back_substitute(layers, pre: list, lower: bool, alpha: str = "adaptive"):
    """``(coef [B, n], const [B])``: a linear function of the inputs that bounds the network's output from below
    (``lower``) or above on every box of the batch, given the pre-activation bounds ``pre[i] = (low, up)``
    (``[B, m_i]``) of hidden layer ``i``. ``layers``: ``[(W, b), ...]`` torch tensors, ``W: [out, in]``."""
    if alpha not in ALPHAS:
        raise ValueError(f"alpha must be one of {', '.join(ALPHAS)}, got {alpha!r}")
    W_out, b_out = layers[-1]
    batch = pre[0][0].shape[0] if pre else 1
    lam = W_out[0].expand(batch, -1)
    const = b_out[0].expand(batch).clone()
    for i in range(len(layers) - 2, -1, -1):
        lam, const = _step_back(lam, const, *pre[i], layers[i], lower, alpha)
    if not pre:  # an affine network: the output itself
        lam = lam.expand(batch, -1)
    return lam, const


def difference_forms(lower: tuple, upper: tuple, k: int, lo, hi, i: int = 0, j: int = -1):
    """The linear bounds of ``out_i − out_j`` (copies ``i`` and ``j`` of each partition; rows partition-major,
    ``k`` copies each, over the boxes ``lo, hi [rows, n]``) from every copy's lower and upper linear functions:
    ``L_i − U_j ≤ out_i − out_j ≤ U_i − L_j``, as ``((coef [P, n], const [P]) lower, (coef, const) upper)``. An
    input a copy pins (``lo == hi`` on its row: the protected attribute's value) is folded into its constant
    first, so the two functions are of the same, shared inputs."""
    (lc, ld), (uc, ud) = lower, upper
    pinned = lo == hi
    ld = ld + (lc * lo * pinned).sum(dim=1)
    ud = ud + (uc * lo * pinned).sum(dim=1)
    lc, uc = lc * ~pinned, uc * ~pinned
    P = lc.shape[0] // k
    lc, uc = lc.reshape(P, k, -1), uc.reshape(P, k, -1)
    ld, ud = ld.reshape(P, k), ud.reshape(P, k)
    return (lc[:, i] - uc[:, j], ld[:, i] - ud[:, j]), (uc[:, i] - lc[:, j], ud[:, i] - ld[:, j])


def layer_bounds(layers, pre: list, i: int):
    """Linear bounds of hidden layer ``i``'s pre-activations (``i ≥ 1``) as functions of the inputs, back-substituted
    through layers ``i − 1 … 0`` with the pre-activation bounds ``pre[0..i−1]`` (each unstable ReLU relaxed as in
    ``back_substitute``): ``((lower coef [B, m_i, n], const [B, m_i]), (upper coef, const))``. The caller
    concretizes them over the boxes and keeps the tighter of these and the first pass's bounds.

    The first step back (through layer ``i − 1``'s ReLU) splits ``W_i`` by sign, which is the same for every box:
    ``W_i⁺·diag(a)·W_{i−1} + W_i⁻·diag(s)·W_{i−1}`` is two products of the shared ``W_i^±`` with batched
    ``[B, m_{i−1}, ·]`` matrices, never a ``[B, m_i, m_{i−1}]`` one; further steps are ``_step_back``'s."""
    import torch

    W_i, b_i = layers[i]
    Wp, Wn = W_i.clamp(min=0), W_i.clamp(max=0)
    low, up = pre[i - 1]
    active, unstable, chord, tangent = _relu_lines(low, up)
    upper_slope = torch.where(active, 1.0, chord)  # relu(z) ≤ s·z + t
    upper_shift = torch.where(unstable, -chord * low, 0.0)
    lower_slope = torch.where(active, 1.0, torch.where(unstable, tangent, 0.0))  # relu(z) ≥ a·z
    W, b = layers[i - 1]
    out = []
    for lower in (True, False):
        pos, neg = (lower_slope, upper_slope) if lower else (upper_slope, lower_slope)
        # the coefficient of z_{i-1}: W⁺·pos + W⁻·neg (per box); of the inputs below: that times W_{i-1}
        lam = torch.matmul(Wp, pos[:, :, None] * W) + torch.matmul(Wn, neg[:, :, None] * W)  # [B, m_i, ·]
        const = b_i + (pos * b) @ Wp.T + (neg * b) @ Wn.T + upper_shift @ (Wn if lower else Wp).T
        for l in range(i - 2, -1, -1):
            lam, const = _step_back(lam, const, *(t[:, None, :] for t in pre[l]), layers[l], lower)
        out.append((lam, const))
    return out[0], out[1]
