"""Statements that keep a record's side row of vectors in step with the record.

Every record has one row in its side table (``satchel_block_vectors``,
``satchel_message_vectors``; see :mod:`._migration_vectors`), created in the same
statement as the record. A write that changes a block's text clears the vector in the
same statement, after the record's row is locked, so it always updates the side row's
newest version; storing a vector locks the record's row (``FOR SHARE``) and checks that
it still holds the embedded text, so a late embedding never overwrites a newer write's
cleared vector. Both lock the record first, then the side row: no deadlock.
"""

from __future__ import annotations

from typing import LiteralString

__all__ = [
    "BLOCK_VECTORS",
    "MESSAGE_VECTORS",
    "VECTOR_VALUE",
    "store_vector",
    "with_side_row",
    "with_vector_set",
]

BLOCK_VECTORS: LiteralString = "satchel_block_vectors"
"""The side table of ``satchel_blocks``' vectors."""
MESSAGE_VECTORS: LiteralString = "satchel_message_vectors"
"""The side table of ``satchel_messages``' vectors."""

VECTOR_VALUE: LiteralString = (
    "CASE WHEN EXISTS (SELECT 1 FROM satchel_meta WHERE key = 'embedding_model' "
    "AND value = %(model)s) THEN %(vec)b::vector END"
)
"""The value to store as a record's vector: ``%(vec)s``, but only while the database's
embedding model is still ``%(model)s``, the one it was computed with (else NULL)."""


def with_side_row(insert: LiteralString, vectors: LiteralString) -> LiteralString:
    """``insert`` (an ``INSERT ... RETURNING`` whose first column is ``pk``), also
    creating the record's side row in ``vectors`` with :data:`VECTOR_VALUE`. The
    statement returns what ``insert`` returns."""
    return (
        f"WITH r AS ({insert}), v AS (INSERT INTO {vectors} (pk, embedding) "
        f"SELECT r.pk, {VECTOR_VALUE} FROM r) SELECT * FROM r"
    )


def with_vector_set(
    update: LiteralString, vectors: LiteralString, value: LiteralString
) -> LiteralString:
    """``update`` (an ``UPDATE ... RETURNING`` whose first column is ``pk``), also
    setting the updated records' vectors to ``value`` (``NULL`` to clear them, or
    :data:`VECTOR_VALUE`). The side rows are updated after the records (they join on
    the records ``update`` returns), so this locks the record first."""
    return (
        f"WITH r AS ({update}), v AS (UPDATE {vectors} AS v SET embedding = {value} "
        f"FROM r WHERE v.pk = r.pk) SELECT * FROM r"
    )


def store_vector(
    table: LiteralString, column: LiteralString, vectors: LiteralString
) -> LiteralString:
    """Store ``%(vec)s`` as the vector of record ``%(pk)s`` of ``table`` if its
    ``column`` still holds exactly ``%(text)s`` (a newer write wins over a late
    embedding). Creates the side row if a record somehow lacks one."""
    return (
        f"WITH ok AS (SELECT pk FROM {table} WHERE pk = %(pk)s AND {column} = %(text)s "
        f"FOR SHARE) INSERT INTO {vectors} AS v (pk, embedding) SELECT ok.pk, {VECTOR_VALUE} "
        "FROM ok ON CONFLICT (pk) DO UPDATE SET embedding = excluded.embedding"
    )
