"""A joint anytime-valid test (e-process) for a comparison of two group rates, and how the monitor uses it.

Setting: a comparison whose ``left − right`` is linear in two leaves, ``d = ca·a + cb·b + k`` (a ratio
``a / b op c`` is read as ``a − c·b op 0``, assuming the true ``b`` > 0, where the ratio is defined), and the two
leaves are ``E[· | g₁]``, ``E[· | g₂]`` with conditions that no row can satisfy both (``disjoint``: a column equal to
two different values, or equal and not equal to one value). Each row then updates at most one of the two factors

    M_a(m) = B(½ + S_a, ½ + F_a) / B(½, ½) / (m^S_a (1 − m)^F_a)      (the KT mixture of ``concentration``)

and, under i.i.d. rows with true rates (μ_a, μ_b), the product M_a(μ_a)·M_b(μ_b) is a nonnegative martingale with
mean 1 (given the past and that a row falls in g₁, its outcome is Bernoulli(μ_a); the other factor does not move).
For a null set H (a half-plane ``σ·d ≥ 0`` intersected with the unit square), ``E_t = inf_{(m_a, m_b) ∈ H} M_a·M_b``
is ≤ M_a(μ_a)·M_b(μ_b) whenever (μ_a, μ_b) ∈ H, so by Ville's inequality Pr_H[∃t: E_t ≥ 1/β] ≤ β: rejecting H when
``E_t ≥ 1/β`` is an anytime-valid certificate at level β of the comparison's verdict that excludes H. The event is
"ever", so a certificate, once given, stands: the monitor certifies at a check when the running maximum of E_t up to
it has reached 1/β — unless the other direction's has reached its own target later (which happens with probability
≤ β, a sign that the rows are not exchangeable): the later certificate is then shown (``JointTests.certified``).
Showing fewer certificates never makes one wrong, so the level stands. ``log M`` is convex in m, so the infimum is at the sample means when they lie in H and on the
line ``d = 0`` otherwise, found by a safeguarded Newton search and rounded down (tangent bound, then a relative margin for rounding), so the computed e-value
is never above the exact one.

How it enters the directed allocation (``fairaudit.engines.monitor.directed``; the monitor's default, ``JointTests``). The
directed rule gives every comparison c, for each verdict direction v, ONE level β(c, v) (``comparison_levels``: the
tree has one path from the root to c, and the rule fixes the share along it), and property (P) of a comparison's
certificate is all its proof uses: "if c's true value is not v, Pr[cert(c, v, β) ever holds] ≤ β". The joint test
at β has (P) by Ville's inequality above, so it may stand in for interval arithmetic: cert(c, v, β) := "the
running maximum of E_t against the null of v has reached 1/β" — REPLACING the interval certificate, not OR-ed with
it, since "joint test or interval arithmetic, each at β" is wrong with probability up to 2β (to use both, split β
between them). The rest of the proof is unchanged (a TRUE ``and`` needs the certificate of a false conjunct; a
FALSE ``and`` a union over its n children at β/n; ``not`` flips v), so the theorem "Pr[the verdict is ever wrong]
≤ Δ" holds with the joint tests in place. A comparison with a joint test spends none of its level on leaf
intervals, so the pooled split of a FALSE ``and`` (leaves shared by its comparisons) applies only when no child
has one. The two directions of one comparison never both certify: E against a closed half-plane that contains the
maximum-likelihood point is ≤ 1 < 1/β, and one of the two half-planes always contains it.

What the user sees: the comparison's node carries the e-value (the running maximum, for the direction it
certified, else the one closer to its target) and the target 1/β (``fairaudit.core.evaluate.NodeEvidence``), its
verdict is the test's, and its interval is still the one interval arithmetic gives (it may straddle the threshold:
the sentence then says "decided by the joint test: e-value … ≥ 1/β = …", ``fairaudit.core.guarantee.joint_test_text``).
``bench/power.py`` measures it; ``tests/monitor/test_eprocess.py`` checks it at the boundary, through the engine.
"""
from __future__ import annotations

import numpy as np
from scipy.special import betaln

