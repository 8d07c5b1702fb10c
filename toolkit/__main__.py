"""`python -m toolkit`: the `toolkit` command."""

import sys

from .cli import main

sys.exit(main())
