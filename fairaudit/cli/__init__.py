"""The ``fairaudit`` command.

Each sub-command lives in ``fairaudit/cli/<name>.py`` and provides ``add_arguments(parser)``
and ``run(args) -> int``. Bad input raises ``FairauditError``: printed here as one line on stderr
(a ``SpecError`` adds its source line and a caret), exit code 2, never a traceback. So does an ``OSError``
on a file the command was given (a name too long, a folder it may not write: ``fairaudit.base.errors.path_error``).
Any other exception is a bug: one line, exit code 4 (``FAIRAUDIT_DEBUG=1`` re-raises it for the traceback).

An error writing to stdout or stderr (a pipe whose reader is gone, as after ``| head -1``; a full disk) never stops
a command, never drops its ``--json`` / ``--pdf`` and never changes its exit code: the rest of what it prints is
dropped (``fairaudit.cli._streams``), for every command alike.

Ctrl-C and SIGTERM stop a command the same way: an exception raised where it is, so that every cleanup runs (no
temporary file stays behind), then one line and exit code 130 (143 for SIGTERM).

``main(argv)`` returns the exit code (tests and callers in Python use it); ``console()`` is the process's entry point
(the ``fairaudit`` script, ``python -m fairaudit``): ``main``, then ``exit_now`` — the process ends with that code as
soon as the command is done and its output is out, without the interpreter's teardown.
"""
from __future__ import annotations

import argparse
import importlib.util
import inspect
import os
import signal
import sys
import threading
from typing import NoReturn

from fairaudit.base.errors import FairauditError, path_error
from fairaudit.cli._streams import guarded_streams

# name -> (module, one-line help). Modules are imported only when their command runs.
COMMANDS = {
    "datasets": ("fairaudit.cli.datasets", "list the built-in datasets"),
    "train": ("fairaudit.cli.train", "train a model and save it"),
    "check": ("fairaudit.cli.check", "check a specification (and validate it against a dataset)"),
    "parse": ("fairaudit.cli.parse", "print the syntax tree of a specification"),
    "audit": ("fairaudit.cli.audit", "audit a model or logged decisions against a specification"),
    "scan": ("fairaudit.cli.scan", "every intersection of the protected attributes: rates and impact ratios with "
                                   "intervals that hold at once"),
    "compare": ("fairaudit.cli.compare", "two or more models (or logged decisions) on the same rows: each one's "
                                         "values and paired intervals on their differences"),
    "repair": ("fairaudit.cli.repair", "what would make it pass: decision thresholds on the model's score, chosen on "
                                       "part of the rows and certified on the rest"),
    "report": ("fairaudit.cli.report", "rebuild the PDF report from a saved audit result"),
}

EXIT_BAD_INPUT = 2
EXIT_INTERNAL_ERROR = 4  # never a verdict's code (0 true, 1 violated, 3 undecided)
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 128 + signal.SIGTERM  # 143, what a shell reports for a command ended by SIGTERM


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the command is (as Ctrl-C raises KeyboardInterrupt), so that the same cleanups run."""


def _terminate(signum, frame):
    raise Terminated()


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # argparse's default prints usage + message; keep exit code 2
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message}\n")


def _available_commands() -> dict[str, tuple[str, str]]:
    found = {}
    for name, (module, help_text) in COMMANDS.items():
        if importlib.util.find_spec(module) is not None:
            found[name] = (module, help_text)
    return found


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The parser; ``argv`` lets a command shape its help (``audit --engine NAME --help``)."""
    parser = _Parser(prog="fairaudit", description="Iterative fairness auditing with guarantees.",
                     epilog="Exit codes: 0 ok / certified, 1 violated, 3 undecided, 2 bad input, "
                            "4 internal error (a bug), 130 interrupted (Ctrl-C).")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    argv = sys.argv[1:] if argv is None else argv
    chosen = _chosen(argv)
    for name, (module, help_text) in _available_commands().items():
        cmd = sub.add_parser(name, help=help_text, description=help_text)
        if name != chosen:
            continue  # its module (and what it imports) only when it is the command that runs: start-up time
        mod = importlib.import_module(module)
        if "argv" in inspect.signature(mod.add_arguments).parameters:
            mod.add_arguments(cmd, argv=argv)
        else:
            mod.add_arguments(cmd)
        cmd.set_defaults(_run=mod.run, _parser=cmd)
    return parser


def _chosen(argv: list[str]) -> str | None:
    """The command ``argv`` runs (its first word, the top-level parser having no option but ``--help``); ``None``
    when it names none (``fairaudit --help``, a mistyped command), and then no command's module is needed either:
    argparse stops at the top level."""
    for word in argv:
        if word == "--":
            continue
        if word.startswith("-"):
            return None
        return word if word in COMMANDS else None
    return None


