"""What every layer shares: errors, settings, wire schemas, typed results, the scoring profile.

Imports nothing else of evalq (the import rules are in docs/architecture.md).
"""
