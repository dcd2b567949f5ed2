"""The GenAI attribute names evalq writes out are the semantic conventions' own."""

from __future__ import annotations

from opentelemetry.semconv._incubating.attributes import gen_ai_attributes as gen_ai

from evalq.traces import names


def test_genai_names_match_the_semantic_conventions_package() -> None:
    assert names.GEN_AI_OPERATION_NAME == gen_ai.GEN_AI_OPERATION_NAME
    assert names.GEN_AI_AGENT_NAME == gen_ai.GEN_AI_AGENT_NAME
    assert names.GEN_AI_TOOL_NAME == gen_ai.GEN_AI_TOOL_NAME
    assert names.GEN_AI_REQUEST_MODEL == gen_ai.GEN_AI_REQUEST_MODEL
    assert names.GEN_AI_RESPONSE_MODEL == gen_ai.GEN_AI_RESPONSE_MODEL
    assert names.GEN_AI_USAGE_INPUT_TOKENS == gen_ai.GEN_AI_USAGE_INPUT_TOKENS
    assert names.GEN_AI_USAGE_OUTPUT_TOKENS == gen_ai.GEN_AI_USAGE_OUTPUT_TOKENS
    assert names.GEN_AI_OUTPUT_MESSAGES == gen_ai.GEN_AI_OUTPUT_MESSAGES
    operations = gen_ai.GenAiOperationNameValues
    assert {
        operations.CHAT.value,
        operations.TEXT_COMPLETION.value,
        operations.GENERATE_CONTENT.value,
    } == names.GEN_AI_LLM_OPERATIONS
    assert operations.EXECUTE_TOOL.value == names.GEN_AI_TOOL_OPERATION
    assert operations.INVOKE_AGENT.value == names.GEN_AI_AGENT_OPERATION


def test_openinference_names_are_the_published_ones() -> None:
    assert names.OI_SPAN_KIND == "openinference.span.kind"
    assert (names.OI_TOKENS_PROMPT, names.OI_TOKENS_COMPLETION, names.OI_TOKENS_TOTAL) == (
        "llm.token_count.prompt",
        "llm.token_count.completion",
        "llm.token_count.total",
    )
    assert (names.OI_TOOL_NAME, names.OI_AGENT_NAME) == ("tool.name", "agent.name")


def test_results_out_and_session_names_match_the_semantic_conventions_package() -> None:
    from opentelemetry.semconv._incubating.attributes import session_attributes

    from evalq.core.sessions import SESSION_KEYS
    from evalq.scoring import evaluation_event as event

    assert event.EVALUATION_NAME == gen_ai.GEN_AI_EVALUATION_NAME
    assert event.SCORE_VALUE == gen_ai.GEN_AI_EVALUATION_SCORE_VALUE
    assert event.SCORE_LABEL == gen_ai.GEN_AI_EVALUATION_SCORE_LABEL
    assert event.EXPLANATION == gen_ai.GEN_AI_EVALUATION_EXPLANATION
    assert event.CONVERSATION_ID == gen_ai.GEN_AI_CONVERSATION_ID
    assert names.SESSION_KEYS == SESSION_KEYS
    assert SESSION_KEYS == (gen_ai.GEN_AI_CONVERSATION_ID, session_attributes.SESSION_ID)
