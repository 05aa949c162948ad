"""An item's noise model from what is known of it: how often it FAILed on code that was good, and
how often it PASSed on code that was bad, each counted on its own (most flakes are one-sided: a
numerics or perf check fails now and then on good code, a broken compiler rarely passes)."""

from __future__ import annotations

from kregress.bisect.posterior import NoiseModel


def noise_from_counts(false_fails: int, good_runs: int, false_passes: int, bad_runs: int) -> NoiseModel:
    return NoiseModel.from_counts(false_fails, good_runs, false_passes, bad_runs)
