"""The API's edge, the reproductions of issue 30: anything a client can send gets a 4xx in the one error body,
never a 5xx, never a database's own words; limits are checked before anything is written; the OpenAPI document
declares the key and the methods a path takes."""

from __future__ import annotations

import base64
import json

import pytest

from app.write.graph import GraphBuild

V = "/v1/vaults/b"
ERROR_KEYS = {"error", "detail", "where", "hint", "fields"}
INTERNALS = ("memvault.", "_v1", "_v2", "Traceback", "psycopg", "SQLSTATE", "does not exist", "smallint", "mvk_")


def _refused(r, status: int, *, says: str | None = None) -> dict:
    body = r.json()
    assert r.status_code == status, (r.status_code, body)
    assert set(body) == ERROR_KEYS, body
    assert not any(word in json.dumps(body) for word in INTERNALS), body
    if says is not None:
        assert says in body["detail"], body
    return body


NOT_JSON = [
    ('{"content": "\\ud800"}', "surrogate"),                       # a lone surrogate
    ('{"content": "x", "confidence": NaN}', "NaN"),                 # not a JSON number
    ('{"content": "x", "confidence": Infinity}', "Infinity"),
    ('{"content": "x", "confidence": 1e999}', "too large"),         # overflows a double
    ("content=hello&category=Fact", "not valid JSON"),               # a form
    ("<memory><content>hello</content></memory>", "not valid JSON"),  # XML
    ("remember that I like tea", "not valid JSON"),                  # plain text
    ('{"content": "truncated', "not valid JSON"),
]


@pytest.mark.parametrize(("body", "says"), NOT_JSON)
async def test_a_body_that_is_not_json_is_a_400_on_every_body_route(client, body: str, says: str) -> None:
    assert (await client.post("/v1/vaults", json={"name": "b"})).status_code == 201
    routes = [("post", f"{V}/memories"), ("post", f"{V}/sessions/s1/turns"), ("post", f"{V}/recall"),
              ("patch", f"{V}/memories/1"), ("post", f"{V}/memories/1/feedback"), ("post", "/v1/vaults"),
              ("post", "/v1/keys"), ("put", f"{V}/dream/schedule"), ("post", f"{V}/attitudes"),
              ("post", f"{V}/review/1/claim"), ("post", f"{V}/skills/rust/use")]
    for content_type in ("application/json", "text/plain", "application/x-www-form-urlencoded"):
        for method, path in routes:
            r = await client.request(method.upper(), path, content=body.encode(), headers={
                "content-type": content_type})
            _refused(r, 400, says=says)
    listed = (await client.get(f"{V}/memories", params={"state": "all"})).json()
    assert listed["items"] == []  # nothing was written


async def test_json_of_the_wrong_shape_is_a_422_naming_the_field(client) -> None:
    assert (await client.post("/v1/vaults", json={"name": "b"})).status_code == 201
    for body in ({"content": "x", "confidence": "0.5"}, {"content": "x", "confidence": True},
                 {"content": "x", "said_at": 1700000000}, {"turns": []}, [1, 2]):
        r = await client.post(f"{V}/memories", json=body)
        assert _refused(r, 422)["fields"], body
    r = await client.post(f"{V}/recall", json={"query": "tea", "funnel": 0})  # 0 is not false
    assert _refused(r, 422)["fields"][0]["field"].endswith("funnel")
    assert (await client.post(f"{V}/recall", json={"query": "tea", "k": 3.0})).status_code == 200  # JSON's 3.0 is 3


def _cursor(payload: object) -> str:
    return base64.urlsafe_b64encode(json.dumps(payload).encode()).decode().rstrip("=")


async def test_crafted_cursors_are_a_400_naming_the_cursor_on_all_six_lists(client) -> None:
    assert (await client.post("/v1/vaults", json={"name": "b"})).status_code == 201
    lists = {"vaults": "/v1/vaults", "keys": "/v1/keys", "memories": f"{V}/memories",
             "sessions": f"{V}/sessions", "turns": f"{V}/sessions/s1/turns", "entities": f"{V}/entities"}
    for kind, path in lists.items():
        for crafted in (_cursor(["vaults", [1, 2]]), _cursor([kind, [1, 2, 3]]), _cursor([kind, ["x", "y"]]),
                        _cursor([kind, [True]]), _cursor([kind, [2**70, 1]]), _cursor([kind, [None, None]]),
                        _cursor([kind, {"a": 1}]), _cursor(["[" * 5000]), "%%%", "not-base64!", _cursor([kind])):
            body = _refused(await client.get(path, params={"cursor": crafted}), 400, says="cursor")
            assert "cursor" in body["hint"]


async def test_entity_ids_are_ascii_digits_within_a_bigint(client, services) -> None:
    from app.vaults import get_vault

    assert (await client.post("/v1/vaults", json={"name": "b"})).status_code == 201
    r = await client.post(f"{V}/memories", json={"content": "Alice works at Acme."})
    vault = await get_vault(services.db, "b")
    await GraphBuild(services).run(vault.id, [r.json()["results"][0]["block_id"]])
    first = (await client.get(f"{V}/entities")).json()["items"]
    entity_id = min(e["id"] for e in first)
    assert (await client.get(f"{V}/entities/{entity_id}/neighbourhood")).status_code == 200
    arabic = "".join(chr(0x0660 + int(d)) for d in str(entity_id))  # the same number in Arabic-Indic digits
    for name in ("²", "①", arabic, "٣", "9" * 20, "9" * 19, "9" * 5000):
        _refused(await client.get(f"{V}/entities/{name}/neighbourhood"), 404)


