"""`orderbot mcp`: a shop's tools served over the Model Context Protocol, with the loop, the
policy, the identity, the approval and the record still orderbot's.

`session` runs an MCP session as runs of the engine (no SDK import); `server` is the one
module that imports the `mcp` package (the extra). It sits just under the commands: it may
import the runner, the run stores, the shops and the UI's escaping, and nothing imports it
but orderbot.commands.mcp.
"""
