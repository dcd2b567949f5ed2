"""The six example tasks: three Arena tasks, one PeerRead paper, one Scylla task, one suite."""

from __future__ import annotations

from typing import Any

from evalq_examples.prose import PAPER, REFERENCE_REVIEWS

FRONTEND = "arena-frontend-dark-mode"
DEBUGGING = "arena-debug-flaky-date-parser"
DATA = "arena-data-sales-summary"
PEERREAD = "peerread-salience-gating"
SCYLLA = "scylla-token-bucket"
SUITE = "suite-refund-agent"

FE_TESTS = [
    "ThemeToggle.test.tsx > renders a switch with an accessible label",
    "ThemeToggle.test.tsx > toggles data-theme on the html element",
    "ThemeToggle.test.tsx > persists the choice in localStorage",
    "ThemeToggle.test.tsx > follows prefers-color-scheme on first visit",
    "Header.test.tsx > renders the theme toggle",
]
DEBUG_TESTS = [
    "tests/test_dates.py::test_parse_iso_with_offset",
    "tests/test_dates.py::test_parse_naive_assumes_utc",
    "tests/test_dates.py::test_parse_across_dst_boundary",
    "tests/test_dates.py::test_roundtrip_isoformat",
    "tests/test_reports.py::test_weekly_report_range",
    "tests/test_api.py::test_created_at_is_serialised_as_utc",
]
DATA_CHECKS = [
    "checks::revenue_total_matches_ledger",
    "checks::all_twelve_months_present",
    "checks::no_negative_quantities",
    "checks::top_regions_sorted_by_revenue",
]
SCYLLA_TESTS = [
    "tests/test_token_bucket.py::test_starts_full",
    "tests/test_token_bucket.py::test_consume_within_capacity",
    "tests/test_token_bucket.py::test_rejects_when_empty",
    "tests/test_token_bucket.py::test_refill_rate",
    "tests/test_token_bucket.py::test_refill_caps_at_capacity",
    "tests/test_token_bucket.py::test_refill_after_long_idle",
    "tests/test_token_bucket.py::test_monotonic_clock_only",
    "tests/test_token_bucket.py::test_thread_safe_consume",
]

# Contexts an Arena run on the dark-mode task passes through, and the tool that fits each.
FE_OPTIMAL_TOOLS = {
    "explore_repo": "list_files",
    "locate_theme_config": "grep",
    "read_existing_styles": "read_file",
    "create_toggle_component": "write_file",
    "wire_toggle_into_header": "edit_file",
    "persist_preference": "edit_file",
    "check_types": "run_build",
    "verify": "run_tests",
}
FE_TOOL_GRAPH = {
    "edges": [
        ["list_files", "grep"],
        ["list_files", "read_file"],
        ["grep", "read_file"],
        ["read_file", "grep"],
        ["read_file", "read_file"],
        ["read_file", "write_file"],
        ["read_file", "edit_file"],
        ["write_file", "edit_file"],
        ["write_file", "run_build"],
        ["edit_file", "edit_file"],
        ["edit_file", "run_build"],
        ["edit_file", "run_tests"],
        ["run_build", "run_tests"],
        ["run_build", "edit_file"],
        ["run_tests", "edit_file"],
    ],
    "start": "list_files",
    "end": "run_tests",
}

# A review is read, its method extracted and checked, related work compared, drafted, criticised
# and finalised.
PEER_OPTIMAL_TOOLS = {
    "read_paper": "load_paper",
    "find_method": "extract_sections",
    "compare_prior_work": "search_related_work",
    "verify_numbers": "check_claims",
    "write": "draft_review",
    "critique": "critique_review",
    "polish": "finalize_review",
}
PEER_TOOL_GRAPH = {
    "edges": [
        ["load_paper", "extract_sections"],
        ["extract_sections", "check_claims"],
        ["extract_sections", "search_related_work"],
        ["search_related_work", "check_claims"],
        ["search_related_work", "draft_review"],
        ["check_claims", "draft_review"],
        ["draft_review", "critique_review"],
        ["critique_review", "draft_review"],
        ["critique_review", "finalize_review"],
        ["draft_review", "finalize_review"],
    ],
    "start": "load_paper",
    "end": "finalize_review",
}

REQUIRED_SCENARIOS = ["CORE-001", "CORE-002", "SEC-001", "SEC-002"]


def tasks() -> list[dict[str, Any]]:
    """All example tasks, as JSON-ready dicts."""
    return [
        {
            "id": FRONTEND,
            "category": "frontend_development",
            "difficulty": "advanced",
            "context": (
                "Add a dark-mode toggle to the web app's header. The choice must persist across "
                "reloads and, on a first visit, follow the operating system's preference."
            ),
            "success_criteria": [
                {"type": "file_exists", "file_path": "src/components/ThemeToggle.tsx"},
                {"type": "tests_pass", "tests": FE_TESTS[:3]},
                {"type": "no_errors"},
            ],
            "reference_tool_graph": FE_TOOL_GRAPH,
            "optimal_tools": FE_OPTIMAL_TOOLS,
        },
        {
            "id": DEBUGGING,
            "category": "debugging",
            "difficulty": "intermediate",
            "context": (
                "tests/test_dates.py::test_parse_iso_with_offset fails on roughly one CI run in "
                "five. Find the cause, fix it, and keep the rest of the suite green."
            ),
            "success_criteria": [
                {"type": "tests_pass", "tests": [DEBUG_TESTS[0], DEBUG_TESTS[2]]},
                {"type": "min_functionality", "min_pass_rate": 0.8},
                {"type": "no_errors"},
            ],
        },
        {
            "id": DATA,
            "category": "data_analysis",
            "difficulty": "beginner",
            "context": (
                "Summarise data/sales_2024.csv (order_id, date, region, sku, quantity, "
                "unit_price) for the quarterly review: totals, monthly trend, best regions, "
                "returns. Write a markdown report and a monthly revenue chart."
            ),
            "success_criteria": [
                {"type": "file_exists", "file_path": "reports/sales_summary.md"},
                {"type": "file_exists", "file_path": "reports/monthly_revenue.png"},
                {"type": "min_functionality", "min_pass_rate": 0.75},
                {"type": "no_errors"},
            ],
        },
        {
            "id": PEERREAD,
            "category": "data_analysis",
            "difficulty": "advanced",
            "context": PAPER,
            "reference_outputs": REFERENCE_REVIEWS,
            "reference_tool_graph": PEER_TOOL_GRAPH,
            "optimal_tools": PEER_OPTIMAL_TOOLS,
        },
        {
            "id": SCYLLA,
            "category": "backend_development",
            "difficulty": "intermediate",
            "context": (
                "Implement a thread-safe token-bucket rate limiter in "
                "src/ratelimit/token_bucket.py that refills from a monotonic clock. Variants: "
                "T0 bare prompt, T1 + project conventions file, T2 + tool skills, "
                "T3 + reviewer sub-agent."
            ),
            "success_criteria": [
                {"type": "file_exists", "file_path": "src/ratelimit/token_bucket.py"},
                {"type": "tests_pass", "tests": []},
            ],
        },
        {
            "id": SUITE,
            "category": "backend_development",
            "difficulty": "intermediate",
            "context": (
                "Release gate for the customer-support refund agent: eleven scenarios covering "
                "refunds, edge cases, abuse attempts and past regressions."
            ),
            "required_scenarios": REQUIRED_SCENARIOS,
        },
    ]
