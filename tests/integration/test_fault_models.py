"""An LLM endpoint that is down, slow or answers garbage, reached over real HTTP on loopback: every request still
succeeds (the heuristic decides instead), the breaker opens after 3 failures (then the endpoint is not even
called) and closes after its cool-down once the endpoint answers again."""

from __future__ import annotations

import asyncio

import pytest

from app.services import Services
from tests.fakes.openai_server import FakeOpenAI, Reply

CHAT = "/v1/chat/completions"
COOL_DOWN_S = 1.0


@pytest.fixture
def fake():
    with FakeOpenAI() as f:
        yield f


@pytest.fixture
async def services(db_url: str, test_settings, fake: FakeOpenAI):
    """The service with the ``openai`` LLM on the fake (overrides conftest's ``services``)."""
    settings = test_settings.model_copy(update={
        "llm": "openai", "llm_url": fake.url, "llm_model": "fake-llm", "llm_timeout_s": 0.5,
        "llm_max_retries": 0, "breaker_failures": 3, "breaker_open_s": COOL_DOWN_S})
    svc = await Services.start(settings, url=db_url)
    try:
        yield svc
    finally:
        await svc.close()


async def close_session(client, name: str) -> dict:
    """A session of two turns, closed: the close asks the LLM for atomic units, then for a summary."""
    r = await client.post(f"/v1/vaults/v/sessions/{name}/turns", json={"turns": [
        {"role": "user", "content": f"For {name} we decided to ship the beta on Friday."},
        {"role": "assistant", "content": "Fine: the beta ships on Friday, and the release notes go out Monday."}]})
    assert r.status_code == 200, r.text
    r = await client.post(f"/v1/vaults/v/sessions/{name}/close")
    assert r.status_code == 200, r.text
    return r.json()


async def breaker(client, fake: FakeOpenAI) -> dict:
    [snap] = [b for name, b in (await client.get("/health")).json()["breakers"].items()
              if name.startswith("llm:") and fake.url in name]
    return snap


async def test_llm_down_slow_garbage_then_breaker_opens_and_closes(client, fake: FakeOpenAI) -> None:
    assert (await client.post("/v1/vaults", json={"name": "v"})).status_code == 201
    fake.script(CHAT, Reply(close=True), Reply(delay_s=1.5), Reply(body="<html>502 Bad Gateway</html>"))
    first = await close_session(client, "s1")  # down, then slow: both fall back to the heuristic
    assert first["units"] and first["summary_words"] > 0
    assert (await breaker(client, fake))["consecutive_failures"] == 2
    await close_session(client, "s2")  # garbage: the third failure opens the breaker, the summary is not tried
    snap = await breaker(client, fake)
    assert snap["state"] == "open" and snap["trips"] == 1
    asked = len([r for r in fake.requests if r.path == CHAT])
    assert asked == 3
    third = await close_session(client, "s3")  # open: the endpoint is not called, the request still succeeds
    assert third["units"] and len([r for r in fake.requests if r.path == CHAT]) == asked
    assert (await breaker(client, fake))["short_circuits"] >= 2

    await asyncio.sleep(COOL_DOWN_S + 0.2)  # the cool-down: one probe goes through, the endpoint answers again
    assert (await breaker(client, fake))["state"] == "half_open"
    fake.chat_content = '{"units": []}'
    await close_session(client, "s4")
    snap = await breaker(client, fake)
    assert snap["state"] == "closed" and len([r for r in fake.requests if r.path == CHAT]) > asked
