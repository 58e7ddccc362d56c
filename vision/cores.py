"""A card read is one core's work: OpenCV's and numpy's BLAS thread pools kept to one thread.

Both are process-wide settings, so the process that reads cards (``shoe run --camera``, the
``shoe vision`` commands, the benches) sets them once, at start. Measured on this 2-core
machine (cardai_hearts, draw 7, every other test photo, 386 reads, one process each):

- numpy's BLAS (OpenBLAS) on its default two threads read the same cards no faster (wall
  p50 / p95 17.0 / 39.1 against 17.6 / 41.0 ms) for twice the CPU (the process's p50 / p95
  33.2 / 78.7 against 17.6 / 41.0 ms): its second thread spins waiting for the small
  products a read makes (:meth:`vision.index_corner.CornerReader.read_each`);
- OpenCV on two threads: the same wall time (17.4 / 40.7 against 17.1 / 39.8 ms), 15 % more
  CPU.

At a table the other core is the controller's, the dealer display's and the journal's.
"""

from __future__ import annotations

import os

import cv2
from threadpoolctl import threadpool_limits


def read_on_one_core() -> None:
    """Keep OpenCV and every BLAS to one thread, for the whole process: those loaded now,
    and those loaded later (scipy's own OpenBLAS comes with ``scipy.optimize``, which the
    pips' reader imports when it first reads), which read ``OPENBLAS_NUM_THREADS`` as
    they load."""
    cv2.setNumThreads(1)
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    threadpool_limits(1, user_api="blas")
