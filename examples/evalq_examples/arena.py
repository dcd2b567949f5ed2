"""Arena submissions (spec 000): eleven or twelve runs of each of the three Arena tasks.

What the rows exercise: priced models (cost from the profile's pricing table) next to explicit
`cost_usd`; runs with no time, no cost or neither (not reported: the worst value); an exact tie
in every raw figure (fe-03 and fe-04); a suspicious outlier (fe-09: 2,070 tokens, 3.4 s, one
tool call); evidence that passes some criteria and fails others; traces on the dark-mode task,
which has a reference tool graph and optimal tools, and on one debugging run, which has neither.
"""

from __future__ import annotations

from typing import Any

from evalq_examples.common import plan_of, tests_of, timed_steps, usage
from evalq_examples.tasks import DATA, DATA_CHECKS, DEBUG_TESTS, DEBUGGING, FE_TESTS, FRONTEND


def _run(
    sid: str,
    task: str,
    tool: str,
    model: str,
    figures: dict[str, Any],
    output: str,
    *,
    tests: list[dict[str, Any]],
    files: tuple[str, ...] = (),
    errors: tuple[str, ...] = (),
    plan: str | None = None,
) -> dict[str, Any]:
    evidence: dict[str, Any] = {
        "files_created": list(files),
        "success": not errors,
        "tests": tests,
    }
    if errors:
        evidence["errors"] = list(errors)
    run: dict[str, Any] = {
        "id": sid,
        "task_id": task,
        "tool": tool,
        "model": model,
        "usage": figures,
        "output": output,
        "evidence": evidence,
    }
    if plan is not None:
        steps = plan_of(plan, agent=tool)
        assert figures["tool_calls"] == len(steps), sid
        run["trace"] = {"steps": timed_steps(steps, figures.get("execution_time", 60.0))}
    return run


_TOGGLE = "src/components/ThemeToggle.tsx"
_HOOK = "src/hooks/useTheme.ts"
_THEMES = "src/styles/themes.css"

# Single-agent tool plans on the dark-mode task: context names match FE_OPTIMAL_TOOLS.
_PLAN_OPUS = (
    "list_files:explore_repo grep:locate_theme_config read_file:read_existing_styles "
    "read_file:read_existing_styles write_file:create_toggle_component "
    "edit_file:wire_toggle_into_header edit_file:persist_preference run_build:check_types "
    "edit_file:fix_type_error run_build:check_types run_tests:verify"
)
_PLAN_SONNET = (
    "list_files:explore_repo read_file:read_existing_styles grep:locate_theme_config "
    "read_file:read_existing_styles write_file:create_toggle_component "
    "edit_file:wire_toggle_into_header run_tests:verify edit_file:persist_preference "
    "run_tests:verify edit_file:persist_preference edit_file:prevent_flash run_build:check_types "
    "run_tests:verify run_tests:verify"
)
_PLAN_AIDER = (
    "read_file:explore_repo read_file:locate_theme_config read_file:read_existing_styles "
    "edit_file:create_toggle_component edit_file:wire_toggle_into_header run_tests:verify "
    "edit_file:persist_preference run_tests:verify read_file:persist_preference "
    "edit_file:persist_preference run_tests:verify grep:persist_preference "
    "edit_file:persist_preference run_tests:verify read_file:read_test_setup "
    "edit_file:persist_preference run_tests:verify edit_file:persist_preference "
    "run_build:check_types run_tests:verify edit_file:add_todo run_tests:verify"
)
_PLAN_O3 = (
    "list_files:explore_repo grep:locate_theme_config read_file:read_existing_styles "
    "grep:find_hardcoded_colours read_file:read_existing_styles read_file:read_existing_styles "
    "write_file:create_toggle_component write_file:write_docs edit_file:wire_toggle_into_header "
    "edit_file:persist_preference edit_file:listen_for_system_changes run_build:check_types "
    "edit_file:fix_type_error run_build:check_types run_tests:verify edit_file:add_tests "
    "run_tests:verify edit_file:tidy run_build:check_types run_tests:verify"
)


