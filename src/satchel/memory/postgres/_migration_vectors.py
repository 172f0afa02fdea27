"""Migration ``0004_vector_side_tables``: vectors move out of the record tables.

An ``embedding`` column on ``satchel_blocks`` made storing a vector an ``UPDATE`` of
the whole row: PostgreSQL writes a new row version, recomputes the stored ``fts``
column over the whole text, and adds entries to every index of the table (GIN over the
words, the tags and the shares), because the HNSW index covers the changed column. An
append with an embedder cost about five times one without (figures in
``bench/README.md``). Each record table now has a narrow side table holding its
vectors, one row per record (``embedding`` NULL while there is none), keyed by the
record's ``pk`` and deleted with it; storing a vector updates only that row.

A side row is created with its record and never deleted on its own, so a writer that
clears a stale vector always finds the row and, under READ COMMITTED, updates its
newest version (a delete could miss a row inserted after its snapshot). The migration
copies every stored vector, then drops the old columns (and with them their HNSW
indexes; the store builds the new ones when it next claims the embedding model).
"""

from __future__ import annotations

from typing import Final

__all__ = ["NAME", "SQL"]

NAME: Final = "0004_vector_side_tables"
"""The migration's name in ``satchel_migrations``."""

SQL: Final = """
    CREATE TABLE satchel_block_vectors (
        pk bigint PRIMARY KEY REFERENCES satchel_blocks (pk) ON DELETE CASCADE,
        embedding vector
    );
    CREATE TABLE satchel_message_vectors (
        pk bigint PRIMARY KEY REFERENCES satchel_messages (pk) ON DELETE CASCADE,
        embedding vector
    );
    INSERT INTO satchel_block_vectors (pk, embedding)
        SELECT pk, embedding FROM satchel_blocks;
    INSERT INTO satchel_message_vectors (pk, embedding)
        SELECT pk, embedding FROM satchel_messages;
    ALTER TABLE satchel_blocks DROP COLUMN embedding;
    ALTER TABLE satchel_messages DROP COLUMN embedding;
"""
"""The migration's SQL script."""
