"""A small KB, its commented golden file, and a reorganisation done to it on purpose.

``write_before(kb)`` writes the KB as the golden file knows it; ``reorganise(kb)`` then
moves files into other folders, renames files, rewords headings (some with their bodies
unchanged, one with its body rewritten), edits a moved file, splits one file in two and
deletes another, the way a team tidies a KB. ``TRUTH`` says where each expected entry's
answer went (None: deleted), so a test can score the doctor's proposals against it.
"""

from __future__ import annotations

from pathlib import Path

_ROLLBACK = """# Rolling back a release

## When to roll back
Roll back when the error rate of the new build stays above two per cent for ten minutes,
or when checkout latency doubles. Do not wait for a root cause before you roll back.

## How to roll back
Run the deploy tool with the previous build number and the rollback flag; it drains the
canary pool first and then swaps the fleet back in two waves of fifty per cent.

## Verification
After the swap, watch the error dashboard for fifteen minutes and confirm the old build
number on three random hosts before you close the incident channel.
"""

_CANARY = """# Canary releases

## First share
A new build first receives five per cent of live traffic on the canary pool, chosen by a
hash of the session id so that one user sees one build.

## Promotion
The canary is promoted when its error rate and p95 latency stay within the baseline band
for thirty minutes; promotion then moves traffic in steps of twenty-five per cent.
"""

_BACKUP = """# Database backups

## Schedule
Nightly snapshots of every production database start at two in the morning UTC and are
written to the off-site bucket in the other region.

## Retention
Nightly snapshots are kept for thirty-five days, weekly ones for six months and the
monthly ones for seven years, as the finance auditors require.

## Encryption
Every snapshot is encrypted at rest with the backup key, which lives in the hardware
security module and is rotated every ninety days by the platform team.
"""

_RESTORE = """# Restoring a database

## Point-in-time recovery
Replay the write-ahead log from the last nightly snapshot up to the second before the bad
write; the restore tool asks for a timestamp in UTC and a target instance.

## Restore drills
Each team practises a full restore from the off-site copy once a quarter, and records how
long it took in the drill log so that the recovery time objective stays honest.
"""

_ONCALL = """# On-call

## Rotation
The on-call rotation changes every Monday at ten; each engineer is on call for one week in
six and hands over with a written summary of open incidents.

## Paging
Pages go to the primary first and escalate to the secondary after ten minutes without an
acknowledgement, then to the engineering manager after twenty.
"""

_RRF = """# Reciprocal rank fusion

## The constant k
The constant k in one over k plus rank flattens the head of each ranking: a larger k gives
the lower ranks of both lists more say in the fused order.

## Ties
When two documents reach the same fused score, the one with the better best rank in either
list comes first, and after that the lower document id.
"""

_POSTMORTEM = """# Postmortems

## Timeline
Write the timeline in UTC from the first alert to the all-clear, one line per event, with
who did what; link the dashboards and the chat log of the incident channel.

## Action items
Every action item has an owner and a due date, and the review meeting checks last month's
items before it discusses the new incident.
"""

_CHUNKING = """# Chunking

## Heading sections
Each level-two or level-three heading opens a new chunk that holds the lines below it up to
the next heading, so one section of a note becomes one search result.

## Merging small sections
A section with fewer than fifty bytes of text is appended to the chunk before it, heading
and all, so that tiny sections do not crowd the results with empty hits.
"""

_RERANKING = """# Reranking

## Cross-encoders
A cross-encoder reads the query and each candidate together and scores the pair, which is
slower than comparing embeddings but ranks close candidates far better.

## Cost
Reranking the top fifty candidates adds about forty milliseconds per query on a laptop CPU,
so keep the candidate pool small when latency matters.
"""

_MONITORING = """# Monitoring

## Alert thresholds
An alert fires when the five-minute error rate passes one per cent or when the queue depth
stays above ten thousand messages for more than five minutes.

## Alert routing
Alerts for the payment services page the payments rotation; everything else goes to the
platform rotation, and low-severity alerts only open a ticket.

## Service dashboards
Every service has a dashboard with its request rate, error rate and latency percentiles,
generated from the service catalogue so that new services get one on day one.

## Capacity dashboards
The capacity dashboards show CPU, memory and disk headroom per cluster for the last ninety
days, with the forecast of the week the cluster runs out of room.
"""

_OLD_DEPLOY = """# The old deploy script

## Manual steps
Before the deploy tool existed, engineers copied the build to each host with the old shell
script and restarted the service by hand, one host at a time.

## Known problems
The old script stopped halfway when one host was unreachable and left the fleet with two
builds running, which is why it was replaced by the deploy tool.
"""

_INCIDENTS = """# Incident severity

## Severity levels
Severity one means customers cannot pay or log in; severity two means a feature is broken
for many users; severity three covers everything that can wait for office hours.

## Declaring an incident
Anyone may declare an incident in the incident channel with the declare command, which
opens a ticket, pages the on-call engineer and starts the timeline.
"""

