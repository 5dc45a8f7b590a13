import sys

try:
    from fairaudit.cli import console
except KeyboardInterrupt:  # Ctrl-C before the command line is even read
    print("fairaudit: interrupted", file=sys.stderr)
    sys.exit(130)

console()  # main(), then the process ends with its exit code (fairaudit.cli.exit_now)
