"""Bad input gets a clear 4xx, never a 5xx: the classic hostile bodies by hand (oversized, invalid UTF-8, NUL
characters, deep nesting, huge batches, absurd names). Schemathesis over the whole OpenAPI document, with every
check, is tests/integration/test_api_contract.py."""

from __future__ import annotations


async def test_oversized_body_is_413(client, services) -> None:
    assert (await client.post("/v1/vaults", json={"name": "b"})).status_code == 201
    limit = services.settings.max_body_bytes
    r = await client.post("/v1/vaults/b/memories", content=b'{"content": "' + b"x" * (limit + 10) + b'"}',
                          headers={"content-type": "application/json"})
    assert r.status_code == 413


async def test_invalid_utf8_nul_and_deep_nesting_are_4xx(client) -> None:
    assert (await client.post("/v1/vaults", json={"name": "b"})).status_code == 201
    r = await client.post("/v1/vaults/b/memories", content=b'{"content": "caf\xe9 \xff\xfe"}',
                          headers={"content-type": "application/json"})
    assert r.status_code in (400, 422), r.text
    # NUL: PostgreSQL text cannot hold it; refused with 422 (never stripped: the text would change silently).
    for path, body in (("/v1/vaults/b/memories", {"content": "before\u0000after"}),
                       ("/v1/vaults/b/sessions/s1/turns", {"turns": [{"role": "user", "content": "a\u0000b"}]}),
                       ("/v1/vaults/b/recall", {"query": "where\u0000"}),
                       ("/v1/vaults/b/memories", {"content": "The Lisbon flat lease ends in May", "metadata": {"k": "v\u0000"}})):
        r = await client.post(path, json=body)
        assert r.status_code == 422 and "NUL" in r.json()["detail"], (path, r.status_code, r.text)
    r = await client.post("/v1/vaults/b/sessions/a%00b/turns", json={"turns": [{"role": "user", "content": "x"}]})
    assert r.status_code == 422, r.text
    for depth in (5_000, 100_000):  # past the decoder's recursion limit
        deep = '{"content": "deep", "metadata": ' + '{"k": ' * depth + "1" + "}" * depth + "}"
        r = await client.post("/v1/vaults/b/memories", content=deep, headers={"content-type": "application/json"})
        assert r.status_code == 422 and "deep" in r.json()["detail"], r.text
    shallow: object = "leaf"
    for _ in range(40):
        shallow = {"k": shallow}
    r = await client.post("/v1/vaults/b/memories", json={"content": "nested a bit", "metadata": shallow})
    assert r.status_code == 422 and "deep" in r.json()["detail"], r.text


async def test_huge_batches_and_absurd_names_are_4xx(client, services) -> None:
    assert (await client.post("/v1/vaults", json={"name": "b"})).status_code == 201
    n = services.settings.max_batch_items + 1
    r = await client.post("/v1/vaults/b/memories", json={"items": [{"content": f"m{i}"} for i in range(n)]})
    assert r.status_code == 413 and "limit" in r.json()["detail"]
    r = await client.post("/v1/vaults/b/sessions/s/turns", json={"turns": [{"role": "user", "content": "x"}] * n})
    assert r.status_code == 413, r.text
    for name in ("x" * 5000, "../../etc", "a b", "ünïcødé", "-lead", "a\nb", "", "😀" * 10):
        r = await client.post("/v1/vaults", json={"name": name})
        assert r.status_code == 422, (name[:20], r.status_code)
    for name in ("x" * 5000, "..%2F..%2Fetc", "a%20b", "%F0%9F%98%80"):
        r = await client.get(f"/v1/vaults/{name}")
        assert r.status_code in (404, 422), (name[:20], r.status_code)
        r = await client.post(f"/v1/vaults/{name}/recall", json={"query": "x"})
        assert r.status_code in (404, 422), (name[:20], r.status_code)
    for method in ("get", "delete", "patch"):  # an id past 64 bits
        extra = {"json": {}} if method == "patch" else {}
        r = await getattr(client, method)("/v1/vaults/b/memories/" + "9" * 30, **extra)
        assert r.status_code == 422 and "out of range" in r.json()["detail"], (method, r.text)
    r = await client.post("/v1/vaults/b/sessions/" + "s" * 300 + "/turns", json={"turns": [
        {"role": "user", "content": "x"}]})
    assert r.status_code == 422, r.text
