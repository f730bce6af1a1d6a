"""The operator CLI, `engram`."""
