"""Dedup's read of a vault in two halves: the whole-vault part before the vault's write lock, what changed under it.

Below 5,000 blocks (or before the vault has its own HNSW index) ``dedup_candidates_v3`` scans every current block
of the vault against every item of a batch, and that scan ran while the vault's write lock (app/write/serial.py)
was held: the next writer of the vault waited for it whatever it wrote. Now, before the lock, one statement
(``dedup_nearest_snapshot_v1``) finds each item's nearest blocks on its snapshot and gives a bound ("since"): the
xid of the oldest transaction of this database running just before that snapshot (else the snapshot's xmax);
under the lock, ``dedup_candidates_since_v1`` returns the rows v3 would return then, computed from those pairs plus
every block of the vault whose row version has an xmin at or above the bound (a pass over the vault's row headers,
no vector arithmetic; the cosines only for the pairs). The locked part is then O(blocks changed since) in vector
work, not O(vault).

Why it returns v3's rows exactly, when one holds the lock:
- a block no transaction touched since the snapshot has the same vector, kind and state, so its cosine with an
  item and its rank among the untouched blocks are the snapshot's; a touched one (inserted, merged into,
  superseded, retracted, its sources updated) is paired with every item and scored as it is now; a deleted one
  counts as touched;
- the snapshot was asked for ``SPARE`` more nearest blocks per item than the locked read keeps: if at most
  ``SPARE`` of an item's listed blocks were touched, its untouched blocks past the list rank below at least k
  untouched ones it lists, so its k nearest are among the pairs; an item whose list was short (every block over
  the floor listed) needs no margin; an item past the margin is read by v3 itself, under the lock;
- "written since" is judged by xmin against the bound, not by visibility in the snapshot: a row written in a
  subtransaction carries a subtransaction's xid, which a ``pg_snapshot`` does not list; a transaction running at
  the snapshot, or begun after, has an xid (and subtransaction xids) at or above the bound, so nothing is missed,
  and what was committed between the bound and the snapshot is merely scored again. The bound is this database's
  (``pg_stat_activity``), not the snapshot's xmin, which is the whole cluster's: another database's long
  transaction held it back seconds and made every block written meanwhile count as changed. Prepared (two-phase)
  transactions are not in ``pg_stat_activity``: memvault prepares none;
- exact-hash hits are read from the index under the lock, as v3 reads them.
A vault searched through its HNSW index (approximate, per item, no whole-vault scan) gets no snapshot: v3 runs
under the lock as before. The bulk path has its own copy of the vectors (app/write/mirror.py) and no snapshot.
"""

from __future__ import annotations

from dataclasses import dataclass

# Nearest blocks asked of the snapshot per item beyond what the locked read keeps: how many of an item's listed
# blocks other writers may change between the snapshot and the lock before the item is read again under it.
SPARE = 3


@dataclass(frozen=True, slots=True)
class NearSnapshot:
    """What ``dedup_nearest_snapshot_v1`` read for a batch's passing items (by position, 0-based)."""

    since: int | None  # the snapshot's xmin; None: the vault is searched through its index (v3 under the lock)
    near: dict[int, list[int]]  # item -> its nearest block ids at the snapshot
    k: int  # nearest blocks asked per item (the locked read's k + SPARE)

    @classmethod
    def from_rows(cls, rows: list[dict], k: int) -> NearSnapshot:
        since = None
        near: dict[int, list[int]] = {}
        for r in rows:
            if r["item"] == 0:
                since = r["since"]
            else:
                near.setdefault(r["item"] - 1, []).append(int(r["block_id"]))
        return cls(since, near, k)

    def params(self, n_items: int) -> tuple[list[int], list[int], list[bool]]:
        """The pairs (1-based items, block ids) and, per item, whether the snapshot listed as many as it was asked."""
        items, ids = [], []
        for i in range(n_items):
            for block_id in self.near.get(i, []):
                items.append(i + 1)
                ids.append(block_id)
        full = [len(self.near.get(i, [])) >= self.k for i in range(n_items)]
        return items, ids, full
