"""Write the 39 benchmark programs of FairSquare's Fig. 8 as ``.fr`` files (``python make_programs.py``).

Source: the math-form transcription in the shared notes (seed-fairsquare-justicia.md §A10): population models
Ind (independent), BN1 (sex → capital_gain → the rest) and BN2 (BN1, then ``age := max(age, education_num)``),
crossed with the 13 decision programs. Gaussian parameters are (mean, VARIANCE), as in FairSquare's files.
Output: ``{ind,bn1,bn2}_<program>.fr`` next to this script (the paper's Fig. 8: tautological qualification), and
the same with ``qualified(age > 18)`` under ``qual/`` (the authors' ``_Q`` files; the paper reports "qualitatively
similar" results but no table). The files are committed; this script documents them.

Deviations from the authors' files, none changing any probability:
- Ind files declare ``sex`` plus the variables the program reads; BN1/BN2 files always draw ``capital_gain`` (the
  other variables' parent) and BN2 files always draw ``age`` and ``education_num`` (the integrity constraint
  reads them). Extra draws do not change the joint law of the variables the program reads.
- Decision trees are written as if/elif chains with the same leaves; their number of conditionals may differ.
- NN2,1 under BN1 uses the ×10 input scaling and target ``o1 < o2`` like every other NN file (the authors'
  noqual BN1 file uses ×2 and ``o1 > o2``; notes §A10.3 "repo quirk").
"""
from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent
IND = "    "

SEX = "step([(0,1,0.3307), (1,2,0.6693)])"


def step(probs: list[float]) -> str:
    return "step([" + ", ".join(f"({k},{k + 1},{p:.4f})" for k, p in enumerate(probs)) + "])"


# ---- A10.1 Ind ------------------------------------------------------------------------------------------
IND_MODEL = {
    "age": "gaussian(38.5816, 186.0614)",
    "capital_gain": "gaussian(1077.6488, 54542539.1784)",
    "capital_loss": "gaussian(87.3038, 162376.9378)",
    "hours_per_week": "gaussian(40.4374, 152.4589)",
    "education_num": "gaussian(10.0806, 6.6188)",
    "relationship": step([0.0481, 0.1557, 0.4051, 0.2551, 0.0301, 0.1059]),
    "education": step([0.1644, 0.2239, 0.0361, 0.3225, 0.0177, 0.0328, 0.0424, 0.0158, 0.0198, 0.0133, 0.0530,
                       0.0051, 0.0287, 0.0127, 0.0102, 0.0016]),
}
ORDER = ["age", "education_num", "capital_gain", "capital_loss", "hours_per_week", "relationship", "education"]

# ---- A10.2 BN1: leaves are (F, cg<7298), (F, cg>=7298), (M, cg<5178), (M, cg>=5178) -------------------------
BN_LEAVES = {
    "age": ["gaussian(38.4208, 184.9151)", "gaussian(38.8125, 193.4918)", "gaussian(38.6361, 187.2435)",
            "gaussian(38.2668, 187.2747)"],
    "education_num": ["gaussian(10.0827, 6.5096)", "gaussian(10.1041, 6.1522)", "gaussian(10.0817, 6.4841)",
                      "gaussian(10.0974, 7.1793)"],
    "capital_loss": ["gaussian(86.5949, 157731.9553)", "gaussian(117.8083, 252612.0300)",
                     "gaussian(87.0152, 161032.4157)", "gaussian(101.7672, 189798.1926)"],
    "hours_per_week": ["gaussian(40.4959, 151.4148)", "gaussian(41.6916, 165.3773)", "gaussian(40.3897, 150.6723)",
                       "gaussian(40.6473, 153.4823)"],
    "relationship": [step([.0491, .1556, .4012, .2589, .0294, .1058]), step([.0416, .1667, .4583, .2292, .0166, .0876]),
                     step([.0497, .1545, .4021, .2590, .0294, .1053]), step([.0417, .1624, .3976, .2606, .0356, .1021])],
    "education": [
        step([.1638, .2308, .0354, .3230, .0173, .0321, .0412, .0156, .0200, .0112, .0528, .0050, .0290, .0119, .0092, .0017]),
        step([.1916, .2000, .0500, .3542, .0208, .0125, .0375, .0125, .0292, .0042, .0541, .0000, .0250, .0042, .0042, .0000]),
        step([.1670, .2239, .0358, .3267, .0159, .0320, .0426, .0155, .0198, .0121, .0518, .0047, .0287, .0125, .0096, .0014]),
        step([.1569, .2205, .0417, .3071, .0255, .0302, .0409, .0155, .0178, .0147, .0619, .0062, .0317, .0139, .0139, .0016]),
    ],
}
BN_SEX = [("gaussian(568.4105, 24248365.5428)", "7298.0"), ("gaussian(1329.3700, 69327473.1006)", "5178.0")]


