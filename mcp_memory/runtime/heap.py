"""Handing freed heap memory back to the operating system.

glibc keeps memory that was freed in its heaps for later reuse, so a process
that once needed a lot of scratch stays that big (resident) for good:

- Two moments free a lot at once: building the local model's session
  (onnxruntime parses the model and folds its int8 weights into float32) and
  loading a large tenant into the vector cache (the rows' blobs). Both call
  `trim()` afterwards.
- Bursts of concurrent recalls allocate large short-lived arrays (a batch of
  searches' scores, the model's activations for a batch of queries). glibc
  serves those from mmap at first, then raises its threshold and keeps them in
  the heap, where they stay resident after the burst. `limit_growth()` fixes
  the threshold at 512 KiB, so such blocks go back to the OS when freed.

What it keeps out of resident memory: bench/RESULTS.md#resident-memory-scratch-handed-back-no-arena.
glibc only; elsewhere both are no-ops.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

#: glibc's mallopt parameter number for the mmap threshold.
_M_MMAP_THRESHOLD = -3
#: Blocks at least this large are mmap'd, and unmapped when freed.
MMAP_THRESHOLD = 512 * 1024


@functools.cache
def _glibc(name: str) -> Callable[..., int] | None:
    import ctypes
    import ctypes.util

    try:
        return getattr(ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6"), name)
    except (OSError, AttributeError):  # not glibc (musl, macOS, Windows)
        return None


def trim() -> None:
    """Return freed heap pages to the OS (glibc's malloc_trim); elsewhere a no-op."""
    release = _glibc("malloc_trim")
    if release is not None:
        release(0)


@functools.cache
def limit_growth() -> None:
    """Once per process: large blocks from mmap, given back when freed (glibc's mallopt)."""
    mallopt = _glibc("mallopt")
    if mallopt is not None:
        mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)
