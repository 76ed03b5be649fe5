"""REST reads and edits of what a vault holds: memories listed with filters and cursor pages, PATCH with history,
feedback, sessions and turns, entities and a neighbourhood from the AGE graph; one error body shape everywhere."""

from __future__ import annotations

from datetime import UTC, datetime

from app.write.graph import GraphBuild

V = "/v1/vaults/b"


async def _seed(client) -> list[int]:
    assert (await client.post("/v1/vaults", json={"name": "b"})).status_code == 201
    items = [{"content": "Alice works at Acme.", "category": "Fact", "said_at": "2024-01-10T09:00:00Z"},
             {"content": "We decided to ship the billing service on Fridays only.", "category": "Decision",
              "said_at": "2024-02-01T09:00:00Z"},
             {"content": "Alice lives in Paris.", "category": "Fact", "said_at": "2024-03-05T09:00:00Z"},
             {"content": "I prefer green tea to coffee in the morning.", "category": "Preference",
              "said_at": "2024-04-01T09:00:00Z", "session_id": "s-9"}]
    r = await client.post(f"{V}/memories", json={"items": items})
    assert r.status_code == 200
    return [x["block_id"] for x in r.json()["results"]]


def _assert_error(r, status: int, error: str, where: str) -> dict:
    body = r.json()
    assert r.status_code == status, body
    assert set(body) == {"error", "detail", "where", "hint", "fields"}
    assert body["error"] == error and body["where"] == where and body["detail"]
    return body


async def test_list_memories_filters_and_cursor_pages(client) -> None:
    ids = await _seed(client)
    everything = (await client.get(f"{V}/memories")).json()
    assert [m["id"] for m in everything["items"]] == sorted(ids, reverse=True) and everything["next_cursor"] is None

    first = (await client.get(f"{V}/memories", params={"limit": 3})).json()
    assert len(first["items"]) == 3 and first["next_cursor"]
    second = (await client.get(f"{V}/memories", params={"limit": 3, "cursor": first["next_cursor"]})).json()
    assert [m["id"] for m in first["items"] + second["items"]] == sorted(ids, reverse=True)
    assert second["next_cursor"] is None

    async def ids_for(**params) -> list[int]:
        r = await client.get(f"{V}/memories", params=params)
        assert r.status_code == 200, r.json()
        return [m["id"] for m in r.json()["items"]]

    assert await ids_for(category="Fact") == [ids[2], ids[0]]
    assert await ids_for(contains="ALICE") == [ids[2], ids[0]]
    assert await ids_for(session="s-9") == [ids[3]]
    assert await ids_for(valid_to="2024-02-15T00:00:00Z") == [ids[1], ids[0]]
    assert await ids_for(valid_from="2024-03-01T00:00:00Z", category="Fact") == [ids[2], ids[0]]  # still valid
    assert await ids_for(recorded_to="2000-01-01T00:00:00Z") == []
    assert await ids_for(state="retracted") == []

    bad = await client.get(f"{V}/memories", params={"cursor": "not-a-cursor"})
    assert "not a cursor of this list" in _assert_error(bad, 400, "BadRequest", f"GET {V}/memories")["detail"]
    sessions_cursor = (await client.get(f"{V}/memories", params={"limit": 1})).json()["next_cursor"]
    wrong = await client.get(f"{V}/sessions", params={"cursor": sessions_cursor})
    _assert_error(wrong, 400, "BadRequest", f"GET {V}/sessions")  # a cursor of another list
    limit = _assert_error(await client.get(f"{V}/memories", params={"limit": 0}), 422, "InvalidInput",
                          f"GET {V}/memories")
    assert limit["fields"][0]["field"] == "limit"
    _assert_error(await client.get(f"{V}/memories", params={"category": "Gossip"}), 422, "InvalidInput",
                  f"GET {V}/memories")


