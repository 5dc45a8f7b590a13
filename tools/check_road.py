"""The import-graph checks of the one-road change (issue 29 part 2): no cycle among fairaudit.cli.* and the api,
nothing in fairaudit.core or fairaudit.engines importing the front ends, core.inputs and core.preflight importing no
engine package, and the route modules importing neither cli.audit nor the api. Run: python tools/check_road.py
(needs grimp)."""
import grimp

g = grimp.build_graph("fairaudit")
mods = sorted(g.modules)


def direct(m):
    return g.find_modules_directly_imported_by(m)


# 1. no cycle among fairaudit.cli.* and fairaudit.api
group = [m for m in mods if m == "fairaudit.api" or m == "fairaudit.cli" or m.startswith("fairaudit.cli.")
         or m == "fairaudit.resolve"]
edges = {m: {n for n in direct(m) if n in group} for m in group}
index, low, stack, on, sccs, counter = {}, {}, [], set(), [], [0]


def strong(v):
    index[v] = low[v] = counter[0]
    counter[0] += 1
    stack.append(v)
    on.add(v)
    for w in edges[v]:
        if w not in index:
            strong(w)
            low[v] = min(low[v], low[w])
        elif w in on:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        comp = []
        while True:
            w = stack.pop()
            on.discard(w)
            comp.append(w)
            if w == v:
                break
        sccs.append(comp)


for m in group:
    if m not in index:
        strong(m)
cycles = [sorted(c) for c in sccs if len(c) > 1]
print("1. cycles among", len(group), "modules (cli.* + api + resolve):", cycles or "none")

# 2. nothing under core or engines imports api / cli / ui
up = ("fairaudit.api", "fairaudit.cli", "fairaudit.ui", "fairaudit.resolve")
bad = [(m, n) for m in mods if m.startswith(("fairaudit.core", "fairaudit.engines"))
       for n in direct(m) if n in up or n.startswith(tuple(u + "." for u in up))]
print("2. core/engines -> api/cli/ui/resolve imports:", bad or "none")

# 3. core/inputs and core/preflight import no fairaudit.engines*
for m in ("fairaudit.core.inputs", "fairaudit.core.preflight"):
    eng = sorted(n for n in direct(m) if n == "fairaudit.engines" or n.startswith("fairaudit.engines."))
    print(f"3. {m} -> fairaudit.engines*:", eng or "none")

# 4. the route modules import neither cli.audit nor fairaudit.api
for m in ("fairaudit.cli._stream_args", "fairaudit.cli._follow_args", "fairaudit.cli._dask_args",
          "fairaudit.engines.monitor.outofcore", "fairaudit.engines.monitor.livelog",
          "fairaudit.engines.monitor.distributed"):
    hit = sorted(n for n in direct(m) if n in ("fairaudit.cli.audit", "fairaudit.api"))
    print(f"4. {m} -> cli.audit/api:", hit or "none")
