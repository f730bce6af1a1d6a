"""`engram up`: the one-machine stack launcher (Redis, every tier and the gateway, each as its
own process)."""