from fairaudit.bounds.rules import FALSE, TRUE, UNKNOWN
from fairaudit.core.evaluate import CompiledSpec, NodeEvidence, compile_spec, leaf_key
from fairaudit.engines.monitor.split import comparison_levels
from fairaudit.spec import ast

_EPS = 1e-12


def log_mixture(s, n, m):
    """``log M(m)`` of the KT mixture after ``s`` successes in ``n`` (vectorised)."""
    f = n - s
    m = np.clip(m, _EPS, 1 - _EPS)
    return betaln(0.5 + s, 0.5 + f) - betaln(0.5, 0.5) - s * np.log(m) - f * np.log1p(-m)


def _slope(s, n, m):
    m = np.clip(m, _EPS, 1 - _EPS)
    return -s / m + (n - s) / (1 - m)


def _nll(s, f, m):
    """``−S·ln m − F·ln(1 − m)``: the part of ``log M(m)`` that depends on m."""
    m = np.clip(m, _EPS, 1 - _EPS)
    return -s * np.log(m) - f * np.log1p(-m)


def log_evalue(sa, na, sb, nb, ca: float, cb: float, k: float, sigma: int) -> np.ndarray:
    """``log inf_{(ma, mb) ∈ [0,1]², σ(ca·ma + cb·mb + k) ≥ 0} [log M_a(ma) + log M_b(mb)]`` (a lower bound), for
    one test: ``log_evalues`` of that test alone."""
    return log_evalues([(sa, na, sb, nb, ca, cb, k, sigma)])[0]


