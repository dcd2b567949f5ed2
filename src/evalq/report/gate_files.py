"""A gate's files for CI: JUnit XML (one testcase per task) and a Markdown summary."""

from __future__ import annotations

from xml.etree import ElementTree as ET

from evalq.read.gate import GateReport, TaskGate

SUITE = "evalq gate"


def _figures(t: TaskGate) -> str:
    if t.difference is None or t.low is None or t.high is None:
        return f"{t.design}; n={t.n_baseline} vs {t.n_candidate}"
    p = "-" if t.adjusted_p is None else f"{t.adjusted_p:.3g}"
    return (
        f"{t.difference:+.4g} [{t.low:+.4g}, {t.high:+.4g}]; adjusted p={p}; "
        f"n={t.n_baseline} vs {t.n_candidate}"
    )


def junit(report: GateReport) -> str:
    """The gate as JUnit XML: a testcase per task, failed on a regression (its message names
    the drop and its interval), skipped when too few data decide it and ``too_few`` is pass."""
    failures = sum(t.verdict in ("regression", "unverified", "judge changed") for t in report.tasks)
    too_few = [t for t in report.tasks if t.verdict == "too few"]
    fail_few = report.too_few == "fail"
    root = ET.Element("testsuites", name=SUITE, tests=str(len(report.tasks)))
    suite = ET.SubElement(
        root,
        "testsuite",
        name=f"{SUITE}: {report.candidate} vs {report.baseline} by {report.by}",
        tests=str(len(report.tasks)),
        failures=str(failures + (len(too_few) if fail_few else 0)),
        errors="0",
        skipped=str(0 if fail_few else len(too_few)),
    )
    for t in report.tasks:
        case = ET.SubElement(suite, "testcase", name=t.task, classname=f"evalq.{report.score}")
        if t.verdict in ("regression", "unverified", "judge changed"):
            failed = ET.SubElement(case, "failure", message=t.message, type=t.verdict)
            failed.text = _figures(t)
        elif t.verdict == "too few":
            tag = "failure" if fail_few else "skipped"
            ET.SubElement(case, tag, message=t.message, type="too few")
        ET.SubElement(case, "system-out").text = _figures(t)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def markdown(report: GateReport) -> str:
    """The gate as Markdown a CI step can post on a pull request."""
    mark = {
        "pass": "PASS",
        "regression": "FAIL",
        "too few": "TOO FEW",
        "unverified": "UNVERIFIED",
        "judge changed": "JUDGE CHANGED",
    }
    lines = [
        f"### evalq gate: {mark[report.verdict]}",
        "",
        f"{report.message}. Score: `{report.score}`; allowed drop {report.margin:g}; "
        f"{report.correction} correction at alpha {report.alpha}.",
        "",
        f"| task | verdict | {report.candidate} - {report.baseline} [{report.level:.0%}] "
        "| adjusted p | n |",
        "|---|---|---|---|---|",
    ]
    for t in report.tasks:
        interval = (
            "-"
            if t.difference is None or t.low is None or t.high is None
            else f"{t.difference:+.4g} [{t.low:+.4g}, {t.high:+.4g}]"
        )
        p = "-" if t.adjusted_p is None else f"{t.adjusted_p:.3g}"
        n = f"{t.n_baseline} vs {t.n_candidate}"
        lines.append(f"| `{t.task}` | {t.verdict} | {interval} | {p} | {n} |")
    if report.not_shared:
        lines += ["", f"Not gated (not both groups scored): {', '.join(report.not_shared)}"]
    return "\n".join(lines) + "\n"
