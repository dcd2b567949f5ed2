"""Results of other evaluation tools in: promptfoo results files and Inspect AI eval logs.

Each importer turns one file into an `ImportPlan` (the tasks and submissions it maps to, with
the tool's own score kept in each submission's metadata); `evalq import FORMAT PATH` shows the
plan and, with ``--apply``, stores and evaluates what is new (docs/importers.md).
"""
