"""The embedded backend, the default: both ports over one SQLite file (docs/storage.md).

So a local install needs no server: an in-process vector cache, an FTS5 keyword index and
per-tenant locks that several processes sharing the file respect.
"""
