"""``Screen``: the part of the write track that needs neither the database nor the other items' decisions.

Validate, normalize, one embedding call for the batch, the gates (NoiseFilter, InjectionGuard + PoisoningDetector,
the assistant-chatter gate for chunks), token counts. It reads only settings and an embedder, so the bulk path can
run it in a process of its own (app/write/screen_process.py) as well as in a model thread; what it produces per
item is plain data (:class:`Prepared` before Dedup fills the decision fields).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
from quicktok import count_batch, get_encoding

from app.errors import InvalidInput, PayloadTooLarge
from app.models.base import Embedder
from app.safety.verdict import is_clean
from app.settings import Settings
from app.write.dedup import Verdict
from app.write.fingerprint import content_hash, simhash
from app.write.gates.chatter import ROLES as CHATTER_ROLES
from app.write.gates.chatter import AssistantChatter
from app.write.items import ItemResult, WriteItem
from app.write.provenance import SOURCE_KINDS
from app.write.timing import NO_CLOCK, StageClock


@dataclass(frozen=True, slots=True)
class Merge:
    """A MERGE's new text as it is written into its target (decided in the batch, applied after its CREATEs)."""

    content: str
    normalized: str
    embedding: np.ndarray
    fingerprint: int
    digest: bytes
    tokens: int


@dataclass(slots=True)
class Prepared:
    """One item on its way through the track (mutable while it is being decided)."""

    index: int
    item: WriteItem
    normalized: str = ""
    spans: list[dict[str, Any]] = field(default_factory=list)
    fingerprint: int = 0
    digest: bytes = b""
    embedding: np.ndarray | None = None  # the item's vector: screened before Dedup, kept for later stages
    rejected: ItemResult | None = None
    verdict: Verdict | None = None
    block_id: int | None = None  # the id its block takes if the item is created (drawn before deciding)
    merge: Merge | None = None
    expected: str | None = None  # a MERGE / SUPERSEDE target's content as Dedup read it
    tokens: int = 0
    ruleset_version: str | None = None
    gate_detail: dict[str, Any] | None = None
    read_clean: bool | None = None  # the read-time sanitizer's verdict on its content (app.safety.verdict)


# What screening fills in, by field name: all a process sends back (the item stays with the caller).
SCREENED = ("normalized", "spans", "fingerprint", "digest", "embedding", "rejected", "tokens", "ruleset_version",
            "gate_detail", "read_clean")


class Screen:
    def __init__(self, settings: Settings, embedder: Embedder, *, clock: StageClock | None = None) -> None:
        from app.safety.semantic import guard_reads
        from app.write.gates.chain import SafetyGates
        from app.write.normalize import ContentNormalizer, TemporalNormalizer

        self.settings = settings
        self.embedder = embedder
        self.normalizer = ContentNormalizer(temporal=TemporalNormalizer(day_first=settings.day_first))
        self.gates = SafetyGates()
        self.chatter = AssistantChatter()
        # The guard's semantic detector was trained on one embedder's vectors; it reads the write track's own only
        # when they come from that embedder, and then embeds the sentences it scores one by one with it too (else it
        # embeds what it scores with its own copy of USE: 0.6 s of CPU to load, in each of the model threads).
        self._guard_reads_vectors = guard_reads(embedder.name)
        self.clock: StageClock = clock or NO_CLOCK  # type: ignore[assignment]
        self._tokens = get_encoding("cl100k_base")

    def __call__(self, items: Sequence[WriteItem], *, max_items: int | None = None,
                 read_verdict: bool = True) -> list[Prepared]:
        """``max_items``: the batch size allowed (a request's by default). ``read_verdict``: judge each passing
        item's content for the read-time sanitizer now (kept with its block); False leaves ``read_clean`` None and
        the block's first recall judges it (the bulk path's default, app/write/bulk.py)."""
        self.validate(items, max_items)
        prepared = [self._normalize(i, item) for i, item in enumerate(items)]
        # Embedded before the gates: InjectionGuard's semantic detector reads the same vector (no second embedding).
        with self.clock("embed"):
            vectors = self.embedder.embed_documents([p.item.embedding_text(p.normalized) for p in prepared])
        for p, vec in zip(prepared, vectors, strict=True):
            self._gate(p, vec)
        passing = [p for p in prepared if p.rejected is None]
        if passing:
            counts = count_batch(self._tokens, [p.item.content for p in passing], threads=1)
            for p, n in zip(passing, counts, strict=True):
                p.tokens = int(n)
        if passing and read_verdict:
            with self.clock("read_verdict"):  # kept with the block: its recalls skip the read-time rules
                for p in passing:
                    p.read_clean = is_clean(p.item.content)
        return prepared

    def validate(self, items: Sequence[WriteItem], max_items: int | None = None) -> None:
        settings = self.settings
        limit = settings.max_batch_items if max_items is None else max_items
        if len(items) > limit:
            raise PayloadTooLarge(f"{len(items)} items in one request; the limit is {limit}",
                                  hint="split the batch")
        for i, item in enumerate(items):
            if not item.content or not item.content.strip():
                raise InvalidInput(f"item {i}: content is empty", hint="send the memory's text in 'content'")
            if len(item.content) > settings.max_content_chars:
                raise PayloadTooLarge(f"item {i}: content has {len(item.content)} characters; the limit is "
                                      f"{settings.max_content_chars}", hint="split it, or send it as session turns")
            if item.source_kind not in SOURCE_KINDS:
                raise InvalidInput(f"item {i}: unknown source_kind {item.source_kind!r}",
                                   hint=f"one of {', '.join(SOURCE_KINDS)}")
            if item.said_at.tzinfo is None:
                raise InvalidInput(f"item {i}: said_at has no time zone", hint="use ISO-8601 with an offset or Z")

    def _normalize(self, index: int, item: WriteItem) -> Prepared:
        p = Prepared(index, item)
        with self.clock("normalize"):
            norm = self.normalizer.normalize(item.content, item.said_at)
        p.normalized = norm.text
        p.spans = [asdict(s) for s in norm.spans]
        return p

    def _gate(self, p: Prepared, vector: np.ndarray) -> None:
        with self.clock("gates"):
            if self._guard_reads_vectors:  # its sentences too: no second copy of the model loaded in the guard
                gate = self.gates.check(p.normalized, vector, self.embedder.embed_documents)
            else:
                gate = self.gates.check(p.normalized)
        p.ruleset_version = gate.ruleset_version
        if gate.passed and p.item.kind == "chunk" and p.item.metadata.get("role") in CHATTER_ROLES:
            gate = self.chatter(p.item.content, p.item.context)  # a reply that only reacts to the user's turn
        if not gate.passed:
            p.rejected = ItemResult(p.index, "REJECT", None, (gate.reason,), gate=gate.gate, rule=gate.rule)
            p.gate_detail = gate.audit_detail()
            return
        p.embedding = vector
        p.fingerprint = simhash(p.normalized)
        p.digest = content_hash(p.normalized)