BEFORE = {
    "guide/rollback.md": _ROLLBACK,
    "guide/canary.md": _CANARY,
    "data/backup.md": _BACKUP,
    "data/restore.md": _RESTORE,
    "team/oncall.md": _ONCALL,
    "team/postmortem.md": _POSTMORTEM,
    "search/rrf.md": _RRF,
    "search/chunking.md": _CHUNKING,
    "search/reranking.md": _RERANKING,
    "ops/monitoring.md": _MONITORING,
    "drafts/old-deploy.md": _OLD_DEPLOY,
    "ops/incidents.md": _INCIDENTS,
}

# The golden file as a person keeps it: comments, three quoting styles, a flow-style entry,
# a comment at the end of an entry line, blank lines, and entries nothing will break.
GOLDEN = """# Golden queries for the reorganised KB fixture.
# Keep this comment: --apply must not touch it.
queries:
  # --- releases ---------------------------------------------------------------
  - id: rollback-when
    query: "When should I revert a bad deploy to the previous build?"
    expected:
      - path: guide/rollback.md   # the main runbook
  - id: rollback-how
    query: How do I roll back to the previous build?
    expected:
      - path: 'guide/rollback.md'
        heading: How to roll back
  - id: rollback-verify
    query: "How do I check that a rollback worked?"
    expected:
      - path: "guide/rollback.md"
        heading: "Verification"
      - path: guide/rollback.md
  - id: canary-share
    query: What share of live traffic does a new build get at first?
    expected: [{path: guide/canary.md, heading: First share}]
  - id: canary-promote
    query: When is a canary build promoted to the whole fleet?
    expected:
      - path: guide/canary.md

  # --- data ---------------------------------------------------------------------
  - id: backup-retention
    query: "How long do we keep the nightly database snapshots?"
    expected:
      - path: data/backup.md
        heading: Retention
      - path: data/backup.md
  - id: backup-encryption
    query: How are the database snapshots encrypted?
    expected:
      - heading: Encryption
        path: data/backup.md
  - id: restore-pitr
    query: How do I recover a database to the moment just before a bad write?
    expected:
      - path: data/restore.md
        heading: Point-in-time recovery
  - id: restore-drill
    query: How often do teams practise restoring a database from the off-site copy?
    expected:
      - path: data/restore.md
        heading: Restore drills
      - path: data/restore.md

  # --- team ---------------------------------------------------------------------
  - id: oncall-rotation
    query: When does the on-call rotation change hands?
    expected:
      - path: team/oncall.md
        heading: Rotation
  - id: oncall-paging
    query: Who gets paged when the primary does not acknowledge?
    expected:
      - path: team/oncall.md
  - id: postmortem-timeline
    query: How should the incident timeline be written in a postmortem?
    expected:
      - path: team/postmortem.md
        heading: Timeline
  - id: postmortem-actions
    query: Who owns the action items of a postmortem?
    expected:
      - path: team/postmortem.md
        heading: Action items

  # --- search -------------------------------------------------------------------
  - id: rrf-k
    query: What does the constant k change when fusing keyword and vector rankings?
    expected:
      - path: search/rrf.md
        heading: The constant k
  - id: rrf-ties
    query: How are ties broken in reciprocal rank fusion?
    expected:
      - path: search/rrf.md
  - id: chunk-merge
    query: What happens to very short sections when notes are chunked?
    expected:
      - path: search/chunking.md
        heading: Merging small sections
  - id: rerank-cost
    query: How much latency does reranking add per query?
    expected:
      - path: search/reranking.md
        heading: Cost

  # --- operations ---------------------------------------------------------------
  - id: alert-threshold
    query: When does an error-rate alert fire?
    expected:
      - path: ops/monitoring.md
        heading: Alert thresholds
  - id: capacity
    query: Where can I see how much disk headroom a cluster has left?
    expected:
      - path: ops/monitoring.md
        heading: Capacity dashboards
  - id: monitoring-any
    query: How are alerts routed to the payments rotation?
    expected:
      - path: ops/monitoring.md
  - id: old-deploy
    query: How did engineers deploy before the deploy tool existed?
    expected:
      - path: drafts/old-deploy.md
      - path: drafts/old-deploy.md
        heading: Known problems
  - id: severity
    query: What does severity one mean?
    expected:
      - path: ops/incidents.md
        heading: Severity levels
"""