def _frontend() -> list[dict[str, Any]]:
    tie_usage = usage(
        input_tokens=64_000, output_tokens=8_800, calls=29, iterations=2, seconds=388.0
    )
    tie_files = (_TOGGLE, _HOOK, "src/components/ThemeToggle.test.tsx")
    return [
        _run(
            "arena-fe-01",
            FRONTEND,
            "claude-code",
            "claude-opus-4.5",
            usage(input_tokens=58_200, output_tokens=9_400, calls=11, iterations=2, seconds=412.0),
            "Added a ThemeToggle switch to the header. Theme state lives in a useTheme hook that "
            "reads localStorage first, falls back to prefers-color-scheme, and writes the choice "
            "to the data-theme attribute on <html>. Colours moved to CSS custom properties in "
            "themes.css, so the dark palette is a single block of overrides. All 5 tests pass and "
            "tsc is clean.",
            files=(_TOGGLE, _HOOK, _THEMES, "src/components/ThemeToggle.test.tsx"),
            tests=tests_of(FE_TESTS),
            plan=_PLAN_OPUS,
        ),
        _run(
            "arena-fe-02",
            FRONTEND,
            "claude-code",
            "claude-sonnet-4",
            usage(input_tokens=71_500, output_tokens=11_200, calls=14, iterations=3, seconds=505.0),
            "Implemented dark mode: a ThemeToggle button (aria-pressed, sun/moon icon), a "
            "ThemeProvider context and dark variables in themes.css. The first attempt flashed "
            "the light theme on reload; fixed by setting data-theme from a small inline script in "
            "index.html before React mounts. Tests: 5/5 passing.",
            files=(_TOGGLE, "src/context/ThemeProvider.tsx", _THEMES),
            tests=tests_of(FE_TESTS),
            plan=_PLAN_SONNET,
        ),
        _run(
            "arena-fe-03",
            FRONTEND,
            "cursor",
            "claude-sonnet-4",
            tie_usage,
            "Created src/components/ThemeToggle.tsx and hooked it into Header. The preference is "
            "saved under the 'theme' key in localStorage and applied through a data-theme "
            "attribute; Tailwind's darkMode now uses the 'selector' strategy. 5 of 5 tests pass.",
            files=tie_files,
            tests=tests_of(FE_TESTS),
        ),
        _run(
            "arena-fe-04",
            FRONTEND,
            "cline",
            "claude-sonnet-4",
            tie_usage,
            "Dark mode toggle done. ThemeToggle.tsx renders an accessible switch in the header; "
            "useTheme persists the choice to localStorage and respects the OS setting on a first "
            "visit. Ran the test suite: 5 passed, 0 failed.",
            files=tie_files,
            tests=tests_of(FE_TESTS),
        ),
        _run(
            "arena-fe-05",
            FRONTEND,
            "aider",
            "gpt-4o",
            usage(input_tokens=88_000, output_tokens=7_900, calls=22, iterations=4, seconds=640.0),
            "Added ThemeToggle and a dark palette. The toggle works in the browser, but the "
            "localStorage test still fails: the storage mock is reset between renders and I could "
            "not get the hook to read the value back. Left a TODO in ThemeToggle.tsx.",
            files=(_TOGGLE,),
            tests=tests_of(FE_TESTS, {2}),
            plan=_PLAN_AIDER,
        ),
        _run(
            "arena-fe-06",
            FRONTEND,
            "codex-cli",
            "gpt-5-codex",
            usage(
                input_tokens=96_300,
                output_tokens=14_100,
                calls=57,
                iterations=3,
                seconds=930.0,
                cost_usd=0.94,
            ),
            "Dark mode is in: ThemeToggle component, theme tokens for both palettes, and a "
            "migration of 23 hard-coded hex colours to CSS variables. One test still fails "
            "('follows prefers-color-scheme on first visit') because matchMedia is not mocked in "
            "the test setup; the behaviour itself works in the browser.",
            files=(_TOGGLE, _HOOK, _THEMES),
            tests=tests_of(FE_TESTS, {3}),
        ),
        _run(
            "arena-fe-07",
            FRONTEND,
            "copilot-agent",
            "gpt-4.1",
            usage(total_tokens=45_600, calls=18, seconds=276.0, cost_usd=0.38),
            "Added a ThemeToggle.jsx component that flips a 'dark' class on the body, and the "
            "header now includes it. Persistence is not implemented yet.",
            files=("src/ThemeToggle.jsx",),
            tests=tests_of(FE_TESTS, {2, 3}),
        ),
        _run(
            "arena-fe-08",
            FRONTEND,
            "aider",
            "llama-3.3-70b",
            usage(total_tokens=132_000, calls=63, iterations=6),
            "I created the toggle component and the hook, but the app crashes on load in the test "
            "environment because window.matchMedia is undefined there. I tried six times to guard "
            "it and ran out of attempts.",
            files=(_TOGGLE, _HOOK),
            tests=tests_of(FE_TESTS, {2, 3, 4}),
            errors=(
                "TypeError: Cannot read properties of undefined (reading 'matches') "
                "at useTheme (src/hooks/useTheme.ts:9:41)",
            ),
        ),
        _run(
            "arena-fe-09",
            FRONTEND,
            "claude-code",
            "claude-opus-4.5",
            usage(input_tokens=1_650, output_tokens=420, calls=1, seconds=3.4),
            "Done. Dark mode toggle added; all tests pass.",
            files=(_TOGGLE,),
            tests=tests_of(FE_TESTS),
            plan="write_file:create_toggle_component",
        ),
        _run(
            "arena-fe-10",
            FRONTEND,
            "codex-cli",
            "o3",
            usage(
                input_tokens=120_400,
                output_tokens=22_800,
                calls=20,
                iterations=2,
                seconds=1_140.0,
                cost_usd=1.72,
            ),
            "Implemented a three-state theme control (light, dark, system) rather than a plain "
            "toggle, since the issue asks to respect the OS preference. The choice is stored in "
            "localStorage; 'system' listens for matchMedia changes. Added docs/theming.md on how "
            "to add a colour token. All 5 tests pass; bundle size +1.3 kB gzipped.",
            files=(
                _TOGGLE,
                _HOOK,
                _THEMES,
                "src/components/ThemeToggle.test.tsx",
                "docs/theming.md",
            ),
            tests=tests_of(FE_TESTS),
            plan=_PLAN_O3,
        ),
        _run(
            "arena-fe-11",
            FRONTEND,
            "cursor",
            "gpt-4o",
            usage(input_tokens=52_300, output_tokens=6_100, calls=26, iterations=2, seconds=355.0),
            "Added ThemeToggle with localStorage persistence and an OS-preference fallback. I put "
            "it in the user settings menu rather than the header, because the header has no free "
            "slot on mobile; the header test fails for that reason. Happy to move it if the header "
            "placement is required.",
            files=(_TOGGLE, _HOOK),
            tests=tests_of(FE_TESTS, {4}),
        ),
        _run(
            "arena-fe-12",
            FRONTEND,
            "windsurf",
            "claude-sonnet-4",
            usage(
                input_tokens=77_800, output_tokens=12_900, calls=38, iterations=5, seconds=1_620.0
            ),
            "Stopped after five build attempts. ThemeToggle.tsx is written, but the Theme union "
            "type conflicts with the string read from localStorage and tsc rejects the build "
            "(TS2322 at ThemeToggle.tsx:14). Tests were not run.",
            files=(_TOGGLE,),
            tests=[],
            errors=(
                "src/components/ThemeToggle.tsx(14,7): error TS2322: Type 'string' is not "
                "assignable to type 'Theme'.",
            ),
        ),
    ]


