"""``extract_atomic_units.v1``: a session's turns -> atomic units (seed 003, semantic extraction).

Rules from the seed: each unit is one claim of at most 15 words; units are never combined; nothing is omitted
(no judgment of importance; repetitions collapse but no idea is dropped); a forced category, with PROVISIONAL for
exploratory ideas so that extraction does not harden them into claims; decisions are credited only from the
user's turns. Every unit carries the index of the turn(s) it came from.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, Field, field_validator

from app.models.tasks.base import Task, register
from app.models.tasks.text import (
    EN_STOPWORDS,
    clean_surface,
    content_terms,
    has_any,
    is_cjk,
    latin_word_starts,
    latin_words,
    split_sentences,
    stem,
    word_count,
)
from app.models.tasks.speech import deliberation, info_question, request, social_sentence
from app.models.tasks.values import is_quantity

Category = Literal[
    "Decision", "OpenQuestion", "Constraint", "Fact", "Idea", "ActionItem", "Topic", "Provisional"
]
CATEGORIES: tuple[Category, ...] = (
    "Decision",
    "OpenQuestion",
    "Constraint",
    "Fact",
    "Idea",
    "ActionItem",
    "Topic",
    "Provisional",
)
MAX_WORDS = 15
# A unit needs this many content words to stand alone as a claim. Shorter fragments lean on their context ("I love
# it.", "They're amazing.", "dance videos.", "Woohoo Melanie!"): stored on their own they match any question that
# names their speaker and say nothing; the turn's chunk keeps them, so nothing is omitted. Measured on LoCoMo dev
# (a quarter of its units), re-ingested: coverage@5 0.691 -> 0.698, @10 0.777 -> 0.781, @25 0.829 -> 0.836.
MIN_CONTENT_WORDS = 3
# What the rule-based extractor takes from another speaker's turn: its proposals, at most this many per turn.
OTHER_SPEAKER_CATEGORIES = frozenset({"Idea", "ActionItem"})
OTHER_SPEAKER_UNITS_PER_TURN = 3
USER_ROLES = frozenset({"user", "human", "me"})


class TurnIn(BaseModel):
    role: str = Field(
        description="'user' for the person whose memory this is; 'assistant' or a name otherwise."
    )
    content: str


class ExtractUnitsInput(BaseModel):
    turns: list[TurnIn]
    user_roles: list[str] = Field(
        default_factory=lambda: sorted(USER_ROLES), description="Roles that are the user."
    )


class AtomicUnit(BaseModel):
    category: Category
    text: str = Field(min_length=1)
    turns: list[int] = Field(min_length=1, description="Indexes of the source turns.")

    @field_validator("text")
    @classmethod
    def _short(cls, v: str) -> str:
        if word_count(v) > MAX_WORDS + 3:  # a little slack for a model's counting; heuristic output is <= 15
            raise ValueError(f"unit longer than {MAX_WORDS} words: {v!r}")
        return v.strip()


class ExtractUnitsOutput(BaseModel):
    units: list[AtomicUnit]


NOISE = re.compile(
    r"^(hi|hello|hey|thanks?( you)?( so much)?|thx|ok(ay)?|sure|great|cool|nice|awesome|wow|lol|haha+|bye|"
    r"good (morning|night|to see you)|see you|take care|you too|me too|yeah|yes|no|yep|nope|got it|sounds good|"
    r"how are you|how have you been|what'?s up|你好|謝謝|谢谢|好的|好|嗯+|哈哈+|再見|再见|早安|晚安|沒問題|没问题)\W*$",
    re.I,
)
# Social talk beyond single words: greetings, thanks, well-wishes, praise, check-ins ("Long time no see!",
# "Your backing means a lot.", "Anything exciting going on?"). A sentence made only of these words (stemmed),
# the speaker's "Name:" prefix and names addressed to the other speaker carries no memory: the seed's "skip only
# greetings", in the shapes conversations really take.
PHATIC = frozenset(stem(w) for w in """
    appreciate appreciated appreciation congrats congratulations luck wait waiting see seeing talk talking talked
    chat chatting catch catching hear hearing heard time long miss missed care worry worries problem welcome hope
    hoping doing happen happening happened exciting excited excite fun interesting stoked super proud support
    supporting supportive backing means mean kind words always there here lately recently since last today day
    keep keeping fantastic wonderful lovely incredible sweet bye later soon sorry mind true right exactly agree
    course honestly seriously look looks looking blast happy thrilled inspiring inspired anytime cheers hug hugs
    fab brilliant touching touched glad grateful thankful encouragement encouraging kudos bravo
    congratulate everything anything something nothing else how's""".split())
