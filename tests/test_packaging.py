"""The package installs from a wheel (not only as the editable checkout ``make`` uses): the console
script starts in a clean interpreter and finds the bundled datasets and example specs."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_wheel_installs_with_data_and_specs(tmp_path):
    wheels = tmp_path / "wheels"
    # built from a copy of the package's files: building in the checkout leaves build/lib behind, and a later
    # build would ship the modules a move left there
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md", "fairaudit", "data", "specs"):
        copy = shutil.copytree if (ROOT / name).is_dir() else shutil.copy2
        copy(ROOT / name, source / name, **({"ignore": shutil.ignore_patterns("__pycache__")}
                                            if (ROOT / name).is_dir() else {}))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                    "-w", str(wheels), str(source)], check=True, cwd=tmp_path, capture_output=True)
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=False)
    python = env_dir / "bin" / "python"
    wheel = next(wheels.glob("fairaudit-*.whl"))
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps",
                    str(wheel)], check=True, capture_output=True)
    # the dependencies come from this environment's site-packages, as a plain path entry (no .pth
    # processing, so the editable checkout's finder is not active and the wheel's copy is used)
    env = {**os.environ, "PYTHONPATH": sysconfig.get_paths()["purelib"]}
    env.pop("FAIRAUDIT_DATA", None)
    out = subprocess.run([str(env_dir / "bin" / "fairaudit"), "datasets"], capture_output=True, text=True,
                         env=env, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "ricci" in out.stdout and "32,561" in out.stdout.replace("32561", "32,561")
    # the grammar ships in the wheel; the file's '# dataset:' header loads adult from the wheel's data
    check = subprocess.run([str(env_dir / "bin" / "fairaudit"), "check", "@specs/avoir_adult.spec"],
                           capture_output=True, text=True, env=env, cwd=ROOT)
    assert check.returncode == 0 and check.stdout.startswith("ok"), check.stderr
    probe = subprocess.run([str(python), "-c", "import fairaudit, fairaudit.data as d;"
                            "from fairaudit.ui import speclib;"
                            "from fairaudit.programs.population import examples, from_text;"
                            "print(fairaudit.__file__); print(d.DATA_DIR); print(len(speclib.list_specs()));"
                            "print(len([from_text(e.text, e.name) for e in examples()]))"],
                           capture_output=True, text=True, env=env, cwd=tmp_path, check=True)
    module_file, data_dir, n_specs, n_programs = probe.stdout.split("\n")[:4]
    assert module_file.startswith(str(env_dir)), module_file
    assert data_dir.startswith(str(env_dir)), data_dir
    assert int(n_specs) == len(list((ROOT / "specs").glob("*.spec")))
    # the Audit page's example population programs ship in the wheel (package data), and parse
    assert int(n_programs) == len(list((ROOT / "fairaudit" / "programs" / "examples").glob("*.fr"))) > 0
