"""`python -m gateway.mcp`: the stdio bridge (`engram-mcp`)."""

from __future__ import annotations

import sys

from gateway.mcp.bridge import main

if __name__ == "__main__":
    sys.exit(main())