def log_evalues(tests) -> list[np.ndarray]:
    """``log inf_{(ma, mb) ∈ [0,1]², σ(ca·ma + cb·mb + k) ≥ 0} [log M_a(ma) + log M_b(mb)]`` (a lower bound) for
    every test (``test``: ``(sa, na, sb, nb, ca, cb, k, sigma)``), computed together: every test's checks in one set
    of arrays, so that a chunk of checks costs a few dozen numpy calls instead of a few dozen per test.

    The beta-function terms do not depend on (ma, mb) and are computed once; the line search runs only where the
    sample means are outside the null (elsewhere the infimum is at them). On the line the objective is convex, so
    the search is a safeguarded Newton iteration on its derivative (derivatives only, no logarithm per step), and the
    minimum is bounded below by the tangents at the ends of the final bracket, then rounded down. Each test's
    search stops when its own elements have converged, so a test's values do not depend on the others: they are
    those of one test searched alone (``tests/monitor/test_eprocess.py`` checks it bit for bit against a per-test
    search)."""
    if not tests:
        return []
    shapes, parts = [], []
    for sa, na, sb, nb, *_ in tests:
        arrays = np.broadcast_arrays(*(np.asarray(x, float) for x in (sa, na, sb, nb)))
        shapes.append(arrays[0].shape)
        parts.append([a.ravel() for a in arrays])
    sizes = np.array([p[0].size for p in parts])
    sa, na, sb, nb = (np.concatenate([p[i] for p in parts]) for i in range(4))
    CA, CB, K, SG = (np.repeat(np.array([t[i] for t in tests], dtype=float), sizes) for i in (4, 5, 6, 7))
    fa, fb = na - sa, nb - sb
    const = betaln(0.5 + sa, 0.5 + fa) + betaln(0.5 + sb, 0.5 + fb) - 2 * betaln(0.5, 0.5)
    pa = np.where(na > 0, sa / np.maximum(na, 1), 0.5)
    pb = np.where(nb > 0, sb / np.maximum(nb, 1), 0.5)
    at_mle = const + _nll(sa, fa, pa) + _nll(sb, fb, pb)
    inside = SG * (CA * pa + CB * pb + K) >= 0
    # per test, as Python floats (as a search of that test alone has them): the line's ends in the square and
    # the factors
    lo_, hi_, r_, r2_, ar_, ca2_, cb2_ = ([] for _ in range(7))
    for _, _, _, _, ca, cb, k, _ in tests:
        ends = sorted([(-k) / cb, (-ca - k) / cb])
        lo_.append(max(0.0, ends[0]))
        hi_.append(min(1.0, ends[1]))
        r_.append(-cb / ca)
        r2_.append((cb / ca) ** 2)
        ar_.append(abs(cb / ca))
        ca2_.append(ca ** 2)
        cb2_.append(cb ** 2)
    misses = np.array(lo_) > np.array(hi_)  # the line misses the square: H is the whole square or empty
    group = np.repeat(np.arange(len(tests)), sizes)
    out = np.array(at_mle, dtype=float, copy=True)
    need = ~inside & ~misses[group]
    if need.any():
        sel = np.flatnonzero(need)
        gid = group[sel]
        sa_, fa_, sb_, fb_, c_ = (x[sel] for x in (sa, fa, sb, fb, const))
        ca, cb, k = CA[sel], CB[sel], K[sel]
        LO, HI, R, R2, AR, CA2, CB2 = (np.asarray(v, float)[gid] for v in (lo_, hi_, r_, r2_, ar_, ca2_, cb2_))

        def g(mb, i=slice(None)):
            return _nll(sa_[i], fa_[i], -(cb[i] * mb + k[i]) / ca[i]) + _nll(sb_[i], fb_[i], mb)

        def dg(mb, i=slice(None)):
            return R[i] * _slope(sa_[i], sa_[i] + fa_[i], -(cb[i] * mb + k[i]) / ca[i]) + \
                _slope(sb_[i], sb_[i] + fb_[i], mb)

        def d2g(mb, i):
            ma = np.clip(-(cb[i] * mb + k[i]) / ca[i], _EPS, 1 - _EPS)
            m = np.clip(mb, _EPS, 1 - _EPS)
            return R2[i] * (sa_[i] / ma ** 2 + fa_[i] / (1 - ma) ** 2) + sb_[i] / m ** 2 + fb_[i] / (1 - m) ** 2

        a, b = LO.copy(), HI.copy()
        da, db = dg(a), dg(b)
        b = np.where(da >= 0, a, b)
        a = np.where(db <= 0, b, a)
        pa_, pb_ = pa[sel], pb[sel]
        wa = (sa_ + fa_) / np.clip(pa_ * (1 - pa_), 1e-6, None)
        wb = (sb_ + fb_) / np.clip(pb_ * (1 - pb_), 1e-6, None)
        with np.errstate(divide="ignore", invalid="ignore"):
            lam = (ca * pa_ + cb * pb_ + k) / (CA2 / np.maximum(wa, 1e-12) + CB2 / np.maximum(wb, 1e-12))
            x = pb_ - lam * cb / np.maximum(wb, 1e-12)
        x = np.where((x > a) & (x < b) & np.isfinite(x), x, 0.5 * (a + b))
        act = np.arange(len(sel))  # the elements of the tests still searching
        for _ in range(40):
            xa, aa, ba = x[act], a[act], b[act]
            d = dg(xa, act)
            aa = np.where(d <= 0, xa, aa)
            ba = np.where(d >= 0, xa, ba)
            with np.errstate(divide="ignore", invalid="ignore"):
                step = xa - d / d2g(xa, act)
            ok = (step > aa) & (step < ba) & np.isfinite(step)
            xa = np.where(ok, step, 0.5 * (aa + ba))
            x[act], a[act], b[act] = xa, aa, ba
            ma_ = np.clip(-(cb[act] * xa + k[act]) / ca[act], _EPS, 1 - _EPS)
            mb_ = np.clip(xa, _EPS, 1 - _EPS)
            size = AR[act] * (sa_[act] / ma_ + fa_[act] / (1 - ma_)) + sb_[act] / mb_ + fb_[act] / (1 - mb_)
            far = ~(np.abs(d) * (ba - aa) <= 1e-9 + 1e-13 * size * (ba - aa))
            going = np.bincount(gid[act][far], minlength=len(tests)) > 0  # a test converges as a whole
            act = act[going[gid[act]]]
            if not len(act):
                break
        w = b - a
        ga, gb = g(a), g(b)
        on_line = np.maximum(ga - np.abs(dg(a)) * w, gb - np.abs(dg(b)) * w) - 1e-9
        on_line = np.minimum(on_line, np.minimum(ga, gb))
        out[sel] = c_ + on_line
    final = out - 1e-12 * (np.abs(const) + np.abs(out - const))
    final = np.where(misses[group] & ~inside, np.inf, final)
    return [v.reshape(shape) for v, shape in zip(np.split(final, np.cumsum(sizes)[:-1]), shapes)]


