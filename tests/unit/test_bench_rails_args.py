"""The arguments of ``--pipeline rails`` and ``bench latency --read``: what cannot be combined or read is a clear
message before anything runs."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from app.bench import latency, longmemeval


def _parse(add_parser, argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_parser(parser.add_subparsers())
    return parser.parse_args(argv)


def test_longmemeval_rails_takes_no_shared_vault_and_no_tune(tmp_path: Path) -> None:
    path = tmp_path / "lme.json"
    path.write_text(json.dumps([]))
    for extra in (["--shared-vault", "v"], ["--tune", "search.sparse_bm25=false,true"]):
        args = _parse(longmemeval.add_parser, ["longmemeval", str(path), "--pipeline", "rails", *extra])
        with pytest.raises(SystemExit, match="--pipeline rails takes neither --shared-vault nor --tune"):
            args.func(args)


def test_locomo_rails_takes_no_tune_and_no_unknown_encoder(tmp_path: Path) -> None:
    from app.bench import locomo

    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([]))
    args = _parse(locomo.add_parser, ["locomo", str(path), "--pipeline", "rails", "--tune", "search.sparse_b=0.75,0.5"])
    with pytest.raises(SystemExit, match="--pipeline rails takes no --tune"):
        args.func(args)
    args = _parse(locomo.add_parser, ["locomo", str(path), "--pipeline", "rails", "--ref-encoders", "use,bert"])
    with pytest.raises(SystemExit, match="--ref-encoders: unknown reference encoder 'bert'"):
        args.func(args)


def test_rails_is_a_pipeline_and_the_encoders_default_to_the_fast_ones() -> None:
    args = _parse(longmemeval.add_parser, ["longmemeval", "x.json", "--pipeline", "rails"])
    assert args.pipeline == "rails" and args.ref_encoders == "use"
    from app.bench import locomo

    args = _parse(locomo.add_parser, ["locomo", "x.json", "--pipeline", "rails"])
    assert args.ref_encoders == "use,e5-onnx,minilm-onnx"


@pytest.mark.parametrize(("value", "message"), [
    ("search.nope=1", "ReadConfig has no 'search.nope'"),
    ("search.sparse_bm25=true,false", "--read takes one value"),
    ("search.sparse_bm25=maybe", "is not a boolean"),
])
def test_latency_read_setting_is_checked_before_anything_runs(value: str, message: str) -> None:
    args = _parse(latency.add_parser, ["latency", "--memories", "10", "--read", value])
    with pytest.raises(SystemExit, match=message):
        args.func(args)
