"""The scoring profile: the bundled TOML equals the specs' defaults, and bad files are named."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from evalq.core.errors import InvalidInput
from evalq.core.profile import Profile, load_profile, profile_from_dict, profile_named
from evalq.core.schemas import Task
from evalq.core.settings import Settings


def test_bundled_toml_is_the_documented_defaults() -> None:
    bundled = load_profile()
    assert bundled == Profile()
    assert bundled.hash == Profile().hash
    assert bundled.peerread.weights["time_taken"] == 0.167
    assert bundled.arena.category_weights["debugging"]["speed"] == 0.35


DEFAULT_HASH = "7359dcffb536146523ae420cfb17ea07fd146c3ff9d7a21b6831a64d3b7b3d1a"
"""The bundled profile's hash since its Arena baseline is robust by default (``text.precision``
and ``judge.panel`` at their defaults still leave it as it was without them)."""
SPEC_HASH = "f62a05fa62f79721692ee0198bd6f546d7c45fce995e7944c73460948d8a0895"
"""The bundled profile's hash before that (since PeerRead reads copying, a floor and the judge's
review rubrics): what a profile that selects spec 000's baseline still has."""


def test_the_baseline_is_robust_by_default_and_the_spec_baseline_keeps_its_hash(
    tmp_path: Path,
) -> None:
    assert load_profile().arena.baseline == "robust"
    path = tmp_path / "p.toml"
    path.write_text('[arena]\nbaseline = "runs"\n')
    assert load_profile(path).hash == SPEC_HASH
    path.write_text('[arena]\nbaseline = "agents"\n')
    assert load_profile(path).hash not in (SPEC_HASH, DEFAULT_HASH)
    path.write_text('[arena]\nbaseline = "median"\n')
    with pytest.raises(InvalidInput) as refused:
        load_profile(path)
    assert "arena.baseline" in str(refused.value)


def test_precision_is_fp32_by_default_and_bf16_changes_the_hash(tmp_path: Path) -> None:
    assert load_profile().text.precision == "fp32"
    assert load_profile().hash == DEFAULT_HASH  # fp32 left out: earlier profiles keep theirs
    path = tmp_path / "p.toml"
    path.write_text('[text]\nprecision = "bf16"\n')
    assert load_profile(path).text.precision == "bf16"
    assert load_profile(path).hash not in (DEFAULT_HASH, Profile().hash)
    path.write_text('[text]\nprecision = "fp32"\n')
    assert load_profile(path).hash == DEFAULT_HASH


def test_panel_is_empty_by_default_and_a_panel_changes_the_hash(tmp_path: Path) -> None:
    assert load_profile().judge.panel == []
    path = tmp_path / "p.toml"
    path.write_text('[judge]\npanel = ["openai:gpt-4o-mini", "anthropic:claude-haiku-4-5"]\n')
    assert load_profile(path).judge.panel == ["openai:gpt-4o-mini", "anthropic:claude-haiku-4-5"]
    assert load_profile(path).hash not in (DEFAULT_HASH, Profile().hash)
    path.write_text("[judge]\npanel = []\n")
    assert load_profile(path).hash == DEFAULT_HASH  # no panel left out: earlier hashes hold


def test_usage_ranks_any_run_by_default_and_traced_changes_the_hash(tmp_path: Path) -> None:
    assert load_profile().arena.usage == "any"
    assert load_profile().hash == DEFAULT_HASH  # "any" left out: earlier profiles keep theirs
    path = tmp_path / "p.toml"
    path.write_text('[arena]\nusage = "traced"\n')
    assert load_profile(path).arena.usage == "traced"
    assert load_profile(path).hash not in (DEFAULT_HASH, Profile().hash)
    path.write_text('[arena]\nusage = "any"\n')
    assert load_profile(path).hash == DEFAULT_HASH
    path.write_text('[arena]\nusage = "checked"\n')
    with pytest.raises(InvalidInput) as refused:
        load_profile(path)
    assert "arena.usage" in str(refused.value)


def test_hash_changes_with_any_value(tmp_path: Path) -> None:
    path = tmp_path / "p.toml"
    path.write_text("[peerread]\naccept = 0.81\n")
    assert load_profile(path).hash != Profile().hash