# ---------------------------------------------------------------------------------------------- which comparisons


def _linear(cs: CompiledSpec, node_id):
    """``({leaf key: coefficient}, constant)`` of a term, or None when it is not linear in its leaves."""
    tn = cs.nodes[node_id]
    if tn.kind == "expect":
        return {leaf_key(tn): 1.0}, 0.0
    if tn.kind == "const":
        return {}, float(tn.node.value)
    kids = [_linear(cs, c) for c in tn.children]
    if any(k is None for k in kids):
        return None
    if tn.kind == "neg":
        (c, k), = kids
        return {x: -v for x, v in c.items()}, -k
    if tn.kind in ("add", "sub"):
        (c1, k1), (c2, k2) = kids
        s = 1.0 if tn.kind == "add" else -1.0
        out = dict(c1)
        for x, v in c2.items():
            out[x] = out.get(x, 0.0) + s * v
        return out, k1 + s * k2
    if tn.kind == "mul":
        (c1, k1), (c2, k2) = kids
        if not c1:
            return {x: k1 * v for x, v in c2.items()}, k1 * k2
        if not c2:
            return {x: k2 * v for x, v in c1.items()}, k1 * k2
    if tn.kind == "div":
        (c1, k1), (c2, k2) = kids
        if not c2 and k2 != 0:
            return {x: v / k2 for x, v in c1.items()}, k1 / k2
    return None


def _atoms(event, out):
    if isinstance(event, ast.EvAnd):
        _atoms(event.left, out)
        _atoms(event.right, out)
    elif isinstance(event, ast.Compare) and isinstance(event.left, ast.Name) and isinstance(event.right, ast.Value):
        out.append((event.left.name, event.op, event.right.value))
    return out


def disjoint(given_a, given_b) -> bool:
    """True when no row can satisfy both conditions (read from their conjunctions of ``column op value`` atoms)."""
    if given_a is None or given_b is None:
        return False
    a, b = _atoms(given_a, []), _atoms(given_b, [])
    for col, op, v in a:
        for col2, op2, v2 in b:
            if col != col2:
                continue
            if op == op2 == "==" and v != v2:
                return True
            if {op, op2} == {"==", "!="} and v == v2:
                return True
    return False


def joint_form(cs: CompiledSpec, cmp_id: str):
    """``(key_a, key_b, ca, cb, k)`` with ``left − right = ca·a + cb·b + k`` when the comparison has a joint test
    (two disjoint ``E[· | ·]`` leaves, linear or a ratio against a constant), else None."""
    tn = cs.nodes[cmp_id]
    left, right = tn.children
    if cs.nodes[left].kind == "div" and cs.nodes[right].kind == "const":
        num, den = cs.nodes[left].children
        if cs.nodes[num].kind == "expect" and cs.nodes[den].kind == "expect":
            c = float(cs.nodes[right].node.value)
            form = ({leaf_key(cs.nodes[num]): 1.0, leaf_key(cs.nodes[den]): -c}, 0.0)
        else:
            return None
    else:
        l, r = _linear(cs, left), _linear(cs, right)
        if l is None or r is None:
            return None
        coef = dict(l[0])
        for x, v in r[0].items():
            coef[x] = coef.get(x, 0.0) - v
        form = ({x: v for x, v in coef.items() if v != 0}, l[1] - r[1])
    coef, k = form
    if len(coef) != 2:
        return None
    (ka, ca), (kb, cb) = coef.items()
    na, nb = cs.leaf_node[ka].node, cs.leaf_node[kb].node
    if not disjoint(getattr(na, "given", None), getattr(nb, "given", None)):
        return None
    if cs.nodes[left].kind == "div" and cs.leaf_range.get(kb, (0.0, 1.0))[0] < 0:
        return None  # a ratio read as a difference needs a denominator that cannot be negative
    # a quantity leaf's statistics are kept on [0, 1] (``CompiledSpec.leaf_value``): a = low + width · u
    for key, c in ((ka, ca), (kb, cb)):
        low, high = cs.leaf_range.get(key, (0.0, 1.0))
        k += c * low
        if key == ka:
            ca = c * (high - low)
        else:
            cb = c * (high - low)
    return ka, kb, ca, cb, k


