"""No state outside the composition root (issue 33, item 4): every cache, breaker, counter and model is owned by a
``Services`` (app/services.py) and passed explicitly. This scan of app/ fails on a new process-wide singleton:

- a module-level name bound to a mutable value (a dict, list or set, a lock, a container call, an instance of a
  class of ours), unless it is a constant: an UPPER_CASE name that no code in its module ever mutates;
- a class-level mutable attribute (``_cache = {}`` on a class), except the framework configuration Litestar reads
  (``tags``, ``opt``, ``guards``, ``exception_handlers``), exception ``headers`` and Pydantic field defaults
  (copied per instance), none of them mutated;
- a ``global`` statement (a module name rebound at run time);
- a memoizing decorator (``functools.cache`` / ``lru_cache``): a process-wide cache.

What stays is listed below with the reason it is no state: each entry is ``module:name``. An entry no longer
found fails too, so the list shrinks with the code."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

APP = Path(__file__).resolve().parents[2] / "app"

MUTABLE_CALLS = {"dict", "list", "set", "bytearray", "defaultdict", "OrderedDict", "Counter", "deque", "ChainMap",
                 "WeakValueDictionary", "WeakKeyDictionary", "WeakSet", "Lock", "RLock", "Event", "Semaphore",
                 "Condition", "Queue", "local", "ContextVar"}
MUTATORS = {"append", "extend", "insert", "pop", "popitem", "remove", "clear", "update", "setdefault", "add",
            "discard", "sort", "reverse", "appendleft", "popleft", "move_to_end", "__setitem__"}
# Classes whose instances never change once made (or are declarations, not values).
IMMUTABLE_TYPES = {
    "TypeVar", "Path", "Field", "Parameter", "Body", "Example", "ConfigDict", "SettingsConfigDict",
    "Table", "Column", "MetaData", "DateTime",  # SQLAlchemy declarations of the schema (migrations read them)
    "ScoringConfig", "GateResult", "MirrorConfig",  # frozen dataclasses
    "PasswordHasher",  # argon2 parameters
}
# Class attributes a framework reads as configuration.
FRAMEWORK_ATTRIBUTES = {"tags", "opt", "guards", "exception_handlers", "headers"}

ALLOWED = {
    "app.auth:_decoy_hash": "one argon2 hash of a constant, computed once (the same value every time)",
    # Code tables, filled at import and never after.
    "app.models.tasks.base:_REGISTRY": "each LLM task module registers its Task (frozen) at import, never later",
    "app.worker.app:app": "Procrastinate's App: the task table, filled at import; connectors are swapped per "
                          "worker by replace_connector",
    "app.db.queries:Q": "a stateless view of queries(): attribute access only",
    "app.db.queries:queries": "sql/queries.sql parsed once: the package's own file, never changed at run time",
    "app.settings:get_settings": "the environment read once (STYLE: settings read in one place and cached)",
    "app.db.connector:current_actor": "a ContextVar: each task sees its own value, nothing is shared",
    "app.write.screen_process:_CHILD": "set once, by the pool initializer, inside the bulk path's spawned screening "
                                       "child only (its one Screen); never in the service's own process",
    # Pure functions memoized: the value depends only on the argument, and is immutable.
    "app.read.sanitize:_sanitized": "pure: text -> SanitizeResult (frozen)",
    "app.safety.directive:judge": "pure: text -> Directive (frozen)",
    "app.safety.ruleset:_scan_all": "pure: text -> tuple of frozen RuleHits",
    "app.safety.ruleset:_scan": "pure: (text, depth) -> tuple of frozen RuleHits",
    "app.models.tasks.text:_has_any": "pure: (text, cues) -> tuple of the cues found",
    "app.models.tasks.resolve_conflict:_triples": "pure: text -> tuple of its heuristic triples (NamedTuples)",
    "app.models.tasks.text:_cue_patterns": "pure: cues -> their compiled patterns (re's own cache, per list)",
    "app.models.tasks.text:stem": "pure: word -> its stem (a str)",
    "app.models.tasks.cue_filter:_comparable": "pure: a character -> a bool",
    "app.models.tasks.speech:_fold": "pure: text -> it lower-cased without accents (a str)",
    "app.models.tasks.speech:_root": "pure: word -> its cross-language root (a str)",
    "app.models.tasks.speech:_echo_roots": "pure: text -> the frozenset of its words' roots",
    # Read-only data and code shipped with the package, loaded once.
    "app.safety.classifier:load": "the shipped injection classifier's weights, read-only",
    "app.safety.semantic:load": "the shipped semantic detector's centroids, read-only",
    "app.safety.semantic:_use": "the guard's own USE model for its shipped detector (read-only weights; no "
                                "breaker, no counters)",
    "app.safety.ruleset:_CUES": "an Aho-Corasick automaton of the shipped rules' cues, built once, only read",
    "app.background.normalize:_DATES": "the date rules, compiled once, only read",
    "app.write.normalize.temporal:_CN_WEEKDAYS": "a table completed at import (|=), only read after",
    "app.write.timing:NO_CLOCK": "a clock that records nothing: no attributes at all",
    "app.read.formatter:_encoding": "the cl100k tokenizer table, read-only",
    "app.write.mirror:_gemm": "the shipped ONNX graph of one matrix product, read-only",
    "app.write.mirror:_faiss": "the faiss module, imported once",
    "app.bench.corpus:corpus": "the benchmark's synthetic corpus (a tuple), generated once",
    "app.bench.metrics:_encoding": "the cl100k tokenizer table, read-only",
}


def _modules() -> Iterator[tuple[str, ast.Module]]:
    for path in sorted(APP.rglob("*.py")):
        name = ".".join(path.relative_to(APP.parent).with_suffix("").parts).removesuffix(".__init__")
        yield name, ast.parse(path.read_text(encoding="utf-8"))


def _called(node: ast.Call) -> str | None:
    f = node.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None


def _mutable(value: ast.expr | None) -> bool:
    if isinstance(value, (ast.Dict, ast.List, ast.Set, ast.DictComp, ast.ListComp, ast.SetComp)):
        return True
    if isinstance(value, ast.Call) and (name := _called(value)):
        bare = name.lstrip("_")
        return name in MUTABLE_CALLS or (bare[:1].isupper() and name not in IMMUTABLE_TYPES)
    return False


def _mutated_names(tree: ast.AST) -> set[str]:
    """Names (and ``self.x`` / ``cls.x`` attributes, as ``.x``) changed in place somewhere in ``tree``."""
    out: set[str] = set()

    def base(node: ast.expr) -> str | None:
        if isinstance(node, ast.Name):
            return node.id
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in {"self", "cls"}:
            return "." + node.attr
        return None

    for node in ast.walk(tree):
        targets: list[ast.expr] = []
        if isinstance(node, (ast.Assign, ast.Delete)):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        for t in targets:
            if isinstance(t, ast.Subscript) and (b := base(t.value)):
                out.add(b)
            if isinstance(node, ast.AugAssign) and (b := base(t)):
                out.add(b)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in MUTATORS:
            if b := base(node.func.value):
                out.add(b)
        if isinstance(node, ast.Global):
            out.update(node.names)
    return out


def _assigned(node: ast.stmt) -> list[tuple[str, ast.expr | None]]:
    if isinstance(node, ast.Assign):
        return [(ast.unparse(t), node.value) for t in node.targets]
    if isinstance(node, ast.AnnAssign):
        return [(ast.unparse(node.target), node.value)]
    return []


def singletons() -> dict[str, str]:
    """``module:name`` -> why the scan counts it as process-wide state."""
    found: dict[str, str] = {}
    for module, tree in _modules():
        mutated = _mutated_names(tree)
        for node in tree.body:
            for name, value in _assigned(node):
                if name == "__all__" or not _mutable(value):
                    continue
                # a literal table named as a constant is one, if nothing changes it; a call's result never is
                constant = name.lstrip("_").isupper() and not isinstance(value, ast.Call)
                if not constant or name in mutated:
                    found[f"{module}:{name}"] = "module-level mutable value" + (" (mutated)" if name in mutated else "")
            if isinstance(node, ast.ClassDef):
                for item in node.body:
                    for name, value in _assigned(item):
                        if not _mutable(value):
                            continue
                        pydantic_default = (any(ast.unparse(b).endswith("BaseModel") for b in node.bases)
                                            and isinstance(value, (ast.List, ast.Dict)))  # copied per instance
                        if (name in FRAMEWORK_ATTRIBUTES or pydantic_default) and "." + name not in mutated:
                            continue
                        found[f"{module}:{node.name}.{name}"] = "class-level mutable attribute"
        for node in ast.walk(tree):
            if isinstance(node, ast.Global):
                for name in node.names:
                    found[f"{module}:{name}"] = "rebound with `global`"
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for d in node.decorator_list:
                    if (_called(d) if isinstance(d, ast.Call) else ast.unparse(d).rpartition(".")[2]) in {
                            "cache", "lru_cache"}:
                        found[f"{module}:{node.name}"] = "a memoizing decorator: a process-wide cache"
    return found


def test_no_new_process_wide_singleton() -> None:
    new = {k: why for k, why in singletons().items() if k not in ALLOWED}
    assert not new, ("state outside the composition root: own it in Services (app/services.py) and pass it, or, "
                     f"if it truly never changes, list it in ALLOWED with the reason: {new}")


def test_the_allowlist_names_only_what_exists() -> None:
    gone = sorted(set(ALLOWED) - set(singletons()))
    assert not gone, f"no longer found (remove from ALLOWED): {gone}"


def test_the_scan_finds_the_kinds_of_singleton_it_forbids() -> None:
    """The scan itself, on code written to be caught (a test that cannot fail is a defect)."""
    source = '''
from functools import lru_cache
import threading
_registry = {}
COUNTS = {}
LOCK = threading.Lock()
TABLE = {"a": 1}
_services = None
class Index:
    _cache: dict = {}
    tags = ["x"]
class Model(BaseModel):
    aliases: list = []
def bind(s):
    global _services
    _services = s
def count(name):
    COUNTS[name] = COUNTS.get(name, 0) + 1
@lru_cache(maxsize=1)
def model():
    return object()
'''
    tree = ast.parse(source)
    mutated = _mutated_names(tree)
    assert {"COUNTS", "_services"} <= mutated and "TABLE" not in mutated
    import tests.unit.test_no_singletons as me

    original = me._modules
    me._modules = lambda: iter([("app.fake", tree)])
    try:
        found = singletons()
    finally:
        me._modules = original
    assert set(found) == {"app.fake:_registry", "app.fake:COUNTS", "app.fake:LOCK", "app.fake:Index._cache",
                          "app.fake:_services", "app.fake:model"}, found
