"""POST /v1/vaults/{vault}/recall: formats, meta, 422 with field errors, 404 for an unknown vault."""

from __future__ import annotations

from tests.integration.read_helpers import put_blocks


async def test_recall_endpoint_formats_and_meta(client, services, vault) -> None:
    ids = await put_blocks(services, vault, ["My sister Anna moved to Berlin in March.",
                                             "The OCR project deadline is Friday."])
    r = await client.post(f"/v1/vaults/{vault.name}/recall", json={"query": "Who is Anna?", "format": "cards"})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["cards"][0]["id"] == ids[0] and body["cascade_cards"] == []
    meta = body["meta"]
    assert meta["intent"] == "entity_lookup" and meta["mode"] == "LOCAL" and meta["thinking"] == "fast"
    assert meta["tokens"]["used"] > 0 and "search" in meta["stage_ms"]
    assert any(e["stage"] == "rerank" for e in meta["events"])  # gate / breaker events are reported
    r = await client.post(f"/v1/vaults/{vault.name}/recall",
                          json={"query": "OCR deadline", "format": "text", "token_budget": 50, "thinking": "slow"})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["text"].startswith("<memories ") and '<memory n="1" id=' in body["text"] and "OCR" in body["text"]
    assert body["meta"]["thinking"] == "slow"
    assert body["meta"]["crag"]["verdict"] in {"CORRECT", "AMBIGUOUS", "INCORRECT"}
    r = await client.post(f"/v1/vaults/{vault.name}/recall",
                          json={"query": "OCR", "format": "json", "as_of": "2020-01-01T00:00:00Z"})
    assert r.status_code == 200 and r.json()["cards"] == []


async def test_recall_endpoint_errors(client, vault) -> None:
    r = await client.post(f"/v1/vaults/{vault.name}/recall", json={"query": "", "format": "yaml", "token_budget": 0})
    assert r.status_code == 422
    fields = {f.get("key") or f.get("field") for f in r.json()["fields"]}
    assert {"query", "format", "token_budget"} <= fields, r.json()
    r = await client.post("/v1/vaults/nope/recall", json={"query": "hello"})
    assert r.status_code == 404 and r.json()["error"] == "NotFound"
    r = await client.get(f"/v1/vaults/{vault.name}/recall/stats")
    assert r.status_code == 200 and "counters" in r.json()
