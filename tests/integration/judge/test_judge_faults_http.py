"""A batch of judgments over real HTTP against the OpenAI stub, with faults in set proportions.

pydantic-ai's `OpenAIChatModel` (the model `build_judge` makes for ``judge_base_url``) talks to
`tests/support/openai_stub.py`. Each judgment carries a case marker and the stub serves that
case a fixed fault sequence, so although the batch runs concurrently, the attempts, retries and
failed outcomes of every judgment are known exactly in advance (table below).
"""

from __future__ import annotations

import random
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from evalq.core.profile import load_profile
from evalq.core.schemas import Submission, Task
from evalq.core.settings import Settings
from evalq.judge import JudgeLimits, build_judge
from tests.support.openai_stub import OpenAIStub
from tests.support.processes import PATIENCE

pytestmark = pytest.mark.integration

LIMITS = JudgeLimits(
    max_attempts=3,
    output_retries=1,
    request_timeout_s=2.0 * PATIENCE,  # a clean answer took over 2 s under CI's load (stop 53)
    backoff_base_s=0.01,
    backoff_cap_s=0.05,
)
"""The stub holds a ``slow`` answer until the client's timeout makes it hang up, so that case
trips the timeout whatever the load; the timeout itself is far above a clean answer's time."""
# pattern: (faults served, how many judgments, expected status, requests, transport retries,
#           validation retries). With max_attempts=3 and output_retries=1:
PATTERNS = {
    "clean": ((), 12, "ok", 1, 0, 0),
    "429": (("rate_limit",), 5, "ok", 2, 1, 0),
    "500": (("server_error",), 5, "ok", 2, 1, 0),
    "slow": (("slow",), 3, "ok", 2, 1, 0),  # no answer until the client times out
    "reset": (("reset",), 3, "ok", 2, 1, 0),
    "malformed": (("malformed",), 4, "ok", 2, 0, 1),  # an output retry, not a transport one
    "429+500": (("rate_limit", "server_error"), 2, "ok", 3, 2, 0),
    "500x3": (("server_error",) * 3, 2, "failed", 3, 2, 0),  # attempts run out
    "malformedx2": (("malformed",) * 2, 2, "failed", 2, 0, 1),  # output retries run out
    "401": (("unauthorized",), 1, "failed", 1, 0, 0),  # permanent: no retry
    "400": (("bad_request",), 1, "failed", 1, 0, 0),
}


def batch(seed: int = 7) -> dict[str, str]:
    """case name -> pattern name, 40 cases in a seeded order."""
    names = [name for name, spec in PATTERNS.items() for _ in range(spec[1])]
    random.Random(seed).shuffle(names)
    return {f"c{i:02d}": name for i, name in enumerate(names)}


def test_a_faulty_batch_finishes_with_exactly_the_expected_retries_and_failures() -> None:
    cases = batch()
    plan = {case: PATTERNS[name][0] for case, name in cases.items()}
    with OpenAIStub(plan=plan, retry_after_s=0.05) as stub:
        settings = Settings(judge_model="openai:stub-judge", judge_base_url=stub.base_url)
        judge = build_judge(settings, load_profile(), redis=None, limits=LIMITS)
        assert judge is not None
        task = Task(id="t1", category="data_analysis")  # no paper, no trace: constructiveness only

        def run(case: str):  # type: ignore[no-untyped-def]
            submission = Submission(
                id=case,
                task_id="t1",
                tool="agent",
                model="gpt-4o",
                usage={"input_tokens": 1, "output_tokens": 1},
                output=f"[case:{case}] The method is sound; add an ablation of the window size.",
            )
            return case, judge.evaluate(submission, task, deadline_s=30)

        with ThreadPoolExecutor(8) as pool:
            outcomes = dict(pool.map(run, cases))

    assert len(outcomes) == 40  # every judgment finished
    for case, name in cases.items():
        _, _, status, requests, transport, validation = PATTERNS[name]
        rubric = outcomes[case].rubrics[1]
        assert rubric.rubric == "constructiveness"
        got = (rubric.status, rubric.attempts, rubric.transport_retries, rubric.validation_retries)
        assert got == (status, requests, transport, validation), (case, name)
        if status == "ok":
            assert rubric.score == 0.75  # the stub answers 4 -> (4-1)/4
        else:
            assert rubric.score is None and outcomes[case].failed
            assert outcomes[case].errors[0].attempts == requests

    expected_requests = sum(spec[1] * spec[3] for spec in PATTERNS.values())
    expected_failed = sum(spec[1] for spec in PATTERNS.values() if spec[2] == "failed")
    expected_retries = sum(spec[1] * (spec[4] + spec[5]) for spec in PATTERNS.values())
    expected_faults = Counter(
        f for spec in PATTERNS.values() for _ in range(spec[1]) for f in spec[0]
    )
    report = {
        "judgments": len(outcomes),
        "requests": stub.requests,
        "retries": sum(o.retries for o in outcomes.values()),
        "failed": sum(o.failed for o in outcomes.values()),
        "faults": dict(stub.served - Counter({"ok": stub.served["ok"]})),
    }
    print("fault batch:", report)
    # 12*1 + 5*2 + 5*2 + 3*2 + 3*2 + 4*2 + 2*3 + 2*3 + 2*2 + 1 + 1 = 70 requests
    assert report["requests"] == expected_requests == 70
    # retries: 5 + 5 + 3 + 3 + 4 + 2*2 + 2*2 + 2*1 = 30
    assert report["retries"] == expected_retries == 30
    assert report["failed"] == expected_failed == 6
    assert report["faults"] == dict(expected_faults)


def test_a_slow_answer_never_arrives_before_the_client_gives_up() -> None:
    """However long the client's timeout, the stub's ``slow`` answer outwaits it: the fault is
    a timeout on every machine, not a race between two clocks."""
    with OpenAIStub(proportions={"slow": 1.0}) as stub:
        started = time.monotonic()
        with pytest.raises(httpx.ReadTimeout):
            httpx.post(f"{stub.base_url}/chat/completions", json={"messages": []}, timeout=2.5)
        assert time.monotonic() - started >= 2.5
        assert stub.served["slow"] == 1
