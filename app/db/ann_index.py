"""Per-vault HNSW indexes: each vault of at least ``MIN_BLOCKS`` blocks has a partial index of its own.

One HNSW index over every vault's vectors made a vault's search walk past the others' vectors: the dense rail of
a 10k vault beside a 100k one took p50 / p95 15.6 / 30.5 ms through the shared index, 2.8 / 4.6 through its own
(same queries, same database; the 100k vault itself ~4 ms either way). A vault below the threshold is searched
exactly through the vault index and needs no HNSW index; a larger one gets ``memvault.block_ann_<vault id>`` with
``WHERE vault_id = '<vault id>'``, which only it searches and only its writes maintain. The search functions use
it once it is valid and scan exactly until then.

``memvault.ann_index_plan_v1`` says what is due (build, rebuild an invalid one or one built with other HNSW
parameters than ``memvault.ann_index_options_v1``, drop one whose vault is gone or has shrunk below half the
threshold); this module runs the DDL, which cannot run inside a transaction when it is
concurrent. Dropping a vault drops its index right after (:func:`drop_index`); the worker's
``build_ann_indexes`` job builds the due ones every minute and drops any left behind; ``memvault index`` does it
at once; the benchmarks call :func:`ensure` while they fill a vault, as the worker would have.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING
from uuid import UUID

import psycopg
from psycopg import sql

if TYPE_CHECKING:
    from app.db.connector import Database

log = logging.getLogger(__name__)

_SPARE = "_next"  # the suffix of a replacement index while it is built (block_ann_<vault>_next: 47 characters)

MIN_BLOCKS = 5000  # the size from which a vault gets its own index and search leaves exact scans (exact_below)


@asynccontextmanager
async def _ddl_connection(db: Database) -> AsyncIterator[psycopg.AsyncConnection]:
    """The owner's connection for index DDL, holding the cluster's one index-DDL advisory lock until it closes.

    Two CREATE/DROP INDEX CONCURRENTLY of one index at once (a vault purged while the worker's minute job drops or
    builds its index, or a job left running by a killed process) each wait for the other's transaction: PostgreSQL
    ends one with a deadlock error. Taken in turn, the second finds the work done (``IF EXISTS``, the plan)."""
    async with await psycopg.AsyncConnection.connect(db.ddl_url, autocommit=True) as conn:
        await conn.execute("SELECT pg_advisory_lock(hashtext('memvault.ann_index_ddl'))")
        yield conn


@dataclass(frozen=True, slots=True)
class IndexAction:
    vault_id: UUID | None
    action: str  # build | rebuild | drop
    index_name: str
    blocks: int
    seconds: float = 0.0


def _drop(name: str, concurrently: bool) -> sql.Composed:
    return sql.SQL("DROP INDEX {c} IF EXISTS memvault.{name}").format(
        c=sql.SQL("CONCURRENTLY") if concurrently else sql.SQL(""), name=sql.Identifier(name))


async def plan(db: Database, min_blocks: int = MIN_BLOCKS) -> list[IndexAction]:
    rows = await db.fetchall(
        "SELECT vault_id, action, index_name, blocks FROM memvault.ann_index_plan_v1(%s) ORDER BY action, blocks DESC",
        (min_blocks,))
    return [IndexAction(r["vault_id"], r["action"], r["index_name"], int(r["blocks"])) for r in rows]


async def apply(db: Database, *, min_blocks: int = MIN_BLOCKS, vault_id: UUID | None = None,
                concurrently: bool = True) -> list[IndexAction]:
    """Build, rebuild and drop what the plan says (only ``vault_id``'s index when given). Concurrent DDL lets
    writes and searches go on meanwhile (the worker's way); without it the build is quicker but holds writes to
    the block table (the migration's and a benchmark's way)."""
    done: list[IndexAction] = []

    async def due() -> list[IndexAction]:
        return [a for a in await plan(db, min_blocks) if vault_id is None or a.vault_id == vault_id]

    if not await due():
        return done
    async with _ddl_connection(db) as conn:
        for a in await due():  # planned again under the lock: what its last holder did is done
            t0 = time.perf_counter()
            if a.action == "rebuild" and concurrently and a.vault_id is not None:
                await _replace(conn, a.vault_id, a.index_name)
            else:
                if a.action in ("drop", "rebuild"):
                    await conn.execute(_drop(a.index_name, concurrently))
                if a.action in ("build", "rebuild") and a.vault_id is not None:
                    await _build(conn, a.vault_id, concurrently)
            seconds = time.perf_counter() - t0
            log.info("%s %s (vault %s, %d blocks): %.1f s", a.action, a.index_name, a.vault_id, a.blocks, seconds)
            done.append(IndexAction(a.vault_id, a.action, a.index_name, a.blocks, seconds))
    return done


async def _build(conn: psycopg.AsyncConnection, vault_id: UUID, concurrently: bool,
                 name: str | None = None) -> None:
    cur = await conn.execute("SELECT memvault.ann_index_ddl_v2(%s, %s, %s)", (vault_id, concurrently, name))
    await conn.execute((await cur.fetchone())[0])


async def _replace(conn: psycopg.AsyncConnection, vault_id: UUID, name: str) -> None:
    """A vault's index rebuilt concurrently beside the one it replaces (built with other parameters, or left
    invalid), which searches go on using meanwhile: then the old one dropped and the new one renamed to it. Between
    the two, for a moment, the vault has none and is searched exactly. A replacement left by a rebuild that did not
    finish is named like no vault's index: the plan drops it."""
    spare = name + _SPARE
    await conn.execute(_drop(spare, concurrently=True))
    await _build(conn, vault_id, True, spare)
    await conn.execute(_drop(name, concurrently=True))
    await conn.execute(sql.SQL("ALTER INDEX memvault.{} RENAME TO {}").format(sql.Identifier(spare),
                                                                              sql.Identifier(name)))


async def drop_index(db: Database, vault_id: UUID) -> bool:
    """Drop a vault's own index (after the vault is gone); False when it had none."""
    row = await db.fetchone("SELECT memvault.ann_index_name_v1(%s) AS name, "
                            "to_regclass('memvault.' || memvault.ann_index_name_v1(%s)) IS NOT NULL AS has",
                            (vault_id, vault_id))
    if row is None or not row["has"]:
        return False
    async with _ddl_connection(db) as conn:
        await conn.execute(_drop(row["name"], concurrently=True))
    log.info("dropped %s with its vault %s", row["name"], vault_id)
    return True


async def has_index(db: Database, vault_id: UUID) -> bool:
    """Has the vault its own HNSW index (valid)?"""
    row = await db.fetchone("SELECT memvault.has_ann_index_v1(%s) AS has", (vault_id,), vault_id=vault_id)
    return bool(row and row["has"])


async def ensure(db: Database, vault_id: UUID, *, min_blocks: int = MIN_BLOCKS,
                 concurrently: bool = False) -> list[IndexAction]:
    """The vault's own index if it is due (a cheap check when it is not): for bulk writers without a worker."""
    row = await db.fetchone(
        "SELECT memvault.has_ann_index_v1(%s) AS has, memvault.vault_block_count_v1(%s) AS n", (vault_id, min_blocks),
        vault_id=vault_id)
    if row is None or row["has"] or int(row["n"]) < min_blocks:
        return []
    return await apply(db, min_blocks=min_blocks, vault_id=vault_id, concurrently=concurrently)
