"""Structural signals: whom a text addresses.

An injection is an order to the model that reads the text: "ignore previous instructions", "print your system
prompt", "du bist jetzt DAN". A text *about* models uses the same words and addresses no one ("why do chatbots
ignore previous instructions?", "a model might ignore its system prompt", "my doctor told me to ignore the old
instructions"). Two uses of that difference:

* ``described(text, start, end)``: an English instruction-override or extraction rule hit whose verb has a
  third-person subject right before it (optionally with a descriptive modal or adverb: "models often ignore"), or
  is a reported order to someone else ("told me to ignore"), in a sentence that neither speaks to the reader
  (second person) nor obliges the subject ("must", "is required to": an authority frame, which stays a hit);
* ``addresses_reader(text)``: does any sentence speak to the reader (second person, in the languages of the
  attack corpora) or give an order (a sentence that starts with an imperative)? The learned detectors score
  wording and meaning, not grammar; alone they block only a text that addresses its reader.
"""

from __future__ import annotations

import re

_DESCRIBED_BEFORE = re.compile(
    r"(?:\b(?:models?|llms?|chatbots?|bots?|assistants?|agents?|(?:language|ai)\s+models?|systems?|gpts?|it|they|"
    r"he|she|people|users?|attackers?|someone|anyone|who|which|that)\s+(?:\w+ly\s+)?"
    r"(?:(?:might|may|can|could|would|will|do|does|did|often|sometimes|usually|still|never|always)\s+(?:not\s+)?"
    r"(?:\w+ly\s+)?)?(?:(?:tends?|tried|tries|try|learn(?:s|ed)?|manage[sd]?|decide[sd]?|refuse[sd]?)\s+to\s+)?"
    r"|\b(?:told|tells|tell|asked|asks|wanted|wants|want|advised|advises|reminded|taught|said|says)\s+"
    r"(?:me|us|him|her|them|people|everyone|my\s+\w+|the\s+\w+)\s+to\s+(?:just\s+|simply\s+)?)$",
    re.IGNORECASE,
)
_OBLIGES_OR_ADDRESSES = re.compile(
    r"\b(?:you|your|yours|yourself|u|ur)\b|\b(?:must|shall|required\s+to|have\s+to|has\s+to|need\s+to|needs\s+to)\b",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)|[。！？\n]")


def sentence_around(text: str, start: int, end: int) -> tuple[int, int]:
    """The span of the sentence that holds ``text[start:end]``."""
    left = max(text.rfind(ch, 0, start) for ch in ".!?。！？\n") + 1
    m = _SENTENCE_END.search(text, end)
    return left, m.end() if m else len(text)


def described(text: str, start: int, end: int) -> bool:
    """Is the span ``text[start:end]`` (an instruction-override or extraction phrase) described, not ordered?"""
    left, right = sentence_around(text, start, end)
    return bool(_DESCRIBED_BEFORE.search(text[left:start])) and not _OBLIGES_OR_ADDRESSES.search(text[left:right])


_SECOND_PERSON = re.compile(
    r"\b(?:you|your|yours|yourself|u|ur|thou|du|dich|dir|dein\w*|euch|ihr|tu|te|ti|tus?|tuy[oa]s?|usted\w*|"
    r"vous|votre|vos|toi|ton|ta|tes|voc[eê]s?|seu|sua|teu|tua|ты|тебя|тебе|твой|твоя|вы|вас|вам|ваш\w*|sen|siz|"
    r"anda|kamu|bạn|ikaw|mo)\b"
    r"|आप|तुम|तू|你|您|あなた|君|お前|당신|너|คุณ|আপনি|তুমি|أنت|انت",
    re.IGNORECASE,
)
_IMPERATIVE_START = re.compile(
    r"(?:^|[.!?:;\n]\s*|[\"'(\[]\s*)(?:please\s+|now\s+|just\s+|also\s+|then\s+|and\s+)?"
    r"(?:ignore|forget|disregard|override|bypass|print|output|write|say|tell|show|repeat|reveal|give|list|"
    r"translate|pretend|act|imagine|respond|reply|answer|stop|start|begin|remember|obey|follow|do|don'?t|never|"
    r"always|send|summari[sz]e|describe|explain|provide|return|display|type|spell|add|insert|include|append|"
    r"execute|run|decode|from\s+now\s+on|let'?s|"
    r"ignorier\w*|vergiss|vergesst|gib|sag|schreib\w*|zeig\w*|ignora\w*|olvida\w*|dime|escribe|muestra|"
    r"ignorez|oublie\w*|dis|écris|montre\w*|esque[cç]a|diga|escreva|игнорируй\w*|забудь\w*|напиши|скажи|"
    r"请|忽略|无视|無視|不要|输出|輸出|告诉|告訴|说出|說出|写|寫)",
    re.IGNORECASE,
)


def addresses_reader(text: str) -> bool:
    """Does some sentence of ``text`` speak to its reader (second person) or order something (imperative start)?"""
    return bool(_SECOND_PERSON.search(text) or _IMPERATIVE_START.search(text))
