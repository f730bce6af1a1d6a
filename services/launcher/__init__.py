"""`engram up`: the one-machine stack launcher (Redis + every tier as its own process)."""
