"""Reading the golden side's text files line by line: UTF-8 text with the line of the first
bad byte, and JSON Lines with the line of the first record that is not JSON. The caller
words the error (``fail``): each file names itself and its fix."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any


def utf8_text(raw: bytes, fail: Callable[[int], Exception]) -> str:
    """``raw`` as text (a byte order mark dropped); ``fail(line)`` is raised for the line
    of the first byte that is not UTF-8."""
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise fail(raw[: exc.start].count(b"\n") + 1) from None


def json_lines(text: str, fail: Callable[[int, str], Exception]) -> Iterator[tuple[int, Any]]:
    """(line number, decoded value) of every line that is not blank; ``fail(line, what)``
    is raised for the first line that is not JSON."""
    for number, record in enumerate(text.splitlines(), start=1):
        if not record.strip():
            continue
        try:
            yield number, json.loads(record)
        except json.JSONDecodeError as exc:
            raise fail(number, f"not JSON ({exc.msg})") from None
