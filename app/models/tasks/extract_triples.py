"""``extract_triples.v1``: (subject, predicate, object) triples for the L0 graph (seed 001, graph build).

Predicates are snake_case verbs from a small canonical set where the text matches one (``lives_in``,
``works_at``, ``likes`` ...), so the graph and the conflict resolver can compare them. First-person subjects
become the ``speaker``.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, Field

from app.models.tasks.base import Task, payload_json, register
from app.models.tasks.text import split_sentences

# Predicates that hold one value at a time: a new object supersedes the old one (used by resolve_conflict).
SINGLE_VALUED = frozenset(
    {
        "lives_in",
        "works_at",
        "works_as",
        "is_a",
        "is",
        "born_in",
        "married_to",
        "moved_to",
        "age",
        "name",
        "job",
        "title",
        "email",
        "phone",
        "address",
        "role",
        "status",
    }
)


class ExtractTriplesInput(BaseModel):
    text: str
    speaker: str = Field(default="user", description="Who 'I'/'我' refers to.")


class Triple(BaseModel):
    subject: str = Field(min_length=1)
    predicate: str = Field(min_length=1)
    object: str = Field(min_length=1)
    confidence: float = Field(default=0.7, ge=0.0, le=1.0)
    negated: bool = False


class ExtractTriplesOutput(BaseModel):
    triples: list[Triple]


# Capitalized words that open a sentence without naming anyone ("This is...", "Here is a list", "That's a good
# point", "What is..."): not subjects. Without this, LongMemEval's assistant turns made "It", "Here" and "That"
# the most connected entities of every graph.
_NOT_SUBJECT = (
    "It|Its|That|This|These|Those|There|Here|What|Which|Who|Whom|Whose|Where|When|Why|How|Let|If|So|But|And|Or|"
    "The|A|An|Some|Any|Each|Every|All|Both|Also|Just|Then|Now|Yes|No|Please|Thanks|Thank|Hey|Hi|Hello|Well|Oh|"
    "Wow|Sure|Great|Okay|OK|Everything|Something|Nothing|Anything|Everyone|Someone|Nobody|One|You|Your|Let's"
)
_SUBJ = (
    r"(?P<s>(?:[Mm]y|[Oo]ur|[Hh]is|[Hh]er|[Tt]heir)\s+[a-z]+|I|[Ww]e|[Hh]e|[Ss]he|[Tt]hey|"
    rf"(?!(?:{_NOT_SUBJECT})\b)[A-Z][\w'-]+(?:\s+[A-Z][\w'-]+){{0,2}})"
)
_AUX = r"(?:am|is|are|was|were|'m|'s)(?:\s+(?:now|currently|still|also|not))?"
_ADV = r"(?:\s+(?:now|currently|still|also|really|actually|finally|recently|just|usually|always|mostly))*"
_NEG = r"(?P<neg>\s+(?:do|does|did)\s+not|\s+(?:don't|doesn't|didn't|never|no longer))?"
_OBJ = r"\s+(?P<o>[^.,;!?()\n]+)"

# (predicate, verb regex). Order matters: specific before general; matches may not overlap.
_EN_PATTERNS: list[tuple[str, str]] = [
    ("born_in", r"(?:was|were)\s+born\s+in"),
    ("married_to", r"(?:am|is|are|was|were|got|'m|'s)\s+married\s+to"),
    ("works_as", r"(?:works?|worked|{A}\s+working)\s+as(?:\s+an?)?"),
    ("works_at", r"(?:works?|worked|{A}\s+working)\s+(?:at|for)"),
    ("lives_in", r"(?:lives?|lived|{A}\s+living)\s+in"),
    ("moved_to", r"(?:moved|{A}\s+moving|relocated)\s+to"),
    ("visited", r"(?:visited|went\s+to|traveled\s+to|travelled\s+to)"),
    ("dislikes", r"(?:hates?|hated|dislikes?|disliked|can't\s+stand)"),
    ("prefers", r"(?:prefers?|preferred)"),
    ("likes", r"(?:likes?|liked|loves?|loved|enjoys?|enjoyed|{A}\s+into)"),
    ("uses", r"(?:uses?|used|{A}\s+using|switched\s+to)"),
    ("studies", r"(?:stud(?:y|ies|ied)|{A}\s+studying|majors?\s+in|majored\s+in)"),
    ("plays", r"(?:plays?|played)"),
    ("has", r"(?:has|have|had|owns?|owned)(?=\s+(?:a|an|two|three|four|\d+)\b)"),
    ("is_a", r"(?:am|is|are|was|were|'m|'s)(?:\s+not)?\s+(?:a|an)(?=\s)"),
    (
        "is",
        r"(?:am|is|are|was|'m|'s)(?!\s+(?:going|not|also|a|an|the|so|very|just|to|in|at|from|being|been)\b)",
    ),
]
_EN_PATTERNS = [(pred, verb.replace("{A}", _AUX)) for pred, verb in _EN_PATTERNS]
_EN_COMPILED = [
    (
        pred,
        re.compile(
            # the verb is a word of its own, or a contraction ("Bob's a teacher"): never the end of the subject's
            # word ("This works" is not "Th" + "is")
            rf"\b{_SUBJ}{_NEG}{_ADV}(?:\s+|(?=')){verb}{_OBJ}" if pred != "is"
            else rf"\b{_SUBJ}(?:\s+|(?=')){verb}{_OBJ}"
        ),
        # "... and work at Y": a second verb sharing the sentence's last subject.
        re.compile(rf"\b(?:and|but|then){_NEG}{_ADV}\s+{verb}{_OBJ}") if pred != "is" else None,
    )
    for pred, verb in _EN_PATTERNS
]
_POSSESSIVE = re.compile(
    r"\b(?P<s>(?:[Mm]y|[Oo]ur)\s+[a-z]+(?=(?:'s|’s)\s)|[Mm]y|I|[A-Z][\w-]+(?:\s+[A-Z][\w-]+)?)(?:'s|’s)?\s+"
    r"(?P<attr>name|age|job|email|phone|birthday|"
    r"address|favorite\s+\w+|favourite\s+\w+|title|role)\s+is\s+(?P<o>[^.,;!?\n]+)"
)
_OBJ_STOP = re.compile(
    r"\s+(?:and|but|because|since|so|when|while|which|who|that|where|if|though|although|as well|for\s+\d+|"
    r"anymore|these days|right now|now|nowadays|last\s+\w+|next\s+\w+|this\s+(?:year|month|week)|yesterday|today|"
    r"tomorrow|in\s+\d{4}|on\s+\w+day)\b.*$",
    re.I,
)
_FIRST_PERSON = {"i", "we", "my", "our", "me"}
# A verb of being inside an object: the object is a clause ("name is Wen", "main service is written in Ruby").
_CLAUSE = re.compile(r"\b(?:is|are|was|were|am)\b", re.I)
_NOT_ATTRIBUTE = {
    "it",
    "that",
    "this",
    "there",
    "now",
    "currently",
    "still",
    "also",
    "really",
    "here",
    "what",
}

_ZH_SUBJ = r"(?P<s>我們|我们|我|他們|他们|他|她|[\u4e00-\u9fffA-Za-z]{1,6}?)?"
_ZH_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    (
        "works_at",
        re.compile(_ZH_SUBJ + r"(?:現在|现在|目前)?在(?P<o>[^，。！？,.!?\s]{1,12}?)(?:工作|上班|任職|任职)"),
    ),
    (
        "lives_in",
        re.compile(_ZH_SUBJ + r"(?:現在|现在|目前)?(?:住在|住於|住于|居住在)(?P<o>[^，。！？,.!?\s]{1,12})"),
    ),
    (
        "moved_to",
        re.compile(_ZH_SUBJ + r"(?:已經|已经)?(?:搬到|搬去|搬家到)(?:了)?(?P<o>[^，。！？,.!?\s]{1,12})"),
    ),
    ("born_in", re.compile(_ZH_SUBJ + r"(?:出生在|出生於|出生于|生於|生于)(?P<o>[^，。！？,.!?\s]{1,12})")),
    ("married_to", re.compile(_ZH_SUBJ + r"(?:嫁給|嫁给|娶了)(?P<o>[^，。！？,.!?\s]{1,8})")),
    (
        "dislikes",
        re.compile(_ZH_SUBJ + r"(?:很|非常|最)?(?:討厭|讨厌|不喜歡|不喜欢)(?P<o>[^，。！？,.!?\s]{1,12})"),
    ),
    (
        "likes",
        re.compile(
            _ZH_SUBJ
            + r"(?:很|非常|最|也|還是|还是)?(?:喜歡|喜欢|愛|爱|熱愛|热爱)(?P<o>[^，。！？,.!?\s]{1,12})"
        ),
    ),
    (
        "uses",
        re.compile(
            _ZH_SUBJ + r"(?:現在|现在|目前|都|也)?(?:使用|改用|在用|用)\s*(?P<o>[^，。！？,.!?\s]{1,12})"
        ),
    ),
    ("studies", re.compile(_ZH_SUBJ + r"(?:在)?(?:學習|学习|學|学|念|讀|读)(?P<o>[^，。！？,.!?\s]{1,10})")),
    ("visited", re.compile(_ZH_SUBJ + r"(?:去過|去过|去了|拜訪了|拜访了)(?P<o>[^，。！？,.!?\s]{1,10})")),
    ("has", re.compile(_ZH_SUBJ + r"(?:養了|养了|有)(?P<o>(?:一|兩|两|三|四|五|\d)[^，。！？,.!?\s]{1,10})")),
    ("is", re.compile(_ZH_SUBJ + r"(?:現在|现在|目前)?是(?P<o>[^，。！？,.!?\s]{1,12})")),
]
_ZH_LEAD = re.compile(
    r"^(?:而且|但是|可是|所以|因為|因为|然後|然后|其實|其实|現在|现在|目前|後來|后来|那|就)"
)


# A period inside a name is not the end of one: a title before a name ("Dr. Lin", "St. Louis", "Mt. Fuji") or an
# initial ("J. R. R. Tolkien", "U.S."). Such periods are masked with a letter-like character while the sentence
# is matched (so objects, which stop at a period, and subjects, made of word characters, take the whole name),
# and restored in what is extracted: "Dr. Lin" is one entity, not "Dr".
_NAME_DOT = "\ua78f"  # LATIN LETTER SINOLOGICAL DOT: a word character (\w) no English text uses
_TITLES = ("Dr|Mr|Mrs|Ms|Mx|Prof|St|Mt|Ft|Jr|Sr|Sen|Rep|Gov|Gen|Col|Capt|Lt|Sgt|Rev|Fr|Hon|Pres|Dept|Univ")
# a title or an initial before a capitalized word that is not a sentence's opening ("Plan B. Then we..." ends)
_NAME_PERIOD = re.compile(rf"\b(?:{_TITLES}|[A-Z])\.(?=\s*(?:[A-Z]\.|(?!(?:{_NOT_SUBJECT}|I|We|He|She|They|My|Our|"
                          rf"His|Her|Their|In|On|At|For|After|Before)\b)[A-Z]))")


def _mask_name_periods(text: str) -> str:
    return _NAME_PERIOD.sub(lambda m: m.group(0)[:-1] + _NAME_DOT, text)


def _unmask(text: str) -> str:
    return text.replace(_NAME_DOT, ".")


def _clean_obj(obj: str, max_words: int = 6) -> str:
    obj = _OBJ_STOP.sub("", obj.strip()).strip(" '\"")
    words = obj.split()
    return " ".join(words[:max_words])


def _subject(raw: str, speaker: str) -> str:
    s = raw.strip()
    low = s.lower()
    if low in _FIRST_PERSON or low in {"我", "我們", "我们"}:
        return speaker
    first, _, rest = s.partition(" ")
    if first.lower() in {"my", "our"} and rest:
        return f"{speaker}'s {rest}"
    return s


def extract_triples_heuristic(payload: ExtractTriplesInput) -> ExtractTriplesOutput:
    """Pattern rules per sentence (EN: "X lives in / works at / likes / uses / is (a) Y", "X's name is Y";
    ZH: "X住在Y", "X在Y工作", "X喜歡Y", "X是Y" ...). Matches do not overlap; objects stop at a clause word and
    keep at most six words. Confidence 0.7 for named subjects, 0.6 for first person, 0.55 for Chinese rules."""
    triples: list[Triple] = []
    seen: set[tuple[str, str, str, bool]] = set()

    def add(s: str, p: str, o: str, conf: float, neg: bool = False) -> None:
        s, o = _unmask(s), _unmask(o.strip(" 了的。"))
        if not s or not o or len(o) > 80:
            return
        key = (s.lower(), p, o.lower(), neg)
        if key not in seen:
            seen.add(key)
            triples.append(Triple(subject=s, predicate=p, object=o, confidence=conf, negated=neg))

    for sentence in split_sentences(_mask_name_periods(payload.text)):
        text = sentence.replace("’", "'")
        text = re.sub(r"\b(I|[Ww]e|[Tt]hey|[Yy]ou)'m\b", r"\1 am", text)
        taken: list[tuple[int, int]] = []
        for m in _POSSESSIVE.finditer(text):
            subj = _subject(m.group("s"), payload.speaker)
            attr = re.sub(r"\s+", "_", m.group("attr").lower())
            add(subj, attr, _clean_obj(m.group("o")), 0.7)
            taken.append(m.span())
        last_subject: tuple[int, str] | None = None
        for pred, rx, _cont in _EN_COMPILED:
            for m in rx.finditer(text):
                a, b = m.span()
                if any(a < y and x < b for x, y in taken):
                    continue
                obj = _clean_obj(m.group("o"))
                first = obj.split()[0].lower() if obj else ""
                if pred == "is" and (not obj or first in _NOT_ATTRIBUTE or first.endswith("ing")):
                    continue
                if _CLAUSE.search(obj):
                    # a whole clause is no object: "My sister's name is Wen" read as "My sister" + "'s" (is)
                    continue
                raw_s = m.group("s")
                neg = bool(m.groupdict().get("neg")) or " not " in m.group(0)[: m.start("o") - a + 1]
                conf = 0.6 if raw_s.lower() in _FIRST_PERSON else 0.7
                add(_subject(raw_s, payload.speaker), pred, obj, conf, neg)
                k = m.group("o").find(obj)
                taken.append((a, m.start("o") + k + len(obj) if obj and k >= 0 else b))
                if last_subject is None or a < last_subject[0]:
                    last_subject = (a, raw_s)
        if last_subject is not None:
            for pred, _, cont in _EN_COMPILED:
                for m in cont.finditer(text) if cont is not None else ():
                    if m.start() <= last_subject[0] or any(m.start() < y and x < m.end() for x, y in taken):
                        continue
                    raw_s = last_subject[1]
                    conf = 0.55 if raw_s.lower() in _FIRST_PERSON else 0.65
                    add(
                        _subject(raw_s, payload.speaker),
                        pred,
                        _clean_obj(m.group("o")),
                        conf,
                        bool(m.group("neg")),
                    )
                    taken.append(m.span())
        zh_subject: str | None = None
        for clause in re.split(r"[，,；;]", text):
            clause = _ZH_LEAD.sub("", clause.strip())
            zh_taken: list[tuple[int, int]] = []
            for pred, rx in _ZH_PATTERNS:
                m = rx.search(clause)
                if not m or any(m.start("o") < y and x < m.end("o") for x, y in zh_taken):
                    continue
                zh_taken.append(m.span("o"))
                subj = _ZH_LEAD.sub("", m.group("s") or "") or m.group("s") or zh_subject
                # a pronoun and what follows it before the verb ("我上个月搬到杭州"): the pronoun is the subject
                pronoun = re.match(r"我們|我们|他們|他们|她們|她们|我|他|她", subj or "")
                if pronoun and subj and len(subj) > pronoun.end() and not re.match(r"的|們|们", subj[pronoun.end():]):
                    subj = pronoun.group()
                if not subj:
                    continue
                zh_subject = subj
                obj = m.group("o")
                neg = pred == "likes" and "不" in clause[: m.start("o")]
                if pred == "is" and obj.startswith(("不是", "在")):
                    continue
                if any(k in clause for k in ("不再", "不住", "沒有在", "没有在")) and pred in {
                    "lives_in",
                    "works_at",
                }:
                    neg = True
                add(_subject(subj, payload.speaker), pred, obj, 0.55, neg)
    return ExtractTriplesOutput(triples=triples)


SYSTEM = """You extract knowledge-graph triples from a memory. Each triple is (subject, predicate, object): the
subject and object are short noun phrases (names, places, things), the predicate a snake_case verb phrase. Prefer
these predicates when they fit: lives_in, works_at, works_as, is_a, is, born_in, married_to, moved_to, likes,
dislikes, prefers, uses, studies, plays, has, visited. First-person subjects ("I", "我") are the speaker given.
Mark negated facts with negated=true. Extract only what the text states; confidence between 0 and 1. The text may
be English or Chinese; keep names in their original language."""

EXTRACT_TRIPLES: Task[ExtractTriplesInput, ExtractTriplesOutput] = register(
    Task(
        name="extract_triples",
        version=1,
        input_model=ExtractTriplesInput,
        output_model=ExtractTriplesOutput,
        system=SYSTEM,
        render=lambda p: payload_json(p),
        heuristic=extract_triples_heuristic,
        max_tokens=800,
    )
)
