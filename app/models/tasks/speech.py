"""Speech acts that carry no memory of the user's world, for the write track's heuristics (EN, ZH, ES, FR, DE, PT, IT).

* :func:`social`: a turn (an assistant's, typically) that only reacts: greets, thanks, praises what the user just
  said, acknowledges, congratulates, wishes luck, offers more help ("Pixel is a lovely name!", "Happy to help!",
  "恭喜你搬家！", "¡Qué bonita ciudad!"). Each sentence is read as words of three kinds: social words (a lexicon
  of reactions: praise, thanks, greetings, wishes, offers), words that echo the turn it answers (the user named
  Pixel; the reply calling Pixel lovely adds nothing), and function words. A sentence is social when it has a
  social word and at most :data:`MAX_NEW_WORDS` words of any other kind, and no digit (a number is information);
  a turn is social when every sentence is. "Kittens that age need three to four small meals a day" is not.
* :func:`request`: a sentence that asks the assistant to do something ("Can you refactor checkout/worker.py?",
  "Summarize this.", "帮我写一张贺卡", "¿Puedes preparar un examen?", "Peux-tu m'écrire un message ?"): a
  modal question put to "you", or an imperative (the sentence opens with a task verb, after "please" / "now" /
  "ok"), or "I want / need / would like you to". Its content is the assistant's task, not the user's world: no
  Fact and no OpenQuestion is made of it, at most a Topic (what the user brought up).
* :func:`info_question`: a question put to the assistant for information ("How do I set up a language server?",
  "What's the difference between X and Y?"): a request of its own kind. Other questions stay OpenQuestions: the
  user's open issues ("What about handwriting on the receipts?") and deliberations (:func:`deliberation`:
  "Should I take the job in Denver?", "我该不该换工作？").
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from app.models.tasks.cue_filter import absent, literal_screen
from app.models.tasks.text import CJK_RE, EN_STOPWORDS, ZH_STOPCHARS, stem

# Words of reaction, in the languages the vault's users write (lower case, no accents). A social sentence needs one
# of these or a SOCIAL_PHRASES match: praise, thanks, greetings, congratulations, wishes.
SOCIAL_WORDS = frozenset("""
    thanks thank thx appreciate appreciated welcome pleasure happy glad delighted sorry congrats congratulations
    congratulate luck cheers bye goodbye hello hi hey lovely great nice wonderful fantastic amazing awesome
    excellent beautiful cute adorable gorgeous brilliant perfect cool fun exciting excited impressive impressed
    incredible solid smart wise thoughtful important interesting fascinating inspiring noted understood enjoy
    gracias encantado encantada enhorabuena felicidades felicitaciones suerte animo hola genial bonito bonita
    bonitos precioso preciosa maravilloso maravillosa estupendo estupenda fantastico increible excelente perfecto
    interesante merci bienvenue bienvenu felicitations bravo bonjour bonsoir salut beau belle bel magnifique superbe
    super formidable parfait joli jolie adorable danke willkommen gluckwunsch hallo schon toll prima wunderbar klasse
    grossartig obrigado obrigada parabens otimo legal grazie complimenti bello bella ottimo auguri
""".split())
# Words that go with a reaction without saying anything of their own ("Good morning", "happy to help", "a great
# choice", "a big milestone"): never new words, but not social on their own ("You could try the night tour").
REACTION_WORDS = frozenset("""
    morning evening afternoon night day today wish wishes hope fun sweet neat good best fine well big huge sounds
    sound looks look seems choice decision idea setup approach move milestone help helping assist anytime anything
    else questions question know let feel free reach course sure definitely absolutely certainly dedication effort
    mind keep keeping share sharing asking ask update doing hear hearing step news tool name city place role change
    buenas buenos dias noches tardes gusto ayudar ayudarte ayudo ayuda placer claro vale tag morgen abend guten
    gesund gesunden klingt klingen helfen hilfe viel erfolg courage chance aider aide plaisir herzlichen dank
