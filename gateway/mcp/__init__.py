"""The MCP face: the tool table (`tools`) and the server over the gateway core at /mcp
(`server`). The stdio bridge agents spawn is a client of it, in the client package
(`engram.mcp_bridge`, console script `engram-mcp`)."""
