"""The span attributes evalq reads: OTel GenAI, OpenInference and its own ``evalq.*``.

OpenInference names come from `openinference-semantic-conventions`. The GenAI names are
written out here: the Python constants live in a beta package's private ``_incubating`` module,
which evalq does not want at run time (tests/unit/traces/test_names.py holds them equal).
"""

from __future__ import annotations

from openinference.semconv.trace import OpenInferenceSpanKindValues, SpanAttributes

# --- OpenTelemetry GenAI semantic conventions ------------------------------------------------
GEN_AI_OPERATION_NAME = "gen_ai.operation.name"
GEN_AI_AGENT_NAME = "gen_ai.agent.name"
GEN_AI_TOOL_NAME = "gen_ai.tool.name"
GEN_AI_TOOL_ARGUMENTS = "gen_ai.tool.call.arguments"
GEN_AI_REQUEST_MODEL = "gen_ai.request.model"
GEN_AI_RESPONSE_MODEL = "gen_ai.response.model"
GEN_AI_USAGE_INPUT_TOKENS = "gen_ai.usage.input_tokens"
GEN_AI_USAGE_OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
GEN_AI_OUTPUT_MESSAGES = "gen_ai.output.messages"
GEN_AI_CONVERSATION_ID = "gen_ai.conversation.id"
SESSION_ID = "session.id"
"""OpenInference's (and the general semantic conventions') session attribute."""
SESSION_KEYS = (GEN_AI_CONVERSATION_ID, SESSION_ID)
"""A run's conversation, first found wins: runs that share it form a session
(`evalq.core.sessions.SESSION_KEYS`, which a test holds equal)."""

GEN_AI_LLM_OPERATIONS = frozenset({"chat", "text_completion", "generate_content"})
GEN_AI_TOOL_OPERATION = "execute_tool"
GEN_AI_AGENT_OPERATION = "invoke_agent"

# --- OpenInference ---------------------------------------------------------------------------
OI_SPAN_KIND = SpanAttributes.OPENINFERENCE_SPAN_KIND
OI_LLM = OpenInferenceSpanKindValues.LLM.value
OI_TOOL = OpenInferenceSpanKindValues.TOOL.value
OI_AGENT = OpenInferenceSpanKindValues.AGENT.value
OI_AGENT_NAME = SpanAttributes.AGENT_NAME
OI_TOOL_NAME = SpanAttributes.TOOL_NAME
OI_MODEL_NAME = SpanAttributes.LLM_MODEL_NAME
OI_TOKENS_PROMPT = SpanAttributes.LLM_TOKEN_COUNT_PROMPT
OI_TOKENS_COMPLETION = SpanAttributes.LLM_TOKEN_COUNT_COMPLETION
OI_TOKENS_TOTAL = SpanAttributes.LLM_TOKEN_COUNT_TOTAL
OI_COST_TOTAL = SpanAttributes.LLM_COST_TOTAL
OI_OUTPUT_VALUE = SpanAttributes.OUTPUT_VALUE

# --- OpenTelemetry resource ------------------------------------------------------------------
SERVICE_NAME = "service.name"

# --- evalq's own (span or resource attributes) -----------------------------------------------
EVALQ_SUBMISSION_ID = "evalq.submission_id"
EVALQ_TASK_ID = "evalq.task_id"
EVALQ_TOOL = "evalq.tool"
EVALQ_MODEL = "evalq.model"
EVALQ_VARIANT = "evalq.variant"
EVALQ_RUN_INDEX = "evalq.run_index"
EVALQ_COST_USD = "evalq.cost_usd"
EVALQ_OUTPUT = "evalq.output"
EVALQ_CONTEXT = "evalq.context"
EVALQ_TRACE_END = "evalq.trace.end"
"""Boolean true on any span: the run is over, evaluate the trace without waiting to be quiet."""