def rounding_slack(cs: CompiledSpec, form) -> float:
    """How far the fixed-point rounding of quantity leaves (``fairaudit.core.counting.QUANTUM``) can move ``d`` of a
    joint form: the null half-plane is widened by it (``JointTests.chunk``), so the test stays sound for the
    unrounded means. 0 for two event leaves."""
    from fairaudit.core.counting import QUANTUM

    ka, kb, ca, cb, _ = form
    return sum(abs(c) for key, c in ((ka, ca), (kb, cb)) if key in cs.leaf_range) * QUANTUM / 2


def null_sign(op: str, want: bool) -> int:
    """σ of the null half-plane ``σ·d ≥ 0`` (closed) that a ``want`` verdict of ``d op 0`` rejects."""
    below = op in ("<", "<=")
    if op in ("==", "!="):
        raise ValueError("no one-sided null for == / !=")
    return 1 if below == want else -1


def joint_forms(spec) -> dict[str, tuple]:
    """``{comparison id: joint_form}`` for every one-sided comparison of ``spec`` that has a joint test."""
    cs = compile_spec(spec)
    out = {}
    for tn in spec.nodes:
        if tn.kind == "cmp" and tn.node.op not in ("==", "!="):
            form = joint_form(cs, tn.id)
            if form is not None:
                out[tn.id] = form
    return out


_LOG_CAP = 700.0  # e-values shown as exp(log e), capped below float overflow
_SATURATED = _LOG_CAP  # a direction whose running log E reaches this is not computed again (≥ _LOG_CAP: ``chunk``)


