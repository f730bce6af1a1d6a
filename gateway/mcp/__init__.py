"""The MCP face: the tool table (`tools`), the server over the gateway core at /mcp
(`server`), and the stdio bridge agents spawn (`bridge`, console script `engram-mcp`)."""
