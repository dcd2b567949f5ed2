"""`evalq judge calibrate FILE`: thresholds as JSON, or a refusal naming the labels needed."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from evalq.producer.cli import app as cli


def write(path: Path, items: list[list[tuple[float, bool]]]) -> Path:
    lines = [
        json.dumps({"levels": [{"confidence": c, "agreed": a} for c, a in item]}) for item in items
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_thresholds_or_the_number_of_labels_needed(tmp_path: Path) -> None:
    items = [[(0.9, True), (1.0, True)]] * 40 + [
        [(0.5, i % 2 == 0), (1.0, True)] for i in range(40)
    ]
    enough = write(tmp_path / "enough.jsonl", items)
    answer = CliRunner().invoke(
        cli, ["judge", "calibrate", str(enough), "--reference", "top judge"]
    )
    assert answer.exit_code == 0, answer.output
    result = json.loads(answer.output)
    assert [level["threshold"] for level in result["levels"]] == [0.9, 1.0]
    assert [level["reached"] for level in result["levels"]] == [80, 40]
    assert "the top judge's verdicts" in result["guarantee"]
    few = write(tmp_path / "few.jsonl", items[:21])
    refused = CliRunner().invoke(cli, ["judge", "calibrate", str(few)])
    assert refused.exit_code == 2
    assert "labels: 21 labelled items" in refused.output and "needs at least 29" in refused.output
    (tmp_path / "bad.jsonl").write_text('{"levels": [{"confidence": 0.5}]}\n')
    bad = CliRunner().invoke(cli, ["judge", "calibrate", str(tmp_path / "bad.jsonl")])
    assert bad.exit_code == 2 and "bad.jsonl:1: must be" in bad.output


def test_the_plan_shows_each_levels_start_before_calibrating_on_real_judgments() -> None:
    """On the released Trust or Escalate judgments (bench/data): where each level's search
    starts and how many items it may decide, from confidences alone; calibration agrees."""
    data = Path(__file__).resolve().parents[3] / "bench/data/trust_or_escalate_calibration.jsonl"
    args = ["judge", "calibrate", str(data), "--alpha", "0.15"]
    plan = CliRunner().invoke(cli, [*args, "--plan"])
    assert plan.exit_code == 0, plan.output
    levels = json.loads(plan.output)
    assert [level["items"] for level in levels] == [500, 500, 500]
    assert [level["may_decide"] for level in levels] == [150, 150, 150]  # 30% of the items
    calibrated = CliRunner().invoke(cli, args)
    assert calibrated.exit_code == 0, calibrated.output
    result = json.loads(calibrated.output)
    assert result["levels"][0]["start"] == levels[0]["start"]
    assert result["start_share"] == 0.3
    assert result["untrusted"] == [
        level["level"] for level in result["levels"] if level["threshold"] is None
    ]
    shifted = CliRunner().invoke(cli, [*args, "--plan", "--start-share", "0.1"])
    assert [level["may_decide"] for level in json.loads(shifted.output)] == [50, 50, 50]
    refused = CliRunner().invoke(cli, [*args, "--start-share", "0"])
    assert refused.exit_code == 2 and "start_share" in refused.output
