"""``python -m benchmarks``: see benchmarks/README.md."""

import sys

from .runner import main

sys.exit(main())
