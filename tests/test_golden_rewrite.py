"""``--apply``'s rewrite of the golden file: only the fixed scalars change, byte for byte."""

from __future__ import annotations

from pathlib import Path

import pytest

from groove.errors import GoldenError
from groove.golden.proposals import CERTAIN, MOVED, Proposal
from groove.golden.queries import load_golden
from groove.golden.rewrite import apply_proposals, entry_lines, scalar
from groove.metrics import Expected

COMMENTED = (
    "\ufeff# top comment\r\n"
    "queries:\r\n"
    "  - id: a   # first\r\n"
    '    query: "alpha?"\r\n'
    "    expected:\r\n"
    "      - path: 'old/a.md'   # keep me\r\n"
    '        heading: "Old: heading"\r\n'
    "      - path: other.md\r\n"
    "\r\n"
    "  # a comment between queries\r\n"
    "  - id: b\r\n"
    "    query: beta\r\n"
    "    expected: [{path: old/b.md, heading: Lead}]\r\n"
    "  - id: c\r\n"
    "    query: gamma\r\n"
    "    expected:\r\n"
    "      - path: old/c.md\r\n"
    "        heading: Gone   # merged into the lead text\r\n"
)


def _proposal(query_id: str, old: Expected, new: Expected) -> Proposal:
    return Proposal(query_id, None, old, new, MOVED, CERTAIN, "test")


@pytest.fixture
def golden(tmp_path: Path) -> Path:
    path = tmp_path / "golden.yml"
    path.write_bytes(COMMENTED.encode("utf-8"))
    return path


def test_only_the_fixed_scalars_change_in_their_own_quoting(golden: Path) -> None:
    loaded = load_golden(golden)
    proposals = [
        _proposal("a", Expected("old/a.md", "Old: heading"), Expected("new/a b.md", "New: it's")),
        _proposal("b", Expected("old/b.md", "Lead"), Expected("new/b.md", "Lead")),
        _proposal("c", Expected("old/c.md", "Gone"), Expected("new/c.md", None)),
    ]
    result = apply_proposals(loaded, proposals)
    assert result.written and len(result.applied) == 3 and result.skipped == ()
    want = (
        COMMENTED.replace("'old/a.md'", "'new/a b.md'")
        .replace('"Old: heading"', '"New: it\'s"')
        .replace("{path: old/b.md,", "{path: new/b.md,")
        .replace(
            "      - path: old/c.md\r\n        heading: Gone   # merged into the lead text\r\n",
            "      - path: new/c.md\r\n",
        )
    )
    assert golden.read_bytes() == want.encode("utf-8")  # BOM, CRLF, comments, order kept
    after = load_golden(golden)
    assert after.queries[0].expected == (Expected("new/a b.md", "New: it's"), Expected("other.md"))
    assert after.queries[2].expected == (Expected("new/c.md", None),)


def test_a_file_changed_since_the_doctor_read_it_is_left_alone(golden: Path) -> None:
    loaded = load_golden(golden)
    golden.write_bytes(golden.read_bytes() + b"# edited meanwhile\r\n")
    before = golden.read_bytes()
    proposal = _proposal("b", Expected("old/b.md", "Lead"), Expected("new/b.md", "Lead"))
    with pytest.raises(GoldenError, match="changed while the doctor read it"):
        apply_proposals(loaded, [proposal])
    assert golden.read_bytes() == before


def test_what_cannot_be_rewritten_in_place_is_skipped_with_a_reason(golden: Path) -> None:
    loaded = load_golden(golden)
    flow = _proposal("b", Expected("old/b.md", "Lead"), Expected("new/b.md", None))
    unknown = _proposal("zz", Expected("x.md"), Expected("y.md"))
    result = apply_proposals(loaded, [flow, unknown])
    assert not result.written and result.applied == ()
    assert [reason for _, reason in result.skipped] == [
        "the heading cannot be removed from a flow-style entry",
        "the entry is not in the golden file as read",
    ]
    assert golden.read_bytes() == COMMENTED.encode("utf-8")


def test_entry_lines_and_scalars() -> None:
    assert scalar("a.md", None) == "a.md"
    assert scalar("yes", None) == "'yes'"  # plain would read back as a boolean
    assert scalar("it's", "'") == "'it''s'"
    assert scalar('say "x"', '"') == '"say \\"x\\""'


def test_entry_lines_name_each_entry(golden: Path) -> None:
    lines = entry_lines(load_golden(golden))
    assert lines == {("a", 0): 6, ("a", 1): 8, ("b", 0): 13, ("c", 0): 17}


def test_a_failed_write_leaves_the_file_as_it_was(golden: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from groove.golden import rewrite

    def full(path: Path, data: bytes) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(rewrite, "write_file", full)
    proposal = _proposal("b", Expected("old/b.md", "Lead"), Expected("new/b.md", "Lead"))
    with pytest.raises(GoldenError, match="could not write the golden file") as info:
        apply_proposals(load_golden(golden), [proposal])
    assert (
        info.value.hint == "free some space or fix the folder's permissions; the file is as it was"
    )
    assert golden.read_bytes() == COMMENTED.encode("utf-8")
