"""Bad input gets a clear 4xx, never a 5xx: schemathesis against the OpenAPI schema (bounded), and the classic
hostile bodies by hand (oversized, invalid UTF-8, NUL characters, deep nesting, huge batches, absurd names)."""

from __future__ import annotations

import pytest

from tests.fakes.live_server import live_api


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


@pytest.mark.timeout(240)
def test_schemathesis_finds_no_5xx_and_no_schema_violation(db_url: str, service_db_url: str, test_settings,
                                                           _admin_key_material) -> None:
    """Every operation of the OpenAPI schema, with generated valid and invalid requests (bounded), as an admin."""
    import httpx
    import psycopg
    import schemathesis
    from hypothesis import HealthCheck, Phase, settings
    from schemathesis.checks import not_a_server_error
    from schemathesis.specs.openapi.checks import content_type_conformance, response_schema_conformance

    key_id, key, key_hash = _admin_key_material
    with psycopg.connect(db_url, autocommit=True) as conn:
        conn.execute("SELECT * FROM memvault.api_key_create_v1(%s, %s, 'admin', NULL, 'schemathesis')",
                     (key_id, key_hash))
    auth = {"Authorization": f"Bearer {key}"}
    with live_api(test_settings, service_db_url) as base:
        assert httpx.post(f"{base}/v1/vaults", json={"name": "fuzz"}, headers=auth).status_code == 201
        schema = schemathesis.openapi.from_url(f"{base}/docs/openapi.json")
        failures: list[str] = []
        calls: dict[str, int] = {}
        statuses: set[int] = set()
        checks = [not_a_server_error, response_schema_conformance, content_type_conformance]
        for result in schema.get_all_operations():
            operation = result.ok()

            @settings(max_examples=10, deadline=None, database=None, derandomize=True,
                      phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck))
            @given_case(operation)
            def run(case) -> None:
                if "vault" in (case.path_parameters or {}) and case.operation.method.upper() != "DELETE":
                    case.path_parameters["vault"] = "fuzz"
                response = case.call(base_url=base, headers=auth)
                calls[case.operation.label] = calls.get(case.operation.label, 0) + 1
                statuses.add(response.status_code)
                try:
                    case.validate_response(response, checks=checks)
                except Exception as exc:  # collect every operation's first failure, then fail once
                    failures.append(f"{case.operation.label}: {str(exc)[:400]}")
                    raise

            try:
                run()
            except Exception as exc:
                if not failures or operation.label not in failures[-1]:
                    failures.append(f"{operation.label}: {type(exc).__name__}: {str(exc)[:400]}")
        assert not failures, "\n".join(failures)
        operations = [r.ok().label for r in schema.get_all_operations()]
        assert set(calls) == set(operations), set(operations) - set(calls)
        assert not {s for s in statuses if s >= 500}
        print(f"schemathesis: {sum(calls.values())} requests over {len(calls)} operations, statuses "
              f"{sorted(statuses)}")


def given_case(operation):
    from hypothesis import given

    return given(case=operation.as_strategy())