async def test_a_turn_batch_over_the_limit_is_a_413_before_any_row_or_id(client, services) -> None:
    assert (await client.post("/v1/vaults", json={"name": "b"})).status_code == 201
    ok = await client.post(f"{V}/sessions/s1/turns", json={"turns": [{"role": "user", "content": "first"}]})
    assert ok.status_code == 200
    before = ok.json()["turn_ids"][0]
    r = await client.post(f"{V}/sessions/s2/turns", json={"turns": [
        {"role": "user", "content": f"turn {i} about the garden"} for i in range(10_000)]})
    _refused(r, 413, says="limit")
    limit = services.settings.max_batch_items
    long_turns = [{"role": "user", "content": "word " * 3000} for _ in range(limit // 2)]  # more chunks than turns
    _refused(await client.post(f"{V}/sessions/s3/turns", json={"turns": long_turns}), 413, says="chunks")
    after = await client.post(f"{V}/sessions/s1/turns", json={"turns": [{"role": "user", "content": "second"}]})
    assert after.json()["turn_ids"] == [before + 1]  # no id was consumed by the refused batches
    sessions = (await client.get(f"{V}/sessions")).json()["items"]
    assert [s["id"] for s in sessions] == ["s1"]


async def test_a_database_error_reaches_the_client_as_its_kind_only(client) -> None:
    assert (await client.post("/v1/vaults", json={"name": "b"})).status_code == 201
    r = await client.post("/v1/vaults", json={"name": "b"})  # taken: the server's text names a constraint
    assert r.status_code == 409
    _refused(r, 409)
    r = await client.get(f"{V}/dream/runs", params={"before": str(2**63)})
    _refused(r, 422)


async def test_405_names_the_allowed_methods_and_options_lists_them_all(client) -> None:
    for path, allowed in (("/v1/vaults", {"GET", "POST"}), ("/v1/keys", {"GET", "POST"}),
                          ("/health", {"GET"}), (f"{V}/memories/1", {"GET", "PATCH", "DELETE"})):
        r = await client.request("TRACE", path)
        body = _refused(r, 405)
        assert body["error"] == "MethodNotAllowed"
        assert allowed <= {m.strip() for m in r.headers["allow"].split(",")}, r.headers
        r = await client.options(path)
        assert r.status_code == 204 and {m.strip() for m in r.headers["allow"].split(",")} == allowed | {"OPTIONS"}


async def test_the_document_declares_bearer_auth_rules_and_statuses(client) -> None:
    doc = (await client.get("/docs/openapi.json")).json()
    assert doc["components"]["securitySchemes"]["BearerAuth"] == {
        **doc["components"]["securitySchemes"]["BearerAuth"], "type": "http", "scheme": "bearer"}
    health = doc["paths"]["/health"]["get"]
    assert "security" not in health
    recall = doc["paths"]["/v1/vaults/{vault}/recall"]["post"]
    assert recall["security"] == [{"BearerAuth": []}]
    assert {"400", "401", "403", "404", "410", "413", "422", "429", "503"} <= set(recall["responses"])
    vault = next(p for p in recall["parameters"] if p["name"] == "vault")
    assert vault["schema"]["pattern"] == "^[A-Za-z0-9][A-Za-z0-9_.-]*$" and vault["schema"]["maxLength"] == 63
    error = recall["responses"]["400"]["content"]["application/json"]["schema"]
    assert error == {"$ref": "#/components/schemas/ErrorBody"}
    assert doc["components"]["schemas"]["RecallIn"]["additionalProperties"] is False
    r = await client.get("/v1/vaults/a%20b")
    _refused(r, 422, says="vault")


async def test_an_import_line_that_is_not_strict_json_is_refused_and_creates_nothing(client) -> None:
    assert (await client.post("/v1/vaults", json={"name": "b"})).status_code == 201
    assert (await client.post(f"{V}/memories", json={"content": "The lease of the Lisbon flat ends in May."})
            ).status_code == 200
    lines = (await client.get(f"{V}/export")).text.splitlines()
    memory = next(i for i, line in enumerate(lines) if '"Lisbon' in line or "Lisbon" in line)
    for bad in (lines[memory].replace("Lisbon", "\\ud800"), lines[memory].replace("Lisbon", '", "x": NaN, "y": "'),
                lines[memory].replace("Lisbon", '", "x": 1e999, "y": "')):
        body = "\n".join([*lines[:memory], bad, *lines[memory + 1:]]) + "\n"
        r = await client.post("/v1/vaults/c/import", content=body.encode(),
                              headers={"content-type": "application/x-ndjson"})
        assert 400 <= r.status_code < 500, (r.status_code, r.text)
        _refused(r, r.status_code, says=f"line {memory + 1}")
        _refused(await client.get("/v1/vaults/c"), 404)
    r = await client.post("/v1/vaults/c/import", content=b"\xff\xfe not utf-8\n")
    _refused(r, 422)
