"""A generated knowledge base big enough to kill an index build in the middle of it.

``kb_v1()`` is about 300 small notes (3-5 sections each, every section over the 50-byte merge
threshold); ``kb_v2(v1)`` is the same KB after a day of edits: changed notes, deleted notes,
moved notes (same bytes, new path), frontmatter-only edits and new notes. Both are plain
``{rel_path: text}`` mappings, deterministic for a seed.
"""

from __future__ import annotations

import random
from pathlib import Path

WORDS = (
    "rollback", "canary", "deploy", "backup", "restore", "index", "query", "vector", "trigram",
    "shard", "replica", "latency", "budget", "alert", "pager", "runbook", "cache", "eviction",
    "snapshot", "migration", "schema", "token", "embedding", "ranking", "fusion", "recall",
    "precision", "golden", "baseline", "regression", "kernel", "notebook", "history", "lock",
    "journal", "checkpoint", "segment", "merge", "optimise",
)  # fmt: skip
FOLDERS = ("ops", "ops/oncall", "search", "search/tuning", "notes", "")


def _sentence(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "."


def _note(rng: random.Random, number: int, tag: str = "base") -> str:
    # Frontmatter on one note in four: enough for metadata-only edits, cheap to parse.
    parts = ["---", f"title: Note {number}", f"tags: [{tag}]", "---", ""] if number % 4 == 0 else []
    parts.append(_sentence(rng, rng.randint(12, 24)))
    for section in range(rng.randint(2, 4)):
        parts += ["", f"## Section {number}.{section} {rng.choice(WORDS)}", ""]
        parts.append(_sentence(rng, rng.randint(12, 30)))
    return "\n".join(parts) + "\n"


def _path(rng: random.Random, number: int) -> str:
    folder = rng.choice(FOLDERS)
    name = f"note-{number:04d}.md"
    return f"{folder}/{name}" if folder else name


def kb_v1(count: int = 300, seed: int = 7) -> dict[str, str]:
    rng = random.Random(seed)
    return {_path(rng, n): _note(rng, n) for n in range(count)}


def kb_v2(v1: dict[str, str], seed: int = 11) -> dict[str, str]:
    """v1 with 30 edits, 20 deletions, 15 moves, 10 frontmatter-only edits and 25 new notes."""
    rng = random.Random(seed)
    tagged = sorted(p for p, text in v1.items() if text.startswith("---"))
    paths = sorted(set(v1) - set(tagged))
    rng.shuffle(paths)
    edited, deleted, moved = paths[:30], paths[30:50], paths[50:65]
    retagged = rng.sample(tagged, 10)
    v2 = dict(v1)
    for path in edited:
        v2[path] = v1[path] + "\n## Added later\n\n" + _sentence(rng, 20) + "\n"
    for path in deleted:
        del v2[path]
    for path in moved:
        v2["moved/" + path.rsplit("/", 1)[-1]] = v2.pop(path)
    for path in retagged:
        v2[path] = v1[path].replace("tags: [base]", "tags: [base, reviewed]", 1)
    for number in range(1000, 1025):
        v2[_path(rng, number)] = _note(rng, number, "new")
    return v2


def write_kb(root: Path, docs: dict[str, str]) -> Path:
    """Write ``docs`` under ``root`` (created) and return ``root``."""
    for rel, text in docs.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root
