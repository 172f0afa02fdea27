"""The PostgreSQL memory backend: :class:`PostgresStore`, for many processes on many
machines sharing one database (``tsvector`` full-text search, pgvector HNSW)."""

from satchel.memory.postgres._store import PostgresStore, is_postgres_url

__all__ = ["PostgresStore", "is_postgres_url"]
