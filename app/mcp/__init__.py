"""The MCP server: every served operation as a tool for Claude Code, Cursor and any MCP client.

- :mod:`app.mcp.server`: ``/mcp`` (the official SDK's streamable HTTP transport, stateless),
  behind the REST API's keys; the tool and resource handlers.
- :mod:`app.mcp.tools`: operations as tools and resources, results, tool errors, and the
  README's tool table (``main.py mcp --tools-table``).
- :mod:`app.mcp.graph_operations`: the app's own operations, which run the graph (``chat``,
  ``ask_documents``).
"""
