"""Query vectors embedded on a worker thread while the caller uses the ones already done.

An eval's golden queries go through the model in its own batches (``BatchedEmbedder``:
longest first, so each vector is the one a single ``embed`` call gives) on one worker
thread, while the eval's thread searches, and explains, the queries of the batches that
are done. The model runs in native code without Python's lock, so the eval's Python work
fills time its thread would otherwise spend waiting for the whole set to be embedded.
"""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import numpy as np

from groove.engine.embed import Embedder

#: (indices into the texts, their unit-length float32 rows, one per index)
Batch = tuple[list[int], np.ndarray]


def batches_of(embedder: Embedder, texts: Sequence[str]) -> Iterator[Batch]:
    """``embedder``'s rows of ``texts`` a batch at a time: its own batches when it cuts
    them (a ``batches`` method), else one ``embed`` call for all."""
    cut = getattr(embedder, "batches", None)
    if cut is not None:
        yield from cut(texts)
    elif texts:
        yield list(range(len(texts))), embedder.embed(list(texts))


def threads_beside_caller() -> int:
    """onnxruntime threads for a model that works beside one busy thread of the caller's:
    every core this process may use but one, at least one. On two cores a second model
    thread would take turns with the caller's searches and gain neither side anything."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, cores - 1)


_DONE = object()


@contextmanager
def embedded_ahead(embedder: Embedder, texts: Sequence[str]) -> Iterator[Iterator[Batch]]:
    """Within: the batches of ``texts`` as the worker finishes them (an error of the
    model's is raised here, in the caller's thread). Leaving early stops the worker after
    its current batch and waits for it."""
    done: queue.SimpleQueue[object] = queue.SimpleQueue()
    stop = threading.Event()

    def work() -> None:
        try:
            for batch in batches_of(embedder, texts):
                if stop.is_set():
                    return
                done.put(batch)
        except BaseException as exc:  # handed to the caller's thread, raised there
            done.put(exc)
            return
        done.put(_DONE)

    worker = threading.Thread(target=work, name="groove-embed", daemon=True)
    worker.start()

    def received() -> Iterator[Batch]:
        while (item := done.get()) is not _DONE:
            if isinstance(item, BaseException):
                raise item
            yield item  # type: ignore[misc]

    try:
        yield received()
    finally:
        stop.set()
        worker.join()
