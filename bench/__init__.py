"""Benchmark scripts: each prints its figures beside their anchors in one run."""
