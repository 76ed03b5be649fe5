"""The text `bench latency` fills vaults with and the numbers it reports: the corpus of the dev files' real
sentences, the filling of a vault through the write track, percentiles. Shared by the one-vault run
(app/bench/latency.py) and the spread run (app/bench/spread.py), which import it, not each other."""

from __future__ import annotations

import asyncio
import functools
import json
import re
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

_SENT = re.compile(r"(?<=[.!?。！？])\s+|\n+")


@functools.cache
def corpus(lme: Path | None = None, loc: Path | None = None) -> tuple[list[str], list[str]]:
    """(sentences, questions) from the dev files: real conversation, real questions (read once per process: a
    spread run fills a thousand vaults from it; callers do not change the lists)."""
    from app.importers.datasets import load_locomo, load_longmemeval
    from app.bench.runtime import EVAL_DIR

    sentences: dict[str, None] = {}
    questions: dict[str, None] = {}
    lme = lme or EVAL_DIR / "longmemeval_s_dev.json.gz"
    loc = loc or EVAL_DIR / "locomo_dev.json"
    for q in load_longmemeval(lme) if lme.exists() else []:
        questions[q.question] = None
        for s in q.sessions:
            for t in s.turns:
                for sent in _SENT.split(t.content):
                    sent = sent.strip(" *-#\t")
                    if 25 <= len(sent) <= 600:
                        sentences[sent] = None
    for conv in load_locomo(loc) if loc.exists() else []:
        for qa in conv.qa:
            questions[qa.question] = None
        for s in conv.sessions:
            for t in s.turns:
                if len(t.content) >= 20:
                    sentences[t.content] = None
    if not sentences:
        from app.errors import InvalidInput

        raise InvalidInput(f"no conversation text to build a corpus from: neither {lme} nor {loc} exists or has turns",
                           hint="run from a checkout with ../shared/eval (the dev files) beside it")
    return list(sentences), list(questions)


def texts(sentences: list[str], n: int, start: int = 0) -> Iterator[str]:
    """Texts ``start`` .. ``n - 1`` of the sequence: every sentence once, then neighbouring pairs (i, i + k) for
    growing k; fewer when the pairs run out (a corpus of m sentences has m * (m + 1) / 2 texts). ``start`` is
    reached by arithmetic, not by making the texts before it (a spread fill of a thousand vaults starts each
    vault's slice up to a million texts in)."""
    m = len(sentences)
    made = start
    for s in sentences[start:]:
        if made >= n:
            return
        yield s
        made += 1
    k, i = 1, max(0, start - m)  # i: the pairs of distance k still to pass over
    while k < m and i >= m - k:
        i -= m - k
        k += 1
    while made < n and k < m:
        for j in range(i, m - k):
            if made >= n:
                return
            yield f"{sentences[j]} {sentences[j + k]}"
            made += 1
        k, i = k + 1, 0


def percentile(xs: list[float], p: float) -> float:
    if not xs:
        return 0.0
    s = sorted(xs)
    idx = min(len(s) - 1, max(0, round(p / 100 * (len(s) - 1))))
    return round(s[idx], 2)


async def vault_memories(services: Any, vault: Any) -> int:
    """The vault's blocks that are not retracted (what a fill counts)."""
    row = await services.db.fetchone("SELECT count(*) AS n FROM memvault.block WHERE retracted_at IS NULL",
                                     vault_id=vault.id)
    return int(row["n"])


# The fill's texts are said 7 minutes apart from this instant on: the i-th text's said_at (its block's valid_at)
# says how far a fill got, so a fill resumed on a kept vault goes on from the text after its latest memory.
FILL_START = datetime(2024, 1, 1, tzinfo=UTC)
FILL_STEP = timedelta(minutes=7)
# ... closer together when n texts 7 minutes apart would run past FILL_END: every memory of a fill must be said
# before the queries' "now", or recall filters it out as not yet valid. (The first million-memory vault was filled
# 7 minutes apart: its texts ran to 2041, and a recall "now" saw 176,850 of its 899,315 current memories.)
# A fill of up to ~150k texts keeps the 7 minutes, so vaults kept from earlier runs resume as they were filled.
FILL_END = datetime(2026, 1, 1, tzinfo=UTC)


def fill_step(n: int) -> timedelta:
    """The time between a fill's consecutive texts, for a vault filled to n memories."""
    return min(FILL_STEP, (FILL_END - FILL_START) / max(1, n))


async def last_said(services: Any, vault: Any) -> datetime | None:
    """When the vault's latest memory was said (its blocks' latest valid_at); None for an empty vault."""
    row = await services.db.fetchone("SELECT max(valid_at) AS last FROM memvault.block", vault_id=vault.id)
    return row["last"] if row else None


async def fill(services: Any, vault: Any, n: int, batch: int, *, skip: int = 0, quiet: bool = False,
               build_ann_index: bool = True) -> tuple[int, float]:
    """Write memories until the vault holds n, through the write track's bulk path (app/write/bulk.py: batches
    of ``batch``; the vault's own HNSW index built once at the end unless ``build_ann_index`` is False, as the
    worker's build_ann_indexes job would); returns (memories, seconds spent writing). ``skip``: texts of the
    corpus left to other vaults (app/bench/spread.py); ``quiet``: no progress bar.

    Resumable: a vault that holds some of its memories (a fill stopped midway, ``--keep``) goes on from the
    text after its latest one (by its said_at) rather than screening the texts it already holds again."""
    from app.bench.harness import ensure_rail2
    from app.bench.runtime import progress
    from app.write.bulk import BulkConfig, BulkIngest
    from app.write.items import WriteItem

    have = await vault_memories(services, vault)
    if have >= n:
        await ensure_rail2(services, vault.id)  # a vault kept before the second rail was configured
        return have, 0.0
    i, step = 0, fill_step(n)
    if have:
        last = await last_said(services, vault)
        if last is not None and last >= FILL_START:
            i = (last - FILL_START) // step + 1
    sentences, _ = await asyncio.to_thread(corpus)
    # The latency benchmarks recall a vault as it is once in use: every block judged for the read-time sanitizer
    # (as the API path writes them, or as recalls leave them), not a bulk import's first recalls.
    bulk = BulkIngest(services, BulkConfig(batch_items=batch, build_ann_index=build_ann_index, read_verdict=True))
    seconds = 0.0
    bar = progress(n, "ingest", "mem", disable=quiet)
    bar.update(have)
    source = texts(sentences, 10 * n + skip, skip + i)
    while have < n:
        chunk = []
        for text in source:
            chunk.append(WriteItem(content=text, said_at=FILL_START + step * i,
                                   source_kind="user" if i % 2 == 0 else "assistant",
                                   session_id=f"lat-{i // 40}"))
            i += 1
            if len(chunk) >= n - have:
                break
        if not chunk:
            break
        t0 = time.perf_counter()
        results = await bulk.memories(vault, chunk, progress=bar.update)
        seconds += time.perf_counter() - t0
        have += sum(1 for r in results if r.decision == "CREATE")
    bar.close()
    await ensure_rail2(services, vault.id)  # the second rail's worker job (when configured), not timed
    return await vault_memories(services, vault), seconds