_SPEAKER = re.compile(r"^\s*[A-Z][\w'’.-]{0,30}\s*:\s*")
# A name addressed to the other speaker: after a comma ("No worries, Jon!") or a greeting ("Hey Mel").
_VOCATIVE = re.compile(r"(,|\b(?:hi|hey|hello|thanks|thank you|bye|dear))\s+[A-Z][\w'’-]*", re.I)


def _said(sentence: str) -> str:
    """The sentence without the speaker's "Name:" prefix and without names addressed to the other speaker."""
    return _VOCATIVE.sub(lambda m: m.group(1), _SPEAKER.sub("", sentence, count=1))


def phatic(sentence: str) -> bool:
    """Only social talk: no word left that is not a greeting / thanks / praise / check-in word or a stopword,
    once the speaker's "Name:" prefix and any name addressed to the other speaker are set aside."""
    if is_cjk(_SPEAKER.sub("", sentence, count=1)):
        return False
    words = re.findall(r"[A-Za-z][A-Za-z'’]*", _said(sentence))
    return bool(words) and all(w.lower() in EN_STOPWORDS or w.lower() in PHATIC or stem(w) in PHATIC
                               for w in words)


CUES: dict[str, list[str]] = {
    "Decision": [
        r"\b(i|we)('ve| have)? (decided|chose|chosen|picked|settled on|committed to|agreed)\b",
        r"\b(i|we)('ll| will) go with\b",
        r"\blet'?s (go with|use|do|stick with|pick)\b",
        r"\bdecision:",
        r"\b(i|we)('m| am| are) going with\b",
        r"\bfinal(ly)? (answer|choice|decision)\b",
        r"決定|决定|就用|就這樣|就这样|定了|選擇了|选择了|確定用|确定用|我們用|我们用|就選|就选",
    ],
    "ActionItem": [
        r"\b(todo|to-do|action item|next step)\b",
        r"\b(i|we) (need|have|got) to\b",
        r"\bremind me\b",
        r"\b(i|we)('ll| will| must| should) (send|call|email|write|book|buy|finish|review|check|fix|schedule|"
        r"prepare|ask|update|submit|follow up|look into)\b",
        r"\bdon'?t forget\b",
        r"\bfollow up\b",
        r"待辦|待办|記得|记得|要去|得去|下一步|提醒我|明天要|今天要|要完成|要寄|要打電話",
    ],
    "Constraint": [
        r"\bmust( not)?\b",
        r"\bcan(no|')t\b",
        r"\b(not allowed|no more than|at most|at least|only)\b",
        r"\b(deadline|due (by|on)|budget|limit|maximum|minimum|required|requirement|allergic)\b",
        r"\bhas to\b",
        r"\bshould(n'?t| not)\b",
        r"必須|必须|不能|不可以|不可|最多|至少|只能|限制|預算|预算|截止|期限|過敏|过敏|不得|一定要",
    ],
    "Provisional": [
        r"\b(maybe|perhaps|possibly|probably|might|not sure|i guess|i think|i wonder|thinking about|considering|"
        r"leaning towards|tentative(ly)?|for now|undecided)\b",
        r"也許|也许|或許|或许|可能|大概|考慮|考虑|不確定|不确定|暫時|暂时|還在想|还在想|說不定|说不定",
    ],
    "Idea": [
        r"\b(what if|how about|we could|you could|one idea|idea:|it would be (cool|nice|great)|why not|"
        r"i('d| would) love to|would be fun|could try|should try)\b",
        r"不如|可以試試|可以试试|點子|点子|想法|主意|要不要|或者可以",
    ],
    "Topic": [
        r"^(topic|subject|re|about|regarding)\s*[:：]",
        r"^let'?s (talk|chat) about\b",
        r"^(關於|关于|談談|谈谈|聊聊|主題|主题)",
    ],
}
_QUESTION = re.compile(
    r"[?？]\s*$|^(who|what|when|where|why|how|which|should|could|can|do|does|did|is|are|will|would)\b.*[?？]?$",
    re.I,
)
_SPLIT_CLAUSE = re.compile(
    r"\s*(?:;|,\s*(?:and|but|so|because|while|although)\s+|\s+(?:but|because|although)\s+|，|；)\s*"
)
_DROPPABLE = frozenset(
    {"the", "a", "an", "really", "very", "just", "that", "quite", "pretty", "actually", "also"}
)


