"""GraphBuild: L0 triples and entities from stored memories, into the tables and the AGE graph at once.

Runs as a Procrastinate job deferred in the memory's own transaction. A second noise check keeps chatter out
of the graph; triples come from the ``extract_triples`` task (patterns offline, the LLM when configured);
entity resolution merges surface forms; the relational rows and the graph mirror commit together.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from uuid import UUID

import numpy as np

from app.db.connector import as_array
from app.db.queries import Q
from app.models.tasks.base import get_task
from app.services import Services
from app.write.entities import EntityResolver, Known, canonical_key, is_pronoun


@dataclass(frozen=True, slots=True)
class GraphBuildResult:
    blocks: int
    triples: int
    entities_created: int
    skipped_noise: int


class GraphBuild:
    def __init__(self, services: Services) -> None:
        from app.write.gates.noise import NoiseFilter

        self.services = services
        self.noise = NoiseFilter()

    async def run(self, vault_id: UUID, block_ids: list[int]) -> GraphBuildResult:
        db = self.services.db
        blocks = await db.fetchall(
            Q.graph_blocks,
            (vault_id, block_ids), vault_id=vault_id)
        extracted, skipped = [], 0
        for b in blocks:
            if not self.noise(b["content"]).passed:  # the second noise check, before the graph
                skipped += 1
                continue
            extracted += [(b, t) for t in await self._triples(b)]
        # What the memories these blocks superseded stated ends with them (resolved to known entities only).
        replaced = await db.fetchall(Q.graph_replaced_blocks, (vault_id, block_ids), vault_id=vault_id)
        retired = [(b, t) for b in replaced for t in await self._triples(b)]
        if not extracted and not retired:
            return GraphBuildResult(len(blocks), 0, 0, skipped)
        names = sorted({n for _, t in extracted for n in (t.subject, t.object)})
        vectors = await self.services.models.embed_documents(self.services.embedder, names) if names else []
        vec_of = dict(zip(names, vectors, strict=True))
        async with db.transaction(vault_id) as conn:
            # One build at a time per vault, and a build runs safely twice (a job retried after its worker died
            # past the commit): the triples a block already has are not added again.
            await conn.execute(Q.graph_build_lock,
                               (str(vault_id),))
            cur = await conn.execute(
                Q.evidence_triples, (vault_id, [b["id"] for b, _ in extracted]))
            have = {(r["subject_id"], r["predicate"], r["object_id"], r["evidence_block_id"])
                    for r in await cur.fetchall()}
            resolver = await self._resolver(conn, vault_id)
            ends = []
            for b, t in retired:
                s_id, o_id = resolver.resolve(t.subject, None)[0], resolver.resolve(t.object, None)[0]
                if s_id is not None and o_id is not None:
                    ends.append({"subject_id": s_id, "predicate": t.predicate, "object_id": o_id, "block_id": b["id"],
                                 "at": b["valid_at"].isoformat()})
            if ends:
                await conn.execute(Q.end_replaced_triples, (vault_id, json.dumps(ends)))
            ids, created = await self._entities(conn, vault_id, resolver, names, vec_of)
            from app.models.tasks.extract_triples import SINGLE_VALUED

            rows = [{"subject_id": ids[t.subject], "predicate": t.predicate, "object_id": ids[t.object],
                     "block_id": b["id"], "confidence": t.confidence, "valid_at": b["valid_at"].isoformat(),
                     "single_valued": t.predicate in SINGLE_VALUED}
                    for b, t in extracted if ids[t.subject] != ids[t.object]
                    and (ids[t.subject], t.predicate, ids[t.object], b["id"]) not in have]
            mentions: dict[int, set[int]] = {}  # entity -> the memories of this build that name it
            for r in rows:
                for entity_id in (r["subject_id"], r["object_id"]):
                    mentions.setdefault(entity_id, set()).add(r["block_id"])
            if mentions:
                await conn.execute(Q.add_entity_mentions,
                                   (vault_id, list(mentions), [len(b) for b in mentions.values()]))
            cur = await conn.execute(Q.insert_triples,
                                     (vault_id, json.dumps(rows)))
            # Only the triples added come back (a fact the vault holds as current is not added twice; item: 1-based)
            added = {r["item"]: r["triple_id"] for r in await cur.fetchall()}
            triple_ids = list(added.values())
            edges = [{"s": r["subject_id"], "o": r["object_id"], "p": r["predicate"], "t": added[n], "b": r["block_id"]}
                     for n, r in enumerate(rows, 1) if n in added]
            await conn.execute(Q.graph_add,
                               (vault_id, json.dumps(created), json.dumps(edges)))
        return GraphBuildResult(len(blocks), len(triple_ids), len(created), skipped)

    async def _triples(self, block: dict) -> list:
        """The triples of a block's text that the graph takes (not negated, no pronoun object, names of sane length)."""
        task = get_task("extract_triples")
        speaker = "user" if block["source_kind"] == "user" else "assistant"
        out = await self.services.llm.run(task, task.input_model(text=block["content"][:4000], speaker=speaker))
        return [t for t in out.triples
                if not (t.negated or is_pronoun(t.object) or len(t.subject) > 120 or len(t.object) > 120)]

    async def _resolver(self, conn, vault_id: UUID) -> EntityResolver:
        cur = await conn.execute(Q.vault_entities,
                                 (vault_id,))
        known = [Known(r["id"], r["name"], r["canonical_key"],
                       as_array(r["embedding"]))
                 for r in await cur.fetchall()]
        cur = await conn.execute(Q.vault_aliases,
                                 (vault_id,))
        aliases = {r["alias_key"]: r["entity_id"] for r in await cur.fetchall()}
        return EntityResolver(known, aliases)

    async def _entities(self, conn, vault_id: UUID, resolver: EntityResolver, names: list[str],
                        vec_of: dict[str, np.ndarray]) -> tuple[dict[str, int], list[dict]]:
        """Every name's entity id; new entities are inserted. Returns ids and the created (for the graph)."""
        ids: dict[str, int] = {}
        created: list[dict] = []
        for name in names:
            entity_id, rule = resolver.resolve(name, vec_of[name])
            if entity_id is None:
                cur = await conn.execute(
                    Q.upsert_entities,
                    (vault_id, json.dumps([{"name": name, "key": canonical_key(name)}]), [vec_of[name]]))
                row = await cur.fetchone()
                entity_id = row["entity_id"]
                if row["created"]:
                    created.append({"id": entity_id, "name": name})
            else:
                await conn.execute(Q.add_alias,
                                   (vault_id, canonical_key(name), name, entity_id, rule))
            resolver.learn(entity_id, name, vec_of[name])
            ids[name] = entity_id
        return ids, created
