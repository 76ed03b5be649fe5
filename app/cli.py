"""The ``memvault`` command. Each area adds its own sub-commands; heavy imports stay inside handlers."""

from __future__ import annotations

import argparse
import importlib
import sys

from app.errors import MemvaultError

# Modules exposing ``add_commands(subparsers)``; each sets ``func`` (args -> exit code) on its parsers.
_COMMAND_MODULES = (
    "app.db.commands",
    "app.commands",
    "app.models.commands",
    "app.write.commands",
    "app.read.commands",
    "app.interfaces.commands",
    "app.background.commands",
    "app.bench.commands",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="memvault", description="Long-term memory for AI agents.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in _COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:
                continue
            raise
        module.add_commands(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except MemvaultError as exc:
        print(f"memvault: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("memvault: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
