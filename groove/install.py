"""How groove names itself to pip: the install lines it prints.

``import groove`` and the ``groove`` command keep their name, but the distribution is
``groove-retrieval``: ``groove`` on the package index is an unrelated project, so a hint
saying ``pip install 'groove[lab]'`` would install someone else's code. Every install line
groove prints comes from :func:`install_command`, which points at this very copy of groove
when it can: the checkout it runs from, or the wheel or folder pip recorded it came from.
"""

from __future__ import annotations

import importlib.metadata
import json
import shlex
from pathlib import Path

DISTRIBUTION = "groove-retrieval"


def requirement(extra: str | None = None) -> str:
    """``groove-retrieval`` or ``groove-retrieval[extra]``."""
    return DISTRIBUTION + (f"[{extra}]" if extra else "")


def checkout_root(package_dir: Path | None = None) -> Path | None:
    """The source checkout this groove is imported from (its pyproject names the
    distribution), or None for an installed copy."""
    here = package_dir or Path(__file__).resolve().parent
    pyproject = here.parent / "pyproject.toml"
    try:
        text = pyproject.read_text(encoding="utf-8")
    except OSError:
        return None
    return here.parent if f'name = "{DISTRIBUTION}"' in text else None


def _recorded_source() -> str | None:
    """Where pip installed this distribution from (PEP 610 direct_url.json): a wheel or a
    folder; None when it came from an index or is not installed under this name."""
    try:
        raw = importlib.metadata.distribution(DISTRIBUTION).read_text("direct_url.json")
    except importlib.metadata.PackageNotFoundError:
        return None
    if not raw:
        return None
    try:
        url = json.loads(raw).get("url")
    except (ValueError, AttributeError):
        return None
    return url if isinstance(url, str) and url.startswith("file://") else None


def install_command(extra: str | None = None) -> str:
    """The pip line that adds ``extra`` to this groove (never another project's)."""
    root = checkout_root()
    if root is not None:
        target = f"{root}[{extra}]" if extra else str(root)
        return f"pip install -e {shlex.quote(target)}"
    source = _recorded_source()
    if source is not None:
        return f"pip install {shlex.quote(f'{requirement(extra)} @ {source}')}"
    return f"pip install {shlex.quote(requirement(extra))}"
