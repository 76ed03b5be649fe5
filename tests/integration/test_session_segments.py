"""A session never refuses its own continuation (issue 21): turns sent to a closed session reopen it, its next
close extracts only them (a new segment), and what the earlier close extracted stays valid. Through the session
track, the REST route, the Claude Code hooks after the worker's idle close, and the benchmark harness with a file
that reuses a session id."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from app.importers.datasets import load_longmemeval
from app.bench.harness import IngestStats, ingest_sessions
from app.bench.longmemeval import run_longmemeval
from app.interfaces.hooks import HookInput, run_hook
from app.write.sessions import SessionTrack, TurnIn

T0 = datetime(2026, 3, 9, 10, 0, tzinfo=UTC)


def _turns(start: datetime, *texts: tuple[str, str]) -> list[TurnIn]:
    return [TurnIn(role, text, start + timedelta(seconds=i)) for i, (role, text) in enumerate(texts)]


async def _valid_blocks(services, vault, kind: str) -> list[dict]:
    return await services.db.fetchall(
        "SELECT id, content, source_turn_ids, invalid_at, retracted_at, metadata FROM memvault.block "
        "WHERE vault_id = %s AND kind = %s ORDER BY id", (vault.id, kind), vault_id=vault.id)


async def test_turns_after_a_close_reopen_the_session_and_the_next_close_extracts_only_them(services, vault):
    track = SessionTrack(services)
    first = await track.append_turns(vault, "s1", _turns(
        T0, ("user", "I decided to use PostgreSQL for the memory service."),
        ("assistant", "Good choice; pgvector covers the embeddings.")))
    assert not first.reopened
    closed = await track.close(vault, "s1")
    assert closed.segment == 1 and closed.units
    units_before = await _valid_blocks(services, vault, "unit")

    later = T0 + timedelta(hours=3)
    again = await track.append_turns(vault, "s1", _turns(
        later, ("user", "I decided to deploy the service on Hetzner in Falkenstein."),
        ("assistant", "Falkenstein is a good region for it.")))
    assert again.reopened and len(again.turn_ids) == 2
    session = await services.db.fetchone("SELECT * FROM memvault.session WHERE vault_id = %s AND id = 's1'",
                                         (vault.id,), vault_id=vault.id)
    assert session["closed_at"] is None and session["turn_count"] == 4 and session["closed_through"] == 2

    second = await track.close(vault, "s1")
    assert second.segment == 2 and second.summary_block_id
    # the first close's units are untouched and still valid; the new units come from the new turns only
    units_after = await _valid_blocks(services, vault, "unit")
    kept = {u["id"]: u for u in units_after}
    for u in units_before:
        assert kept[u["id"]]["invalid_at"] is None and kept[u["id"]]["retracted_at"] is None
    new = [u for u in units_after if u["id"] not in {b["id"] for b in units_before}]
    assert new and all(set(u["source_turn_ids"]) <= set(again.turn_ids) for u in new)
    assert any("Hetzner" in u["content"] for u in new)
    summaries = await _valid_blocks(services, vault, "summary")
    assert [s["metadata"]["segment"] for s in summaries] == [1, 2]
    assert all(s["invalid_at"] is None for s in summaries)
    session = await services.db.fetchone("SELECT * FROM memvault.session WHERE vault_id = %s AND id = 's1'",
                                         (vault.id,), vault_id=vault.id)
    assert session["closed_at"] is not None and session["segments"] == 2 and session["closed_through"] == 4
    # one turn sequence across the pause
    seqs = await services.db.fetchall("SELECT seq FROM memvault.turn WHERE vault_id = %s ORDER BY seq",
                                      (vault.id,), vault_id=vault.id)
    assert [r["seq"] for r in seqs] == [1, 2, 3, 4]
    # nothing new since the last close: nothing to close
    assert await track.close_pending(vault, "s1") is None


async def test_rest_turns_to_a_closed_session_are_stored_not_refused(client, services):
    assert (await client.post("/v1/vaults", json={"name": "alice"})).status_code in (200, 201)
    turn = {"role": "user", "content": "I moved to Tainan last week.", "said_at": "2026-03-09T10:00:00Z"}
    assert (await client.post("/v1/vaults/alice/sessions/s1/turns", json={"turns": [turn]})).status_code == 200
    assert (await client.post("/v1/vaults/alice/sessions/s1/close")).json()["segment"] == 1
    r = await client.post("/v1/vaults/alice/sessions/s1/close")
    assert r.status_code == 409  # nothing new to close
    more = {"role": "user", "content": "My dentist there is Dr. Lin.", "said_at": "2026-03-09T11:00:00Z"}
    r = await client.post("/v1/vaults/alice/sessions/s1/turns", json={"turns": [more]})
    assert r.status_code == 200 and r.json()["reopened"] is True
    r = await client.post("/v1/vaults/alice/sessions/s1/close")
    assert r.status_code == 200 and r.json()["segment"] == 2


async def test_claude_code_session_idle_closed_by_the_worker_takes_the_stop_hooks_answer(services, vault):
    prompt = HookInput("cc-idle", "Which port does staging use?", None, None)
    await run_hook(services, vault, "user-prompt-submit", prompt, token_budget=300)
    # the worker's job closes sessions idle past session_idle_close_s; make this one look idle that long
    async with services.db.transaction(vault.id) as conn:
        await conn.execute("UPDATE memvault.session SET last_turn_at = last_turn_at - make_interval(secs => %s) "
                           "WHERE vault_id = %s", (services.settings.session_idle_close_s + 60, vault.id))
    assert await SessionTrack(services).close_idle(services.settings.session_idle_close_s) == 1

    answer = HookInput("cc-idle", None, None, "Staging listens on port 6543.")
    assert await run_hook(services, vault, "stop", answer, token_budget=300) is None
    rows = await services.db.fetchall("SELECT role, content FROM memvault.turn WHERE vault_id = %s ORDER BY seq",
                                      (vault.id,), vault_id=vault.id)
    assert [r["role"] for r in rows] == ["user", "assistant"] and "6543" in rows[-1]["content"]
    await run_hook(services, vault, "session-end", HookInput("cc-idle", None, None, None), token_budget=300)
    session = await services.db.fetchone("SELECT closed_at, segments, closed_through FROM memvault.session "
                                         "WHERE vault_id = %s", (vault.id,), vault_id=vault.id)
    assert session["closed_at"] is not None and session["segments"] == 2 and session["closed_through"] == 2
    # a second session-end (nothing new) is no error either
    assert await run_hook(services, vault, "session-end", HookInput("cc-idle", None, None, None),
                          token_budget=300) is None


def _lme_reusing_an_id(tmp_path):
    sessions = [[{"role": "user", "content": "I adopted a golden retriever puppy and named him Biscuit."},
                 {"role": "assistant", "content": "Biscuit is a lovely name for a golden retriever."}],
                [{"role": "user", "content": "My trip to Kyoto in April: cherry blossoms at every temple."},
                 {"role": "assistant", "content": "Kyoto in spring is beautiful."}],
                [{"role": "user", "content": "I started classical guitar lessons with a teacher named Marta.",
                  "has_answer": True},
                 {"role": "assistant", "content": "Practice scales every day."}]]
    row = {"question_id": "q-guitar", "question_type": "single-session-user",
           "question": "Who teaches me classical guitar?", "question_date": "2023/06/01 (Thu) 12:00",
           "answer": "Marta", "answer_session_ids": ["s-a"],
           "haystack_dates": ["2023/03/01 (Wed) 10:00", "2023/04/20 (Thu) 18:30", "2023/05/02 (Tue) 09:15"],
           "haystack_session_ids": ["s-a", "s-b", "s-a"], "haystack_sessions": sessions}
    path = tmp_path / "lme-reused.json"
    path.write_text(json.dumps([row]))
    return path


def test_a_reused_session_id_in_a_file_is_two_sessions(tmp_path):
    (q,) = load_longmemeval(_lme_reusing_an_id(tmp_path))
    assert [s.id for s in q.sessions] == ["s-a", "s-b", "s-a#2"]
    assert [s.file_id for s in q.sessions] == ["s-a", "s-b", "s-a"]


def test_a_locomo_file_with_two_keys_for_one_session_number_is_two_sessions(tmp_path):
    from app.importers.datasets import load_locomo

    conv = {"speaker_a": "Ann", "speaker_b": "Bo",
            "session_1_date_time": "1:56 pm on 8 May, 2023", "session_01_date_time": "2:00 pm on 9 May, 2023",
            "session_1": [{"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a puppy."}],
            "session_01": [{"speaker": "Bo", "dia_id": "D1:2", "text": "What is his name?"}]}
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([{"sample_id": "c", "conversation": conv, "qa": []}]))
    (c,) = load_locomo(path)
    assert [s.id for s in c.sessions] == ["session_1", "session_1#2"]
    assert [s.date.day for s in c.sessions] == [9, 8]  # each with its own date (keys sort "session_01" first)


async def test_bench_longmemeval_with_a_reused_session_id_and_session_close(services, tmp_path):
    questions = load_longmemeval(_lme_reusing_an_id(tmp_path))
    result = await run_longmemeval(services, questions, close_sessions=True, show_progress=False)
    (detail,) = result["details"]
    assert "s-a#2" not in detail["ranked"] and detail["ranked"][0] == "s-a"  # scored as the file's id
    assert result["recall_any@5"] == 1.0


async def test_harness_given_one_id_twice_writes_two_sessions(services, vault):
    from app.importers.datasets import Session, Turn

    day = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    sessions = [Session("s", day, (Turn("user", "Ann: I adopted a puppy."),)),
                Session("s", day + timedelta(days=7), (Turn("user", "Ann: I named him Biscuit."),))]
    ids = await ingest_sessions(services, vault, sessions, close=True, stats=IngestStats())
    assert set(ids) == {"s", "s#2"} and all(len(v) == 1 for v in ids.values())