@pytest.mark.parametrize(
    ("toml", "field", "rule"),
    [
        ("[arena]\nweights = { efficiency = -1 }\n", "profile.arena.weights.efficiency", ">= 0"),
        ("[peerread]\naccept = 0.3\n", "profile.peerread", "weak_reject <= weak_accept"),
        ("[text]\nngram_range = [3, 1]\n", "profile.text", "ngram_range"),
        ("[suite]\npass_threshold = 1.5\n", "profile.suite.pass_threshold", "less than or equal"),
        ("[scylla]\nbogus = 1\n", "profile.scylla.bogus", "Extra inputs"),
        ('[text]\nprecision = "int8"\n', "profile.text.precision", "'fp32' or 'bf16'"),
        ('[judge]\npanel = ["openai: gpt-4o"]\n', "profile.judge.panel.0", "pattern"),
    ],
)
def test_bad_profiles_name_field_and_rule(tmp_path: Path, toml: str, field: str, rule: str) -> None:
    path = tmp_path / "p.toml"
    path.write_text(toml)
    with pytest.raises(InvalidInput) as caught:
        load_profile(path)
    found = dict(caught.value.problems)
    assert field in found, found
    assert rule.replace(">= 0", "greater than or equal to 0") in found[field]


def test_not_toml_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "p.toml"
    path.write_text("[arena\n")
    with pytest.raises(InvalidInput, match="profile: not valid TOML"):
        load_profile(path)


def test_price_uses_dollars_per_million_tokens() -> None:
    # gpt-4o: 1M input x $5 + 0.5M output x $15 = 5 + 7.5
    assert Profile().price("gpt-4o", 1_000_000, 500_000) == pytest.approx(12.5)
    assert Profile().price("unknown-model", 1, 1) is None


@pytest.mark.parametrize("name", ["sub/../../outside", "../outside", "/etc/passwd", "a.b", ""])
def test_a_profile_name_is_a_name_never_a_path(tmp_path: Path, name: str) -> None:
    profiles = tmp_path / "profiles"
    profiles.mkdir()
    (tmp_path / "outside.toml").write_text("")  # what a traversal would have loaded
    with pytest.raises(InvalidInput) as caught:
        profile_named(name, Settings(profile_dir=profiles))
    assert [field for field, _ in caught.value.problems] == ["profile"]
    assert str(tmp_path) not in str(caught.value)
    with pytest.raises(ValidationError):
        Task.model_validate({"id": "t", "profile": name})


def test_an_unknown_profile_does_not_show_the_server_path(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput) as caught:
        profile_named("missing", Settings(profile_dir=tmp_path))
    assert "missing" in str(caught.value) and str(tmp_path) not in str(caught.value)


def test_a_named_profile_is_read_from_the_settings_given(tmp_path: Path) -> None:
    (tmp_path / "house.toml").write_text("[arena]\noutlier_min_flags = 3\n")
    assert profile_named("house", Settings(profile_dir=tmp_path)).arena.outlier_min_flags == 3


def test_a_cascade_level_at_its_later_defaults_keeps_the_earlier_hash() -> None:
    section = {
        "calibration": "x",
        "levels": [{"model": "openai:a", "threshold": 0.5}, {"model": "openai:b"}],
    }
    earlier = profile_from_dict({"judge": {"cascade": section}, "arena": {"baseline": "runs"}})
    # The hash this cascade has with levels that do not name confidence, base_url or key (the
    # same as before levels had them, under the profile's other sections as they are now: the
    # PeerRead text settings moved every profile's hash once, and the default profile's pinned
    # hash in tests/unit/core moved with it; the spec's Arena baseline, the default then).
    assert earlier.hash == "e1d00e5f316c1225c1af5f1838693ce92afebe7ea34ba6c79588eebc96d6799d"
    for change in ({"confidence": "logprobs"}, {"base_url": "http://h/v1"}, {"key": "k"}):
        levels = [section["levels"][0] | change, section["levels"][1]]  # type: ignore[index]
        changed = profile_from_dict(
            {"judge": {"cascade": section | {"levels": levels}}, "arena": {"baseline": "runs"}}
        )
        assert changed.hash != earlier.hash
