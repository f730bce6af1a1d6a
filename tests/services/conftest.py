"""The tier contract tests use the stack fixtures of `tests/stack.py` (`embedding_model`,
`embedder_addr`), registered for the whole suite in tests/conftest.py."""
