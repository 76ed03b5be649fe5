"""Source groups and folds for the guard's grouped cross-validation (``memvault bench guard --cv K``).

A *group* is one data set: every text of a group lands on the same side of a split, so a test fold holds only data
sets that the learned parts never saw. The ``source`` field of the eval files names a file of a public repository;
several files are one data set and are merged into one group:

* the same prompts in several languages or splits (XSafety's ``zh/Goal_Hijacking.csv`` and
  ``en/Goal_Hijacking_n.csv``, CyberSecEval's ``prompt_injection.json`` and its machine-translated twin, BIPIA's
  ``text_attack_train`` / ``_test``, deepset's train / test, NotInject one / two / three, garak's DAN versions):
  language folders, split names and version suffixes are dropped from the file's stem;
* ``constructed:<frame> + payload <source> [+ carrier <source>]`` texts wrap the attack text of another source in
  a hand-written frame (authority, temporal, hidden comment, encoding, memory note): they join the group of their
  *payload*, so a payload is never on both sides. The frames themselves are few templates shared by all folds (the
  held-out split uses the same ones); the carrier (benign text around a hidden comment) is not grouped;
* ``a + b`` sources (AgentDojo: an attack template + a task suite) and repositories whose files are one generator
  (AgentDojo, PoisonedRAG) are grouped by repository.

Chat turns are grouped by conversation (LoCoMo) or question haystack (LongMemEval) by their reader.
Folds: groups sorted by size (largest first) go to the fold with the fewest texts so far, deterministically.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence

# Repositories whose files are all one generator: grouped by repository.
BY_REPOSITORY = frozenset({"lindsey98/agentdojo", "sleeepeer/PoisonedRAG"})
_PAYLOAD = re.compile(r"\bpayload\s+(\S+)")
_LANG_DIR = re.compile(r"^[a-z]{2}(?:-[a-z]{2})?$")
_SUFFIX = re.compile(
    r"(?:[_-](?:train|test|dev|n|one|two|three|v\d+|\d+|multilingual|machine|translated))+$", re.IGNORECASE
)


def source_group(source: str) -> str:
    """The data set ``source`` belongs to (see the module docstring)."""
    s = source.strip()
    if s.startswith("constructed:"):
        m = _PAYLOAD.search(s)
        s = m.group(1) if m else s
    s = s.split(" + ")[0].strip()
    repo, _, path = s.partition(":")
    if not path or repo in BY_REPOSITORY:
        return repo
    parts = [p for p in path.split("/") if p and not _LANG_DIR.match(p)]
    stem = re.sub(r"\.[A-Za-z0-9]+$", "", parts[-1]) if parts else path
    parent = parts[-2] if len(parts) >= 2 else ""
    if _SUFFIX.fullmatch("_" + stem):  # 'email/test.jsonl': the folder names the data set
        stem = parent
    while True:
        shorter = _SUFFIX.sub("", stem)
        if shorter == stem or not shorter:
            break
        stem = shorter
    if parent == "dan":  # garak's data/dan/*.json: versions of the same persona prompts
        stem = "dan"
    return f"{repo}:{stem.lower()}"


def assign_folds(groups: Sequence[str], kinds: Sequence[str], k: int) -> list[int]:
    """Fold index (0..k-1) of each text given its group and kind; a group is never split across folds.

    Each kind (attack, benign, chat) is balanced on its own: its groups, largest first, go to the fold with the
    fewest texts of that kind so far.

    A group that holds texts of several kinds (a source with attacks and benign texts) is placed by its first kind
    and keeps one fold for all of them.
    """
    if k < 2:
        raise ValueError("cross-validation needs at least 2 folds")
    fold_of: dict[str, int] = {}
    order: list[str] = []
    for kind in kinds:
        if kind not in order:
            order.append(kind)
    for kind in order:
        pending = [g for g, kd in zip(groups, kinds) if kd == kind and g not in fold_of]
        if not pending:
            continue
        load = [0] * k
        for g, kd in zip(groups, kinds):
            if kd == kind and g in fold_of:
                load[fold_of[g]] += 1
        sizes = Counter(pending)
        for g, n in sorted(sizes.items(), key=lambda kv: (-kv[1], kv[0])):
            f = min(range(k), key=lambda i: (load[i], i))
            fold_of[g] = f
            load[f] += n
    return [fold_of[g] for g in groups]


def groups_on_both_sides(groups: Iterable[str], folds: Iterable[int], test_fold: int) -> set[str]:
    """Groups with texts in the test fold and in the training folds (must be empty)."""
    test: set[str] = set()
    train: set[str] = set()
    for g, f in zip(groups, folds):
        (test if f == test_fold else train).add(g)
    return test & train
