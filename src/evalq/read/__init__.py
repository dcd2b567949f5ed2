"""The read side: baselines, leaderboards and report data, computed from stored raw metrics."""