class JointTests:
    """The joint tests of a spec's comparisons at the directed rule's levels (module doc), carried over chunks of
    checks: ``chunk(stats)`` gives each test's running maximum of log E over a chunk (continuing the last
    ``commit``ted one), ``certified`` the certificates, ``evidence`` what the driver shows. Arrays may have leading
    axes (independent streams, as in the validity harness); the checks are the last axis."""

    def __init__(self, spec, delta: float):
        self.spec = spec
        self.forms = joint_forms(spec)
        self.levels = {key: b for key, b in comparison_levels(spec, delta, set(self.forms)).items()
                       if key[0] in self.forms}
        self.carry: dict[tuple[str, bool], np.ndarray | float] = {key: -np.inf for key in self.levels}
        self.first: dict[tuple[str, bool], np.ndarray | float] = {key: np.inf for key in self.levels}
        self.offset = 0  # checks committed so far

    @property
    def ids(self) -> set[str]:
        return set(self.forms)

    def chunk(self, stats) -> dict[tuple[str, bool], np.ndarray]:
        """``{(comparison id, want): running max of log E}`` at the checks of ``stats`` (leaf key → ``LeafStats``
        over the chunk), starting from the committed state.

        A test whose running maximum has reached ``_SATURATED`` (≥ ``_LOG_CAP``; a single stream) is *saturated*: it
        is not computed again, its running maximum is carried as it is (a lower bound of the exact one, ≥ the cap). Nothing
        shown or decided depends on how far above the cap it is: (1) its certificate needs only "≥ 1/β" (1/β <
        e^``_LOG_CAP``), reached at a check already in ``first``; (2) the e-value shown is capped at e^``_LOG_CAP``;
        (3) ``evidence`` compares the two directions' distances to their targets only where neither certificate is
        shown, and with a saturated direction one always is: its own, or the other's when that one reached its
        target too — at a different check, since at any check one of the two closed half-planes holds the
        maximum-likelihood point, where E ≤ 1 < 1/β (module doc) — which ``certified`` resolves by the first
        checks alone. So the results are those of the test computed at every check; on a long stream whose verdict
        is clear (log E grows linearly with the rows) the line search stops after a few thousand rows."""
        out = {}
        cs = compile_spec(self.spec)
        tests, searched = [], []
        for cid, want in self.levels:
            ka, kb, ca, cb, k = self.forms[cid]
            a, b = stats[ka], stats[kb]
            carry = self.carry[(cid, want)]
            if np.ndim(carry) == 0 and carry >= _SATURATED and np.log(1.0 / self.levels[(cid, want)]) < _LOG_CAP:
                out[(cid, want)] = np.full(np.shape(a.n), float(carry))  # saturated (above)
                continue
            searched.append((cid, want))
            sign = null_sign(cs.nodes[cid].node.op, want)
            k = k + sign * rounding_slack(cs, self.forms[cid])  # H ⊂ the widened null (``rounding_slack``)
            tests.append((a.successes, a.n, b.successes, b.n, ca, cb, k, sign))
        for (cid, want), e in zip(searched, log_evalues(tests)):  # every test of the chunk at once
            e = np.maximum.accumulate(e, axis=-1) if np.ndim(e) else e
            out[(cid, want)] = np.maximum(e, np.expand_dims(self.carry[(cid, want)], -1)
                                          if np.ndim(self.carry[(cid, want)]) else self.carry[(cid, want)])
        return {key: out[key] for key in self.levels}

    def commit(self, cum: dict, upto: int) -> None:
        """Carry the running maxima at check ``upto − 1`` of this chunk into the next one."""
        if upto > 0:
            firsts = self._firsts({key: np.asarray(v)[..., :upto] for key, v in cum.items()})
            for key, v in cum.items():
                self.carry[key] = np.asarray(v)[..., upto - 1]
                self.first[key] = firsts[key]
            self.offset += upto

    def _firsts(self, cum: dict) -> dict:
        """The check (counted from the stream's start) at which each running maximum first reached its target."""
        out = {}
        for key, v in cum.items():
            raw = np.asarray(v) >= np.log(1.0 / self.levels[key])
            here = np.where(raw.any(axis=-1), np.argmax(raw, axis=-1) + self.offset, np.inf)
            out[key] = np.minimum(self.first[key], here)
        return out

    def certified(self, cum: dict) -> dict[tuple[str, bool], np.ndarray]:
        """``{(comparison id, want): bool array}``: the test's certificate of ``want`` at each check — its running
        maximum has reached 1/β — except where the other direction reached its target later (both can only
        happen with probability ≤ β, a sign that the rows are not exchangeable: the later, larger body of evidence
        is shown, as a leaf whose running intersection empties shows its current interval). Dropping a
        certificate never makes it wrong, so (P) still holds."""
        raw = {key: v >= np.log(1.0 / self.levels[key]) for key, v in cum.items()}
        firsts = self._firsts(cum)
        out = {}
        for (cid, want), r in raw.items():
            other = (cid, not want)
            later = np.expand_dims(firsts[(cid, want)] > firsts[other], -1) if np.ndim(firsts[other]) else \
                firsts[(cid, want)] > firsts[other]
            out[(cid, want)] = r & (~raw[other] | later)
        return out

    def evidence(self, cum: dict) -> dict[str, NodeEvidence]:
        """Each tested comparison's ``NodeEvidence``: its verdict by the test, its e-value (running maximum) for the
        direction it certified, else the one closer to its target, and that target 1/β."""
        out = {}
        certs = self.certified(cum)
        for cid in self.forms:
            lt, lf = cum[(cid, True)], cum[(cid, False)]
            tt, tf = np.log(1.0 / self.levels[(cid, True)]), np.log(1.0 / self.levels[(cid, False)])
            yes, no = certs[(cid, True)], certs[(cid, False)]
            verdict = np.where(yes & ~no, TRUE, np.where(no & ~yes, FALSE, UNKNOWN)).astype(np.int8)
            show_true = yes | (~no & (lt - tt >= lf - tf))
            log_e = np.minimum(np.where(show_true, lt, lf), _LOG_CAP)
            target = np.where(show_true, 1.0 / self.levels[(cid, True)], 1.0 / self.levels[(cid, False)])
            out[cid] = NodeEvidence(verdict, np.exp(log_e), target, test="joint test")
        return out
