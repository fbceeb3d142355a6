"""StreamCloud's elastic provisioning (Gulisano et al., TPDS 2012) as a baseline policy."""

from __future__ import annotations

from filters.base import Configurable, check_choice, check_number
from scaling.baselines.observation import Observation
from scaling.policy import ThresholdPolicy


class StreamCloudPolicy(Configurable):
    """Act only when the average utilisation leaves [LUT, UUT]; then size the stage for TUT.

    StreamCloud's Elastic Manager, once per monitoring period and subcluster (seed 003 Fig. 12;
    research/seed001_003.md §2.2, §3.2), with :math:`U_{av}` = ``Observation.utilisation``
    (the average busy fraction of the :math:`n` running instances, the paper's average CPU):

    * :math:`U_{av} \\in` [``lower``, ``upper``] = [LUT, UUT]: nothing (both ends included:
      the paper provisions "above UUT" and decommissions "below LUT");
    * otherwise ``load-aware`` provisioning (StreamCloud's own) asks for the count whose
      predicted utilisation is ``target`` = TUT, the same load spread over more or fewer
      instances:

      .. math:: n' = \\lceil n\\, U_{av} / \\text{TUT} \\rceil

      so one step reaches TUT, which lies inside the band, and no second step follows at
      once. The paper hides this in ``ComputeNewConfiguration(TUT, old, U_av)`` and states
      only its aim ("to reach for TUT"); the formula is our reading (seed001_003.md §2.2,
      [inferred]), which the paper's linear scalability supports;
    * ``individual`` provisioning, the naive strategy the paper compares with, adds or
      removes one instance (:math:`n \\pm 1`) and cascades under a steady rise.

    LUT = 0.5, UUT = 0.9, TUT = 0.6 are the paper's self-provisioning experiment's (its
    Fig. 21; seed001_003.md §2.2). The paper gives no monitoring period; 15 s is the decision
    period the other baselines share. A saturated stage reports :math:`U_{av}` = 1, so one step
    multiplies :math:`n` by at most 1/TUT, as with HPA.

    Parameters
    ----------
    lower, upper
        LUT >= 0 and UUT > LUT, busy fractions.
    target
        TUT, in [LUT, UUT] and > 0.
    provisioning
        ``"load-aware"`` or ``"individual"``.
    min_operators, max_operators
        Bounds: an integer >= 0, and ``None`` (no limit) or an integer >= ``min_operators``.
    interval
        Seconds between decisions, > 0.

    >>> seen = Observation(t=0.0, period=15.0, operators=15, arrival_rate=1425.0,
    ...                    processed_rate=1425.0, capacity=100.0, utilisation=0.95,
    ...                    backlog=0.0, backlog_rate=0.0, backpressure=0.0)
    >>> StreamCloudPolicy().decide(seen)  # ceil(15 * 0.95 / 0.6) = ceil(23.75)
    24
    >>> StreamCloudPolicy(provisioning="individual").decide(seen)
    16
    """

    name = "streamcloud"

    def __init__(
        self,
        lower: float = 0.5,
        upper: float = 0.9,
        target: float = 0.6,
        provisioning: str = "load-aware",
        min_operators: int = 1,
        max_operators: int | None = None,
        interval: float = 15.0,
    ) -> None:
        check_number(self.name, "lower", lower, minimum=0)
        check_number(self.name, "upper", upper, minimum=lower, exclusive_minimum=True)
        check_number(
            self.name, "target", target, minimum=lower, maximum=upper, exclusive_minimum=lower == 0
        )
        check_choice(self.name, "provisioning", provisioning, ("load-aware", "individual"))
        check_number(self.name, "min_operators", min_operators, minimum=0, integer=True)
        if max_operators is not None:
            check_number(
                self.name, "max_operators", max_operators, minimum=min_operators, integer=True
            )
        check_number(self.name, "interval", interval, minimum=0, exclusive_minimum=True)
        self.lower, self.upper, self.target = float(lower), float(upper), float(target)
        self.provisioning = provisioning
        self.min_operators = int(min_operators)
        self.max_operators = None if max_operators is None else int(max_operators)
        self.interval = float(interval)
        # Capacity 1: needed(x) is the ceiling of x (float noise absorbed) within the bounds.
        self._bounds = ThresholdPolicy(1.0, self.min_operators, self.max_operators)

    def decide(self, observation: Observation) -> int:
        n, utilisation = observation.operators, observation.utilisation
        if self.lower <= utilisation <= self.upper:
            return self._bounds.clamp(n)
        return self.new_configuration(n, utilisation)

    def new_configuration(self, operators: int, utilisation: float) -> int:
        """The paper's ``ComputeNewConfiguration(TUT, old, U_av)``, within the bounds.

        >>> StreamCloudPolicy().new_configuration(27, 0.5)  # ceil(27 * 0.5 / 0.6) = ceil(22.5)
        23
        """
        if self.provisioning == "individual":
            step = 1 if utilisation > self.upper else -1 if utilisation < self.lower else 0
            return self._bounds.clamp(operators + step)
        return self._bounds.needed(operators * utilisation / self.target)
