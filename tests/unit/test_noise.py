"""G1 NoiseFilter: drops pleasantries, garbled text and empty turns; keeps short informative ones."""

from __future__ import annotations

import pytest

from app.safety.ruleset import RULESET_VERSION
from app.write.gates.noise import NoiseFilter, content_units

DROPPED = [
    ("thanks!", "noise.pleasantry"),
    ("ok", "noise.pleasantry"),
    ("Okay, thank you so much! 😊", "noise.pleasantry"),
    ("好的", "noise.pleasantry"),
    ("謝謝", "noise.pleasantry"),
    ("哈哈", "noise.pleasantry"),
    ("哈哈哈哈哈", "noise.pleasantry"),
    ("好的，谢谢！", "noise.pleasantry"),
    ("lol", "noise.pleasantry"),
    ("hahaha", "noise.pleasantry"),
    ("sounds good 👍", "noise.pleasantry"),
    ("Good night!", "noise.pleasantry"),
    ("asdfghjkl", "noise.garbled"),
    ("jdkfjdkf sdlkfj qwrtzp", "noise.garbled"),
    ("aaaaaaaaaaaa", "noise.garbled"),
    ("Ã©tÃ© trÃ¨s bien Ã©crit, merci", "noise.garbled"),
    ("锟斤拷锟斤拷锟斤拷", "noise.garbled"),
    ("", "noise.empty"),
    ("   \n ", "noise.empty"),
    ("!!!???", "noise.empty"),
    ("🎉🎉🎉", "noise.empty"),
    ("Really?", "noise.low_density"),
    ("Yes, I do.", "noise.low_density"),
    ("Please continue", "noise.low_density"),
    ("Yes, that is it.", "noise.low_density"),
]

KEPT = [
    "I'm allergic to peanuts",
    "我住台北",
    "My flight is at 7am",
    "Paris",
    "Thanks, my flight is at 7am",
    "好的，我明天去北京开会",
    "我对花生过敏",
    "Call me at 555-0199",
    "That sounds great! I love hiking too.",
    "My sister Mia just started at Stanford.",
    "東京に住んでいます",
    "Ich wohne in Berlin.",
    "I switched to a vegetarian diet last month.",
    "he was a lawyer",
    "What are embassies and what do they actually do?",
    "I am trying a query in Google Sheets; the data has a few stray Ã© characters from the export.",
]


@pytest.mark.parametrize(("text", "rule"), DROPPED)
def test_noise_is_dropped(text: str, rule: str) -> None:
    result = NoiseFilter()(text)
    assert not result.passed, text
    assert result.rule == rule
    assert result.gate == "noise" and result.family == "noise"
    assert result.ruleset_version == RULESET_VERSION


@pytest.mark.parametrize("text", KEPT)
def test_short_informative_turns_are_kept(text: str) -> None:
    result = NoiseFilter()(text)
    assert result.passed, result.reason
    assert result.ruleset_version == RULESET_VERSION


@pytest.mark.parametrize(
    ("text", "units"),
    [("我住台北", 3), ("I'm allergic to peanuts", 2), ("the and of", 0), ("我的了吗", 0), ("Flight 7am", 2)],
)
def test_content_units_are_language_aware(text: str, units: int) -> None:
    assert content_units(text)[0] == units


def test_min_content_is_tunable() -> None:
    assert not NoiseFilter()("weather").passed
    assert NoiseFilter(min_content=1)("weather").passed
    assert NoiseFilter()("black cats").passed
    assert not NoiseFilter(min_content=3)("black cats").passed
