"""The ``memvault`` command. Each area adds its own sub-commands; heavy imports stay inside handlers.

Exit codes, the same for every sub-command (a script can rely on them; ``memvault --help`` lists them):
0 done; 1 a failure that is not the caller's (database error, model failure, a bug); 2 bad usage or input (argparse's
own code, and InvalidInput); 3 not found (vault, memory, session); 4 conflict (already exists, already closed, a
port in use); 5 the database is unavailable; 130 interrupted. Errors go to stderr as ``memvault: what happened`` and a
``hint:`` line that says what to do. (``memvault hook`` always exits 1 on failure: Claude Code would block the
prompt on 2.)"""

from __future__ import annotations

import argparse
import sys

from app.errors import Conflict, DatabaseUnavailable, InvalidInput, MemvaultError, NotFound, PayloadTooLarge

EXIT_OK, EXIT_FAILURE, EXIT_USAGE, EXIT_NOT_FOUND, EXIT_CONFLICT, EXIT_UNAVAILABLE, EXIT_INTERRUPTED = (
    0, 1, 2, 3, 4, 5, 130)
_EXIT_BY_ERROR = ((InvalidInput, EXIT_USAGE), (PayloadTooLarge, EXIT_USAGE), (NotFound, EXIT_NOT_FOUND),
                  (Conflict, EXIT_CONFLICT), (DatabaseUnavailable, EXIT_UNAVAILABLE))
EPILOG = ("exit codes: 0 done, 1 failure (not the caller's), 2 bad usage or input, 3 not found, 4 conflict, "
          "5 database unavailable, 130 interrupted")


def exit_code(exc: MemvaultError) -> int:
    return next((code for cls, code in _EXIT_BY_ERROR if isinstance(exc, cls)), EXIT_FAILURE)


# Each exposes ``add_commands(subparsers)`` and sets ``func`` (args -> exit code) on its parsers; a new area's
# commands module is one import and one entry in build_parser (a missing one is an ImportError, never skipped).
# The imports are inside the functions so the agent-facing commands (``mcp``, ``hook``: a process per prompt)
# import only their own module, not the benchmarks'.
_AGENT_COMMANDS = ("mcp", "hook")


def build_parser() -> argparse.ArgumentParser:
    from app import commands, keys_commands
    from app.background import commands as background_commands
    from app.bench import commands as bench_commands
    from app.db import commands as db_commands
    from app.importers import commands as importers_commands
    from app.interfaces import commands as interfaces_commands
    from app.interfaces import people
    from app.portability import commands as portability_commands
    from app.read import commands as read_commands
    from app.safety import commands as safety_commands
    from app.write import commands as write_commands

    return _parser(db_commands, commands, keys_commands, read_commands, interfaces_commands, background_commands,
                   people, write_commands, importers_commands, safety_commands, portability_commands, bench_commands)


def agent_parser() -> argparse.ArgumentParser:
    """``memvault mcp`` and ``memvault hook`` alone."""
    from app.interfaces import commands as interfaces_commands

    return _parser(interfaces_commands)


def _parser(*modules) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="memvault", description="Long-term memory for AI agents.", epilog=EPILOG)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in modules:
        module.add_commands(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else argv
    if words[:1] == ["hook"]:  # a process per prompt: the thin entry, standard library only (its own parser)
        from app.interfaces import hook_client

        return hook_client.main(words[1:])
    agent = bool(words) and words[0] in _AGENT_COMMANDS
    args = (agent_parser() if agent else build_parser()).parse_args(argv)
    if not agent:  # mcp and hook act as their API key
        _act_as_cli_user()
    try:
        return int(args.func(args) or 0)
    except MemvaultError as exc:
        print(f"memvault: {exc}", file=sys.stderr)
        return exit_code(exc)
    except KeyboardInterrupt:
        print("memvault: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


def _act_as_cli_user() -> None:
    """What the command changes is audited as cli:<user> (the API, MCP and hooks act as their key instead)."""
    import getpass

    from app.db.connector import act_as

    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = "unknown"
    act_as(f"cli:{user}")


if __name__ == "__main__":
    sys.exit(main())
