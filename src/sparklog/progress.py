"""A live progress line per stratum and iteration on a terminal; silent otherwise."""

from __future__ import annotations

import sys
from typing import Any


class Progress:
    """Receives the driver's stats records and shows the latest on one updating line."""

    def __init__(self, enabled: bool, verbose: bool = False) -> None:
        self.enabled, self.verbose = enabled, verbose
        self._live = None

    def __enter__(self) -> Progress:
        if self.enabled:
            from rich.console import Console
            from rich.live import Live

            self._live = Live("", console=Console(file=sys.stderr), transient=False,
                              refresh_per_second=8)
            self._live.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        if self._live is not None:
            self._live.__exit__(*exc)

    def record(self, r: dict[str, Any]) -> None:
        if self._live is None:
            return
        line = (f"stratum {r['stratum']} [bold]{r['relation']}[/bold] iteration {r['iteration']}: "
                f"delta {r['delta']:,}  full {r['full']:,}  {r['seconds']:.2f}s")
        if self.verbose:
            self._live.console.print(line)
        self._live.update(line)
