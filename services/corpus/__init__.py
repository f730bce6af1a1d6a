"""The corpus tier: files, their catalog, raw memories, source chunks and raw documents."""
