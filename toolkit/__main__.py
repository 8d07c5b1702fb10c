"""`python -m toolkit`: the `toolkit` command."""

import sys

from toolkit.cli import main

sys.exit(main())
