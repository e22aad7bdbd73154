"""Handing freed heap memory back to the operating system.

glibc keeps memory that was freed in its heaps for later reuse, so a process
that once needed a lot of scratch stays that big (resident) for good. Two
moments in this server free a lot at once: building the local model's session
(onnxruntime parses the 23 MB model and folds its int8 weights into float32,
about 70 MB of scratch) and loading a large tenant into the vector cache (the
rows' blobs, about 20 MB at 100,000 memories). Both call `trim()` afterwards;
at 100,000 memories that is the difference between about 440 and under 400 MB
resident (bench/RESULTS.md).
"""

from __future__ import annotations

import functools
from collections.abc import Callable


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return libc.malloc_trim
    except (OSError, AttributeError):  # not glibc (musl, macOS, Windows)
        return None


def trim() -> None:
    """Return freed heap pages to the OS (glibc's malloc_trim); elsewhere a no-op."""
    release = _malloc_trim()
    if release is not None:
        release(0)
