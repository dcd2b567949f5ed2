"""Queue and task names, and which queue each task goes to. No Celery import: anyone may read it.

Producers send tasks by these names, so they never import the tier code (nor torch).
"""

from __future__ import annotations

TEXT_QUEUE = "evalq.text"
JUDGE_QUEUE = "evalq.judge"
GRAPH_QUEUE = "evalq.graph"
MERGE_QUEUE = "evalq.merge"
WEBHOOK_QUEUE = "evalq.webhooks"
QUEUES = (TEXT_QUEUE, JUDGE_QUEUE, GRAPH_QUEUE, MERGE_QUEUE, WEBHOOK_QUEUE)

TIER_TASKS = {"text": "evalq.tier.text", "judge": "evalq.tier.judge", "graph": "evalq.tier.graph"}
MERGE_TASK = "evalq.merge"
REFRESH_TASK = "evalq.refresh_baseline"
RECOVER_TASK = "evalq.recover"
WEBHOOK_TASK = "evalq.webhook.deliver"
FINALISE_TRACES_TASK = "evalq.traces.finalise"
MONITOR_TASK = "evalq.monitors.check"
EVENT_TASK = "evalq.webhook.deliver_event"
EVENT_SWEEP_TASK = "evalq.webhook.resend"
TICKET_SWEEP_TASK = "evalq.tickets.sweep"

ROUTES = {
    TIER_TASKS["text"]: {"queue": TEXT_QUEUE},
    TIER_TASKS["judge"]: {"queue": JUDGE_QUEUE},
    TIER_TASKS["graph"]: {"queue": GRAPH_QUEUE},
    MERGE_TASK: {"queue": MERGE_QUEUE},
    REFRESH_TASK: {"queue": MERGE_QUEUE},
    RECOVER_TASK: {"queue": MERGE_QUEUE},
    FINALISE_TRACES_TASK: {"queue": MERGE_QUEUE},
    WEBHOOK_TASK: {"queue": WEBHOOK_QUEUE},
    MONITOR_TASK: {"queue": MERGE_QUEUE},
    EVENT_TASK: {"queue": WEBHOOK_QUEUE},
    EVENT_SWEEP_TASK: {"queue": MERGE_QUEUE},
    TICKET_SWEEP_TASK: {"queue": MERGE_QUEUE},
}
