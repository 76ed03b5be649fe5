"""Golden queries (golden_queries/): expected inclusions, orderings and intents over a fixture vault, and a
top-k drift check against the last accepted baseline. MEMVAULT_GOLDEN_UPDATE=1 rewrites the baseline."""

from __future__ import annotations

import json
import os
from datetime import datetime, timedelta
from pathlib import Path

from app.read.config import RecallOptions
from app.read.recall import recall
from tests.integration.read_helpers import Mem, put_blocks

GOLDEN = Path(__file__).resolve().parents[2] / "golden_queries"
TOP = 5


def _load(name: str) -> dict:
    return json.loads((GOLDEN / name).read_text(encoding="utf-8"))


async def test_golden_queries(services, vault) -> None:
    fixture, spec = _load("fixture.json"), _load("cases.json")
    as_of = datetime.fromisoformat(fixture["as_of"])
    mems = fixture["memories"]
    ids = await put_blocks(services, vault, [
        Mem(m["content"], days_ago=m["days_ago"], source_kind=m.get("source_kind", "user"),
            trust=m.get("trust", 0.8), category=m.get("category", "Fact")) for m in mems], now=as_of)
    key_of = {bid: m["key"] for bid, m in zip(ids, mems)}
    baseline_path = GOLDEN / "baseline.json"
    baseline = json.loads(baseline_path.read_text()) if baseline_path.exists() else {}
    results: dict[str, list[str]] = {}
    failures: list[str] = []
    incl = incl_ok = order = order_ok = intent_ok = 0
    drifts: list[float] = []
    for case in spec["cases"]:
        r = await recall(services, vault, case["query"],
                         RecallOptions(as_of=as_of + timedelta(minutes=1), k=TOP, token_budget=4000,
                                       writeback=False, use_prefetch=False))
        top = [key_of[c.id] for c in r.cards if c.id in key_of]
        results[case["id"]] = top
        intent_ok += r.meta["intent"] == case["intent"]
        for key in case["include"]:
            incl += 1
            if key in top:
                incl_ok += 1
            else:
                failures.append(f"{case['id']}: {key} not in top {TOP} {top}")
        for a, b in case.get("before", []):
            order += 1
            rank = {k: i for i, k in enumerate(top)}
            if a in rank and rank[a] < rank.get(b, TOP + 1):
                order_ok += 1
            else:
                failures.append(f"{case['id']}: {a} not before {b} in {top}")
        if case["id"] in baseline:
            base = baseline[case["id"]]
            drifts.append(1 - len(set(base) & set(top)) / max(len(base), len(top), 1))
    th = spec["thresholds"]
    n = len(spec["cases"])
    report = (f"include {incl_ok}/{incl}, order {order_ok}/{order}, intent {intent_ok}/{n}, "
              f"drift {sum(drifts) / max(len(drifts), 1):.3f} over {len(drifts)}\n" + "\n".join(failures))
    if os.environ.get("MEMVAULT_GOLDEN_UPDATE") == "1":
        baseline_path.write_text(json.dumps(results, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    assert n >= 30 and {c["intent"] for c in spec["cases"]} == {
        "entity_lookup", "factual", "conceptual", "exploratory", "cross_domain", "unknown"}
    assert incl_ok / incl >= th["include_rate"], report
    assert order_ok / max(order, 1) >= th["order_rate"], report
    assert intent_ok / n >= th["intent_rate"], report
    if drifts:
        assert sum(drifts) / len(drifts) <= th["max_mean_drift"], report
    print(report)
