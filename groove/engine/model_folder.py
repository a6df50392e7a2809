"""Prepared model folders: a BERT folder converted once into what the embedders load.

``prepare_folder`` turns a sentence-transformers BERT folder (safetensors + tokenizer files)
into a folder of ``model.onnx`` and the tokenizer files: written under a temp name and
renamed into place once complete, so a run killed half way leaves only a temp folder, which
the next run removes. Checking a folder (``is_prepared``) reads its manifest only: onnx is
imported when a folder is written, not when one is loaded (nor are the file-writing modules:
a one-shot search only checks the folder).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

# bump when a prepared folder changes shape, so old caches are rebuilt
PREPARE_FORMAT = 1
MANIFEST = "groove-model.json"
PREPARED_FILES = (
    "model.onnx",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "config.json",
)


def read_manifest(folder: Path) -> dict[str, Any] | None:
    try:
        data = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def is_prepared(folder: Path, expected: dict[str, Any] | None) -> bool:
    """All files present and the manifest ``expected`` (or any, if None) of this format."""
    manifest = read_manifest(folder)
    if manifest is None or not all((folder / name).is_file() for name in PREPARED_FILES):
        return False
    if manifest.get("format") != PREPARE_FORMAT:
        return False
    return expected is None or manifest == {**expected, "format": PREPARE_FORMAT}


def _write_json(path: Path, data: Any, indent: int | None = 1) -> None:
    path.write_text(json.dumps(data, ensure_ascii=False, indent=indent), encoding="utf-8")


def _write_folder(source: Path, dest: Path, manifest: dict[str, Any], max_length: int) -> None:
    """model.onnx built from the weights, the tokenizer files beside it, the manifest last."""
    import shutil

    from groove.engine.onnx_bert import convert

    convert(source / "model.safetensors", source / "config.json", dest / "model.onnx")
    tok_config = json.loads((source / "tokenizer_config.json").read_text(encoding="utf-8"))
    tok_config["model_max_length"] = max_length
    _write_json(dest / "tokenizer_config.json", tok_config)
    # a shipped tokenizer.json may cut and pad at another length; make it say what the model
    # is run with (fastembed resets both from tokenizer_config.json anyway)
    tokenizer = json.loads((source / "tokenizer.json").read_text(encoding="utf-8"))
    tokenizer["truncation"] = {**(tokenizer.get("truncation") or {}), "max_length": max_length}
    tokenizer["padding"] = None
    _write_json(dest / "tokenizer.json", tokenizer, indent=None)
    for name in ("special_tokens_map.json", "config.json"):
        shutil.copyfile(source / name, dest / name)
    _write_json(dest / MANIFEST, {**manifest, "format": PREPARE_FORMAT})


def prepare_folder(
    source: Path, target: Path, manifest: dict[str, Any], max_length: int, force: bool = False
) -> Path:
    """Write ``target`` from ``source`` unless it already holds ``manifest``; returns target.

    A file lock serialises concurrent runs; while holding it, temp folders left by runs that
    died (``.<name>.tmp-*``) are removed.
    """
    return _prepare(
        target, manifest, force, lambda tmp: _write_folder(source, tmp, manifest, max_length)
    )


def prepare_quantized(
    source: Path, target: Path, manifest: dict[str, Any], force: bool = False
) -> Path:
    """Write ``target`` as an int8 copy of the prepared folder ``source`` (onnxruntime's
    dynamic quantisation of the weights of every MatMul; the activations stay float and are
    quantised per call), unless it already holds ``manifest``; as ``prepare_folder``."""
    return _prepare(target, manifest, force, lambda tmp: _write_quantized(source, tmp, manifest))


def _write_quantized(source: Path, dest: Path, manifest: dict[str, Any]) -> None:
    import logging

    from onnxruntime.quantization import QuantType, quantize_dynamic

    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)  # its advice to pre-process the graph is not for the user
    try:
        quantize_dynamic(source / "model.onnx", dest / "model.onnx", weight_type=QuantType.QInt8)
    finally:
        root.setLevel(level)
    import shutil

    for name in PREPARED_FILES:
        if name != "model.onnx":
            shutil.copyfile(source / name, dest / name)
    _write_json(dest / MANIFEST, {**manifest, "format": PREPARE_FORMAT})


def _prepare(
    target: Path, manifest: dict[str, Any], force: bool, write: Callable[[Path], None]
) -> Path:
    import glob
    import shutil

    from filelock import FileLock

    from groove.atomic import replace_folder, stale_folder_prefix, temp_folder

    if not force and is_prepared(target, manifest):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(target.parent / f".{target.name}.lock")):
        # another process may have finished while this one waited for the lock
        if not force and is_prepared(target, manifest):
            return target
        for stale in target.parent.glob(glob.escape(stale_folder_prefix(target)) + "*"):
            shutil.rmtree(stale, ignore_errors=True)
        tmp = temp_folder(target)
        try:
            write(tmp)
            replace_folder(tmp, target)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return target
