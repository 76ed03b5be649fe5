"""``memvault bench keep``: the shipped labeled set is well formed, and a tiny labeled file runs through the real
write track to the metrics the table prints."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from app.bench.keep import DEFAULT_FILE, format_table, load, run_keep
from app.cli import build_parser


def test_the_shipped_set_is_labeled_and_split() -> None:
    rows = [json.loads(line) for line in DEFAULT_FILE.read_text(encoding="utf-8").splitlines() if line.strip()]
    ids = [r["id"] for r in rows]
    assert len(ids) == len(set(ids)) and 150 <= len(rows) <= 250
    assert Counter(r["split"] for r in rows).keys() == {"dev", "heldout"}
    by_id = {r["id"]: r for r in rows}
    for r in rows:
        assert r["role"] in ("user", "assistant") and isinstance(r["keep"], bool) and r["text"].strip()
        if "supersedes" in r:  # a switch names an earlier fact of its own conversation
            old = by_id[r["supersedes"]]
            assert old["cat"] == "user_fact" and old["id"].split("/")[0] == r["id"].split("/")[0]
            assert ids.index(old["id"]) < ids.index(r["id"])
    assert {"zh", "es", "en"} <= {r["lang"] for r in rows}
    for split in ("dev", "heldout"):
        convs = load(DEFAULT_FILE, split)
        assert len(convs) >= 7 and all(c.sessions and all(c.sessions) for c in convs)


def test_help_and_an_empty_split(tmp_path, capsys) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["bench", "keep", "--help"])
    assert "--split" in capsys.readouterr().out
    empty = tmp_path / "none.jsonl"
    empty.write_text(json.dumps({"id": "a/0/0", "split": "dev", "lang": "en", "role": "user", "text": "Hi",
                                 "cat": "small_talk", "keep": False}) + "\n")
    with pytest.raises(SystemExit, match="no turns of split 'heldout'"):
        load(empty, "heldout")


def _turn(cid: str, s: int, t: int, role: str, text: str, cat: str, keep: bool, **kw) -> str:
    return json.dumps({"id": f"{cid}/{s}/{t}", "split": "dev", "lang": "en", "role": role, "text": text,
                       "cat": cat, "keep": keep, **kw})


async def test_a_labeled_conversation_runs_through_the_write_track(services, tmp_path) -> None:
    path = tmp_path / "turns.jsonl"
    path.write_text("\n".join([
        _turn("c", 0, 0, "user", "I live in Turin with my cat Miso.", "user_fact", True),
        _turn("c", 0, 1, "assistant", "Miso is an adorable name!", "assistant_pleasantry", False),
        _turn("c", 0, 2, "user", "Can you write a haiku about her?", "user_request", False),
        _turn("c", 0, 3, "assistant", "Grey paws on the sill, Turin rain taps the window, Miso counts the drops.",
              "assistant_info", True),
        _turn("c", 1, 0, "user", "We moved to Genoa last month.", "user_switch", True, supersedes="c/0/0"),
        _turn("c", 1, 1, "assistant", "Congratulations on the move!", "assistant_pleasantry", False),
    ]) + "\n")
    convs = load(path, "all")
    r = await run_keep(services, convs)
    assert r["turns"] == 6 and r["conversations"] == 1
    assert r["precision"] == 1.0 and r["recall"] == 1.0, r["errors"]
    assert r["request_units"] == 0 and r["chatter_stored"] == 0
    assert r["supersede_accuracy"] == 1.0 and r["unwanted_supersessions"] == [], r
    assert r["triples_per_fact"] == 1.0 and r["clause_objects"] == []
    assert r["categories"]["user_request"] == {"n": 1, "label_keep": 0, "kept": 0, "right": 1}
    table = format_table(r, "keep over turns.jsonl (all)")
    assert "supersede accuracy: 1/1 = 1.000" in table and "precision 1.000 recall 1.000" in table
