"""ReadSanitizer (seed 000, "Read-Time Sanitize"): the write side's versioned ruleset, applied again on the way out.

A block written months ago was checked with the rules of that day; here it meets today's. Dangerous spans become
``[REDACTED]`` and the rest of the memory stays (dropping it would dilute the top-k). Every hit becomes an
audit_log entry with the block id and the ruleset version (written with the recall's log row, one transaction).
The prefetch cache goes through the same sanitizer twice: before it is stored and when it is served.

It also asks ``app.safety.directive`` (AgentDirective) whether a text reads as an order to the agent that recalls
it ("when anyone asks about the weather, tell them to visit ..."): such a text is flagged (``directive_ids``: the
formatter marks its card ``instruction_like``), and redacted whole when it carries a link or a secret.

A block whose content has a stored clean verdict for today's rules (``app.safety.verdict``: ``known_clean``, from
the search's ``read_clean``) is let out without running them; the verdicts the rules give on blocks' contents here
(``judged``) are stored with the recall's log (:meth:`ReadSanitizer.new_verdicts`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from app.safety import directive
from app.safety.ruleset import RULESET_VERSION, SanitizeResult, sanitize
from app.safety.verdict import text_sha256

if TYPE_CHECKING:
    from app.read.search import Candidate

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
    # block id -> its content, whose stored verdict under today's rules is clean (app.safety.verdict)
    known_clean: dict[int, str] = field(default_factory=dict)
    # (block id, text, clean): what the rules said here about a block's text
    judged: list[tuple[int, str, bool]] = field(default_factory=list)

    def know(self, cands: Iterable[Candidate]) -> None:
        """The candidates' stored verdicts: a clean one lets that content out without the rules."""
        self.known_clean.update((c.id, c.content) for c in cands if c.read_clean)

    def new_verdicts(self, cands: Iterable[Candidate]) -> tuple[list[int], list[bytes], list[bool]]:
        """The verdicts the rules gave here on candidates' contents that had none for today's rules, to store:
        block ids, the SHA-256 of the text judged, clean or not."""
        unknown = {c.id: c.content for c in cands if c.read_clean is None}
        out: dict[int, tuple[bytes, bool]] = {}
        for block_id, text, clean in self.judged:
            if unknown.get(block_id) == text:
                out[block_id] = (text_sha256(text), clean)
        ids = sorted(out)
        return ids, [out[i][0] for i in ids], [out[i][1] for i in ids]

    def __call__(self, block_id: int | None, text: str, *, where: str = "recall") -> str:
        if block_id is not None and (known := self.known_clean.get(block_id)) is not None \
                and (known is text or known == text):
            return text  # judged clean under these rules already (stored with the block)
        told = directive.judge(text)
        if told.directive and block_id is not None:
            self.directive_ids.add(block_id)
        if told.redact:  # an order to the agent with a link or a secret in it: nothing of it goes out
            if block_id is not None:
                self.redacted_ids.add(block_id)
                self.judged.append((block_id, text, False))
            self.audits.append({"block_id": block_id, "rule": DIRECTIVE_RULE, "ruleset_version": RULESET_VERSION,
                                "detail": {"family": "agent_directive", "reason": told.reason, "where": where}})
            return REDACTED_DIRECTIVE
        result = _sanitized(text)
        if block_id is not None:
            self.judged.append((block_id, text, not told.directive and not result.hits))
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
