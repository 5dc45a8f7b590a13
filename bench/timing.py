"""The benches' one timing helper: every measurement in a fresh process, timed from outside, rounds interleaved.

A **contender** is what is timed: an argv list (``[sys.executable, "-m", "fairaudit", "scan", ...]``) or a
``Snippet`` (Python code run with ``python -c``: its ``setup`` — imports — and its ``body``, the work). Each run is
a new child process, so nothing the code under test caches (a data hash, an imported module, a fitted model, a
Parquet footer in memory) carries over from one run to the next; ``FAIRAUDIT_CACHE_DIR`` points at a new empty
folder in every run, so fairaudit's disk cache cannot carry over either. (The operating system's page cache does:
every contender reads the same files, and the rounds are interleaved so that it favours none of them.) fairaudit's
modules are compiled to bytecode once before the first round (``python -m compileall``, as ``pip install`` does for an
installed package) and children may read it, whatever ``PYTHONDONTWRITEBYTECODE`` says here: otherwise every run would
compile ~100 modules (~0.35 s on 2 shared cores) that no installed copy compiles.

Each run is measured by the parent: **wall** seconds (``time.perf_counter`` around the child), **CPU** seconds
(user + system of the child and of the descendants it waited for, from ``os.wait4``'s rusage) and **peak RSS**
(``ru_maxrss``: the largest resident set of one process of that tree, in MB, taken by a small launcher: see
``SHIM``). A ``Snippet`` also reports its body's
own wall and CPU seconds (after the imports: ``work``), printed on a ``@@bench`` line that the parent reads back.

``interleave(contenders, rounds)`` runs A, B, C, A, B, C, … (``rounds`` ≥ 5 each) and returns the median, min and
max of each figure per contender, with the 1-minute load average before and after (the machine is shared);
``table(...)`` prints them as a markdown table with each contender's ratio to a named floor, its target and
whether it is met.

    from timing import Snippet, interleave, table
    res = interleave({"pandas": Snippet("import pandas as pd", "pd.read_parquet(PATH)"),
                      "fairaudit": [sys.executable, "-m", "fairaudit", "scan", ...]}, rounds=5)
    print(table(res, floor="pandas", targets={"fairaudit": 1.5}))
"""
from __future__ import annotations

import hashlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field

FIGURES = ("wall", "cpu", "rss", "work_wall", "work_cpu", "extra_rss")
MARK = "@@bench"


@dataclass
class Snippet:
    """Python code for ``python -c``: ``setup`` (imports: not in ``work``), then ``body`` (timed as ``work``)."""
    setup: str
    body: str
    args: tuple = ()  # sys.argv[1:] of the child

    def argv(self) -> list[str]:
        code = (f"import os as _o, time as _t\n{self.setup}\n_w, _c = _t.perf_counter(), _t.process_time()\n"
                f"{self.body}\nprint('{MARK}', _t.perf_counter() - _w, _t.process_time() - _c, flush=True)\n")
        return [sys.executable, "-c", code, *map(str, self.args)]


@dataclass
class Run:
    wall: float
    cpu: float
    rss: float  # MB
    rc: int
    stdout: str
    work_wall: float | None = None
    work_cpu: float | None = None
    extra_rss: float | None = None


