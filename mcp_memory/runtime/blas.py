"""One BLAS thread for the vector scan.

numpy's OpenBLAS runs a matrix-vector product on every core and then keeps
its helper threads spinning in case another call follows. On a small machine
those spinning threads take the cores the embedding model and the event loop
need: with the default threads recall was several times slower and served
fewer than half the concurrent recalls
(bench/RESULTS.md#one-blas-thread-for-the-vector-scan). The scan is bound by memory
bandwidth, so one thread loses little, and concurrent recalls still use every
core.

Set once per process, at the first scan (never on the handshake path), through
threadpoolctl, which knows every BLAS numpy may be built with; without it,
nothing changes.
"""

from __future__ import annotations

import threading

_lock = threading.Lock()
_done = False


def use_one_thread() -> None:
    """Limit the BLAS numpy uses to one thread, once; later calls return at once."""
    global _done
    if _done:
        return
    with _lock:
        if _done:
            return
        try:
            from threadpoolctl import threadpool_limits
        except ImportError:  # an install without it keeps BLAS's own default
            pass
        else:
            threadpool_limits(limits=1, user_api="blas")
        _done = True
