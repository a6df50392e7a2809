"""Every result.json a test produces must follow the published contract
(groove/notebooks/result.schema.json): conftest checks the files a test left behind."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from groove.notebooks.runner import RESULT_SCHEMA

MAX_BYTES = 50_000_000


@cache
def _validator() -> Any:
    from jsonschema import Draft202012Validator

    schema = json.loads(RESULT_SCHEMA.read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def problems(document: Any) -> list[str]:
    """The schema violations of ``document`` (empty when it follows the contract)."""
    return [
        f"{'/'.join(str(p) for p in error.absolute_path) or '(top)'}: {error.message}"
        for error in _validator().iter_errors(document)
    ]


def result_documents(root: Path) -> list[tuple[Path, dict[str, Any]]]:
    """Every file under ``root`` that is a JSON object with an ``exit_code``: what the
    runner and the notebooks' run cells write, whatever name the test gave it."""
    found = []
    for path in root.rglob("*"):
        if not path.is_file() or path.is_symlink() or path.stat().st_size > MAX_BYTES:
            continue
        try:
            with path.open("rb") as handle:
                if handle.read(1) != b"{":
                    continue
            document = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(document, dict) and "exit_code" in document:
            found.append((path, document))
    return found