def measure(contender, ok=(0,), env: dict | None = None, timeout: float | None = None) -> Run:
    """One run of ``contender`` in a fresh child process (a new empty ``FAIRAUDIT_CACHE_DIR``); raises when its exit
    code is not in ``ok`` (a ``Snippet``'s: not 0). A contender object with ``argv()`` may also have ``start()`` and
    ``stop() -> (cpu seconds, peak RSS MB)``, called around the child, for work done by processes that are not its
    descendants (a running Dask cluster's workers): their CPU is added to the run's, their peak is ``extra_rss``."""
    argv = contender.argv() if hasattr(contender, "argv") else list(contender)
    if hasattr(contender, "start"):
        contender.start()
    with tempfile.TemporaryDirectory(prefix="fairaudit-bench-") as tmp, \
            open(os.path.join(tmp, "out"), "w+") as out, open(os.path.join(tmp, "err"), "w+") as err:
        child_env = {**{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
                     "FAIRAUDIT_CACHE_DIR": os.path.join(tmp, "cache"), **(env or {})}
        peak = os.path.join(tmp, "peak")
        t0 = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-S", "-c", SHIM, peak, *argv], stdout=out, stderr=err,
                                env=child_env, start_new_session=True)
        try:
            _, status, usage = _wait4(proc.pid, timeout)
        except BaseException:
            os.killpg(proc.pid, 9)
            raise
        wall = time.perf_counter() - t0
        proc.returncode = rc = os.waitstatus_to_exitcode(status)
        out.seek(0), err.seek(0)
        stdout = out.read()
        if rc not in ((0,) if isinstance(contender, Snippet) else ok):
            raise RuntimeError(f"{argv[:6]}... exited {rc}:\n{stdout[-2000:]}\n{err.read()[-3000:]}")
        rss = int(open(peak).read()) / 1024 if os.path.exists(peak) else float("nan")  # none when killed
    run = Run(wall, usage.ru_utime + usage.ru_stime, rss, rc, stdout)
    if hasattr(contender, "stop"):
        cpu, run.extra_rss = contender.stop()
        run.cpu += cpu
    for line in stdout.splitlines():
        if line.startswith(MARK):
            run.work_wall, run.work_cpu = map(float, line.split()[1:3])
    return run


# The measured command runs under this small launcher (``python -S``: ~10 MB): Linux carries a process's peak RSS
# (``ru_maxrss``) over fork and exec, so a command started straight from this process would report at least this
# process's own peak. The launcher forks, execs the command and writes the peak of it and its descendants.
SHIM = """import os, sys
pid = os.fork()
if pid == 0:
    os.execvp(sys.argv[2], sys.argv[2:])
_, status, usage = os.wait4(pid, 0)
with open(sys.argv[1], "w") as f:
    f.write(str(usage.ru_maxrss))
sys.exit(os.waitstatus_to_exitcode(status) % 256)
"""


def compile_package() -> None:
    """fairaudit's modules compiled to bytecode in their ``__pycache__`` (as an installed package's are)."""
    package = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fairaudit")
    subprocess.run([sys.executable, "-m", "compileall", "-q", package], check=True)


def _wait4(pid: int, timeout: float | None):
    """``os.wait4`` with an optional timeout (the child's process group is killed when it runs past it)."""
    if timeout is None:
        return os.wait4(pid, 0)
    end = time.monotonic() + timeout
    while True:
        got = os.wait4(pid, os.WNOHANG)
        if got[0]:
            return got
        if time.monotonic() > end:
            os.killpg(pid, 9)
            return os.wait4(pid, 0)
        time.sleep(0.02)


@dataclass
class Result:
    runs: dict = field(default_factory=dict)  # name -> [Run]
    load: tuple = (0.0, 0.0)  # 1-minute load average before, after

    def stat(self, name: str, figure: str, how=statistics.median):
        values = [getattr(r, figure) for r in self.runs[name] if getattr(r, figure) is not None]
        return how(values) if values else None


def interleave(contenders: dict, rounds: int = 5, ok=(0,), env: dict | None = None, timeout: float | None = None,
               before_round=None, echo=True) -> Result:
    """Run every contender once per round, in turn (A, B, C, A, B, C, …), ``rounds`` (≥ 5) times each.
    ``before_round(i)``, when given, is called before round ``i`` outside the timing (to make fresh inputs)."""
    if rounds < 5:
        raise ValueError("rounds must be >= 5")
    compile_package()
    res = Result({name: [] for name in contenders}, (os.getloadavg()[0], 0.0))
    for i in range(rounds):
        if before_round is not None:
            before_round(i)
        for name, contender in contenders.items():
            run = measure(contender, ok, env, timeout)
            res.runs[name].append(run)
            if echo:
                print(f"  round {i + 1}/{rounds} {name}: wall {run.wall:.2f} s, CPU {run.cpu:.2f} s, "
                      f"peak RSS {run.rss:,.0f} MB", file=sys.stderr, flush=True)
    res.load = (res.load[0], os.getloadavg()[0])
    return res


