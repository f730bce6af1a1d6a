"""The gateway core every face (REST, MCP, gRPC) calls: tokens, the store registry, the
single-instance lock, and `Gateway`, one async method per public operation."""
