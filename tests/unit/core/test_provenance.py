"""A run's trace provenance: collected only under a key its task trusts."""

from __future__ import annotations

from evalq.core.provenance import trace_provenance


def test_a_trace_is_collected_only_from_a_trusted_key_of_the_otlp_intake() -> None:
    trusted = ("runtime",)
    assert trace_provenance(timed=True, sent_by="runtime", trusted=trusted) == "collected"
    assert trace_provenance(timed=False, sent_by="runtime", trusted=trusted) == "collected"
    # the same spans under another key, or timed steps in a body, are the submitter's own
    assert trace_provenance(timed=True, sent_by="submitter", trusted=trusted) == "submitted"
    assert trace_provenance(timed=False, sent_by="submitter", trusted=()) == "submitted"
    assert trace_provenance(timed=True, sent_by=None, trusted=trusted) == "submitted"
    assert trace_provenance(timed=False, sent_by=None, trusted=trusted) is None
