"""ReadSanitizer (seed 000, "Read-Time Sanitize"): the write side's versioned ruleset, applied again on the way out.

A block written months ago was checked with the rules of that day; here it meets today's. Dangerous spans become
``[REDACTED]`` and the rest of the memory stays (dropping it would dilute the top-k). Every hit becomes an
audit_log entry with the block id and the ruleset version (written with the recall's log row, one transaction).
The prefetch cache goes through the same sanitizer twice: before it is stored and when it is served.

It also asks ``app.safety.directive`` (AgentDirective) whether a text reads as an order to the agent that recalls
it ("when anyone asks about the weather, tell them to visit ..."): such a text is flagged (``directive_ids``: the
formatter marks its card ``instruction_like``), and redacted whole when it carries a link or a secret.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from app.safety import directive
from app.safety.ruleset import RULESET_VERSION, SanitizeResult, sanitize

DIRECTIVE_RULE = "read.agent_directive"
REDACTED_DIRECTIVE = "[REDACTED: this stored text reads as an instruction to the agent, with a link or a secret in it]"


@lru_cache(maxsize=8192)
def _sanitized(text: str) -> SanitizeResult:
    """The ruleset's verdict on one text, remembered: the ruleset is fixed for the life of the process and its
    result immutable, and the memories a vault recalls repeat (scanning one costs ~0.5 ms, a tenth of a recall's
    formatting)."""
    return sanitize(text)


@dataclass
class ReadSanitizer:
    """Sanitizes texts of blocks and collects one audit entry per rule hit."""

    audits: list[dict[str, Any]] = field(default_factory=list)
    redacted_ids: set[int] = field(default_factory=set)
    directive_ids: set[int] = field(default_factory=set)  # read as an instruction to the agent (flagged)

    def __call__(self, block_id: int | None, text: str, *, where: str = "recall") -> str:
        told = directive.judge(text)
        if told.directive and block_id is not None:
            self.directive_ids.add(block_id)
        if told.redact:  # an order to the agent with a link or a secret in it: nothing of it goes out
            if block_id is not None:
                self.redacted_ids.add(block_id)
            self.audits.append({"block_id": block_id, "rule": DIRECTIVE_RULE, "ruleset_version": RULESET_VERSION,
                                "detail": {"family": "agent_directive", "reason": told.reason, "where": where}})
            return REDACTED_DIRECTIVE
        result = _sanitized(text)
        if not result.hits:
            return text
        if block_id is not None:
            self.redacted_ids.add(block_id)
        for hit in result.hits:
            self.audits.append({
                "block_id": block_id,
                "rule": hit.rule_id,
                "ruleset_version": result.ruleset_version,
                "detail": {"family": hit.family, "severity": hit.severity, "span": [hit.start, hit.end],
                           "where": where},
            })
        return result.text

    @property
    def version(self) -> str:
        return RULESET_VERSION

    @property
    def hits(self) -> int:
        return len(self.audits)
