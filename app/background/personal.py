"""The personality layer (seed 004): attitudes and skills, apart from the facts.

Attitudes fall in ten categories, each a chain of versions; a newer fact supersedes the older (kept, suppressed),
preferences coexist across versions, and every attitude's confidence fades as ``c * exp(-lambda * days)`` since it
was last confirmed, so a preference said once does not bind judgement forever. The dream reads the preferences
stated since the last dream (memories of category Preference), files each under its category by cue words, and
records every use of a skill by the speaker (``uses`` / ``plays`` / ``studies`` triples) with ``record_skill_use``:
L1 exposure, L2 competent, L3 generative, by experience that halves with disuse.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from app.background.config import PersonalConfig
from app.db.queries import Q

if TYPE_CHECKING:
    from datetime import datetime

    import psycopg

CATEGORIES = ("writing_style", "tech_choice", "design_principle", "pace", "aesthetic", "communication", "learning",
              "tooling", "collaboration", "values")

# Cue words of each category (English and Chinese); the first category whose cues match a preference files it.
CATEGORY_CUES: dict[str, str] = {
    "writing_style": r"\b(writ\w*|prose|tone|sentences?|wording|essay|blog|docs?|documentation)\b|寫作|文風|措辭",
    "tech_choice": r"\b(rust|python|go(lang)?|java\w*|typescript|postgres\w*|sql|database|framework|library|"
                   r"monolith|microservices?|kubernetes|cloud|stack|language)\b|技術|框架|資料庫|语言|語言",
    "design_principle": r"\b(design|architecture|simple|simplicity|modular|clean code|principle|pattern|"
                        r"abstraction)\b|設計|架構|簡單|简单",
    "pace": r"\b(pace|deadline|sprint|slow|fast|rush\w*|schedule|morning|evening|routine|breaks?)\b|節奏|步調|早上|晚上",
    "aesthetic": r"\b(colou?rs?|dark mode|light mode|font|minimal\w*|beautiful|style|look|art|music|decor)\b|顏色|美感|風格",
    "communication": r"\b(email|call|meeting|chat|message|talk|reply|feedback|communicat\w*)\b|溝通|會議|回覆",
    "learning": r"\b(learn\w*|course|book|read\w*|tutorial|study|practice)\b|學習|学习|課程|閱讀",
    "tooling": r"\b(editor|vim|emacs|vs ?code|ide|terminal|shell|git|tool\w*|app)\b|工具|編輯器",
    "collaboration": r"\b(team|pair\w*|review\w*|together|colleague|collaborat\w*)\b|團隊|合作|同事",
    "values": r".",  # whatever else a person prefers
}
_CUES = {k: re.compile(v, re.I) for k, v in CATEGORY_CUES.items()}


def attitude_category(text: str) -> str:
    return next(c for c in CATEGORIES if _CUES[c].search(text))


class Personal:
    def __init__(self, config: PersonalConfig | None = None) -> None:
        self.config = config or PersonalConfig()

    async def upsert_attitude(self, conn: psycopg.AsyncConnection, *, category: str, statement: str,
                              kind: str = "preference", confidence: float = 0.7, evidence: list[str] | None = None,
                              now: datetime | None = None) -> dict[str, Any]:
        cur = await conn.execute(Q.attitude_upsert,
                                 (category, kind, statement, confidence, evidence or [], now))
        return (await cur.fetchone())["a"]

    async def attitudes(self, conn: psycopg.AsyncConnection, *, now: datetime | None = None,
                        include_suppressed: bool = False) -> list[dict[str, Any]]:
        c = self.config
        cur = await conn.execute(Q.attitudes,
                                 (now, c.attitude_lambda, c.attitude_min_confidence, include_suppressed))
        return [r["a"] for r in await cur.fetchall()]

    async def record_skill_use(self, conn: psycopg.AsyncConnection, name: str, *, amount: float = 1.0,
                               evidence: str | None = None, now: datetime | None = None) -> dict[str, Any]:
        c = self.config
        cur = await conn.execute(Q.record_skill_use,
                                 (name, amount, evidence, now, c.skill_half_life_days, c.skill_l2, c.skill_l3))
        return (await cur.fetchone())["s"]

    async def skills(self, conn: psycopg.AsyncConnection, *, now: datetime | None = None) -> list[dict[str, Any]]:
        c = self.config
        cur = await conn.execute(Q.skills,
                                 (now, c.skill_half_life_days, c.skill_l2, c.skill_l3))
        return [r["s"] for r in await cur.fetchall()]

    async def from_memories(self, conn: psycopg.AsyncConnection, since: datetime | None) -> dict[str, int]:
        """The dream's part: preferences stated since ``since`` become attitudes, skill uses raise skills."""
        cur = await conn.execute(Q.dream_preferences_since, (since,))
        prefs = await cur.fetchall()
        for p in prefs:
            await self.upsert_attitude(conn, category=attitude_category(p["content"]), statement=p["content"],
                                       confidence=float(p["confidence"]),
                                       evidence=[p["session_id"]] if p["session_id"] else [])
        cur = await conn.execute(Q.dream_skill_uses_since,
                                 (since, list(self.config.self_keys)))
        uses = await cur.fetchall()
        for u in uses:
            await self.record_skill_use(conn, u["skill"], evidence=u["session_id"], now=u["used_at"])
        return {"attitudes": len(prefs), "skill_uses": len(uses)}
