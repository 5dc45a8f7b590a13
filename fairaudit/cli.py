"""The ``fairaudit`` command.

Each sub-command lives in ``fairaudit/commands/<name>.py`` and provides ``add_arguments(parser)``
and ``run(args) -> int``. Bad input raises ``FairauditError``: printed here as one line on stderr,
exit code 2, never a traceback.
"""
from __future__ import annotations

import argparse
import importlib.util
import sys

from fairaudit.errors import FairauditError

# name -> (module, one-line help). Modules are imported only when their command runs.
COMMANDS = {
    "datasets": ("fairaudit.commands.datasets", "list the built-in datasets"),
    "train": ("fairaudit.commands.train", "train a model and save it"),
    "check": ("fairaudit.commands.check", "check a specification (and validate it against a dataset)"),
    "parse": ("fairaudit.commands.parse", "print the syntax tree of a specification"),
    "audit": ("fairaudit.commands.audit", "audit a model or logged decisions against a specification"),
    "report": ("fairaudit.commands.report", "rebuild the PDF report from a saved audit result"),
}

EXIT_BAD_INPUT = 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # argparse's default prints usage + message; keep exit code 2
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message}\n")


def _available_commands() -> dict[str, tuple[str, str]]:
    found = {}
    for name, (module, help_text) in COMMANDS.items():
        if importlib.util.find_spec(module) is not None:
            found[name] = (module, help_text)
    return found


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="fairaudit", description="Iterative fairness auditing with guarantees.",
                     epilog="Exit codes: 0 ok / certified, 1 violated, 3 undecided, 2 bad input.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for name, (module, help_text) in _available_commands().items():
        cmd = sub.add_parser(name, help=help_text, description=help_text)
        mod = importlib.import_module(module)
        mod.add_arguments(cmd)
        cmd.set_defaults(_run=mod.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args._run(args) or 0)
    except FairauditError as err:
        print(f"fairaudit {args.command}: error: {err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("fairaudit: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # output piped into e.g. `head`, which closed early
        sys.stderr.close()
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
