"""Order statistics of one column read in the database: the value at a rank, one or two index
entries at a time (``ORDER BY column LIMIT 2 OFFSET rank``), never every row."""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, select
from sqlalchemy.orm import InstrumentedAttribute, Session

_Column = InstrumentedAttribute[Any]


class Ranks:
    """Values of one column at given ranks of its ascending order, over ``count`` rows."""

    def __init__(
        self, session: Session, column: _Column, where: ColumnElement[bool], count: int
    ) -> None:
        self._session, self._column, self._where, self.count = session, column, where, count
        self._values: dict[int, float] = {}

    def at(self, rank: int) -> float:
        """The value at ``rank`` (0 = smallest) as a float; one query fetches it and the next."""
        if rank not in self._values:
            rows = self._session.scalars(
                select(self._column).where(self._where).order_by(self._column).offset(rank).limit(2)
            ).all()
            for offset, value in enumerate(rows):
                self._values[rank + offset] = float(value)
        return self._values[rank]

    def last(self) -> float:
        """The largest value (read from the end of the index, not at offset ``count - 1``)."""
        if self.count - 1 not in self._values:
            value = self._session.scalar(
                select(self._column).where(self._where).order_by(self._column.desc()).limit(1)
            )
            self._values[self.count - 1] = float(value)
        return self._values[self.count - 1]

    def median(self) -> float:
        """`statistics.median` of the column."""
        half = self.count // 2
        if self.count % 2 == 1:
            return self.at(half)
        return (self.at(half - 1) + self.at(half)) / 2

    def quartiles(self) -> tuple[float, float]:
        """q25 and q75 as ``statistics.quantiles(n=4, method="exclusive")``; one row: itself."""
        size = self.count
        if size == 1:
            return self.at(0), self.at(0)
        result = []
        for i in (1, 3):
            j = min(max(i * (size + 1) // 4, 1), size - 1)
            delta = i * (size + 1) - j * 4
            result.append((self.at(j - 1) * (4 - delta) + self.at(j) * delta) / 4)
        return result[0], result[1]