def categorize(sentence: str, *, from_user: bool) -> Category:
    """The category by cue phrases, in priority order. A decision cue outside the user's turns is an Idea (the
    model proposed it; the user has not committed)."""
    if has_any(sentence, CUES["Topic"]):
        return "Topic"
    if _QUESTION.search(sentence.strip()) and not has_any(sentence, CUES["Decision"]):
        return "OpenQuestion"
    if has_any(sentence, CUES["Decision"]):
        return "Decision" if from_user else "Idea"
    if has_any(sentence, CUES["ActionItem"]):
        return "ActionItem"
    if has_any(sentence, CUES["Provisional"]):
        return "Provisional"
    if has_any(sentence, CUES["Constraint"]):
        return "Constraint"
    if has_any(sentence, CUES["Idea"]):
        return "Idea"
    return "Fact"


def compress(sentence: str) -> list[str]:
    """One sentence -> one or more units of <= 15 words, dropping only fillers and discourse markers.

    Order: clean the surface (and a leading aside: "By the way, ..."); if still long, split at clause boundaries;
    a long clause that states a value keeps each value with the words before it (:func:`_value_spans`); any other
    long clause, or what is left of it, loses its articles and intensifiers and, as a last resort, is cut into
    consecutive pieces at word boundaries (nothing is dropped)."""
    s = _clean(sentence)
    if not s:
        return []
    if word_count(s) <= MAX_WORDS:
        return [s]
    out: list[str] = []
    for clause in [c for c in _SPLIT_CLAUSE.split(s) if c and c.strip()]:
        clause = clean_surface(clause)
        if not content_terms(clause):
            continue
        if word_count(clause) <= MAX_WORDS:
            out.append(clause)
        elif is_cjk(clause):
            step = MAX_WORDS * 2
            out += [clause[i : i + step] for i in range(0, len(clause), step)]
        elif any(is_quantity(t) for t in clause.split()):
            out += _value_spans(clause)
        else:
            out += _pieces(clause)
    return [u for u in out if u]


# An aside that opens a sentence and says nothing of its own ("By the way, I've got 1250 followers now").
_ASIDE = re.compile(r"^(?:by the way|btw|speaking of which|incidentally|as a matter of fact)\b[\s,:;-]*", re.I)
# Words kept after a value: what it counts or measures ("9 months now", "three times a week", "50 episodes").
VALUE_TAIL = 3
_CLAUSE_END = re.compile(r"[,;:.!?]$")
_DASH = frozenset({"-", "--", "\u2013", "\u2014"})
_EDGES = " ,;-\u2013\u2014"


def _clean(text: str) -> str:
    s = clean_surface(text)
    bare = _ASIDE.sub("", s)
    return clean_surface(bare) if bare != s else s


def _value_spans(clause: str) -> list[str]:
    """A long clause that states values: each value goes into one unit with its tail (:data:`VALUE_TAIL` words,
    not past the end of its phrase) and as many words before it as fit in MAX_WORDS: the subject and what the
    value is about ("... my current follower count - I think I'm close to 1300 now", where pieces cut in order
    gave "... I think I'm close" and "to 1300 now"; "... yoga classes, which is three times a week" rather than
    "... which is three" and "times a week"). Values close together share one unit; the words outside every
    value's unit are cut into pieces as any long clause (:func:`_pieces`), so nothing is dropped.

    The values here are quantities (:func:`is_quantity`: numbers, counts, frequencies, dates); a weekday or a
    month closes what it dates ("... the workshop on time management at the community center last Saturday"),
    so a clause that only names one is cut like any other. Articles and intensifiers are dropped as there, except
    in a value's tail ("three times a week")."""
    raw = clause.split()
    near = {k for v, t in enumerate(raw) if is_quantity(t) for k in range(v, v + VALUE_TAIL + 1)}
    tokens = [t for k, t in enumerate(raw) if k in near or t.lower().strip(",.") not in _DROPPABLE]
    spans: list[tuple[int, int]] = []
    for v, token in enumerate(tokens):
        if not is_quantity(token) or (spans and v < spans[-1][1]):
            continue
        end, last = v + 1, v
        while (end < len(tokens) and end - last <= VALUE_TAIL and not _CLAUSE_END.search(tokens[end - 1])
               and tokens[end] not in _DASH):
            last = end if is_quantity(tokens[end]) else last  # "Charge 3 for 9 months now": the tail of the 9
            end += 1
        if spans and word_count(" ".join(tokens[spans[-1][0]:end])) <= MAX_WORDS:
            spans[-1] = (spans[-1][0], end)
            continue
        start = spans[-1][1] if spans else 0
        while start < v and word_count(" ".join(tokens[start:end])) > MAX_WORDS:
            start += 1
        spans.append((start, end))
    out: list[str] = []
    pos = 0
    for a, b in spans:
        out += _pieces(" ".join(tokens[pos:a])) if a > pos else []
        span = " ".join(tokens[a:b])
        # a token that holds many words (a "dc1_ping" that word_count splits) can leave a value's span too long
        out += [span.strip(_EDGES)] if word_count(span) <= MAX_WORDS else _pieces(span)
        pos = b
    out += _pieces(" ".join(tokens[pos:])) if pos < len(tokens) else []
    return [u for u in out if u]


