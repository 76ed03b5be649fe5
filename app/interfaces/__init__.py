"""The agent-facing interfaces beside the REST API: MCP (stdio) and Claude Code hooks."""
