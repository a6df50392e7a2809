"""Closing the judgement loop: pool the unjudged hits, judge them, grow the golden set.

``pool`` gathers the hits no ``expected`` entry and no judgement covers from several
rankings (history runs, saved runs, another retriever, the tune grid); ``exchange`` moves
them to CSV / JSONL and back; ``apply`` adds the relevant judgements to the golden YAML
(docs/judgements.md). The judgements file and judged@k live in groove.evaluation, which
the reports read.
"""
