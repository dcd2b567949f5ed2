"""evalq's HTTP API (FastAPI): submit runs, read results, leaderboards and reports.

Nothing is imported here, so `evalq keys ...` works without the ``api`` extra installed; the app
factory is `evalq.producer.api.app.create_app`.
"""
