"""``memvault bench keep``: what the write track keeps of a conversation, on a hand-labeled set of turns.

    memvault bench keep [--file tests/fixtures/keep/turns.jsonl] [--split heldout|dev|all] [--json out.json]

Each labeled conversation goes into a vault of its own through the real write track: each session's turns appended
(``SessionTrack.append_turns``: chunks through the gates and Dedup), then the session closed (atomic units,
summary), sessions in order; then the vault's graph is built as the worker builds it (``GraphBuild``). Measured:

* **kept**, per turn: a user's turn is kept when it is the source of an atomic unit that states something (a
  memory the close extracted: Fact, Decision, OpenQuestion ...; not a Topic); an assistant's when its chunk is
  stored (its answers are the archive a user asks about later; seed 003 credits claims to the user's turns).
  Precision and recall against the labels, per category (tests/fixtures/keep/README.md);
* **chatter stored**: turns labeled drop whose raw chunk was stored anyway (a retrievable memory of "Happy to help!");
* **units from requests**: claims (Facts, OpenQuestions ...) made of the user's requests and lookups; they may give
  Topics (what the user brought up), which state nothing and are counted apart;
* **supersede accuracy**: for each switch ("switched to", "moved to", "now use", "no longer"), whether a unit of the
  turn it replaces was superseded by a block of the switch's turn; and supersessions the labels do not ask for;
* **triples per fact**: the graph's relation rows per distinct (subject, predicate, object) (1.0: each fact once),
  objects that are whole clauses (``name is Wen``), and triples drawn from a replaced fact's turn still current
  (the graph is built after each write, as the worker builds it).
"""

from __future__ import annotations

import argparse
import json
import re
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import app
from app.services import Services

DEFAULT_FILE = Path(app.__file__).resolve().parents[1] / "tests" / "fixtures" / "keep" / "turns.jsonl"
# Dates the sessions are said at: a session a week after the one before, a minute between turns.
START = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
_CLAUSE = re.compile(r"\b(?:is|are|was|were|am)\b", re.I)


def add_parser(bench_sub: argparse._SubParsersAction) -> None:
    p = bench_sub.add_parser("keep", help="what the write track keeps of labeled turns: precision / recall per "
                                          "category, supersede accuracy, triples per fact")
    p.add_argument("--file", type=Path, default=DEFAULT_FILE, help="labeled turns (JSONL; default: the shipped set)")
    p.add_argument("--split", choices=("heldout", "dev", "all"), default="heldout",
                   help="which half of the set (default heldout)")
    p.add_argument("--json", dest="json_path", type=Path, help="write the result to this file")
    p.set_defaults(func=handler)


@dataclass(frozen=True, slots=True)
class Labeled:
    id: str
    conversation: str
    session: int
    role: str
    text: str
    cat: str
    keep: bool
    lang: str
    supersedes: str | None = None
    facts: tuple[str, ...] = ()


@dataclass(slots=True)
class Conversation:
    id: str
    sessions: list[list[Labeled]] = field(default_factory=list)


def load(path: Path, split: str) -> list[Conversation]:
    """The labeled turns of ``split``, as conversations of sessions in file order."""
    convs: dict[str, Conversation] = {}
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        r = json.loads(line)
        if split != "all" and r["split"] != split:
            continue
        conv, session, _ = r["id"].split("/")
        t = Labeled(r["id"], conv, int(session), r["role"], r["text"], r["cat"], bool(r["keep"]), r["lang"],
                    r.get("supersedes"), tuple(r.get("facts", ())))
        c = convs.setdefault(conv, Conversation(conv))
        while len(c.sessions) <= t.session:
            c.sessions.append([])
        c.sessions[t.session].append(t)
    if not convs:
        raise SystemExit(f"bench keep: no turns of split {split!r} in {path}")
    return list(convs.values())


