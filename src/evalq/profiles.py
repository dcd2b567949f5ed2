"""Named scoring profiles: the one a task selects, loaded once per process."""

from __future__ import annotations

from functools import lru_cache

from evalq.errors import InvalidInput
from evalq.scoring.profile import Profile, load_profile
from evalq.settings import get_settings


@lru_cache(maxsize=16)
def profile_named(name: str) -> Profile:
    """The profile a task selects: ``default`` is EVALQ_PROFILE_PATH or the bundled one."""
    settings = get_settings()
    if name == "default":
        return load_profile(settings.profile_path)
    if settings.profile_dir is None:
        raise InvalidInput([("profile", f"unknown profile {name!r}; set EVALQ_PROFILE_DIR")])
    path = settings.profile_dir / f"{name}.toml"
    if not path.is_file():
        raise InvalidInput([("profile", f"unknown profile {name!r}: {path} does not exist")])
    return load_profile(path)
