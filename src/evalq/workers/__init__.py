"""evalq.workers."""
