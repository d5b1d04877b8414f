"""Engine options written as text, ``"balance_ratio=1,join_planning=dynamic"``: how
$SPARKLOG_TEST_OPTIONS (tests/conftest.py) and ``tests.campaign --options`` name them."""

from __future__ import annotations


def parse(text: str) -> dict[str, object]:
    """``name=value`` pairs, comma-separated; values are read as true/false/none, then as an
    int, then as a float, else kept as text."""
    options: dict[str, object] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, _, raw = item.partition("=")
        value: object = {"true": True, "false": False, "none": None}.get(raw.lower(), raw)
        for kind in (int, float):
            try:
                value = kind(raw)
                break
            except ValueError:
                pass
        options[name.strip()] = value
    return options