""".split())
SOCIAL_PHRASES = re.compile(
    r"\b(?:let me know|feel free|happy to help|glad to help|here to help|hope (?:this|that|it) helps|good luck|"
    r"good to know|you'?re (?:very )?welcome|my pleasure|take care|have a (?:great|good|nice|lovely) \w+|"
    r"any other questions|anything else|how can i help|what can i do for you|how are you|how about you|"
    r"good (?:morning|night|evening|afternoon)|en qu[eé] (?:puedo ayudarte|te ayudo|le ayudo)|buen(?:as|os) "
    r"(?:noches|d[ií]as|tardes)|guten (?:tag|morgen|abend)|wie kann ich|puis-je vous aider|muy bien|well done|"
    r"que tal|how'?s it going|what'?s up|wie geht'?s|(?:comment )?ca va)\b",
    re.I,
)
_SOCIAL_PHRASES_NEED = literal_screen((SOCIAL_PHRASES.pattern,))
# Function words beyond English: articles, pronouns, prepositions, auxiliaries, intensifiers.
FUNCTION_WORDS = frozenset("""
    whole such quite so very really too much what how that's it's you've you're your yours you
    el la los las un una unos unas de del al a en y o que qué como cómo muy tan mucho mucha es son eres está estás
    esta este eso lo le les me te se mi mis tu tus su sus con por para sin ser estar hay nuevo nueva nuevos
    le la les un une des du de d l à au aux et ou que qu quel quelle quels comme très tres si c ce cet cette est es
    sont suis je j tu il elle nous vous ils elles pour avec sur dans en pas ne y lui leur
    der die das den dem des ein eine einen einem einer und oder wie was so sehr ist sind bin bist ich du er sie es
    wir ihr ihnen mit nach fur für auf zu zum zur von im in an kann
    o os um uma e é muito que com para por eu voce você il lo gli una di da e che molto per con sono sei
