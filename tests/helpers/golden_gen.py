"""A large golden set generated from a fixture knowledge base, for report-size tests.

Real golden sets have hundreds of queries; the fixtures have ten. ``generated_golden``
walks the Markdown notes of a KB and makes one query per window of words of their text
(stepping through every note in turn), each expecting the note it came from.
Deterministic: the same KB gives the same file.
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

WORDS = re.compile(r"[A-Za-z][A-Za-z-]{2,}")


def generated_golden(
    kb: Path, count: int, dest: Path, *, window: int = 5, skip: tuple[str, ...] = ("drafts",)
) -> Path:
    """Write ``count`` queries to ``dest``; notes under a top folder in ``skip`` (the
    fixture's ignored drafts) are left out."""
    notes = sorted(p for p in kb.rglob("*.md") if p.relative_to(kb).parts[0] not in skip)
    words = {p: WORDS.findall(p.read_text(encoding="utf-8")) for p in notes}
    sources = [p for p in notes if len(words[p]) >= window]
    queries = []
    step = 0
    while len(queries) < count:
        for note in sources:
            text = words[note]
            start = (step * 3) % (len(text) - window + 1)
            queries.append(
                {
                    "id": f"gen-{len(queries):04d}",
                    "query": " ".join(text[start : start + window]),
                    "expected": [{"path": note.relative_to(kb).as_posix()}],
                }
            )
            if len(queries) == count:
                break
        step += 1
    dest.write_text(yaml.safe_dump({"queries": queries}, sort_keys=False), encoding="utf-8")
    return dest
