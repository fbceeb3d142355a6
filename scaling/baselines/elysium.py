"""ELYSIUM (Lombardi et al., TPDS 2017) as a baseline policy: instances first, then nodes."""

from __future__ import annotations

from filters.base import Configurable, check_number, reject
from scaling.baselines.observation import Observation
from scaling.policy import ThresholdPolicy


class ElysiumPolicy(Configurable):
    """Operator parallelism from per-core thresholds; worker nodes decided separately after it.

    ELYSIUM's ``computeConfig`` (its Algorithm 1; research/seed001_003.md §1.2, §3.1) runs once
    per assessment period in two stages, both from scratch (line 5, :math:`p \\leftarrow 1`; the
    prose's "adjusted" could start from the running count, which would make ``core_min`` a
    dead band: we follow the algorithm), so scaling in needs no rule:

    1. **operators**: with input rate :math:`r` = ``arrival_rate`` (reactive mode) and the
       profiled per-instance CPU :math:`f(r/p)`, start at :math:`p = 1`, add instances while
       :math:`f(r/p) >` ``core_max`` = 0.65, then remove them while :math:`f(r/p) <`
       ``core_min`` = 0.25 and :math:`p > 1`;
    2. **resources**: the fewest worker nodes :math:`k` on which the scheduler's allocation
       leaves no node above ``cpu_max`` = 0.80 of its CPU.

    The thresholds are the paper's, chosen by Q-learning (0.80 had the best reward, its
    Table 1). The assessment period is 60 s (``interval``), the testbed's worker VMs had 4
    cores (``cores_per_node``).

    **On the single-stage queue model.** One queue-model instance is one ELYSIUM operator
    instance: it runs on one core, and at :math:`c` = ``Observation.capacity`` tuples/s it
    is busy all the time, so the profile is linear, :math:`f(x) = x / c`, and stage 1 is

    .. math:: p = \\lceil r / (c \\cdot \\text{core\\_max}) \\rceil

    within ``min_operators`` and ``max_operators`` (ELYSIUM's ``max_parall``; 4 in the paper).
    The removal loop is kept as written, but with a linear profile it can act only when
    ``core_min`` > ``core_max`` / 2 (after the first loop :math:`f(r/p) > 0.65 (p-1)/p \\ge
    0.325`). The queue model has no machines: an instance's capacity does not depend on which
    node it shares. So ``decide`` returns :math:`p`, the count the queue model runs, and the
    nodes of stage 2 are kept in ``nodes`` for cost accounting (on Spark: :math:`p` tasks on
    ``nodes`` executors of ``cores_per_node`` cores each). Stage 2 uses Storm's even
    scheduler, which puts at most :math:`\\lceil p/k \\rceil` instances on a node, and no
    overhead profile (the paper learns one; we have none), so the busiest node's CPU is
    :math:`\\lceil p/k \\rceil f(r/p) /` ``cores_per_node``; :math:`k` never exceeds :math:`p`,
    where each instance has a node to itself (the paper's loop has no bound).

    Without a capacity (``capacity`` <= 0) there is no profile: the count and nodes are held.
    The proactive mode (an ANN forecast of the next five minutes) is not implemented.

    Parameters
    ----------
    core_max, core_min
        Per-instance CPU thresholds, 0 <= ``core_min`` < ``core_max``.
    cpu_max
        Highest CPU fraction of a node, > 0.
    cores_per_node
        Cores of a worker node, an integer >= 1.
    min_operators, max_operators
        Bounds: an integer >= 0, and ``None`` (no limit) or an integer >= ``min_operators``.
    interval
        Seconds between assessments, > 0.

    >>> seen = Observation(t=0.0, period=60.0, operators=10, arrival_rate=1300.0,
    ...                    processed_rate=1000.0, capacity=100.0, utilisation=1.0,
    ...                    backlog=18_000.0, backlog_rate=300.0, backpressure=0.0)
    >>> elysium = ElysiumPolicy()
    >>> elysium.decide(seen), elysium.nodes  # 13 cores of work at 0.65 each, 4 per node
    (20, 5)
    """

    name = "elysium"

    def __init__(
        self,
        core_max: float = 0.65,
        core_min: float = 0.25,
        cpu_max: float = 0.80,
        cores_per_node: int = 4,
        min_operators: int = 1,
        max_operators: int | None = None,
        interval: float = 60.0,
    ) -> None:
        check_number(self.name, "core_max", core_max, minimum=0, exclusive_minimum=True)
        check_number(self.name, "core_min", core_min, minimum=0, maximum=core_max)
        if core_min == core_max:
            reject(self.name, "core_min", core_min, "core_min must be < core_max")
        check_number(self.name, "cpu_max", cpu_max, minimum=0, exclusive_minimum=True)
        check_number(self.name, "cores_per_node", cores_per_node, minimum=1, integer=True)
        check_number(self.name, "min_operators", min_operators, minimum=0, integer=True)
        if max_operators is not None:
            check_number(
                self.name, "max_operators", max_operators, minimum=min_operators, integer=True
            )
        check_number(self.name, "interval", interval, minimum=0, exclusive_minimum=True)
        self.core_max, self.core_min, self.cpu_max = (
            float(core_max),
            float(core_min),
            float(cpu_max),
        )
        self.cores_per_node = int(cores_per_node)
        self.min_operators = int(min_operators)
        self.max_operators = None if max_operators is None else int(max_operators)
        self.interval = float(interval)
        # Capacity 1: needed(x) is the ceiling of x (float noise absorbed) within the bounds.
        self._bounds = ThresholdPolicy(1.0, self.min_operators, self.max_operators)
        self._nodes: int | None = None

    @property
    def nodes(self) -> int | None:
        """Worker nodes decided by the last assessment (``None`` before the first one)."""
        return self._nodes

    def decide(self, observation: Observation) -> int:
        if observation.capacity <= 0:
            return self._bounds.clamp(observation.operators)
        work = observation.arrival_rate / observation.capacity  # cores' worth: sum of f
        operators = self._bounds.needed(work / self.core_max)
        while operators > max(1, self.min_operators) and work / operators < self.core_min:
            operators -= 1
        per_instance = work / operators if operators else 0.0
        nodes = 1
        while nodes < operators and self._node_cpu(operators, nodes, per_instance) > self.cpu_max:
            nodes += 1
        self._nodes = nodes
        return operators

    def _node_cpu(self, operators: int, nodes: int, per_instance: float) -> float:
        """CPU fraction of the busiest node when ``operators`` are spread evenly on ``nodes``."""
        return -(-operators // nodes) * per_instance / self.cores_per_node
