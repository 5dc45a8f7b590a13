import subprocess
import sys


def test_help_runs_as_module():
    out = subprocess.run([sys.executable, "-m", "fairaudit", "--help"], capture_output=True, text=True)
    assert out.returncode == 0
    assert "Exit codes" in out.stdout


def test_unknown_command_exits_2():
    out = subprocess.run([sys.executable, "-m", "fairaudit", "nonsense"], capture_output=True, text=True)
    assert out.returncode == 2
