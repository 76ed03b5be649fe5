"""The close's heuristic extraction memoizes its pure word functions (issue 33, ingest with session close): the
same answers, each echoed turn read once however many sentences answer it."""

from __future__ import annotations

from app.models.tasks import speech
from app.models.tasks.text import is_cjk, latin_words, stem, word_count


def test_echo_read_once_per_text() -> None:
    echo = "I adopted a rescue greyhound called Biscuit last spring, and she loves long walks."
    speech._echo_roots.cache_clear()
    answers = ["Biscuit sounds lovely!", "Greyhounds love walks.", "Thanks for telling me about Biscuit.",
               "That is wonderful news."]
    verdicts = [speech.social_sentence(s, echo) for s in answers]
    info = speech._echo_roots.cache_info()
    assert (info.misses, info.hits) == (1, len(answers) - 1)
    assert speech._echo_roots(echo) == frozenset(speech._root(w) for w in speech._words(echo))
    speech._echo_roots.cache_clear()
    assert [speech.social_sentence(s, echo) for s in answers] == verdicts


def test_memoized_word_functions_answer_as_before() -> None:
    for word in ("studies", "moving", "moved", "parties", "cats", "is", "Glückwunsch", "ánimo", "profesora"):
        assert stem(word) == stem(word) and isinstance(stem(word), str)
    assert stem("moving") == "mov" and stem("studies") == "study"
    assert speech._fold("Glückwunsch") == "gluckwunsch" and speech._root("profesora") == "profe"
    for text in ("Hello there 42 times, it's 3.5 km", "我们明天去北京 ok", "", "ÀÉÎ abc"):
        assert word_count(text) == len(latin_words(text)) + -(-len([c for c in text if "\u4e00" <= c <= "\u9fff"])
                                                              // 2)
        latin = sum(1 for c in text if c.isascii() and c.isalpha())
        cjk = len([c for c in text if "\u4e00" <= c <= "\u9fff"])
        assert is_cjk(text) == (cjk > 0 and cjk * 2 >= latin / 3)
