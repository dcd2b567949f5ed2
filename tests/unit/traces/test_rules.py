"""Trace rules: filters read off the spans, sampling decided from the trace id alone."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys

import pytest
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

from evalq.core.errors import InvalidInput
from evalq.core.trace_rules import TraceRule, TraceRuleOf, parse_trace_rule, sampled
from evalq.traces.otlp import spans_of
from evalq.traces.rules import matches, may_take, taking_task
from evalq.traces.spans_in import incoming_spans
from evalq.traces.tree import SpanTree, trees_of
from tests.support.otel_runs import two_agent_run

TRACE_IDS = [hashlib.md5(str(n).encode()).hexdigest() for n in range(400)]
"""400 trace ids as an SDK makes them: 32 hex digits, spread evenly."""


def tree(**resource: object) -> SpanTree:
    [found] = trees_of(spans_of(encode_spans(two_agent_run(resource=resource or None))))
    return found


def test_a_quarter_of_400_traces_is_about_100_and_the_same_in_another_process() -> None:
    taken = [t for t in TRACE_IDS if sampled(t, 0.25)]
    assert 80 <= len(taken) <= 120, len(taken)  # binomial(400, 0.25): sd 8.7
    code = (
        "import json, sys; from evalq.core.trace_rules import sampled; "
        "ids = json.load(sys.stdin); print(json.dumps([t for t in ids if sampled(t, 0.25)]))"
    )
    other = subprocess.run(
        [sys.executable, "-c", code],
        input=json.dumps(TRACE_IDS),
        capture_output=True,
        text=True,
        check=True,
        env=os.environ | {"PYTHONHASHSEED": "12345"},
    )
    assert json.loads(other.stdout) == taken
    assert [t for t in TRACE_IDS if sampled(t.upper(), 0.25)] == taken
    assert all(sampled(t, 1.0) for t in TRACE_IDS) and not any(sampled(t, 0.0) for t in TRACE_IDS)
    # A lower rate takes a subset of a higher one's traces: raising a rate only adds traces.
    assert set(t for t in TRACE_IDS if sampled(t, 0.1)) <= set(taken)


def test_filters_read_the_service_span_names_and_attributes() -> None:
    run = tree(**{"service.name": "reviewer", "deployment": "prod", "evalq.tool": "a"})
    assert matches(TraceRule(), run)
    assert matches(TraceRule(service_name="reviewer"), run)
    assert not matches(TraceRule(service_name="coder"), run)
    assert matches(TraceRule(span_names=["execute_tool read", "nothing"]), run)
    assert not matches(TraceRule(span_names=["nothing"]), run)
    assert matches(TraceRule(attributes={"deployment": "prod", "gen_ai.tool.name": "write"}), run)
    assert matches(TraceRule(attributes={"gen_ai.usage.input_tokens": 300.0}), run)
    assert not matches(TraceRule(attributes={"deployment": "staging"}), run)
    assert not matches(TraceRule(attributes={"evalq.tool": "b"}), run)


def test_the_first_task_by_id_whose_rule_takes_the_trace_gets_it() -> None:
    run = tree(**{"service.name": "reviewer"})
    rules = [
        TraceRuleOf(task_id="b", rule=TraceRule(service_name="reviewer")),
        TraceRuleOf(task_id="a", rule=TraceRule(service_name="coder")),
        TraceRuleOf(task_id="c", rule=TraceRule()),
    ]
    assert taking_task(rules, run) == "b"
    never = [TraceRuleOf(task_id="a", rule=TraceRule(sample_rate=0))]
    assert taking_task(never, run) is None


def test_a_bad_rule_names_its_field() -> None:
    with pytest.raises(InvalidInput) as caught:
        parse_trace_rule({"sample_rate": 1.5, "colour": "red"})
    fields = sorted(field for field, _ in caught.value.problems)
    assert fields == ["colour", "sample_rate"]


def test_a_trace_a_rule_takes_has_a_span_that_may_be_taken_as_it_arrives() -> None:
    """`may_take` never leaves out a trace a rule would take: deciding at arrival is safe."""
    resources = [
        {"service.name": "reviewer", "deployment": "prod"},
        {"service.name": "coder"},
        {"service.name": "health", "deployment": "staging"},
    ]
    rules = [
        TraceRule(),
        TraceRule(service_name="reviewer"),
        TraceRule(service_name="reviewer", sample_rate=0.5),
        TraceRule(span_names=["execute_tool read"]),
        TraceRule(span_names=["nothing"]),
        TraceRule(attributes={"deployment": "prod", "gen_ai.tool.name": "write"}),
        TraceRule(service_name="health", span_names=["GET /healthz"]),
    ]
    checked = 0
    for resource in resources:
        request = encode_spans(two_agent_run(resource=resource))
        spans = [s for found in incoming_spans(request).traces.values() for s in found]
        [run] = trees_of(spans_of(request))
        for rule in rules:
            takes = taking_task([TraceRuleOf(task_id="t", rule=rule)], run) is not None
            arriving = any(may_take([rule], span) for span in spans)
            assert arriving or not takes, (resource, rule)
            checked += takes
    assert checked >= 5  # the check met traces the rules take


def test_a_span_of_no_rule_and_no_task_may_not_be_taken() -> None:
    request = encode_spans(two_agent_run(resource={"service.name": "health"}))
    spans = [s for found in incoming_spans(request).traces.values() for s in found]
    assert not any(may_take([TraceRule(service_name="reviewer")], span) for span in spans)
    assert not any(may_take([], span) for span in spans)
    assert not any(may_take([TraceRule(sample_rate=0.0)], span) for span in spans)
    named = encode_spans(two_agent_run(resource={"evalq.task_id": "t"}))
    assert any(may_take([], s) for found in incoming_spans(named).traces.values() for s in found)
