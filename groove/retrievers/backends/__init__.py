"""Other engines that hold a groove knowledge base: PostgreSQL + pgvector and LanceDB.

``groove export --to URL`` writes a groove index into one (export.py); ``--retriever URL``
runs both legs there and answers with the legs and the engine's own fused hits
(docs/engines.md). Each engine's client is an optional extra: ``groove-retrieval[postgres]``,
``groove-retrieval[lancedb]``.
"""
