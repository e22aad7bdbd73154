"""Process-level helpers: the micro-batcher, the AWS client pool, BLAS threads, the heap.

Apart from the stores and embedders that use them because each tunes the process, not a
backend: one batcher, one BLAS setting, one way to call AWS for the whole process.
"""
