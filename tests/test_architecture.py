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


def _drawn_layers(text: str) -> list[str]:
    """The modules of the "Layers" picture, top to bottom (the second column of each row)."""
    section = text.split("## Layers", 1)[1]
    block = section.split("```text\n", 1)[1].split("```", 1)[0]
    drawn = []
    for line in block.splitlines():
        if line.strip().startswith("─"):
            continue  # the rule between two groups of layers
        cell = line[12:33].strip()
        for name in filter(None, (part.strip() for part in cell.split(","))):
            drawn.append("groove." + name.removesuffix("/").removesuffix(".py"))
    return drawn


def _contract_layers() -> list[list[str]]:
    """The layers contract of pyproject.toml, top first: the modules of each layer."""
    import tomllib

    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    contract = next(c for c in config["tool"]["importlinter"]["contracts"] if c["id"] == "layers")
    return [[m.strip() for m in re.split(r"[|:]", layer)] for layer in contract["layers"]]


def test_the_layers_picture_is_the_layers_contract() -> None:
    drawn = _drawn_layers(DOC.read_text(encoding="utf-8"))
    layers = _contract_layers()
    level = {module: i for i, layer in enumerate(layers) for module in layer}
    missing = sorted(set(level) - set(drawn))
    unknown = sorted(set(drawn) - set(level))
    assert missing == [] and unknown == [], f"not drawn: {missing}; not in the contract: {unknown}"
    order = [level[m] for m in drawn]
    upward = [m for m, a, b in zip(drawn[1:], order, order[1:], strict=False) if b < a]
    assert upward == [], f"drawn above a layer the contract puts above them: {upward}"


def test_the_layers_reader_sees_every_cell() -> None:
    text = (
        "## Layers\n\n```text\n"
        " faces      cli/                 click commands\n"
        "            notes, progress,     typed notes\n"
        "            fileguard\n```\n"
    )
    assert _drawn_layers(text) == [
        "groove.cli",
        "groove.notes",
        "groove.progress",
        "groove.fileguard",
    ]


def test_the_map_parser_reports_both_directions(tmp_path: Path) -> None:
    text = (
        "## Module map\n\n```text\n"
        "groove/                      api, errors,\n"
        "                             gone\n"
        "groove/store/                db\n```\n"
    )
    assert _module_map(text) == {"groove/": {"api", "errors", "gone"}, "groove/store/": {"db"}}
