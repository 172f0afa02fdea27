"""The PostgreSQL memory backend: :class:`PostgresStore`, for many satchel processes on
many machines sharing one database.

It implements :class:`~satchel.memory.MemoryStore` with the SQLite store's semantics
and passes the same contract suite (``tests/memory``). How it is built:

* **Connections**: one ``psycopg_pool.AsyncConnectionPool`` per store (1 to 10
  connections by default), autocommit, READ COMMITTED (:mod:`._db`).
* **Schema**: ordered, named migrations recorded in ``satchel_migrations``, applied
  under an advisory lock; the ``vector`` and ``unaccent`` extensions are created on
  first open, with a clear :class:`~satchel.StorageError` if pgvector is missing
  (:mod:`._migrations`).
* **Writes**: every block write is one conditional statement that re-checks the
  permission level the gate allowed, the expected version and the character limit on
  the newest row version; appends are ``UPDATE ... SET value = value || ...``, so
  appends from any number of processes all land (:mod:`._blocks`).
* **Search**: a generated ``tsvector`` column (GIN; Snowball English stems, accents
  folded, no stop words) ranked BM25-style with per-term IDF, an HNSW index (cosine,
  ``m = 16``, ``ef_construction = 64``, ``ef_search = 100``, iterative scans) on the
  embeddings, and the shared fusion (:mod:`._search_sql`).
* **Vectors**: in narrow side tables, one row per record, so storing a vector does not
  rewrite the record's row and its full-text entries (:mod:`._vector_rows`,
  :mod:`._migration_vectors`).
* **Text**: NUL characters, which PostgreSQL ``text`` refuses, are escaped reversibly
  (:mod:`._rows`).
"""

from satchel.memory._open import is_postgres_url
from satchel.memory.postgres._db import Conn, describe, redact
from satchel.memory.postgres._store import PostgresStore

__all__ = ["Conn", "PostgresStore", "describe", "is_postgres_url", "redact"]
