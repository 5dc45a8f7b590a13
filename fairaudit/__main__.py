import sys

try:
    from fairaudit.cli import main
except KeyboardInterrupt:  # Ctrl-C before the command line is even read
    print("fairaudit: interrupted", file=sys.stderr)
    sys.exit(130)

sys.exit(main())
