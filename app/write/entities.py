"""Entity resolution: one canonical entity per real-world thing, whatever the surface form.

Order of checks for a name: (1) its canonical key (case, full/half width, diacritics, spacing and punctuation
folded) in the alias table; (2) initials: "NYC" and "New York City", "j-hong" and "Jones Hong"; (3) an acronym
inside a longer name ("GPT" in "ChatGPT"); (4) embedding similarity of the names above a threshold. A hit
adds the new surface form to the alias table, so the next lookup is step 1.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

import numpy as np

_SEP = re.compile(r"[\s\-_.·・'’]+")
_PRONOUNS = {"i", "me", "my", "we", "our", "us", "you", "your", "he", "him", "his", "she", "her", "they", "them",
             "their", "it", "its", "我", "我們", "我们", "你", "他", "她", "它", "他們", "他们"}


def canonical_key(name: str) -> str:
    text = unicodedata.normalize("NFKC", name).casefold()
    text = "".join(ch for ch in unicodedata.normalize("NFD", text) if unicodedata.category(ch) != "Mn")
    text = re.sub(r"^(the|a|an)\s+", "", text.strip())
    return _SEP.sub("", text)


def tokens(name: str) -> list[str]:
    text = unicodedata.normalize("NFKC", name)
    text = re.sub(r"([a-z])([A-Z])", r"\1 \2", text)  # JonesHong -> Jones Hong
    return [t.casefold() for t in _SEP.split(text) if t]


def initials_match(a: str, b: str) -> bool:
    """'NYC' ~ 'New York City'; 'j-hong' / 'J. Hong' ~ 'Jones Hong' (initials, then the same last name)."""
    ta, tb = tokens(a), tokens(b)
    if not ta or not tb:
        return False
    for short, long in ((ta, tb), (tb, ta)):
        if len(short) == 1 and len(long) >= 2 and short[0].isalpha() and short[0] == "".join(t[0] for t in long):
            return len(short[0]) >= 2
        if len(short) == len(long) >= 2 and short[-1] == long[-1] and all(
            s == l or (len(s) == 1 and l.startswith(s)) for s, l in zip(short[:-1], long[:-1], strict=True)
        ):
            return short != long
    return False


def acronym_inside(a: str, b: str) -> bool:
    """An all-caps acronym of 2-6 letters that ends or starts a longer single word: 'GPT' and 'ChatGPT'."""
    for short, long in ((a, b), (b, a)):
        s = short.strip()
        if re.fullmatch(r"[A-Z]{2,6}", s) and " " not in long.strip() and len(long) > len(s):
            if long.endswith(s) or long.startswith(s):
                return True
    return False


def is_pronoun(name: str) -> bool:
    return name.strip().casefold() in _PRONOUNS


@dataclass(frozen=True, slots=True)
class ResolverConfig:
    embedding_threshold: float = 0.90
    max_name_chars: int = 120


@dataclass(frozen=True, slots=True)
class Known:
    id: int
    name: str
    key: str
    embedding: np.ndarray | None


class EntityResolver:
    """Resolves names against the entities already known in a vault (a snapshot loaded by the caller)."""

    def __init__(self, known: list[Known], aliases: dict[str, int], config: ResolverConfig = ResolverConfig()):
        self.known = known
        self.aliases = aliases
        self.config = config

    def resolve(self, name: str, embedding: np.ndarray | None) -> tuple[int | None, str]:
        """The id of the entity ``name`` refers to (None: a new entity) and the rule that decided."""
        key = canonical_key(name)
        if key in self.aliases:
            return self.aliases[key], "alias"
        for k in self.known:
            if initials_match(name, k.name):
                return k.id, "initials"
            if acronym_inside(name, k.name):
                return k.id, "acronym"
        if embedding is not None:
            best, best_cos = None, self.config.embedding_threshold
            for k in self.known:
                if k.embedding is not None:
                    cos = float(np.dot(embedding, k.embedding))
                    if cos >= best_cos:
                        best, best_cos = k, cos
            if best is not None:
                return best.id, f"embedding {best_cos:.2f}"
        return None, "new"

    def learn(self, entity_id: int, name: str, embedding: np.ndarray | None) -> None:
        self.aliases[canonical_key(name)] = entity_id
        if all(k.id != entity_id for k in self.known):
            self.known.append(Known(entity_id, name, canonical_key(name), embedding))