_G = "guide/rollback.md"
#: (query id, old path, old heading) -> (new path, new heading), or None: deleted.
TRUTH: dict[tuple[str, str, str | None], tuple[str, str | None] | None] = {
    ("rollback-when", _G, None): ("runbooks/release-rollback.md", None),
    ("rollback-how", _G, "How to roll back"): (
        "runbooks/release-rollback.md",
        "Rolling back a release",
    ),
    ("rollback-verify", _G, "Verification"): ("runbooks/release-rollback.md", "Verification"),
    ("rollback-verify", _G, None): ("runbooks/release-rollback.md", None),
    ("canary-share", "guide/canary.md", "First share"): ("runbooks/canary.md", "First share"),
    ("canary-promote", "guide/canary.md", None): ("runbooks/canary.md", None),
    ("backup-retention", "data/backup.md", "Retention"): ("storage/backup.md", "Retention"),
    ("backup-retention", "data/backup.md", None): ("storage/backup.md", None),
    ("backup-encryption", "data/backup.md", "Encryption"): ("storage/backup.md", "Encryption"),
    ("restore-pitr", "data/restore.md", "Point-in-time recovery"): (
        "storage/restore.md",
        "Point-in-time recovery",
    ),
    ("restore-drill", "data/restore.md", "Restore drills"): (
        "storage/restore.md",
        "Restore drills",
    ),
    ("restore-drill", "data/restore.md", None): ("storage/restore.md", None),
    ("oncall-rotation", "team/oncall.md", "Rotation"): ("team/on-call-rotation.md", "Rotation"),
    ("oncall-paging", "team/oncall.md", None): ("team/on-call-rotation.md", None),
    ("postmortem-timeline", "team/postmortem.md", "Timeline"): (
        "team/postmortem.md",
        "Incident timeline",
    ),
    ("rrf-k", "search/rrf.md", "The constant k"): (
        "search/reciprocal-rank-fusion.md",
        "The constant k",
    ),
    ("rrf-ties", "search/rrf.md", None): ("search/reciprocal-rank-fusion.md", None),
    ("chunk-merge", "search/chunking.md", "Merging small sections"): (
        "search/chunking.md",
        "How short sections merge",
    ),
    ("rerank-cost", "search/reranking.md", "Cost"): ("search/reranking.md", "Latency cost"),
    ("alert-threshold", "ops/monitoring.md", "Alert thresholds"): (
        "ops/alerts.md",
        "Alert thresholds",
    ),
    ("capacity", "ops/monitoring.md", "Capacity dashboards"): (
        "ops/dashboards.md",
        "Capacity dashboards",
    ),
    ("monitoring-any", "ops/monitoring.md", None): ("ops/alerts.md", None),
    ("old-deploy", "drafts/old-deploy.md", None): None,
    ("old-deploy", "drafts/old-deploy.md", "Known problems"): None,
}

#: The entries whose answer moved or was renamed (file or heading), not split or deleted.
MOVES_AND_RENAMES = [
    key
    for key, target in TRUTH.items()
    if target is not None and not key[1].startswith("ops/monitoring")
]


def write_before(kb: Path) -> None:
    for rel, text in BEFORE.items():
        path = kb / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def _move(kb: Path, old: str, new: str, text: str | None = None) -> None:
    source, dest = kb / old, kb / new
    dest.parent.mkdir(parents=True, exist_ok=True)
    body = source.read_text(encoding="utf-8") if text is None else text
    source.unlink()
    dest.write_text(body, encoding="utf-8")


def reorganise(kb: Path) -> None:
    # moves into other folders (one with a reworded heading, body unchanged)
    _move(
        kb,
        "guide/rollback.md",
        "runbooks/release-rollback.md",
        _ROLLBACK.replace("## How to roll back", "## Rolling back a release"),
    )
    _move(kb, "guide/canary.md", "runbooks/canary.md")
    _move(kb, "data/backup.md", "storage/backup.md")
    # moved and edited: the drill section gains a sentence
    _move(
        kb,
        "data/restore.md",
        "storage/restore.md",
        _RESTORE.replace(
            "stays honest.\n",
            "stays honest.\nThe drill log lives in the shared operations folder.\n",
        ),
    )
    # renamed in place
    _move(kb, "team/oncall.md", "team/on-call-rotation.md")
    _move(kb, "search/rrf.md", "search/reciprocal-rank-fusion.md")
    # headings reworded, bodies unchanged
    for rel, old, new in (
        ("team/postmortem.md", "## Timeline", "## Incident timeline"),
        ("search/chunking.md", "## Merging small sections", "## How short sections merge"),
    ):
        path = kb / rel
        path.write_text(path.read_text(encoding="utf-8").replace(old, new), encoding="utf-8")
    # a heading reworded and its body rewritten
    rerank = kb / "search/reranking.md"
    rerank.write_text(
        _RERANKING.split("## Cost")[0]
        + "## Latency cost\nReranking the top fifty candidates costs roughly forty milliseconds "
        "for each query on a laptop CPU; keep the candidate pool small if latency matters.\n",
        encoding="utf-8",
    )
    # a split: alerts and dashboards become two files
    head, rest = _MONITORING.split("## Service dashboards")
    (kb / "ops/alerts.md").write_text(head.replace("# Monitoring", "# Alerts"), encoding="utf-8")
    (kb / "ops/dashboards.md").write_text(
        "# Dashboards\n\n## Service dashboards" + rest, encoding="utf-8"
    )
    (kb / "ops/monitoring.md").unlink()
    # a deletion
    (kb / "drafts/old-deploy.md").unlink()