async def test_patch_keeps_history_and_audits(client, services) -> None:
    ids = await _seed(client)
    r = await client.patch(f"{V}/memories/{ids[2]}", json={"category": "Preference", "confidence": 0.95,
                                                            "invalid_at": "2024-06-01T00:00:00Z",
                                                            "metadata": {"reason": "moved to Lyon"}})
    assert r.status_code == 200, r.json()
    m = r.json()
    assert (m["category"], m["confidence"], m["version"]) == ("Preference", 0.95, 2)
    assert m["invalid_at"].startswith("2024-06-01") and m["history"][0]["category"] == "Fact"
    # no longer valid after June: a valid-time filter past it leaves it out
    later = (await client.get(f"{V}/memories", params={"valid_from": "2024-07-01T00:00:00Z"})).json()
    assert ids[2] not in [x["id"] for x in later["items"]]
    row = await services.db.fetchone("SELECT detail FROM memvault.audit_log WHERE action = 'memory.patch'")
    assert row["detail"]["before"]["category"] == "Fact" and row["detail"]["after"]["category"] == "Preference"

    where = f"PATCH {V}/memories/{ids[2]}"
    assert "nothing to change" in _assert_error(await client.patch(f"{V}/memories/{ids[2]}", json={}), 422,
                                                "InvalidInput", where)["detail"]
    backwards = await client.patch(f"{V}/memories/{ids[2]}", json={"invalid_at": "2000-01-01T00:00:00Z"})
    assert "must be after valid_at" in _assert_error(backwards, 422, "InvalidInput", where)["detail"]
    _assert_error(await client.patch(f"{V}/memories/{ids[2]}", json={"content": "x"}), 422, "InvalidInput", where)
    _assert_error(await client.patch(f"{V}/memories/{ids[2]}", json={"confidence": None}), 422, "InvalidInput",
                  where)
    missing = await client.patch(f"{V}/memories/999999", json={"tier": "cold"})
    _assert_error(missing, 404, "NotFound", f"PATCH {V}/memories/999999")


async def test_feedback_counts(client) -> None:
    ids = await _seed(client)
    for signal in ("+", "+", "-"):
        r = await client.post(f"{V}/memories/{ids[1]}/feedback", json={"signal": signal})
    assert r.status_code == 200 and r.json() == {"block_id": ids[1], "feedback_up": 2, "feedback_down": 1}
    listed = (await client.get(f"{V}/memories", params={"category": "Decision"})).json()["items"][0]
    assert (listed["feedback_up"], listed["feedback_down"]) == (2, 1)
    _assert_error(await client.post(f"{V}/memories/{ids[1]}/feedback", json={"signal": "up"}), 422,
                  "InvalidInput", f"POST {V}/memories/{ids[1]}/feedback")
    _assert_error(await client.post(f"{V}/memories/424242/feedback", json={"signal": "-"}), 404, "NotFound",
                  f"POST {V}/memories/424242/feedback")


async def test_sessions_and_turns_are_cursor_pages(client) -> None:
    await client.post("/v1/vaults", json={"name": "b"})
    for s in ("chat-1", "chat-2", "chat-3"):
        turns = [{"role": "user", "content": f"{s}: message {i} about the garden"} for i in range(3)]
        assert (await client.post(f"{V}/sessions/{s}/turns", json={"turns": turns})).status_code == 200
    first = (await client.get(f"{V}/sessions", params={"limit": 2})).json()
    rest = (await client.get(f"{V}/sessions", params={"limit": 2, "cursor": first["next_cursor"]})).json()
    assert [s["id"] for s in first["items"] + rest["items"]] == ["chat-3", "chat-2", "chat-1"]
    assert rest["next_cursor"] is None and first["items"][0]["turn_count"] == 3
    assert (await client.get(f"{V}/sessions", params={"open": "false"})).json()["items"] == []

    page1 = (await client.get(f"{V}/sessions/chat-2/turns", params={"limit": 2})).json()
    page2 = (await client.get(f"{V}/sessions/chat-2/turns", params={"limit": 2, "cursor": page1["next_cursor"]}
                              )).json()
    assert [t["seq"] for t in page1["items"] + page2["items"]] == [1, 2, 3] or \
        [t["seq"] for t in page1["items"] + page2["items"]] == [0, 1, 2]
    assert page2["items"][-1]["content"] == "chat-2: message 2 about the garden"
    _assert_error(await client.get(f"{V}/sessions/nope/turns"), 404, "NotFound", f"GET {V}/sessions/nope/turns")


