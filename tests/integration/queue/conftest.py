"""The pipeline fixture (its helpers are in tests/support/pipeline.py)."""

from tests.support.pipeline import pipeline

__all__ = ["pipeline"]
