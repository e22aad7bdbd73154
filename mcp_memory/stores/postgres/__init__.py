"""The PostgreSQL + pgvector backend: both ports over one database (docs/storage.md).

For a deployment that has a database and no AWS; ranking, dedup and the counters above the
ports are the same code as on every other backend.
"""