def _unknown(extra: list[str], parser: argparse.ArgumentParser) -> str:
    """argparse's "unrecognized arguments" line, with the closest option of the command for each mistyped one
    (``--oder`` → ``--order``)."""
    import difflib

    known = [o for action in parser._actions for o in action.option_strings if o.startswith("--")]
    hints = []
    for word in extra:
        if word.startswith("--"):
            close = difflib.get_close_matches(word.split("=", 1)[0], known, n=1, cutoff=0.7)
            if close:
                hints.append((word.split("=", 1)[0], close[0]))
    text = f"unrecognized arguments: {' '.join(extra)}"
    if len(hints) == 1:
        return f"{text} (did you mean {hints[0][1]}?)"
    if hints:
        return f"{text} (did you mean {', '.join(f'{right} for {wrong}' for wrong, right in hints)}?)"
    return text


def main(argv: list[str] | None = None) -> int:
    own = threading.current_thread() is threading.main_thread()  # only the main thread may set a handler
    previous = signal.signal(signal.SIGTERM, _terminate) if own else None
    try:
        with guarded_streams():  # a closed stdout (``| head``) drops what is printed, never the outputs or the code
            try:  # Ctrl-C while the commands are imported, too: one line, never a traceback
                return _run(argv)
            except KeyboardInterrupt as err:
                return interrupted(err)
    finally:
        if own:  # a caller's own handler back (None: one set outside Python, the default stands for it)
            signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)


def console(argv: list[str] | None = None) -> NoReturn:
    """The ``fairaudit`` process: ``main(argv)``, then ``exit_now`` with its exit code (argparse's too: ``--help``,
    a usage error). Only for the command's own process: a Python caller uses ``main``. The streams stay guarded
    (``fairaudit.cli._streams``) until the process ends: what is still buffered is flushed by ``exit_now``."""
    with guarded_streams():
        try:
            code = main(argv)
        except SystemExit as done:  # argparse: --help (0), a usage error (2)
            code = done.code
        if code is None:
            code = 0
        elif not isinstance(code, int):  # what sys.exit("text") does: the text on stderr, exit code 1
            print(code, file=sys.stderr)
            code = 1
        exit_now(code)


def exit_now(code: int) -> NoReturn:
    """End the command's process with exit code ``code`` once its work is done: wait for its threads, run the
    ``atexit`` handlers, flush stdout and stderr, then ``os._exit`` — skipping the interpreter's teardown, where
    pyarrow's thread pools may abort the process ("terminate called without an active exception", SIGABRT, exit
    code 134 instead of the command's: apache/arrow#34314) after the command succeeded. Every file a command writes
    is closed before it returns (written whole, then renamed into place: ``fairaudit.base.files``). A stdout or stderr
    that cannot be flushed does not change the exit code (``fairaudit.cli._streams``: the verdict's code is the
    contract)."""
    import atexit

    for thread in threading.enumerate():  # as the interpreter does before exiting: non-daemon threads finish
        if thread is not threading.current_thread() and not thread.daemon:
            thread.join()
    atexit._run_exitfuncs()  # what the interpreter runs at exit (dask clusters, logging, temporary folders)
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):  # a closed pipe, a full disk, a closed stream: the code stands
            pass
    os._exit(code)


def interrupted(err: BaseException | None = None) -> int:
    """Ctrl-C (or SIGTERM): one line on stderr, exit code 130 (143) — what a shell reports for such a command."""
    if isinstance(err, Terminated):
        print("fairaudit: terminated", file=sys.stderr)
        return EXIT_TERMINATED
    print("fairaudit: interrupted", file=sys.stderr)
    return EXIT_INTERRUPTED


def _run(argv: list[str] | None) -> int:
    parser = build_parser(argv)
    args, extra = parser.parse_known_args(argv)
    if extra:
        args._parser.error(_unknown(extra, args._parser))
    from fairaudit.spec.errors import SpecError  # here, not at import: fairaudit.spec imports pandas (start-up)

    try:
        return int(args._run(args) or 0)
    except SpecError as err:  # positioned: the message, then the source line and a caret under the token
        print(f"fairaudit {args.command}: error: {err.pretty()}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except FairauditError as err:
        print(f"fairaudit {args.command}: error: {err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except MemoryError:
        print(f"fairaudit {args.command}: error: out of memory (use smaller inputs or model sizes)", file=sys.stderr)
        return EXIT_BAD_INPUT
    except OSError as err:  # on a file the command was given (it names it): bad input, not a bug
        if err.filename is None:
            return _internal_error(args, err)
        print(f"fairaudit {args.command}: error: {path_error(err)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except Exception as err:  # a bug: never exit 0/1/3 (a verdict) and never print a traceback
        return _internal_error(args, err)


def _internal_error(args, err: Exception) -> int:
    if os.environ.get("FAIRAUDIT_DEBUG"):
        raise err
    text = " ".join(str(err).split())[:200]
    print(f"fairaudit {args.command}: internal error: {type(err).__name__}: {text} "
          "(a bug in fairaudit; rerun with FAIRAUDIT_DEBUG=1 for the traceback)", file=sys.stderr)
    return EXIT_INTERNAL_ERROR


if __name__ == "__main__":  # pragma: no cover
    console()