def _f(x: float) -> str:
    return f"{x:.3f}" if x < 1 else f"{x:.2f}"


def table(res: Result, floor: str | None = None, targets: dict | None = None, on: str = "cpu",
          rss_targets: dict | None = None) -> str:
    """A markdown table of ``res``: median wall (min–max), median CPU (min–max), peak RSS (max over the runs), the
    body's own time for snippets, the ratio to ``floor`` (wall / CPU), and per contender in ``targets`` (name ->
    factor, or (factor, reference name) to compare with another contender than the floor) whether its ratio in the
    figure ``on`` is within it ("cpu", "wall", or a snippet's "work_cpu" / "work_wall": its work after the
    imports); ``rss_targets`` (name -> MB) likewise."""
    targets, rss_targets = targets or {}, rss_targets or {}
    lines = [f"load average (1 min) {res.load[0]:.1f} before, {res.load[1]:.1f} after; {os.cpu_count()} cores; "
             f"{len(next(iter(res.runs.values())))} interleaved rounds, medians (min–max)", "",
             "| contender | wall s | CPU s | peak RSS MB | work wall / CPU s | × floor (wall / CPU) | target | met |",
             "|---|---|---|---|---|---|---|---|"]
    for name in res.runs:
        s = {f: res.stat(name, f) for f in FIGURES}
        span = {f: f"{_f(res.stat(name, f, min))}–{_f(res.stat(name, f, max))}" for f in ("wall", "cpu")}
        rss = res.stat(name, "rss", max)
        work = f"{_f(s['work_wall'])} / {_f(s['work_cpu'])}" if s["work_wall"] is not None else "–"
        ratio, target, met = "–", [], []
        if floor == name:
            ratio = "1 (floor)"
        elif floor is not None:
            ratio = f"{s['wall'] / res.stat(floor, 'wall'):.2f} / {s['cpu'] / res.stat(floor, 'cpu'):.2f}"
        if name in targets:
            factor, ref = targets[name] if isinstance(targets[name], tuple) else (targets[name], floor)
            base = res.stat(ref, on)
            r = s[on] / base if s[on] is not None and base else float("nan")
            target.append(f"≤ {factor:g}× {'' if ref == floor else ref + ' '}({on.replace('_', ' ')}: {r:.2f}×)")
            met.append("met" if r <= factor else "**missed**")
        if name in rss_targets:
            target.append(f"≤ {rss_targets[name]:,.0f} MB")
            met.append("met" if rss <= rss_targets[name] else "**missed**")
        lines.append(f"| {name} | {_f(s['wall'])} ({span['wall']}) | {_f(s['cpu'])} ({span['cpu']}) | {rss:,.0f} | "
                     f"{work} | {ratio} | {', '.join(target) or '–'} | {', '.join(met) or '–'} |")
    return "\n".join(lines)


def stamp() -> str:
    """When and at which commit (``git log --oneline -1``, and a fingerprint of uncommitted changes to ``fairaudit/``)
    a run was made."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    git = lambda *a: subprocess.run(["git", *a], cwd=root, capture_output=True, text=True).stdout.strip()  # noqa: E731
    diff = subprocess.run(["git", "diff", "HEAD", "--", "fairaudit"], cwd=root, capture_output=True).stdout
    new = git("ls-files", "--others", "--exclude-standard", "--", "fairaudit").split()
    dirty = (f" + uncommitted changes to fairaudit/ (diff sha1 {hashlib.sha1(diff).hexdigest()[:8]}, "
             f"{len(new)} new files)") if diff or new else ""
    when = time.strftime("%Y-%m-%d %H:%M %Z")
    return f"{when}; {git('log', '--oneline', '-1')}{dirty}; python {sys.version.split()[0]}"
