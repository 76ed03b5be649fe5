"""The sparse rail's per-vault lexeme counts (``memvault.lexeme_stats``): which query words are rare in this vault,
and their idf.

Counting a vault is one SQL call (``memvault.refresh_lexeme_stats_v1``, 0.6 s for 100,000 blocks). The background
job ``refresh_lexeme_stats`` recounts every vault whose block count moved by more than 10% since its last count;
a vault never counted falls back to the planner's table-wide statistics.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING
from uuid import UUID
from app.db.queries import Q


if TYPE_CHECKING:
    from app.services import Services

log = logging.getLogger(__name__)


async def refresh(services: Services, vault_id: UUID) -> int:
    """Recount one vault's lexemes; returns how many distinct lexemes it has."""
    row = await services.db.fetchone(Q.refresh_lexeme_stats, (vault_id,),
                                     vault_id=vault_id)
    return int(row["n"]) if row else 0


async def refresh_due(services: Services, *, min_blocks: int = 20, change: float = 0.1) -> dict[str, int]:
    """Recount every vault that is due (never counted, or its block count moved by more than ``change``)."""
    due = await services.db.fetchall(Q.lexeme_stats_due,
                                     (min_blocks, change))
    done: dict[str, int] = {}
    for row in due:
        done[str(row["vault_id"])] = await refresh(services, row["vault_id"])
        log.info("lexeme stats of vault %s: %d blocks (counted before: %s), %d lexemes", row["vault_id"],
                 row["blocks"], row["counted"], done[str(row["vault_id"])])
    return done
