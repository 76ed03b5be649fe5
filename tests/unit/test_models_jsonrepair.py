"""Near-JSON from models: fences, prose, trailing commas, single quotes, Python literals, truncation."""

from __future__ import annotations

import pytest

from app.models.jsonrepair import close_truncated, parse_json_reply


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": 1}', {"a": 1}),
        ('```json\n{"a": [1, 2]}\n```', {"a": [1, 2]}),
        ('Sure! Here it is:\n{"a": 1, "b": "x"}\nHope this helps.', {"a": 1, "b": "x"}),
        ('{"a": [1, 2,], "b": {"c": 3,},}', {"a": [1, 2], "b": {"c": 3}}),
        ("{'action': 'MERGE', 'ok': True, 'none': None}", {"action": "MERGE", "ok": True, "none": None}),
        ('<think>maybe {"x": 0}</think>{"a": 2}', {"a": 2}),
        (
            '{"action": "SUPERSEDE", "confidence": 0.8, "reason": "moved to Sea',
            {"action": "SUPERSEDE", "confidence": 0.8, "reason": "moved to Sea"},
        ),
        (
            '{"units": [{"category": "Fact", "text": "I live in Boston"}, {"category": "Dec',
            {"units": [{"category": "Fact", "text": "I live in Boston"}, {"category": "Dec"}]},
        ),
        ('{"verdicts": [{"index": 0, "keep": true}, ', {"verdicts": [{"index": 0, "keep": True}]}),
        ('{"a": 1, "b":', {"a": 1}),
        ('{"a": "說中文", "b": "it\'s"}', {"a": "說中文", "b": "it's"}),
        ("[1, 2, 3]", [1, 2, 3]),
    ],
)
def test_repairs(text: str, expected: object) -> None:
    assert parse_json_reply(text) == expected


@pytest.mark.parametrize("text", ["", "   ", "MERGE, I think", "the answer is yes"])
def test_unrepairable_raises(text: str) -> None:
    with pytest.raises(ValueError):
        parse_json_reply(text)


def test_close_truncated_keeps_complete_values() -> None:
    assert close_truncated('{"a": {"b": [1, {"c": "d') == '{"a": {"b": [1, {"c": "d"}]}}'