async def run_conversation(services: Services, conv: Conversation) -> dict[str, Any]:
    """One conversation through the write track in a scratch vault; what each labeled turn became."""
    from app.bench.runtime import scratch_vault
    from app.write.graph import GraphBuild
    from app.write.sessions import TurnIn

    async with scratch_vault(services, "bench-keep") as vault:
        turn_of: dict[int, Labeled] = {}
        graph = GraphBuild(services)
        built = 0

        async def build() -> None:  # the worker's graph job after each write, on the blocks it created
            nonlocal built
            rows = await services.db.fetchall("SELECT id FROM memvault.block WHERE vault_id = %s AND id > %s "
                                              "ORDER BY id", (vault.id, built), vault_id=vault.id)
            if rows:
                await graph.run(vault.id, [r["id"] for r in rows])
                built = rows[-1]["id"]

        for s, turns in enumerate(conv.sessions):
            said = START + timedelta(days=7 * s)
            sid = f"{conv.id}-s{s}"
            res = await services.sessions.append_turns(
                vault, sid, [TurnIn(t.role, t.text, said + timedelta(minutes=i)) for i, t in enumerate(turns)])
            turn_of.update(zip(res.turn_ids, turns, strict=True))
            await build()
            await services.sessions.close(vault, sid)
            await build()
        blocks = await services.db.fetchall(
            "SELECT id, kind, category, content, source_turn_ids, superseded_by FROM memvault.block "
            "WHERE vault_id = %s AND retracted_at IS NULL ORDER BY id", (vault.id,), vault_id=vault.id)
        triples = await services.db.fetchall(
            "SELECT subject, predicate, object, evidence_block_id, invalid_at FROM memvault.entity_graph "
            "WHERE vault_id = %s", (vault.id,), vault_id=vault.id)
    return outcome(turn_of, blocks, triples)


def outcome(turn_of: dict[int, Labeled], blocks: list[dict], triples: list[dict]) -> dict[str, Any]:
    """Per labeled turn: its chunk stored, its units, the blocks that superseded them; the graph's triples."""
    per: dict[str, dict[str, Any]] = {t.id: {"chunk": False, "units": [], "superseded_by": []}
                                      for t in turn_of.values()}
    block_turns: dict[int, set[str]] = {}
    for b in blocks:
        ids = {turn_of[i].id for i in (b["source_turn_ids"] or []) if i in turn_of}
        block_turns[b["id"]] = ids
        for tid in ids:
            if b["kind"] == "chunk":
                per[tid]["chunk"] = True
            elif b["kind"] == "unit":
                per[tid]["units"].append({"id": b["id"], "category": b["category"], "text": b["content"]})
                if b["superseded_by"] is not None:
                    per[tid]["superseded_by"].append(b["superseded_by"])
    for p in per.values():  # the turns the superseding blocks came from
        p["superseded_by"] = sorted({tid for bid in p["superseded_by"] for tid in block_turns.get(bid, ())})
    rows = [{"s": r["subject"], "p": r["predicate"], "o": r["object"], "current": r["invalid_at"] is None,
             "turns": sorted(block_turns.get(r["evidence_block_id"], ()))} for r in triples]
    return {"turns": per, "triples": rows}


def kept(t: Labeled, got: dict[str, Any]) -> bool:
    """A user's turn: it gave an atomic unit other than a Topic (a Topic indexes what was talked about; it states
    no claim). An assistant's: its chunk is stored (or it gave a unit)."""
    claims = [u for u in got["units"] if u["category"] != "Topic"]
    return bool(claims) or (t.role != "user" and (got["chunk"] or bool(got["units"])))


