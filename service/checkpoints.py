"""When a stream's Scaler state is written, and how a Scaler is brought back from it.

Writing the state with every batch was the most costly part of a small batch's commit (issue
32: exporting and JSON-encoding it took about 13 % of the server's time, more than the Scaler's
own work; a ``tvd`` state is 3.7 KB, the default filter's 6.5). So the state is written now and
then, as the stream's checkpoint: with the batch that brings the samples applied since the last
one to ``samples`` (N) or more, and with the first batch ``seconds`` (T) or more after it. Every
sample is still stored, with its decision, in the batch's transaction, so nothing acknowledged
depends on the checkpoint; loading the stream feeds the samples after it to a Scaler loaded from
it (``replay``). That is exact: a Scaler continues exactly from a loaded state (the filters'
contract, ``Scaler.load_state_dict``), and fed the same samples (stored as the doubles they
were) it makes the same decisions. ``replay`` checks that it does, decision by decision. Where
it does not, the code that made the stored decisions was another version (an upgrade that
changed how a Scaler decides): the stored decisions stand as acknowledged, the Scaler goes on
from where this version's replay of the same samples leaves it, and the load logs a warning
naming the stream and the first sample decided otherwise (``steadyscale.replay``). A stream is
refused (``ReplayMismatch``, 500) only when its Scaler refuses a stored sample: it cannot be
brought back without dropping an acknowledged sample.

A batch whose stream was just loaded by replaying samples writes a checkpoint whatever the
count: a load is most often followed by another (replicas taking turns at a stream, which any
load balancer does; a cache too small for its streams), and exporting and encoding the state
(0.25-0.35 ms) costs what replaying 11-14 samples does (tvd, the default filter), so each load
then replays the batches since the last load, not up to N - 1 samples again. A stream that
stays cached, on one replica, writes every N samples only.

N bounds the work of loading a stream (a restart, a stream evicted from the Scaler cache, a
replica that finds another wrote the stream since it cached it): at most N - 1 samples are
replayed. A stream whose Scaler is costly checkpoints sooner, so that a load replays at most
about ``REPLAY_SECONDS`` of estimated CPU (``service.budget``); and the storage never prunes a
sample its checkpoint has not taken (``Store.append``).

The state is checked (no NaN, no ±inf: it could never be loaded again) when it is written: a
batch that writes a checkpoint and finds it non-finite is refused whole, as before. Between
checkpoints that check does not run; ``service.scalers.decide`` refuses a non-finite decision
at the sample, which is where the Scaler's values show.

>>> policy = CheckpointPolicy(samples=100, seconds=60.0)
>>> policy.due(pending=99, written=1000.0, now=1030.0, estimate=25e-6)
False
>>> policy.due(pending=100, written=1000.0, now=1030.0, estimate=25e-6)
True
>>> policy.due(pending=1, written=1000.0, now=1060.0, estimate=25e-6)
True
>>> policy.due(pending=3, written=1000.0, now=1001.0, estimate=25e-6, replayed=2)
True
>>> policy.interval(estimate=0.01)  # a Scaler estimated at 10 ms per sample: 5 at most
5
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

from scaling import Scaler
from service.errors import ReplayMismatch
from service.rows import Applied

LOG = logging.getLogger("steadyscale.replay")

# The largest the setting may be, so that loading a stream after a crash stays within the 50 ms
# issue 32 sets: replaying 768 samples (N = 1000, capped by REPLAY_SECONDS) took 26 ms of CPU
# with tvd and 36 with the default filter, but 60 and 96 ms of wall time on the benchmark's
# shared 2-core machine (load average about 10; benchmarks.service --only load). 300 keeps
# both under 50 (docs/benchmarks.md).
MAX_CHECKPOINT_SAMPLES = 300
# Samples between two checkpoints, by default (the setting checkpoint_samples): the largest the
# setting allows, as a load is rare (a restart, a stream evicted from the cache, a replica that
# finds another wrote it) and a checkpoint is not: the state is written with one batch of
# 1-sample POSTs in 300 (its cost, 0.1-0.3 ms, spread to under 1 µs a sample), with every third
# 100-sample batch, and a load replays at most 299 samples, about 12 ms of CPU for tvd or the
# default filter. From 100 to 300 a 100-sample batch's write path went from 15.6 M to 14.7 M
# instructions (docs/benchmarks.md, session 23).
CHECKPOINT_SAMPLES = MAX_CHECKPOINT_SAMPLES
# Seconds after which the next batch writes a checkpoint whatever the count, by default (the
# setting checkpoint_seconds): a stream of one sample a minute checkpoints with every batch,
# which costs nothing at that rate, rather than keep a state 100 minutes behind its samples.
CHECKPOINT_SECONDS = 60.0
# Estimated CPU seconds (service.budget, about twice the measured cost) of the samples a load
# may replay: issue 32's target for loading a stream after a crash, 50 ms.
REPLAY_SECONDS = 0.05


@dataclass(frozen=True)
class CheckpointPolicy:
    """A checkpoint every ``samples`` samples, or with the first batch ``seconds`` after the
    last one."""

    samples: int = CHECKPOINT_SAMPLES
    seconds: float = CHECKPOINT_SECONDS

    def interval(self, estimate: float) -> int:
        """Samples between two checkpoints of a stream whose Scaler is estimated at
        ``estimate`` CPU seconds per sample: ``samples``, fewer when replaying them would
        take more than ``REPLAY_SECONDS``; at least 1."""
        return max(1, min(self.samples, int(REPLAY_SECONDS / estimate)))

    def due(
        self, pending: int, written: float, now: float, estimate: float, replayed: int = 0
    ) -> bool:
        """Whether a batch that leaves ``pending`` samples applied after the last checkpoint,
        written at ``written`` (Unix seconds; ``now`` is the time), writes the next one; with
        ``replayed`` > 0, the batch's stream was just loaded by replaying that many samples,
        and its batch writes one too (see the module: the next load may well come soon)."""
        return replayed > 0 or pending >= self.interval(estimate) or now - written >= self.seconds


def replay(stream_id: str, scaler: Scaler, after: Sequence[Applied]) -> int:
    """Feed ``scaler``, loaded from the stream's checkpoint, the samples applied after it;
    the number of them it decided otherwise than stored (0 unless the code changed since: see
    the module), with a warning naming the first. ``ReplayMismatch`` if it refuses one."""
    differ = 0
    for applied in after:
        try:
            decision = scaler.observe(
                applied.volume,
                applied.t,
                backlog=applied.backlog,
                running=applied.running,
                processed=applied.processed,
            )
        except (ValueError, ArithmeticError) as error:
            raise ReplayMismatch(stream_id, applied.t, f"the Scaler refused it: {error}") from None
        replayed = (decision.filtered, decision.previous, decision.operators, decision.action,
                    decision.code)  # fmt: skip
        stored = (applied.filtered, applied.previous, applied.operators, applied.action,
                  applied.code)  # fmt: skip
        if replayed != stored:
            if not differ:
                LOG.warning(
                    "stream %r: replayed after its checkpoint, the sample at t=%r is decided %s,"
                    " stored as %s (another version decided it); the stored decisions stand",
                    stream_id[:64],
                    applied.t,
                    replayed,
                    stored,
                )
            differ += 1
    return differ
