"""Command-line values the store cannot hold, refused before any command runs.

A byte that is not UTF-8 on the command line reaches Python as a lone surrogate
(``surrogateescape``); passed on as a task id or a labeller it made the store's driver fail
with "unexpected UnicodeEncodeError" (exit 1). Every value on the command line follows the
store's string rule (`evalq.core.storable.string_rule`) here, as the HTTP API's path and query
values do (`evalq.producer.api.params`). (A NUL cannot reach a program through its arguments.)

A value naming a file that exists is left alone: a file may be named in any bytes, and its name
is only opened, never stored.
"""

from __future__ import annotations

import os
from collections.abc import Sequence


def unstorable(args: Sequence[str]) -> list[tuple[str, str]]:
    """``(where, rule)`` for each value of ``args`` the store cannot hold.

    ``where`` is the option the value belongs to (``--labeller`` for ``--labeller X`` or
    ``--labeller=X``), or the value itself, escaped, for an argument.
    """
    if all(arg.isascii() for arg in args):
        return []  # the usual command line: nothing more to load (start-up stays quick)
    from evalq.core.storable import printable, string_rule

    found = []
    for index, arg in enumerate(args):
        option, equals, value = arg.partition("=") if arg.startswith("--") else ("", "", arg)
        if not equals:
            option, value = "", arg
        rule = string_rule(value)
        if rule is None or os.path.exists(value):
            continue
        before = args[index - 1] if index else ""
        if not option and before.startswith("-") and before != "--" and "=" not in before:
            option = before
        found.append((printable(option) if option else f"argument '{printable(value)}'", rule))
    return found