def population(model: str, used: list[str], qual: bool = False) -> str:
    if qual and "age" not in used:
        used = used + ["age"]
    lines = ["def popModel():", f"{IND}sex = {SEX}"]
    if model == "ind":
        lines += [f"{IND}{v} = {IND_MODEL[v]}" for v in ORDER if v in used]
    else:
        need = set(used) | ({"age", "education_num"} if model == "bn2" else set())
        rest = [v for v in ORDER if v in need and v != "capital_gain"]
        for s, (cg, split) in enumerate(BN_SEX):
            lines.append(f"{IND}if sex < 1:" if s == 0 else f"{IND}else:")
            lines.append(f"{IND * 2}capital_gain = {cg}")
            for b in range(2):
                lines.append(f"{IND * 2}if capital_gain < {split}:" if b == 0 else f"{IND * 2}else:")
                leaf = 2 * s + b
                lines += [f"{IND * 3}{v} = {BN_LEAVES[v][leaf]}" for v in rest] or [f"{IND * 3}pass"]
        if model == "bn2":
            lines += [f"{IND}if education_num > age:", f"{IND * 2}age = education_num"]
    lines.append(f"{IND}sensitiveAttribute(sex < 1)")
    if qual:
        lines.append(f"{IND}qualified(age > 18)")
    return "\n".join(lines) + "\n"


# ---- A10.3 decision programs ------------------------------------------------------------------------------
def leaf_cg(threshold: str) -> list[str]:
    return [f"if capital_gain < {threshold}:", f"{IND}t = 1", "else:", f"{IND}t = 0"]


def indent(lines: list[str], depth: int = 1) -> list[str]:
    return [IND * depth + line for line in lines]


def chain(var: str, leaves: list[list[str]]) -> list[str]:
    """``if var < 1: leaves[0] elif var < 2: leaves[1] ... else: leaves[-1]``."""
    out = []
    for k, body in enumerate(leaves):
        if k == 0:
            out.append(f"if {var} < 1:")
        elif k < len(leaves) - 1:
            out.append(f"elif {var} < {k + 1}:")
        else:
            out.append("else:")
        out += indent(body)
    return out


T1, T0 = ["t = 1"], ["t = 0"]
DT16 = chain("relationship", [leaf_cg("5095.5"), leaf_cg("4718.5"), leaf_cg("5095.5"), leaf_cg("8296"), T1,
                              leaf_cg("4668.5")])
FLIP = ["if t > 0.5 and sex < 1:", f"{IND}fl = step([(0,1,0.15), (1,2,0.85)])", f"{IND}if fl < 1:", f"{IND * 2}t = 0"]


def edu_leaf(high: set[int]) -> list[str]:
    return chain("education", [T0 if k in high else T1 for k in range(16)])


def relu(name: str, expr: str) -> list[str]:
    return [f"{name} = {expr}", f"if {name} < 0:", f"{IND}{name} = 0"]


NN_IN = {
    "N_age": "((age - 17) / 73 - 0.5) * 10 + 0.5",
    "N_edu": "((education_num - 3) / 13 - 0.5) * 10 + 0.5",
    "N_cg": "(capital_gain / 22040 - 0.5) * 10 + 0.5",
}
SVM_IN = {
    "N_age": "(age - 17) / 62",
    "N_edu": "(education_num - 3) / 13",
    "N_cg": "capital_gain / 22040",
    "N_cl": "capital_loss / 1258",
    "N_hpw": "(hours_per_week - 4) / 73",
}


def svm(inputs: list[str], expr: str, male_shift: str, affirmative: bool = False) -> list[str]:
    lines = [f"{v} = {SVM_IN[v]}" for v in inputs] + [f"t = {expr}", "if sex > 1:", f"{IND}t = t + {male_shift}"]
    if affirmative:
        lines += ["if sex < 1:", f"{IND}t = t - 0.5"]
    return lines


def nn(inputs: list[str], hidden: list[str], out1: str, out2: str) -> list[str]:
    lines = [f"{v} = {NN_IN[v]}" for v in inputs]
    for i, expr in enumerate(hidden, start=1):
        lines += relu(f"h{i}", expr)
    return lines + relu("o1", out1) + relu("o2", out2)


