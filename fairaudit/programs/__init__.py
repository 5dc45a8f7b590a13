"""FairSquare-style population and decision programs (``.fr`` files).

``parse.parse_program(text)`` reads a ``.fr`` file into the typed IR of ``ir`` (never ``eval``: Python's ``ast``
module, then a whitelist); ``sample.sample(program, n, seed)`` draws ``n`` individuals at once with numpy and
returns, per individual, the sensitive condition, the qualification and the decision target;
``printer.format_program(program)`` writes the IR back as ``.fr`` text.
"""
from fairaudit.programs.ir import Program
from fairaudit.programs.parse import parse_program, parse_file
from fairaudit.programs.printer import format_program
from fairaudit.programs.sample import Sample, sample, estimate

__all__ = ["Program", "parse_program", "parse_file", "format_program", "Sample", "sample", "estimate"]
