import sys

from fairaudit.cli import main

sys.exit(main())
