"""QueryFocus: a question's subject, without the words that frame it as a request.

"I've been thinking about making a cocktail for an upcoming get-together, but I'm not sure which one to choose.
Any suggestions?" is about "making cocktail get-together"; its framing ("not sure which one to choose", "any
suggestions") matches every memory where someone chose or suggested something. The sparse rail searches the
focus (its terms are the subject's), and slow mode's multi-query uses it as a variant for the dense rail too.
Measured on the dev splits, the sparse rail on the focus instead of the whole question: LongMemEval any@5
0.966 -> 0.983, NDCG@10 0.891 -> 0.895; LoCoMo coverage@10 0.695 -> 0.704.
"""

from __future__ import annotations

import re

from app.models.tasks.text import EN_STOPWORDS, is_cjk, stem

# The words that frame a request rather than name its subject ("can you suggest", "any tips", "do you think",
# "I'm not sure which one to choose"): the focus leaves them out, with the stopwords.
_FRAMING = frozenset(stem(w) for w in """suggest suggestion suggestions recommend recommendation recommendations tip
    tips idea ideas advice think thinking thought wonder wondering sure choose choosing pick help find interesting
    useful lately soon recently currently upcoming kind sort type tell know""".split())
_WORD = re.compile(r"[^\W_][\w'’-]*")


def focus(query: str) -> str:
    """The query's subject: its content words as written, in order, without the request's framing; "" when
    nothing is left, or for Chinese (no word boundaries to cut at: the caller keeps the whole query)."""
    if is_cjk(query):
        return ""
    words = [w for w in _WORD.findall(query) if w.lower() not in EN_STOPWORDS and stem(w) not in _FRAMING]
    return " ".join(dict.fromkeys(words))
