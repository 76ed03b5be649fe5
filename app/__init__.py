"""memvault: long-term memory for AI agents, with PostgreSQL doing the heavy lifting."""

__version__ = "0.1.0"