async def test_entities_and_neighbourhood(client, services) -> None:
    from app.vaults import get_vault

    ids = await _seed(client)
    vault = await get_vault(services.db, "b")
    await GraphBuild(services).run(vault.id, ids)
    entities = (await client.get(f"{V}/entities")).json()
    names = [e["name"] for e in entities["items"]]
    assert {"Alice", "Acme", "Paris"} <= set(names)
    counts = [e["mention_count"] for e in entities["items"]]
    assert counts == sorted(counts, reverse=True)  # the most mentioned first
    paged = (await client.get(f"{V}/entities", params={"limit": 1})).json()
    assert paged["next_cursor"] and paged["items"][0]["name"] == names[0]
    assert [e["name"] for e in (await client.get(f"{V}/entities", params={"contains": "par"})).json()["items"]] \
        == ["Paris"]

    hood = (await client.get(f"{V}/entities/alice/neighbourhood")).json()  # by name, folded
    assert hood["entity"]["name"] == "Alice"
    assert {(r["subject"], r["object"]) for r in hood["relations"]} == {("Alice", "Acme"), ("Alice", "Paris")}
    assert {r["evidence_block_id"] for r in hood["relations"]} == {ids[0], ids[2]}
    by_id = (await client.get(f"{V}/entities/{hood['entity']['id']}/neighbourhood")).json()
    assert by_id == hood
    past = (await client.get(f"{V}/entities/Alice/neighbourhood",
                             params={"as_of": datetime(2023, 1, 1, tzinfo=UTC).isoformat()})).json()
    assert past["relations"] == []  # valid time: nothing about Alice was true yet
    _assert_error(await client.get(f"{V}/entities/Zed/neighbourhood"), 404, "NotFound",
                  f"GET {V}/entities/Zed/neighbourhood")
    _assert_error(await client.get(f"{V}/entities/Alice/neighbourhood", params={"hops": 9}), 422, "InvalidInput",
                  f"GET {V}/entities/Alice/neighbourhood")


async def test_vaults_are_a_cursor_page(client) -> None:
    for name in ("v-c", "v-a", "v-b"):
        await client.post("/v1/vaults", json={"name": name})
    first = (await client.get("/v1/vaults", params={"limit": 2})).json()
    rest = (await client.get("/v1/vaults", params={"limit": 2, "cursor": first["next_cursor"]})).json()
    assert [v["name"] for v in first["items"] + rest["items"]] == ["v-a", "v-b", "v-c"]
    assert rest["next_cursor"] is None


async def test_one_error_shape_for_routes_methods_and_bodies(client) -> None:
    _assert_error(await client.get("/v1/nowhere"), 404, "NotFound", "GET /v1/nowhere")
    _assert_error(await client.get("/v1/vaults/ghost/memories"), 404, "NotFound", "GET /v1/vaults/ghost/memories")
    _assert_error(await client.put("/v1/vaults"), 405, "MethodNotAllowed", "PUT /v1/vaults")
    await client.post("/v1/vaults", json={"name": "b"})
    body = _assert_error(await client.post(f"{V}/memories", json={"contents": "x"}), 422, "InvalidInput",
                         f"POST {V}/memories")
    assert any(f["field"].endswith("content") and "required" in f["message"] for f in body["fields"])
    garbage = await client.post(f"{V}/recall", content=b"{not json", headers={"content-type": "application/json"})
    assert garbage.status_code in (400, 422) and set(garbage.json()) == {"error", "detail", "where", "hint",
                                                                           "fields"}


async def test_openapi_documents_the_routes_with_examples(client) -> None:
    spec = (await client.get("/docs/openapi.json")).json()
    assert spec["openapi"].startswith("3.1")
    paths = spec["paths"]
    assert {"get", "patch", "delete"} <= set(paths["/v1/vaults/{vault}/memories/{block_id}"])
    listing = paths["/v1/vaults/{vault}/memories"]["get"]
    assert {"category", "kind", "session", "state", "contains", "valid_from", "valid_to", "recorded_from",
            "recorded_to", "limit", "cursor"} <= {p["name"] for p in listing["parameters"]}
    assert listing["responses"]["404"]["content"]["application/json"]["schema"]["$ref"].endswith("ErrorBody")
    patch = paths["/v1/vaults/{vault}/memories/{block_id}"]["patch"]["requestBody"]["content"]["application/json"]
    assert patch["schema"]["allOf"][0]["$ref"].endswith("MemoryPatch") and len(patch["schema"]["examples"]) == 2
    feedback = paths["/v1/vaults/{vault}/memories/{block_id}/feedback"]["post"]["requestBody"]
    assert feedback["content"]["application/json"]["schema"]["examples"][0] == {"signal": "+"}