def score(convs: list[Conversation], results: list[dict[str, Any]]) -> dict[str, Any]:
    labeled = {t.id: t for c in convs for s in c.sessions for t in s}
    got = {tid: g for r in results for tid, g in r["turns"].items()}
    tp = fp = fn = tn = 0
    cats: dict[str, dict[str, int]] = defaultdict(lambda: {"n": 0, "label_keep": 0, "kept": 0, "right": 0})
    langs: dict[str, dict[str, int]] = defaultdict(lambda: {"n": 0, "right": 0})
    errors: list[dict[str, Any]] = []
    chatter_stored = request_units = request_topics = 0
    for tid, t in labeled.items():
        g = got[tid]
        k = kept(t, g)
        tp += t.keep and k
        fp += (not t.keep) and k
        fn += t.keep and not k
        tn += (not t.keep) and not k
        c = cats[t.cat]
        c["n"] += 1
        c["label_keep"] += t.keep
        c["kept"] += k
        c["right"] += k == t.keep
        langs[t.lang]["n"] += 1
        langs[t.lang]["right"] += k == t.keep
        if not t.keep and g["chunk"] and t.cat in ("small_talk", "assistant_pleasantry"):
            chatter_stored += 1
        if t.cat in ("user_request", "user_question"):
            request_units += sum(u["category"] != "Topic" for u in g["units"])
            request_topics += sum(u["category"] == "Topic" for u in g["units"])
        if k != t.keep:
            errors.append({"id": tid, "cat": t.cat, "text": t.text, "label": "keep" if t.keep else "drop",
                           "units": [f"{u['category']}: {u['text']}" for u in g["units"]], "chunk": g["chunk"]})
    switches = [t for t in labeled.values() if t.supersedes]
    superseded_right = [t.id for t in switches if t.id in got[t.supersedes]["superseded_by"]]
    wanted = {(t.supersedes, t.id) for t in switches}
    unwanted = sorted({(old, new) for old, g in got.items() for new in g["superseded_by"]
                       if (old, new) not in wanted})
    rows = [r for res in results for r in res["triples"]]
    distinct = {(r["s"].lower(), r["p"], r["o"].lower(), tuple(r["turns"])) for r in rows}
    fact_turns = {t.id for t in labeled.values() if t.cat in ("user_fact", "user_switch")}
    fact_rows = [r for r in rows if fact_turns & set(r["turns"])]
    replaced = {t.supersedes for t in switches}
    stale = [f"{r['s']} {r['p']} {r['o']}" for r in rows if r["current"] and replaced & set(r["turns"])]
    clause = [f"{r['s']} {r['p']} {r['o']!r}" for r in rows if _CLAUSE.search(r["o"]) and len(r["o"].split()) >= 3]
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    return {
        "turns": len(labeled), "conversations": len(convs),
        "precision": round(precision, 3), "recall": round(recall, 3),
        "f1": round(2 * precision * recall / (precision + recall), 3) if precision + recall else 0.0,
        "confusion": {"tp": tp, "fp": fp, "fn": fn, "tn": tn},
        "categories": {k: dict(v) for k, v in sorted(cats.items())},
        "languages": {k: {**v, "accuracy": round(v["right"] / v["n"], 3)} for k, v in sorted(langs.items())},
        "chatter_stored": chatter_stored, "request_units": request_units, "request_topics": request_topics,
        "switches": len(switches), "superseded_right": len(superseded_right),
        "supersede_accuracy": round(len(superseded_right) / len(switches), 3) if switches else None,
        "switch_misses": sorted(t.id for t in switches if t.id not in superseded_right),
        "unwanted_supersessions": [list(x) for x in unwanted],
        "triples": len(rows), "triples_per_fact": round(len(rows) / len(distinct), 3) if distinct else None,
        "fact_triples": len(fact_rows), "clause_objects": clause, "replaced_triples_current": stale,
        "errors": errors,
    }


async def run_keep(services: Services, convs: list[Conversation]) -> dict[str, Any]:
    results = [await run_conversation(services, c) for c in convs]
    return score(convs, results)


def format_table(r: dict[str, Any], title: str) -> str:
    lines = [title, f"{'category':<22} {'n':>4} {'label':>6} {'kept':>5} {'right':>6}"]
    for cat, c in r["categories"].items():
        label = "keep" if c["label_keep"] == c["n"] else "drop" if not c["label_keep"] else "mixed"
        lines.append(f"{cat:<22} {c['n']:>4} {label:>6} {c['kept']:>5} {c['right'] / c['n']:>6.2f}")
    lines.append("language accuracy: " + ", ".join(f"{k} {v['accuracy']:.2f} ({v['n']})"
                                                 for k, v in r["languages"].items()))
    lines.append(f"kept: precision {r['precision']:.3f} recall {r['recall']:.3f} F1 {r['f1']:.3f} "
                 f"({r['turns']} turns, {r['conversations']} conversations)")
    lines.append(f"chatter stored as a chunk: {r['chatter_stored']}; claims made of requests and lookups: "
                 f"{r['request_units']} (Topics: {r['request_topics']})")
    acc = r["supersede_accuracy"]
    lines.append(f"supersede accuracy: {r['superseded_right']}/{r['switches']}"
                 + (f" = {acc:.3f}" if acc is not None else "")
                 + f"; supersessions not asked for: {len(r['unwanted_supersessions'])}")
    tpf = r["triples_per_fact"]
    lines.append(f"graph: {r['triples']} relation rows, {tpf if tpf is not None else '-'} per distinct fact; "
                 f"whole-clause objects: {len(r['clause_objects'])}; triples of replaced facts still current: "
                 f"{len(r['replaced_triples_current'])}")
    return "\n".join(lines)


def handler(args: argparse.Namespace) -> int:
    from app.bench.runtime import run_bench, write_json

    convs = load(args.file, args.split)

    async def core(services: Services) -> dict[str, Any]:
        return await run_keep(services, convs)

    result = run_bench(core)
    print(format_table(result, title=f"keep over {args.file.name} ({args.split})"))
    write_json(args.json_path, {"file": str(args.file), "split": args.split, **result})
    return 0