_PLAN_DEBUG = (
    "run_tests grep read_file read_file run_tests edit_file run_tests run_tests run_tests "
    "edit_file run_tests read_file edit_file run_tests"
)


def _debugging() -> list[dict[str, Any]]:
    return [
        _run(
            "arena-dbg-01",
            DEBUGGING,
            "claude-code",
            "claude-sonnet-4",
            usage(input_tokens=31_200, output_tokens=4_100, calls=14, seconds=142.0),
            "Root cause: parse_date() builds a naive datetime and calls .astimezone(), which "
            "interprets it in the runner's local zone. CI runners set to UTC pass and the ones in "
            "Europe/Berlin are off by an hour, hence the flakiness. Naive inputs are now treated "
            "as UTC explicitly and offsets are parsed with datetime.fromisoformat. Ran the date "
            "tests 50 times under TZ=UTC, Europe/Berlin and America/Los_Angeles: all green.",
            tests=tests_of(DEBUG_TESTS),
            plan=_PLAN_DEBUG,
        ),
        _run(
            "arena-dbg-02",
            DEBUGGING,
            "cursor",
            "claude-sonnet-4",
            usage(input_tokens=28_700, output_tokens=3_600, calls=11, seconds=118.0),
            "The flaky test depended on the host timezone: the parser called astimezone() on a "
            "naive datetime. Fixed by attaching timezone.utc to naive values. Also pinned TZ=UTC "
            "in the pytest configuration so the suite cannot depend on the machine again.",
            tests=tests_of(DEBUG_TESTS),
        ),
        _run(
            "arena-dbg-03",
            DEBUGGING,
            "aider",
            "gpt-4o",
            usage(input_tokens=40_100, output_tokens=5_200, calls=9, iterations=2, seconds=236.0),
            "Naive datetimes are now assumed to be UTC, which fixes the offset test and "
            "test_parse_naive_assumes_utc. test_parse_across_dst_boundary still fails: its "
            "expected value assumes that 02:30 on 2024-03-31 exists in Europe/Berlin, which it "
            "does not. I think the test itself is wrong but did not change it.",
            tests=tests_of(DEBUG_TESTS, {2}),
        ),
        _run(
            "arena-dbg-04",
            DEBUGGING,
            "codex-cli",
            "gpt-5-codex",
            usage(input_tokens=35_800, output_tokens=6_900, calls=17, iterations=2, cost_usd=0.21),
            "Replaced the hand-rolled offset parsing with datetime.fromisoformat (Python 3.11 "
            "accepts 'Z' and +HH:MM), made naive inputs UTC and switched the DST test to "
            "zoneinfo. All 6 tests pass.",
            tests=tests_of(DEBUG_TESTS),
        ),
        _run(
            "arena-dbg-05",
            DEBUGGING,
            "cline",
            "qwen2.5-coder-32b",
            usage(total_tokens=58_000, calls=21, iterations=3, seconds=410.0),
            "The test was flaky because it compared against datetime.now() and sometimes crossed "
            "midnight. I froze the clock in the test with a fixture. All tests pass now.",
            tests=tests_of(DEBUG_TESTS),
        ),
        _run(
            "arena-dbg-06",
            DEBUGGING,
            "claude-code",
            "claude-opus-4.5",
            usage(input_tokens=22_400, output_tokens=3_900, calls=8, seconds=96.0),
            "Found it: _to_aware() used time.localtime() to guess the offset of naive strings. "
            "Naive values are now UTC by contract (documented in the docstring), and a regression "
            "test runs the parser under three TZ settings via monkeypatch.setenv and time.tzset. "
            "6/6 tests pass.",
            tests=tests_of(DEBUG_TESTS),
        ),
        _run(
            "arena-dbg-07",
            DEBUGGING,
            "copilot-agent",
            "gpt-4.1",
            usage(total_tokens=19_800, calls=6, seconds=74.0, cost_usd=0.07),
            "Added a retry decorator to test_parse_iso_with_offset so that it reruns up to three "
            "times. The suite is green locally more often now.",
            tests=tests_of(DEBUG_TESTS, {1, 2}),
        ),
        _run(
            "arena-dbg-08",
            DEBUGGING,
            "windsurf",
            "claude-sonnet-4",
            usage(input_tokens=47_300, output_tokens=7_700, calls=25, iterations=4, seconds=520.0),
            "Switched the parser to pytz for timezone handling. The date tests pass, but the "
            "report and API tests now fail to import because pytz is not in the lock file, and I "
            "could not install it in the sandbox.",
            tests=tests_of(DEBUG_TESTS, {4, 5}),
            errors=("ModuleNotFoundError: No module named 'pytz'",),
        ),
        _run(
            "arena-dbg-09",
            DEBUGGING,
            "codex-cli",
            "o3",
            usage(
                input_tokens=44_000,
                output_tokens=9_100,
                calls=19,
                iterations=2,
                seconds=301.0,
                cost_usd=0.48,
            ),
            "Reproduced the failure with TZ=Asia/Kolkata (the half-hour offset makes it fail every "
            "time instead of intermittently). The cause is the implicit local-time conversion in "
            "parse_date; fixed by treating naive input as UTC and rejecting non-existent DST wall "
            "times with a clear ValueError. Updated the DST test to expect it. 6/6 pass.",
            tests=tests_of(DEBUG_TESTS),
        ),
        _run(
            "arena-dbg-10",
            DEBUGGING,
            "aider",
            "llama-3.3-70b",
            usage(total_tokens=74_500, calls=30, iterations=5),
            "Added explicit UTC handling for naive strings. test_parse_iso_with_offset and the DST "
            "test still fail intermittently; I was not able to reproduce them reliably.",
            tests=tests_of(DEBUG_TESTS, {0, 2}),
        ),
        _run(
            "arena-dbg-11",
            DEBUGGING,
            "cursor",
            "gpt-4o",
            usage(input_tokens=26_900, output_tokens=3_300, calls=10, seconds=131.0),
            "parse_date now always returns an aware datetime in UTC: naive inputs get tzinfo=UTC "
            "and inputs with an offset are converted with astimezone(timezone.utc). The flaky test "
            "no longer depends on the runner's TZ. 6 passed.",
            tests=tests_of(DEBUG_TESTS),
        ),
    ]


