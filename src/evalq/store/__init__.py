"""evalq.store."""
