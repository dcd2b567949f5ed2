"""Sources of evalq's bundled examples; `examples/generate.py` turns them into JSON files."""
