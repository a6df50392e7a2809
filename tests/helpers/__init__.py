"""Helpers for the fault-injection tests: a generated knowledge base and a crash worker."""
