"""The fixed numbers of the ``changepoint`` filter (``filters.changepoint.ChangePoint``).

Its hyperparameters are its constructor's arguments; these are the same for every stream: the
noise estimate's winsorising, memory and warm-up, how far the evidence of drift looks, the least
CUSUM allowance, the share of a cycle the output provisions for, and the samples kept to restart
the level from. Each comment says why the value is what it is (docs/default.md measures the
least allowance and the cycle's share).
"""

from __future__ import annotations

import math

# A difference of two samples carries the noise twice; winsorised at 3 of its deviations,
# E[min(|z|, 3)] = sqrt(2/pi) (1 - exp(-9/2)) + 6 (1 - Phi(3)) = 0.797096 for a standard normal
# z. So sigma = mean(min(|d|, 3 sqrt(2) sigma)) / (sqrt(2) * 0.797096).
_TO_SIGMA = 1.0 / (math.sqrt(2.0) * 0.797096)
_WINSOR_DIFFERENCE = 3.0 * math.sqrt(2.0)
# Differences taken unwinsorised at first, while the estimate is too young to judge them.
_WARM_UP = 8
# Differences the noise estimate averages: a running mean until then, exponential after.
_NOISE_MEMORY = 120
# Independent looks at the recent level (one per `memory` samples) that the evidence of drift
# and of variation average: under no drift the drift estimate then errs by about sqrt(2/10) of
# its noise variance.
_DRIFT_LOOKS = 10.0
# The least allowance, in noise deviations: resolution / (2 sigma) alone falls to 0.07 under
# noise of 7 capacities (nyc_taxi at SNR 1), where noise alone declared a change about once per
# 3,000 samples and the level restarted from its most extreme samples (docs/default.md). Smaller
# changes are left to the drift (step 4).
_LEAST_ALLOWANCE = 0.25
# Share of a detected cycle's deviation the output provisions for (step 6; 0.84, the 5:1 quantile
# of a Gaussian, measured worse in docs/default.md).
_CYCLE_SHARE = 0.5
# Samples kept to restart the level from after a change.
_RECENT = 64
