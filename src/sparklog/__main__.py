"""``python -m sparklog``: the same command line as the ``sparklog`` script."""

import sys

from sparklog.cli import main

sys.exit(main())