""".split())
# Characters of Chinese / Japanese reactions (praise, thanks, wishes, greetings, offers).
SOCIAL_ZH = re.compile(
    "谢谢|謝謝|感谢|感謝|不客气|不客氣|恭喜|祝贺|祝賀|祝你|祝您|加油|欢迎|歡迎|辛苦|太好了|真好|真棒|很棒|好棒|不错|不錯|厉害|厲害|"
    "可爱|可愛|漂亮|美丽|美麗|优秀|優秀|精彩|了不起|羡慕|羨慕|开心|開心|高兴|高興|听起来|聽起來|看起来|看起來|"
    "你好|您好|早上好|晚上好|早安|晚安|再见|再見|帮你|幫你|帮忙|幫忙|效劳|效勞|随时|隨時|好的|没问题|沒問題|"
    "聊|棒|好|美|赞|讚|哇|呢|啊|呀|吧|哦|喔|嗯|真|太|很|挺|超|的确|確實|确实|什么|什麼|今天|一下|想|可以|能|有|个|個"
)
MAX_NEW_WORDS = 2  # words a social sentence may have that are neither social, echoed nor function words
_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?", re.UNICODE)
_DIGIT = re.compile(r"\d")
_SENTENCE = re.compile(r"(?<=[.!?。！？])\s*|[;；]\s*|\n+")


@lru_cache(maxsize=1 << 16)  # pure; a close folds the same words over and over (every sentence's echo)
def _fold(word: str) -> str:
    """Lower case without accents ("Glückwunsch" -> "gluckwunsch", "ánimo" -> "animo")."""
    if word.isascii():  # NFKD leaves ASCII as it is, with no combining mark: most words, in C
        return word.lower()
    return "".join(c for c in unicodedata.normalize("NFKD", word.lower()) if not unicodedata.combining(c))


@lru_cache(maxsize=1 << 16)
def _root(word: str) -> str:
    """A cheap cross-language stem: the English stem, cut to five letters ("profesora" ~ "profesión")."""
    return stem(word)[:5]


def _words(text: str) -> list[str]:
    return [_fold(w).replace("’", "'") for w in _WORD.findall(text) if not CJK_RE.search(w)]


def sentences(text: str) -> list[str]:
    return [s for s in (p.strip() for p in _SENTENCE.split(text)) if s]


def social_sentence(sentence: str, echo: str = "", max_new: int = MAX_NEW_WORDS) -> bool:
    """Only a reaction: a social word and at most ``max_new`` new words (none of them a number); Chinese at most
    ``max_new`` + 1 new characters."""
    if _DIGIT.search(sentence):
        return False
    cjk = "".join(CJK_RE.findall(sentence))
    social = False
    if cjk:
        echoed = set(CJK_RE.findall(echo))
        rest = SOCIAL_ZH.sub(" ", "".join(ch for ch in sentence if CJK_RE.match(ch) or ch.isspace()))
        social = len(rest.replace(" ", "")) < len(cjk)
        new = [ch for ch in rest if CJK_RE.match(ch) and ch not in echoed and ch not in ZH_STOPCHARS]
        if len(new) > max_new + 1:
            return False
    n = _new_words(sentence, echo)
    return (social or n < 0) and (-1 - n if n < 0 else n) <= max_new


@lru_cache(maxsize=256)
def _echo_roots(echo: str) -> frozenset[str]:
    """The roots of the words of ``echo``: one set per echoed text, not one per sentence that answers it (an
    assistant's answer of 40 sentences asked it 40 times of the same user turn at a session's close)."""
    return frozenset(_root(w) for w in _words(echo))


def _new_words(sentence: str, echo: str) -> int:
    """How many words of ``sentence`` are neither social, reaction, function nor echoed words; negative when one
    of them is social (-1 - that count)."""
    echoed_roots = _echo_roots(echo)
    folded = _fold(sentence).replace("’", "'")
    if absent(_SOCIAL_PHRASES_NEED, folded):  # most sentences: no phrase can match (cue_filter.py)
        social, rest = False, folded
    else:
        social, rest = bool(SOCIAL_PHRASES.search(folded)), SOCIAL_PHRASES.sub(" ", folded)
    new_words = 0
    for w in _words(rest):
        bare = w.split("'")[0] if "'" in w and w not in EN_STOPWORDS else w
        if w in SOCIAL_WORDS or bare in SOCIAL_WORDS or stem(bare) in SOCIAL_WORDS:
            social = True
        elif (w in EN_STOPWORDS or bare in EN_STOPWORDS or w in FUNCTION_WORDS or bare in REACTION_WORDS
              or stem(bare) in REACTION_WORDS or _root(bare) in echoed_roots):
            continue
        else:
            new_words += 1
    return -1 - new_words if social else new_words


def social(text: str, echo: str = "") -> bool:
    """``text`` only reacts: a sentence of it is social (see :func:`social_sentence`) and every other one says
    nothing new ("Good morning! What's on your mind today?"); ``echo``: the turn it answers."""
    parts = sentences(text)
    return (any(social_sentence(s, echo) for s in parts)
            and all(social_sentence(s, echo) or _new_words(s, echo) == 0 for s in parts))


# --- requests ----------------------------------------------------------------------------------------------------

# Verbs that open an imperative addressed to an assistant (the base form; EN), and their ES / FR / DE / PT / IT
# imperatives, and Chinese task verbs. Not "remind me" / "don't forget": those name the user's own task.
_TASK_VERBS_EN = (
    "write|rewrite|draft|summarize|summarise|explain|translate|refactor|fix|debug|review|check|proofread|edit|list|"
    "give|show|tell|find|search|look up|suggest|recommend|plan|create|make|generate|build|design|compose|outline|"
    "describe|compare|convert|calculate|compute|estimate|analyze|analyse|help|teach|simplify|shorten|expand|format|"
    "add|remove|rename|implement|optimize|optimise|update|improve|prepare|organize|organise|sort|schedule|book|"
    "draw|sketch|brainstorm|name|pick|choose|answer|solve|continue|elaborate|clarify|define|quiz|test|act|pretend|"
    "imagine|turn|put|send|tell|walk|guide|share|provide|produce|come up"
)
_REQUEST_EN = re.compile(
    rf"^(?:(?:ok(?:ay)?|now|so|and|also|then|next|please|pls|hey|alright|great|thanks)[,!]?\s+)*"
    rf"(?:please\s+)?(?:(?:{_TASK_VERBS_EN})\b(?!\s+(?:\S+\s+)?(?:is|are|was|were|'s)\b)"
    rf"|(?:can|could|would|will|won't|wouldn't)\s+you\b(?!\s+(?:believe|imagine)\b)"
    rf"|(?:i|we)(?:'d| would| want| need|'m asking| am asking) (?:like )?(?:you|for you) to\b"
    rf"|do you mind\b|would you mind\b|is it possible (?:for you )?to\b|help me\b|let'?s (?:write|draft|plan|make))",
    re.I,
)
_REQUEST_ES = re.compile(
    r"^¿?\s*(?:por favor,?\s+)?(?:(?:me\s+)?(?:puedes|podrías|podrias|puede|podría|podria|podéis|podeis)\b|"
    r"(?:quiero|necesito|quisiera) que (?:me\s+)?\w+|"
    r"(?:resume|resúmeme|explica|explícame|explicame|escribe|escríbeme|escribeme|redacta|dame|dime|traduce|tradúceme|"
    r"prepara|prepárame|haz|hazme|busca|búscame|recomienda|recomiéndame|sugiere|sugiéreme|ayúdame|ayudame|revisa|"
    r"corrige|calcula|compara|enséñame|muéstrame|muestrame|cuéntame|cuentame|genera|crea|planifica|organiza|"
    r"enumera|lista|dibuja)\b)",
    re.I,
)
_REQUEST_FR = re.compile(
    r"^(?:s'il te plaît,?\s+|s'il vous plaît,?\s+)?(?:(?:peux|pourrais|pouvez|pourriez)[- ](?:tu|vous)\b|"
    r"(?:je voudrais|j'aimerais|je veux) que (?:tu|vous)\b|"
    r"(?:écris|ecris|écrivez|ecrivez|résume|resume|résumez|resumez|explique|expliquez|donne|donnez|traduis|"
    r"traduisez|fais|faites|trouve|trouvez|propose|proposez|recommande|recommandez|aide|aidez|dis|dites|montre|"
    r"montrez|prépare|prepare|préparez|rédige|redige|rédigez|corrige|corrigez|calcule|calculez|compare|comparez|"
    r"liste|listez|génère|genere|crée|cree|planifie|organise)(?:-moi|-nous|-le|-la|-les)?\b)",
    re.I,
)
_REQUEST_DE = re.compile(
    r"^(?:bitte\s+)?(?:(?:kannst|könntest|konntest|können|konnen|könnten|konnten|würdest|wurdest)\s+(?:du|sie)\b|"
    r"(?:schreib|schreibe|schreiben sie|fass|fasse|erklär|erkläre|erklar|erklare|gib|übersetz|übersetze|ubersetze|"
    r"mach|mache|finde|hilf|nenne|nenn|zeig|zeige|empfiehl|plane|erstelle|korrigiere|berechne|vergleiche|liste|"
    r"prüfe|prufe|formuliere|entwirf)\b)",
    re.I,
)
_REQUEST_PT_IT = re.compile(
    r"^(?:(?:você|voce|tu) (?:pode|poderia|podes)\b|(?:puoi|potresti|può|puo|potrebbe)\b|"
    r"(?:escreva|resuma|explique|traduza|me dê|recomende|scrivi|riassumi|spiega|traduci|dammi|consiglia)\b)",
    re.I,
)
_REQUEST_ZH = re.compile(
    r"^(?:请|請|麻烦|麻煩|劳驾|勞駕)|^(?:能|可以|能不能|可不可以)?(?:帮我|幫我|帮忙|幫忙|给我|給我|替我|为我|為我)|"
    r"^(?:你|您)(?:能|可以|能不能|可不可以|会不会|會不會|是否能)|"
    r"^(?:写|寫|总结|總結|概括|翻译|翻譯|推荐|推薦|解释|解釋|列出|列举|列舉|告诉我|告訴我|生成|整理|规划|規劃|计算|計算|"
    r"比较|比較|修改|改写|改寫|检查|檢查|分析|设计|設計|介绍|介紹)"
)
_LEAD = re.compile(r"^[\s\"'“‘(¿¡-]+")


def request(sentence: str) -> bool:
    """The sentence asks the assistant to do something (see the module's docstring)."""
    s = _LEAD.sub("", sentence.strip())
    return any(rx.search(s) for rx in (_REQUEST_EN, _REQUEST_ES, _REQUEST_FR, _REQUEST_DE, _REQUEST_PT_IT,
                                       _REQUEST_ZH))


# Questions put to the assistant for information: how-to, definitions, differences, recommendations, "is there a
# way". Other questions stay OpenQuestions (seed 003): "What about handwriting on the paper receipts?" is the user's
# open issue, not a lookup.
_INFO_QUESTION = re.compile(
    r"^(?:so |and |ok(?:ay)?,? |also,? )?(?:"
    r"how (?:do|can|could|should|would|to) (?:i|we|you|one)?\b|how to\b|"
    r"what(?:'s| is| are| were)? (?:the |a |some )?(?:difference|differences|best|good|better|easiest|fastest|"
    r"quickest|simplest|right way|proper way|meaning|definition)\b|"
    r"what (?:does|do) [\w\s'-]{1,40} mean\b|what(?:'s| is) (?:a|an) [\w-]+\??$|"
    r"(?:is|are) there (?:a|an|any) (?:way|tool|app|library|trick|shortcut|command|option)\b|"
    r"where (?:can|do|should) (?:i|we) (?:find|get|buy|download|learn)\b|"
    r"which [\w\s-]{0,30}(?:should|would|do) (?:i|we|you) (?:use|recommend|suggest|pick|choose)\b|"
    r"do you know\b|any (?:tips|ideas|suggestions|recommendations|advice)\b|"
    r"¿?\s*(?:cómo|como) (?:puedo|podemos|se|hago|hacer)\b|¿?\s*(?:qué|que) diferencia\b|¿?\s*cuál es la diferencia\b|"
    r"comment (?:faire|puis-je|peut-on|est-ce qu)\b|quelle est la différence\b|"
    r"wie (?:kann|mache|macht|funktioniert)\b|was ist der unterschied\b)"
    r"|^(?:我)?(?:该|應該|应该)?(?:怎么|怎麼|怎样|怎樣|如何)|^什么是|^什麼是|(?:有什么|有什麼|有没有|有沒有).{0,8}(?:推荐|推薦|建议|建議)",
    re.I,
)


def info_question(sentence: str) -> bool:
    """A question put to the assistant for information ("How do I set up a language server?", "What's the
    difference between spiccato and sautillé?", "怎么把笔记同步到手机？")."""
    return bool(_INFO_QUESTION.search(_LEAD.sub("", sentence.strip())))


_DELIBERATION = re.compile(
    r"^(?:should|shall|must) (?:i|we)\b(?! (?:do|use|call|run|write|say|ask|set|type|install|fix)\b)|"
    r"^(?:am i|are we) (?:making|doing) the right\b|\bi wonder (?:if|whether)\b|"
    r"\bi(?:'m| am) not sure (?:if|whether)\b|"
    r"^¿?\s*(?:debería|deberia|deberíamos|deberiamos)\b|^(?:devrais|devrions|dois)[- ](?:je|nous)\b|"
    r"^(?:soll|sollte|sollten) (?:ich|wir)\b|^我(?:该不该|應不應該|应不应该|要不要|該|该|應該|应该)",
    re.I,
)


def deliberation(sentence: str) -> bool:
    """The user's own open question about their life or work ("Should I take the offer?")."""
    return bool(_DELIBERATION.search(_LEAD.sub("", sentence.strip())))
