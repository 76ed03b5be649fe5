"""``AssistantChatter``: an assistant's turn that only reacts to the user is not stored as a memory.

The noise gate (G1) reads a text alone; whether "Pixel is a lovely name!" says anything depends on the turn it
answers (the user named the kitten Pixel: the reply adds nothing). This check reads the assistant's turn with that
turn (the chunk's context) and rejects it when every sentence is a reaction: greetings, thanks, praise of what the
user said, acknowledgements, congratulations, offers of more help (app/models/tasks/speech.py). The turn stays in the
session's archive; its chunk is not written. The user's own turns are never judged this way (a user's "Great, the
flight is at 7" is a fact; a bare "thanks!" is G1's).
"""

from __future__ import annotations

from app.models.tasks.speech import social
from app.safety.gate import GateResult

GATE = "noise"
RULE = "noise.assistant_chatter"
ROLES = frozenset({"assistant"})


class AssistantChatter:
    """``AssistantChatter()(text, answered) -> GateResult``; ``answered``: the end of the turn it replies to."""

    def __call__(self, text: str, answered: str | None) -> GateResult:
        if social(text, answered or ""):
            return GateResult.reject(GATE, RULE, "noise", "the assistant only reacts to the user's turn "
                                                          f"(praise, thanks, an offer): {text[:40]!r}")
        return GateResult.ok(GATE)
