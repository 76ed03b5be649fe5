"""The read-time sanitizer's verdict on a stored text, kept with its block (memvault.block_read_verdict,
sql/incremental/030-block-read-verdict.sql) for the rules it was judged under.

A text is *clean* when the read-time sanitizer (app/read/sanitize.py) would let it out as it is: AgentDirective
does not read it as an order to the agent, and the write ruleset's ``sanitize`` redacts nothing of it. A recall
given a clean verdict for a block's content under :data:`RULES` skips both (~0.85 ms of process CPU a recall at
100k memories, most of its texts new to the process: docs/recall-cpu.md); any other text, or a verdict of other
rules, goes through the rules again, and their new verdict is stored with the recall's log.

:data:`RULES` names the rules: ``RULESET_VERSION`` and a digest of the code and data the verdict depends on (the
modules of app/safety that the ruleset and AgentDirective load, :data:`RULE_MODULES`, and the learned detectors'
weights in app/safety/data), so a verdict is never reused under rules that changed, bumped version or not
(tests/unit/test_read_verdict_rules.py checks that the list is what they load).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from app.safety import directive
from app.safety.ruleset import RULESET_VERSION, sanitize

# What app.safety.ruleset and app.safety.directive import of app/safety (and so what a verdict depends on).
RULE_MODULES = ("__init__", "classifier", "cues", "directive", "encoding", "hidden", "rule", "rules_en", "rules_i18n",
                "ruleset", "semantic", "structure", "textfold")


def _rules_digest(root: Path) -> str:
    h = hashlib.sha256()
    paths = [root / f"{m}.py" for m in RULE_MODULES] + sorted(p for p in (root / "data").rglob("*") if p.is_file())
    for path in paths:
        h.update(str(path.relative_to(root)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


RULES = f"{RULESET_VERSION}:{_rules_digest(Path(__file__).parent)}"


def is_clean(text: str) -> bool:
    """The sanitizer's verdict on ``text``: let out as it is (no directive, nothing redacted)."""
    return not directive.judge(text).directive and not sanitize(text).hits


def text_sha256(text: str) -> bytes:
    """The digest a verdict is kept with (SQL's ``sha256(convert_to(content, 'UTF8'))``)."""
    return hashlib.sha256(text.encode("utf-8")).digest()
