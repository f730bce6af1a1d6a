"""The gateway's public gRPC face, `engram.v1.Engram` (named `rpc`, not `grpc`, so it cannot
shadow the grpc library)."""