_REPORT = "reports/sales_summary.md"
_CHART = "reports/monthly_revenue.png"


def _data() -> list[dict[str, Any]]:
    return [
        _run(
            "arena-da-01",
            DATA,
            "claude-code",
            "claude-sonnet-4",
            usage(input_tokens=18_400, output_tokens=5_200, calls=9, seconds=164.0),
            "Summary written to reports/sales_summary.md: 2024 net revenue was $4.82M across "
            "18,340 orders (average order $262.80). Revenue peaked in November ($612k, driven by "
            "Black Friday week) and bottomed in February ($281k). West leads with 34% of revenue; "
            "returns were 3.1% of units. Chart: reports/monthly_revenue.png.",
            files=(_REPORT, _CHART),
            tests=tests_of(DATA_CHECKS),
        ),
        _run(
            "arena-da-02",
            DATA,
            "cursor",
            "gpt-4o",
            usage(input_tokens=22_100, output_tokens=4_800, calls=12, iterations=2, seconds=203.0),
            "Summarised sales_2024.csv with pandas. 41 rows have negative quantities; they are "
            "returns, so I report them separately instead of dropping them. Net revenue $4.82M, "
            "November the strongest month, February the weakest. Report and chart are in reports/.",
            files=(_REPORT, _CHART),
            tests=tests_of(DATA_CHECKS),
        ),
        _run(
            "arena-da-03",
            DATA,
            "aider",
            "gpt-4o",
            usage(input_tokens=26_500, output_tokens=3_900, calls=7, seconds=188.0),
            "Wrote reports/sales_summary.md with totals per month and per region. The chart could "
            "not be produced because matplotlib is not installed in the environment, so the "
            "monthly figures are in a markdown table instead.",
            files=(_REPORT,),
            tests=tests_of(DATA_CHECKS),
            errors=("ModuleNotFoundError: No module named 'matplotlib'",),
        ),
        _run(
            "arena-da-04",
            DATA,
            "codex-cli",
            "gpt-5-codex",
            usage(input_tokens=15_900, output_tokens=4_400, calls=8, seconds=121.0, cost_usd=0.09),
            "Report: $4.82M net revenue, 18,340 orders, 12 months present. Q4 is 38% of the year. "
            "Top regions by revenue: West, Northeast, South, Midwest. Monthly chart saved as PNG.",
            files=(_REPORT, _CHART),
            tests=tests_of(DATA_CHECKS),
        ),
        _run(
            "arena-da-05",
            DATA,
            "claude-code",
            "claude-opus-4.5",
            usage(input_tokens=14_200, output_tokens=6_300, calls=6, seconds=142.0),
            "The quarterly summary is in reports/sales_summary.md, with the monthly revenue chart "
            "next to it and a per-region CSV for the finance team. Highlights: $4.82M net revenue; "
            "November is 12.7% of the year; the South grew fastest in H2 (+19% over H1); SKU "
            "A-1042 alone accounts for 9% of returns and is worth a quality check.",
            files=(_REPORT, _CHART, "reports/regional_breakdown.csv"),
            tests=tests_of(DATA_CHECKS),
        ),
        _run(
            "arena-da-06",
            DATA,
            "copilot-agent",
            "gpt-4.1",
            usage(total_tokens=12_700, calls=5, seconds=97.0, cost_usd=0.05),
            "Total revenue is $5.11M. Created the summary and a chart (monthly_revenue.jpg).",
            files=(_REPORT, "reports/monthly_revenue.jpg"),
            tests=tests_of(DATA_CHECKS, {0, 2}),
        ),
        _run(
            "arena-da-07",
            DATA,
            "cline",
            "qwen2.5-coder-32b",
            usage(total_tokens=30_800, calls=15, iterations=2, seconds=260.0),
            "Report and chart created. Net revenue $4.821M; the ledger check is off by $1,204 "
            "because 3 orders appear twice in the CSV and I did not deduplicate them.",
            files=(_REPORT, _CHART),
            tests=tests_of(DATA_CHECKS, {0}),
        ),
        _run(
            "arena-da-08",
            DATA,
            "windsurf",
            "claude-sonnet-4",
            usage(input_tokens=24_600, output_tokens=5_900, calls=13, iterations=3, seconds=245.0),
            "Finished the sales summary. After deduplicating 3 repeated orders, net revenue is "
            "$4.82M. Monthly trend, regional ranking and returns analysis are in the report; the "
            "chart marks the November peak.",
            files=(_REPORT, _CHART),
            tests=tests_of(DATA_CHECKS),
        ),
        _run(
            "arena-da-09",
            DATA,
            "aider",
            "llama-3.3-70b",
            usage(total_tokens=41_000, calls=18, iterations=3, seconds=340.0),
            "Wrote the summary. December is missing from the monthly table because its dates use "
            "a different format (12/05/2024) and failed to parse; I did not get to the chart.",
            files=(_REPORT,),
            tests=tests_of(DATA_CHECKS, {1}),
        ),
        _run(
            "arena-da-10",
            DATA,
            "codex-cli",
            "o3",
            usage(
                input_tokens=21_300,
                output_tokens=7_800,
                calls=11,
                iterations=2,
                seconds=298.0,
                cost_usd=0.31,
            ),
            "Report and chart are done. Besides the totals ($4.82M net, 3.1% of units returned) I "
            "added a month-over-month table and flagged that 60% of the November spike comes from "
            "two SKUs, so next year's forecast should not extrapolate from it.",
            files=(_REPORT, _CHART),
            tests=tests_of(DATA_CHECKS),
        ),
        _run(
            "arena-da-11",
            DATA,
            "cursor",
            "claude-sonnet-4",
            usage(input_tokens=19_900, output_tokens=4_700, calls=10, seconds=150.0),
            "Created reports/sales_summary.md and reports/monthly_revenue.png. Net revenue $4.82M; "
            "West is the top region; returns are concentrated in Q1.",
            files=(_REPORT, _CHART),
            tests=tests_of(DATA_CHECKS),
        ),
    ]


def submissions() -> list[dict[str, Any]]:
    """Every Arena example submission, task by task."""
    return [*_frontend(), *_debugging(), *_data()]
