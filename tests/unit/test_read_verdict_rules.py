"""A stored read verdict names the rules it was judged under (app.safety.verdict.RULES): the digest must cover
every module of app/safety that the read-time sanitizer's rules load, or a changed rule would reuse old verdicts."""

from __future__ import annotations

import subprocess
import sys

from app.safety import verdict


def test_the_digest_covers_every_module_the_rules_load() -> None:
    code = ("import sys, app.safety.ruleset, app.safety.directive; "
            "print(' '.join(sorted(n for n in sys.modules if n == 'app.safety' or n.startswith('app.safety.'))))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    expected = {"app.safety" if m == "__init__" else f"app.safety.{m}" for m in verdict.RULE_MODULES}
    assert set(loaded) == expected


def test_the_rules_name_their_version_and_change_with_their_code(tmp_path) -> None:
    assert verdict.RULES.startswith(verdict.RULESET_VERSION + ":")
    root = tmp_path / "safety"
    (root / "data").mkdir(parents=True)
    for m in verdict.RULE_MODULES:
        (root / f"{m}.py").write_text(f"# {m}\n")
    (root / "data" / "w.npz").write_bytes(b"weights")
    before = verdict._rules_digest(root)
    (root / "ruleset.py").write_text("# ruleset, one rule more\n")
    assert verdict._rules_digest(root) != before
