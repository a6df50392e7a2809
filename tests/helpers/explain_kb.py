"""A knowledge base and golden file built so that ``groove eval --explain`` meets each cause.

* 64 notes ``notes/filler-NN.md``, all about database backup retention: they fill both legs'
  candidate pools (50) for the backup queries, so the notes below fall outside the vector pool;
* ``kitchen/zorblax.md``: a stew recipe, the only note holding the made-up word "zorblax":
  FTS rank 1 for a query naming it, far down the vector leg, buried by fusion;
* ``garden/tulips.md``: shares no word with the queries: neither leg finds it;
* ``drafts/hidden.md``: ignored by ``.grooveignore``.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from tests.helpers.kbgen import write_kb

QUERY = "database backup retention zorblax"

_SERVICES = (
    "billing", "search", "payments", "ledger", "inventory", "accounts", "mailer", "reports",
)  # fmt: skip
_DETAILS = (
    "Restores are rehearsed every quarter on a scratch replica.",
    "The replica lag alert fires after a few minutes of delay.",
    "Write-ahead log segments are shipped to object storage every minute.",
    "Monthly snapshots are kept for a year for the auditors.",
    "Snapshots are encrypted before they leave the host.",
    "A second copy lives in another region under a separate account.",
)


def _filler(rng: random.Random, number: int) -> str:
    service = _SERVICES[number % len(_SERVICES)]
    days = rng.choice((7, 14, 30, 35, 90))
    details = " ".join(rng.sample(_DETAILS, 3))
    return (
        f"The database backup retention policy of the {service} service keeps nightly "
        f"snapshots for {days} days. {details}\n"
    )


def documents() -> dict[str, str]:
    rng = random.Random(13)
    docs = {f"notes/filler-{i:02d}.md": _filler(rng, i) for i in range(64)}
    docs["kitchen/zorblax.md"] = (
        "## Ingredients\n\n"
        "Zorblax stew needs onions, carrots, two bay leaves and a slow simmer of three hours. "
        "Season it with thyme near the end and serve it with warm bread.\n"
    )
    docs["garden/tulips.md"] = (
        "## Planting\n\n"
        "Plant tulip bulbs in autumn, pointed end up, twice as deep as the bulb is tall. "
        "Water them once and wait for the spring.\n"
    )
    docs["drafts/hidden.md"] = "A draft about database backup retention, never indexed.\n"
    docs[".grooveignore"] = "drafts/\n"
    return docs


GOLDEN = f"""\
queries:
  - id: typo
    query: "{QUERY}"
    expected:
      - path: kitchen/zorblx.md
      - path: ./kitchen/zorblax.md
      - path: Kitchen/Zorblax.md
      - path: old/zorblax.md
  - id: ignored
    query: "how long are database snapshots retained"
    expected:
      - path: drafts/hidden.md
  - id: heading
    query: "{QUERY}"
    expected:
      - path: kitchen/zorblax.md
        heading: Ingredient list
  - id: excluded
    query: "database backup retention -zorblax"
    expected:
      - path: kitchen/zorblax.md
  - id: buried
    query: "{QUERY}"
    expected:
      - path: kitchen/zorblax.md
  - id: nowhere
    query: "database backup retention schedule"
    expected:
      - path: garden/tulips.md
  - id: found
    query: "zorblax stew with onions and carrots"
    expected:
      - path: kitchen/zorblax.md
"""


def build_explain_kb(root: Path, embedder: Any) -> Path:
    """Write the KB under ``root/kb``, index it (database beside it) and return ``root``."""
    from groove.engine.index import build

    kb = write_kb(root / "kb", documents())
    build(kb, embedder)
    return root
