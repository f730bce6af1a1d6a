"""Evaluation datasets and metrics (`engram eval`)."""
