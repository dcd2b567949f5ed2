"""`python -m evalq.producer.cli`: the `evalq` script (e.g. under `python -X importtime`)."""

from evalq.producer.cli import main

main()
