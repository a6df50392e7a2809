"""docs/architecture.md cannot drift from the tree.

Its "Module map" lists every module of the package by folder; this test compares that list
with the files under groove/ both ways and says exactly which lines to change. Every
module the page names in backticks elsewhere (``search.py``, ``tuning/reach.py``) must
exist too.
"""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DOC = REPO / "docs" / "architecture.md"
PACKAGE = REPO / "groove"


def _tree() -> dict[str, set[str]]:
    """{"groove/tuning/": {"run", ...}} for every folder of the package that holds modules."""
    found: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        folder = path.parent.relative_to(REPO).as_posix() + "/"
        found.setdefault(folder, set()).add(path.stem)
    return found


def _module_map(text: str) -> dict[str, set[str]]:
    section = text.split("## Module map", 1)[1]
    block = section.split("```text\n", 1)[1].split("```", 1)[0]
    listed: dict[str, set[str]] = {}
    folder = None
    for line in block.splitlines():
        head = re.match(r"(groove/(?:\S+/)?)\s+(.*)", line)
        if head:
            folder, rest = head.group(1), head.group(2)
            assert folder not in listed, f"{folder} is listed twice in the module map"
            listed[folder] = set()
        else:
            assert folder is not None and line.startswith(" "), f"unreadable line: {line!r}"
            rest = line
        listed[folder] |= {name.strip() for name in rest.split(",") if name.strip()}
    return listed


def test_the_module_map_lists_every_module_and_nothing_else() -> None:
    listed = _module_map(DOC.read_text(encoding="utf-8"))
    tree = _tree()
    problems = []
    for folder in sorted(set(tree) | set(listed)):
        missing = sorted(tree.get(folder, set()) - listed.get(folder, set()))
        extra = sorted(listed.get(folder, set()) - tree.get(folder, set()))
        if missing:
            problems.append(f"add to {folder} in docs/architecture.md: {', '.join(missing)}")
        if extra:
            problems.append(f"remove from {folder} in docs/architecture.md: {', '.join(extra)}")
    assert problems == [], "the module map has drifted:\n" + "\n".join(problems)


def test_every_module_the_page_names_exists() -> None:
    modules = {p.relative_to(PACKAGE).as_posix() for p in PACKAGE.rglob("*.py")}
    named = set(re.findall(r"`([\w/]+\.py)`", DOC.read_text(encoding="utf-8")))
    absent = []
    for name in sorted(named):
        if name.startswith("tests/"):
            ok = (REPO / name).is_file()
        else:
            short = name.removeprefix("groove/")
            ok = any(m == short or m.endswith("/" + short) for m in modules)
        if not ok:
            absent.append(name)
    assert absent == [], f"docs/architecture.md names modules that do not exist: {absent}"


def test_the_map_parser_reports_both_directions(tmp_path: Path) -> None:
    text = (
        "## Module map\n\n```text\n"
        "groove/                      api, errors,\n"
        "                             gone\n"
        "groove/store/                db\n```\n"
    )
    assert _module_map(text) == {"groove/": {"api", "errors", "gone"}, "groove/store/": {"db"}}