def _pieces(clause: str) -> list[str]:
    """Articles and intensifiers dropped, then consecutive pieces of <= MAX_WORDS words."""
    words = [part for w in clause.split() if w.lower().strip(",.") not in _DROPPABLE for part in _cut_token(w)]
    out: list[str] = []
    piece: list[str] = []
    for w in words:  # word_count also splits "140°F/60°C": fill each piece by its count, not by spaces
        if piece and word_count(" ".join([*piece, w])) > MAX_WORDS:
            out.append(" ".join(piece).strip(_EDGES))
            piece = []
        piece.append(w)
    if piece:
        out.append(" ".join(piece).strip(_EDGES))
    return [p for p in out if p]


def _cut_token(token: str) -> list[str]:
    """A token without spaces that holds more than MAX_WORDS words (a CSV header "Month,sales_usd,..."), cut
    before every MAX_WORDS-th of them; any other token whole."""
    if word_count(token) <= MAX_WORDS:
        return [token]
    cuts = latin_word_starts(token)[MAX_WORDS::MAX_WORDS]
    return [token[a:b] for a, b in zip([0, *cuts], [*cuts, len(token)], strict=True) if token[a:b].strip(" ,")]


def _key(text: str) -> str:
    return " ".join(sorted(set(content_terms(text))))


def stands_alone(text: str) -> bool:
    """Enough content words to be a claim without its context (see MIN_CONTENT_WORDS); Chinese text always is
    (its words are not split here). The speaker's "Name:" prefix and a name addressed to someone do not count."""
    if is_cjk(text):
        return True
    words = [w for w in re.findall(r"[A-Za-z][A-Za-z'’]*|\d+", _said(text)) if w.lower() not in EN_STOPWORDS]
    return len(words) >= MIN_CONTENT_WORDS


def _asks_assistant(sentence: str, bare: str) -> bool:
    """A request to the assistant ("Can you refactor worker.py?", "Summarize this.") or a question put to it for
    information ("How do I set up a language server?"); not the user's own task ("Remind me to call Ana") nor the
    user's own open questions ("Should I take the offer?", "What about the handwritten receipts?")."""
    if has_any(sentence, CUES["ActionItem"]):
        return False
    return (request(bare) or info_question(bare)) and not deliberation(bare)


def extract_units_heuristic(payload: ExtractUnitsInput) -> ExtractUnitsOutput:
    """Sentence splitting (EN + ZH) -> drop greetings, acknowledgements and other social talk (:func:`phatic`)
    -> cue-phrase category -> compression to <= 15 words (see :func:`compress`) -> drop fragments that do not
    stand alone (:func:`stands_alone`; the turn's chunk keeps them). Units with the same content terms collapse
    into one, keeping every source turn.

    Every sentence of the user's turns becomes units. Of another speaker's turn (an assistant), only its
    proposals (Idea, ActionItem; at most three per turn): a rule-based splitter cannot tell an answer's claims
    from its filler, and on an assistant's long answers it gave ~250 fragments per LongMemEval session that
    repeated the turn's chunks (which stay retrievable) and buried the user's own units."""
    user_roles = {r.lower() for r in payload.user_roles}
    units: list[AtomicUnit] = []
    index: dict[tuple[str, str], AtomicUnit] = {}
    # Requests and lookups are put to an assistant: between two people (every turn a user's: LoCoMo's
    # conversations, an imported chat) "Tell me more about the trip!" is part of their conversation, and stays.
    assistant = any(t.role.lower() not in user_roles for t in payload.turns)
    for t_idx, turn in enumerate(payload.turns):
        from_user = turn.role.lower() in user_roles
        budget = None if from_user else OTHER_SPEAKER_UNITS_PER_TURN
        answered = payload.turns[t_idx - 1].content if t_idx else ""
        for sentence in split_sentences(turn.content):
            bare = clean_surface(sentence)
            if not bare or NOISE.match(sentence.strip()) or NOISE.match(bare) or phatic(bare):
                continue
            if social_sentence(bare, answered) if not from_user else social_sentence(bare, max_new=0):
                continue  # a reaction to what the other said: praise, thanks, an offer of help
            asked = from_user and assistant and _asks_assistant(sentence, bare)
            words = latin_words(bare)
            if words and all(w in EN_STOPWORDS for w in words) and not is_cjk(bare):
                continue
            sentence_category = categorize(sentence, from_user=from_user)
            for text in compress(sentence):
                if not stands_alone(text):
                    continue
                # A clause split off a sentence gets its own category; a plain clause of a provisional or
                # exploratory sentence stays provisional (no hardening into a Fact).
                category = (
                    categorize(text, from_user=from_user)
                    if text != bare
                    else sentence_category
                )
                if category == "Fact" and sentence_category in ("Provisional", "Idea"):
                    category = sentence_category
                if asked:
                    # The assistant's task, not a claim nor the user's open question: a Topic (what the user
                    # brought up: "accessories for my iPhone 13 Pro"; LongMemEval's preference questions are
                    # answered from such turns: without these units its folds fell 1.000 -> 0.983 all@10).
                    category = "Topic"
                if budget is not None and (category not in OTHER_SPEAKER_CATEGORIES or budget <= 0):
                    continue
                key = (category, _key(text))
                if key in index:
                    if t_idx not in index[key].turns:
                        index[key].turns.append(t_idx)
                    continue
                unit = AtomicUnit(category=category, text=text, turns=[t_idx])
                index[key] = unit
                units.append(unit)
                if budget is not None:
                    budget -= 1
    return ExtractUnitsOutput(units=units)


