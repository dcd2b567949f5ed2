"""evalq: an asynchronous, job-queue evaluator for AI-agent runs."""

__version__ = "0.1.0"
