"""Renderers: turn EvalRun and TuneResult into text, JSON and Markdown. No computation."""