def _postprocess(payload: ExtractUnitsInput, out: ExtractUnitsOutput) -> ExtractUnitsOutput:
    """Turn indexes must exist; a Decision credited to a non-user turn only is demoted to Idea."""
    user_roles = {r.lower() for r in payload.user_roles}
    n = len(payload.turns)
    units = []
    for u in out.units:
        if any(i < 0 or i >= n for i in u.turns):
            raise ValueError(f"unit cites turn outside 0..{n - 1}: {u.turns}")
        if u.category == "Decision" and not any(payload.turns[i].role.lower() in user_roles for i in u.turns):
            u = u.model_copy(update={"category": "Idea"})
        units.append(u)
    if payload.turns and not units and any(t.content.strip() for t in payload.turns):
        # A model that returns nothing for a non-empty session omitted everything: not acceptable.
        heuristic = extract_units_heuristic(payload)
        if heuristic.units:
            raise ValueError("no units extracted from a non-empty session")
    return ExtractUnitsOutput(units=units)


SYSTEM = f"""You extract atomic units from a conversation for a memory vault. This is semantic extraction, not
summarization: find every discrete unit of meaning and render it in minimum viable language.
Rules:
- Each unit is ONE claim, decision, question, constraint, fact, idea or action item, as one declarative sentence
  of {MAX_WORDS} words or fewer (questions stay questions). Never combine units.
- Omit nothing: do not judge importance. Collapse exact repetitions, but drop no idea. Skip only social talk
  (greetings, thanks, the assistant's praise, acknowledgements and offers of help).
- What the user asks the assistant to do or to look up ("Can you refactor worker.py?", "Summarize this", "How do I
  reset my router?") is the assistant's task: a Topic, never a Fact or an OpenQuestion. The user's own open
  questions ("Should I take the offer?") are OpenQuestions.
- Categories: Decision, OpenQuestion, Constraint, Fact, Idea, ActionItem, Topic, Provisional. Use Provisional
  for vague or exploratory ideas: never tighten them into confident claims.
- A Decision is credited only when the user committed to it in the user's own turn; a suggestion from another
  speaker is an Idea.
- Give each unit the index (0-based) of the turn(s) it came from. Keep the text's language (English or Chinese)."""


def _render(p: ExtractUnitsInput) -> str:
    lines = [f"User roles: {', '.join(p.user_roles)}", "Turns:"]
    lines += [f"[{i}] {t.role}: {t.content}" for i, t in enumerate(p.turns)]
    return "\n".join(lines)


EXTRACT_ATOMIC_UNITS: Task[ExtractUnitsInput, ExtractUnitsOutput] = register(
    Task(
        name="extract_atomic_units",
        version=1,
        input_model=ExtractUnitsInput,
        output_model=ExtractUnitsOutput,
        system=SYSTEM,
        render=_render,
        heuristic=extract_units_heuristic,
        postprocess=_postprocess,
        max_tokens=2048,
    )
)
