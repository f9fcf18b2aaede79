"""One module per command; cli.py joins them, importing a command's module only when that
command runs (or its own help is asked for). This table is what `orderbot --help` lists, so
listing the commands imports none of them."""

from __future__ import annotations

from typer.core import TyperGroup

from orderbot.errors import UsageError

# In the order a newcomer needs them.
COMMAND_HELP = {
    "ask": "Ask one question about orders: one bounded plan → act → observe → finish run.",
    "repl": "Hold a conversation: each message is one bounded run; earlier turns carry over as context.",
    "runs": "List recent runs, newest first; `orderbot runs show ID` shows one.",
    "resume": "Resume a stored run: approve or reject its waiting action, or continue it with a fresh budget.",
    "approvals": "List the actions waiting for approval in the run store; approve or reject one, from any desk.",
    "audit": "List the audit log of side effects (who asked, who decided, what ran); --verify checks its chain.",
    "replay": "Replay a recorded run against today's tools and engine (model turns played back) "
    "and report any step that differs.",
    "orders": "Import orders into SQLite or PostgreSQL, export a retail shop, and list or show orders without a model.",
    "eval": "Measure a model on a suite of cases (the built-in one by default) before trusting it.",
    "mcp": "Serve the shop's tools to an agent host over MCP (stdio, or --http): orderbot keeps the policy, "
    "identity, approval and record.",
    "models": "List the models the configured server offers, and say which one orderbot would use.",
    "keys": "Keep API keys in your config directory (mode 0600, never shown): keys set openai, keys list, keys path.",
    "doctor": "Show the provider, model, base URL, orders file and state directory orderbot would use.",
}


class CommandGroup(TyperGroup):
    """A group of commands (the root, `runs`, `orders`, `approvals`, `keys`): a command it does
    not have is orderbot's own usage error, naming what was typed, rather than Click's sentence."""

    def resolve_command(self, ctx, args: list[str]):
        if args and not args[0].startswith("-") and self.get_command(ctx, args[0]) is None:
            raise UsageError("usage.no_such_command", name=repr(args[0]))
        return super().resolve_command(ctx, args)
