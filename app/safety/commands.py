"""``memvault guard train``: fit the guard's learned parts on the dev split and write their data files.

    memvault guard train --attacks ../shared/eval/injection_attacks_dev.jsonl \\
        --benign ../shared/eval/injection_hard_benign_dev.jsonl \\
        --chat ../shared/eval/locomo_dev.json ../shared/eval/longmemeval_s_dev.json.gz [--embed-cache FILE]

Writes ``app/safety/data/semantic_lr.npz`` and ``app/safety/data/ngram_lr.npz`` (weights and the thresholds fit on
out-of-fold scores, ``app.safety.training``). How well what it fits generalises is ``memvault bench guard --cv K``'s
to say.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def add_commands(sub: argparse._SubParsersAction) -> None:
    guard = sub.add_parser("guard", help="the injection guard's learned parts")
    gsub = guard.add_subparsers(dest="guard", required=True, metavar="ACTION")
    p = gsub.add_parser("train", help="fit the semantic and n-gram detectors on the dev split; write the data files")
    p.add_argument("--attacks", required=True, type=Path, help="JSONL: text, family, source, lang")
    p.add_argument("--benign", required=True, type=Path, help="JSONL of hard benign texts")
    p.add_argument("--chat", action="extend", nargs="+", type=Path, default=[], help="LoCoMo / LongMemEval file(s)")
    p.add_argument("--embed-cache", type=Path, default=None, help="keep the USE vectors in this .npz between runs")
    p.add_argument("--out", type=Path, default=None, help="directory for the data files (default: the package's)")
    p.set_defaults(func=_train)


def _train(args: argparse.Namespace) -> int:
    from app.safety import classifier, semantic
    from app.safety.training import EmbeddingCache, fit_ngram, fit_semantic, load_docs

    docs = load_docs(args.attacks, args.benign, args.chat)
    cache = EmbeddingCache(semantic.embed_batch, args.embed_cache)
    print(f"embedding {len(docs)} texts", file=sys.stderr)
    vectors = cache([d.text for d in docs])
    cache.save()
    everything = list(range(len(docs)))
    model = fit_semantic(docs, vectors, everything, embedder=semantic._use().name)
    out = args.out or semantic.DATA_FILE.parent
    model.save(out / semantic.DATA_FILE.name)
    print(f"wrote {out / semantic.DATA_FILE.name}: thresholds high {model.threshold_high:.4f}, "
          f"medium {model.threshold_medium:.4f}; trained on {model.trained_on}")
    ngram = fit_ngram(docs, everything)
    ngram.save(out / classifier.DATA_FILE.name)
    print(f"wrote {out / classifier.DATA_FILE.name}: thresholds high {ngram.threshold_high:.4f}, "
          f"medium {ngram.threshold_medium:.4f}")
    return 0
