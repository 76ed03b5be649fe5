"""Any turn is ingested (issue 21): property-based, through the session track and the REST turns route. Every
generated turn is archived and chunked with no chunk over the item limit; any body the OpenAPI schema of
``POST /v1/vaults/{vault}/sessions/{session}/turns`` accepts is stored (200) or refused with a 4xx, never a 5xx."""

from __future__ import annotations

import base64
import itertools
from datetime import UTC, datetime, timedelta, timezone

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from app.write.sessions import SessionTrack, TurnIn

FIXTURES = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large]
EMOJI = ["👨‍👩‍👧‍👦", "🇹🇼", "👍🏽", "❤️", "e\u0301"]
# Text: any code point but the lone surrogates, which no UTF-8 body can carry, and NUL, which no PostgreSQL text
# holds (a turn with it is refused with a 422 that says so: the REST test below sends it)
TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), min_size=1, max_size=400)
HARD = st.one_of(
    TEXT,
    st.integers(20_001, 52_000).map(lambda n: "x" * n),  # one token past the item limit
    st.binary(min_size=3_000, max_size=24_000).map(lambda b: base64.b64encode(b).decode()),
    st.integers(2_000, 12_000).map(lambda n: "中" * n),  # CJK without punctuation
    st.integers(500, 5_000).map(lambda n: "".join(itertools.islice(itertools.cycle(EMOJI), n))),
    st.integers(50, 600).map(lambda n: "for i in range(10):\n    print(i)  # loop\n" * n),
)
_ids = itertools.count()


async def _chunk_lengths(services, vault, session_id: str) -> list[int]:
    rows = await services.db.fetchall("SELECT length(content) AS n FROM memvault.block WHERE vault_id = %s "
                                      "AND session_id = %s AND kind = 'chunk'", (vault.id, session_id),
                                      vault_id=vault.id)
    return [r["n"] for r in rows]


@settings(max_examples=12, deadline=None, suppress_health_check=FIXTURES)
@given(st.lists(st.tuples(st.sampled_from(["user", "assistant"]), HARD), min_size=1, max_size=2))
async def test_any_turn_is_archived_and_every_chunk_fits(services, vault, turns) -> None:
    session = f"p{next(_ids)}"
    said = datetime(2024, 1, 1, tzinfo=UTC)
    given_turns = [TurnIn(role, text, said + timedelta(seconds=i)) for i, (role, text) in enumerate(turns)
                   if text.strip()]
    if not given_turns:
        return
    result = await SessionTrack(services).append_turns(vault, session, given_turns)
    assert len(result.turn_ids) == len(given_turns)
    lengths = await _chunk_lengths(services, vault, session)
    assert all(n <= services.settings.max_content_chars for n in lengths)


ZONES = st.sampled_from([UTC, timezone(timedelta(hours=8)), timezone(timedelta(hours=-11, minutes=-30))])
SAID_AT = st.one_of(st.none(), st.datetimes(timezones=st.one_of(ZONES, st.none())).map(lambda d: d.isoformat()))
TURN = st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant", "system", "tool"]),
                              "content": st.one_of(TEXT, HARD, st.text(min_size=1, max_size=50))},
                             optional={"said_at": SAID_AT})
SESSION = st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E, blacklist_characters="/?#%\\"),
                  min_size=1, max_size=240)


@settings(max_examples=25, deadline=None, suppress_health_check=FIXTURES)
@given(st.lists(TURN, min_size=1, max_size=3), SESSION)
@example([{"role": "user", "content": "a\x00b"}], "nul")
@example([{"role": "user", "content": "hello"}], "s" * 240)
@example([{"role": "user", "content": "   "}], "blank")
@example([{"role": "user", "content": "when?", "said_at": "2024-01-01T10:00:00"}], "naive")
@example([{"role": "user", "content": "x" * 52_000}], "long")
async def test_any_body_the_schema_accepts_is_stored_or_refused_with_a_4xx(client, turns, session) -> None:
    if (await client.get("/v1/vaults/prop")).status_code == 404:
        assert (await client.post("/v1/vaults", json={"name": "prop"})).status_code in (200, 201)
    r = await client.post(f"/v1/vaults/prop/sessions/{session}/turns", json={"turns": turns})
    assert r.status_code < 500, r.text
    if r.status_code == 200:
        assert len(r.json()["turn_ids"]) == len(turns)
    else:
        assert 400 <= r.status_code < 500 and r.json().get("detail")
