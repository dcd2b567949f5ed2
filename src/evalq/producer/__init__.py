"""evalq.producer."""
