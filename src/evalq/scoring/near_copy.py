"""Near-copies by similarity: a run whose content is nearly an earlier run's, with nearly its
usage, is that run sent again, whatever was appended or renamed.

Equality (the shape digest, `evalq.core.schemas.shape_digest`) is stepped past by one appended
sentence. So each run's content (its output in the normal form, `evalq.core.text_form`, its
trace and its evidence) is read as a set of word 3-shingles and sketched by MinHash (Broder
1997; datasketch's `MinHash`, `NUM_PERM` permutations, fixed seed, so a sketch is the same in
every process). Two runs are near in content when the estimated *containment* of the smaller
set in the larger (``J (|A| + |B|) / ((1 + J) min(|A|, |B|))`` from the sketches' Jaccard ``J``)
is at least `NEAR_CONTAINMENT`: an appended sentence leaves the original wholly contained.

Calibrated on real distinct runs (`bench/near_copies.py`): among the bundled examples' runs with
different outputs, the highest containment is 0.78 (two Scylla variants' short reports); among
the 320 real ICLR 2017 reviews and abstracts of bench/data, 0.16. Identical contents are 1.0; a
bundled run with a sentence appended is at least 0.92 (the shortest, 8-word outputs).
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from evalq.core.text_form import text_form

if TYPE_CHECKING:  # datasketch loads scipy and redis: paid by the refresh, not by every read
    import numpy as np
    from datasketch import MinHash

NUM_PERM = 128
"""MinHash permutations: the Jaccard estimate's standard error is about 1/sqrt(128) = 0.09 at
J = 0.5 and shrinks toward 0 as J nears 1."""
SEED = 1
SHINGLE = 3
"""Words per shingle."""
NEAR_CONTAINMENT = 0.9
"""Estimated containment at or above which two contents are near (module docstring)."""


@dataclass(frozen=True)
class Sketch:
    """A run's content as the hash values of a MinHash of its shingles (`NUM_PERM` of them,
    from `SEED`), and how many shingles there were."""

    values: np.ndarray[Any, Any]
    size: int

    def jaccard(self, other: Sketch) -> float:
        """The estimated Jaccard similarity of the two shingle sets: the share of hash values
        the sketches have in common (what datasketch's `MinHash.jaccard` returns)."""
        return float((self.values == other.values).sum()) / len(self.values)


def shingles(payload: dict[str, Any]) -> set[str]:
    """Word 3-shingles of the output's normal form, plus one token per trace step and per
    evidence item (canonical JSON in the normal form)."""
    words = text_form(payload.get("output") or "").split()
    found = {" ".join(words[i : i + SHINGLE]) for i in range(max(1, len(words) - SHINGLE + 1))}
    found.discard("")
    trace = payload.get("trace") or {}
    for step in (trace.get("steps") or []) + (trace.get("messages") or []):
        found.add("trace:" + text_form(json.dumps(step, sort_keys=True)))
    evidence = payload.get("evidence")
    if evidence:
        found.add("evidence:" + text_form(json.dumps(evidence, sort_keys=True)))
    return found


def sketch(payload: dict[str, Any]) -> Sketch | None:
    """The content sketch of a stored payload; None for a run with nothing to compare."""
    found = shingles(payload)
    if not found:
        return None
    from datasketch import MinHash

    first = _first_minhash()  # its permutations, drawn once per process, not once per run
    minhash = MinHash(
        num_perm=NUM_PERM, seed=SEED, permutations=first.permutations, scheme=first.scheme
    )
    minhash.update_batch([s.encode() for s in sorted(found)])
    return Sketch(values=minhash.hashvalues, size=len(found))


def sketch_bytes(found: Sketch) -> bytes | None:
    """``found`` as stored (``submissions.sketch``): its shingle count, then its hash values,
    little-endian unsigned 32-bit (datasketch's default scheme draws them below 2**32); None
    for a sketch whose values do not fit (another scheme): it is then read from the payload."""
    import numpy as np

    values = np.asarray(found.values)
    if values.size != NUM_PERM or int(values.max()) > 0xFFFFFFFF:
        return None
    return struct.pack("<I", found.size) + values.astype("<u4").tobytes()


def stored_sketch(stored: bytes) -> Sketch:
    """The sketch `sketch_bytes` stored: the same hash values, so the same containment."""
    import numpy as np

    (size,) = struct.unpack_from("<I", stored)
    return Sketch(values=np.frombuffer(stored, dtype="<u4", offset=4).astype(np.uint64), size=size)


@lru_cache(maxsize=1)
def _first_minhash() -> MinHash:
    """An empty MinHash of `NUM_PERM` permutations drawn from `SEED`: the permutations every
    sketch shares (drawing them is most of what a short output's sketch costs)."""
    from datasketch import MinHash

    return MinHash(num_perm=NUM_PERM, seed=SEED)


def containment(a: Sketch, b: Sketch) -> float:
    """Estimated share of the smaller content's shingles found in the larger, in [0, 1]."""
    j = a.jaccard(b)
    return min(1.0, j * (a.size + b.size) / ((1 + j) * min(a.size, b.size)))


def near(a: Sketch | None, b: Sketch | None) -> float | None:
    """``containment`` of two sketches when it reaches `NEAR_CONTAINMENT`, else None."""
    if a is None or b is None:
        return None
    value = containment(a, b)
    return value if value >= NEAR_CONTAINMENT else None