# name: (variables read, body lines, target)
PROGRAMS = {
    "dt4": (["capital_gain", "age"],
            ["if capital_gain < 7073.5:", f"{IND}t = 1", "else:", f"{IND}if age < 20:", f"{IND * 2}t = 1",
             f"{IND}else:", f"{IND * 2}t = 0"], "t < 0.5"),
    "dt14": (["relationship", "age"],
             chain("relationship", [
                 T1,
                 ["if age < 47.5:", f"{IND}if age < 21.5:", f"{IND * 2}t = 1", f"{IND}else:", f"{IND * 2}t = 1",
                  "else:", f"{IND}t = 0"],
                 T1,
                 ["if age < 50.5:", f"{IND}t = 1", "else:", f"{IND}t = 0"],
                 ["if age < 49.5:", f"{IND}t = 1", "else:", f"{IND}t = 0"],
                 T1]), "t < 0.5"),
    "dt16": (["relationship", "capital_gain"], DT16, "t < 0.5"),
    "dt16a": (["relationship", "capital_gain"], DT16 + FLIP, "t < 0.5"),
    "dt44": (["education", "relationship", "capital_gain"],
             chain("relationship", [edu_leaf({0, 4, 5, 6, 10, 13}), leaf_cg("4718.5"), edu_leaf({0, 4, 10, 13}),
                                    leaf_cg("8296"), T1, leaf_cg("4668.5")]), "t < 0.5"),
    "svm3": (["age", "capital_gain"],
             svm(["N_age", "N_cg"], "-0.0008 * N_age - 5.7337 * N_cg + 1.0003", "0.0001"), "t < 0"),
    "svm4": (["age", "capital_gain", "capital_loss"],
             svm(["N_age", "N_cg", "N_cl"], "0.0006 * N_age - 5.7363 * N_cg - 0.0002 * N_cl + 1.0003", "-0.0003"),
             "t < 0"),
    "svm4a": (["age", "capital_gain", "capital_loss"],
              svm(["N_age", "N_cg", "N_cl"], "0.0006 * N_age - 5.7363 * N_cg - 0.0002 * N_cl + 1.0003", "-0.0003",
                  affirmative=True), "t < 0"),
    "svm5": (["age", "capital_gain", "capital_loss", "hours_per_week"],
             svm(["N_age", "N_cg", "N_cl", "N_hpw"],
                 "0.0001 * N_age - 5.7368 * N_cg + 0.0002 * N_cl + 0.0003 * N_hpw + 1", "0.0005"), "t < 0"),
    "svm6": (["age", "education_num", "capital_gain", "capital_loss", "hours_per_week"],
             svm(["N_age", "N_edu", "N_cg", "N_cl", "N_hpw"],
                 "-0.0106 * N_age - 0.0194 * N_edu - 5.7412 * N_cg + 0.0086 * N_cl - 0.0123 * N_hpw + 1.0257",
                 "-0.0043"), "t < 0"),
    "nn21": (["age", "education_num"],
             nn(["N_age", "N_edu"], ["0.1718 * N_age + 1.1416 * N_edu + 0.4754"],
                "0.4778 * h1 + 1.2091", "1.9717 * h1 - 0.3104"), "o1 < o2"),
    "nn22": (["age", "education_num"],
             nn(["N_age", "N_edu"], ["0.0326 * N_age + 0.9998 * N_edu - 0.8278",
                                     "-0.4210 * N_age - 0.6857 * N_edu + 0.8345"],
                "0.6004 * h1 + 1.1573 * h2 + 0.8849", "1.5905 * h1 + 1.0555 * h2 + 0.9152"), "o1 < o2"),
    "nn32": (["age", "education_num", "capital_gain"],
             nn(["N_age", "N_edu", "N_cg"], ["-0.2277 * N_age + 0.6434 * N_edu + 2.3643 * N_cg + 3.7146",
                                             "-0.0236 * N_age - 3.3556 * N_edu - 1.8183 * N_cg - 1.7810"],
                "0.4865 * h1 + 1.0685 * h2 - 1.8079", "1.7044 * h1 - 1.3880 * h2 + 0.6830"), "o1 < o2"),
}
MODELS = ("ind", "bn1", "bn2")


def program_text(model: str, name: str, qual: bool = False) -> str:
    used, body, target = PROGRAMS[name]
    decision = "\n".join(["def F():"] + indent(body) + [f"{IND}fairnessTarget({target})"]) + "\n"
    q = ", qualified(age > 18)" if qual else ""
    header = (f"# FairSquare Fig. 8 benchmark: population {model.upper()}, decision program {name.upper()}{q}\n"
              f"# (transcribed from notes §A10; gaussian(mean, VARIANCE); written by make_programs.py)\n")
    return header + population(model, used, qual) + "\n" + decision


def main() -> None:
    for model in MODELS:
        for name in PROGRAMS:
            (HERE / f"{model}_{name}.fr").write_text(program_text(model, name), encoding="utf-8")
            (HERE / "qual" / f"{model}_{name}.fr").write_text(program_text(model, name, qual=True), encoding="utf-8")
    print(f"wrote {len(MODELS) * len(PROGRAMS)} files to {HERE} and as many to {HERE / 'qual'}")


if __name__ == "__main__":
    main()
