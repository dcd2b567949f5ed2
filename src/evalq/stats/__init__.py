"""The statistics toolkit: summaries, Student's t intervals, percentiles, competition ranking,
bootstrap intervals (uplift, rank), paired and unpaired comparisons with effect sizes and
multiple-test corrections, and group contrasts over shared units.

Nothing here knows evalq's specifications, tasks or storage: inputs are numbers and labels.
`scoring/` (the four specifications) and `read/` build on it; it imports only `core`.
"""
