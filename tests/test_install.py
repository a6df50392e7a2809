"""The install lines groove prints and documents install this project, never the unrelated
``groove`` on the package index (groove/install.py)."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import tomllib
import venv
import zipfile
from pathlib import Path

import pytest

from groove import install
from groove.notebooks import lab

ROOT = Path(__file__).resolve().parent.parent
DOCUMENTED = [ROOT / "README.md", ROOT / "ci" / "groove-eval.yml", *ROOT.glob("docs/*.md")]
DOCUMENTED += [*ROOT.glob("notebooks/*.ipynb")]
SOURCES = [p for p in (ROOT / "groove").rglob("*.py") if p.name != "install.py"]
# a fresh environment must not see this checkout through the test run's PYTHONPATH
CLEAN_ENV = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}


def _pip(python: Path, *args: str, **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(python), "-m", "pip", *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
        env=CLEAN_ENV,
        **kwargs,  # type: ignore[arg-type]
    )


def test_the_distribution_name_is_declared_once() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["name"] == install.DISTRIBUTION == "groove-retrieval"
    assert project["scripts"] == {"groove": "groove.cli:main"}
    assert "lab" in project["optional-dependencies"]


def test_from_a_checkout_the_hint_installs_that_checkout() -> None:
    assert install.checkout_root() == ROOT
    assert install.install_command("lab") == f"pip install -e {shlex.quote(f'{ROOT}[lab]')}"
    assert lab.INSTALL_HINT.startswith(install.install_command("lab") + " ")


def test_a_folder_of_another_project_is_not_a_checkout(tmp_path: Path) -> None:
    (tmp_path / "groove").mkdir()
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "groove"\n', encoding="utf-8")
    assert install.checkout_root(tmp_path / "groove") is None
    assert install.checkout_root(tmp_path / "nowhere" / "groove") is None


def test_no_printed_or_documented_line_names_the_other_project() -> None:
    """``groove[...]`` or ``pip install groove`` would resolve to the index's groove."""
    bad = re.compile(r"""(pip install[^\n`]*?[\s'"]groove(\[|[\s'"`]|$))|(\bgroove\[\w+\])""")
    found = []
    for path in [*DOCUMENTED, *SOURCES]:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if bad.search(line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert found == []


def test_every_documented_install_line_names_this_project() -> None:
    lines = []
    for path in DOCUMENTED:
        text = path.read_text(encoding="utf-8")
        lines += re.findall(r"pip install [^`\n\"]*?\[lab\][^`\n\"]*", text)
    assert lines, "the docs name the lab extra somewhere"
    for line in lines:
        assert "groove-retrieval[lab]" in line or "'.[lab]'" in line or "checkout[lab]" in line


@pytest.mark.slow
def test_the_built_wheel_is_groove_retrieval(tmp_path: Path) -> None:
    built = _pip(Path(sys.executable), "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(ROOT))
    assert built.returncode == 0, built.stderr
    (wheel,) = tmp_path.glob("*.whl")
    assert wheel.name.startswith("groove_retrieval-")
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        meta = next(n for n in names if n.endswith(".dist-info/METADATA"))
        metadata = zf.read(meta).decode()
        entry_points = zf.read(meta.replace("METADATA", "entry_points.txt")).decode()
    assert "\nName: groove-retrieval\n" in metadata
    assert "Provides-Extra: lab" in metadata
    assert "groove = groove.cli:main" in entry_points
    assert "groove/__init__.py" in names
    assert not any(n.startswith(("tests/", "bench/")) for n in names)


@pytest.mark.slow
def test_the_hint_an_installed_wheel_prints_installs_that_wheel(tmp_path: Path) -> None:
    """A fresh virtualenv: install the wheel by its distribution name, ask the installed
    groove for its hint, and let pip resolve that very line (dry run, no dependencies)."""
    wheels = tmp_path / "wheels"
    built = _pip(Path(sys.executable), "wheel", "--no-deps", "-q", "-w", str(wheels), str(ROOT))
    assert built.returncode == 0, built.stderr
    (wheel,) = wheels.glob("*.whl")
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    got = _pip(python, "install", "-q", "--no-deps", str(wheel), cwd=tmp_path)
    assert got.returncode == 0, got.stderr
    show = _pip(python, "show", "groove-retrieval", cwd=tmp_path)
    assert show.returncode == 0 and "Name: groove-retrieval" in show.stdout
    hint = subprocess.run(
        [str(python), "-c", "from groove.install import install_command as c; print(c('lab'))"],
        capture_output=True, text=True, check=True, cwd=tmp_path, timeout=60, env=CLEAN_ENV,
    ).stdout.strip()  # fmt: skip
    assert hint.startswith("pip install 'groove-retrieval[lab] @ file://")
    assert wheel.name in hint
    args = shlex.split(hint)[2:]
    report = tmp_path / "report.json"
    flags = ["--dry-run", "--no-deps", "--ignore-installed", "--report", str(report)]
    dry = _pip(python, "install", *flags, *args)
    assert dry.returncode == 0, dry.stderr
    (item,) = json.loads(report.read_text())["install"]
    assert item["metadata"]["name"] == "groove-retrieval"
    assert item["download_info"]["url"].endswith(wheel.name)


@pytest.mark.slow
def test_the_name_is_not_taken_on_the_package_index() -> None:
    """Asks the index (skips when it cannot be reached: the control, groove, must answer)."""
    python = Path(sys.executable)
    control = _pip(python, "index", "versions", "groove")
    if control.returncode != 0:
        pytest.skip(f"the package index did not answer: {control.stderr.strip()[:200]}")
    ours = _pip(python, "index", "versions", install.DISTRIBUTION)
    assert ours.returncode != 0
    assert "No matching distribution found" in ours.stderr


@pytest.mark.slow
def test_the_documented_lines_install_this_project_in_a_fresh_venv(tmp_path: Path) -> None:
    """README's two ways without make: `pip install -e '.[lab]'` in the checkout, and
    `pip install 'groove-retrieval[lab]' --find-links wheels` with a wheel built here. Each
    resolves (a dry run, dependencies left out) to this project, never the index's groove."""
    wheels = tmp_path / "wheels"
    built = _pip(Path(sys.executable), "wheel", "--no-deps", "-q", "-w", str(wheels), str(ROOT))
    assert built.returncode == 0, built.stderr
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    lines = {
        "checkout": (["-e", ".[lab]"], ROOT),
        "wheel": (["groove-retrieval[lab]", "--find-links", str(wheels), "--no-index"], tmp_path),
    }
    for name, (args, cwd) in lines.items():
        report = tmp_path / f"{name}.json"
        flags = ["--dry-run", "--no-deps", "--ignore-installed", "--report", str(report)]
        got = _pip(python, "install", *flags, *args, cwd=cwd)
        assert got.returncode == 0, (name, got.stderr)
        (item,) = json.loads(report.read_text())["install"]
        assert item["metadata"]["name"] == "groove-retrieval", name
        assert "lab" in item["metadata"].get("provides_extra", []), name
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "pip install -e '.[lab]'" in readme
    assert "pip install 'groove-retrieval[lab]' --find-links wheels" in readme
