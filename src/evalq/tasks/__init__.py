"""evalq.tasks."""
