"""The experiments room: cells (one simulated run), the one spec grammar, and the studies.

``cells`` (``Cell``, ``run_cell``, ``CostModel``, ``summarize``), ``specs`` (filters, guards
and policies as text, with ``|`` grids), ``sweep`` (any grid on Spark), ``paper`` (the paper's
experiment and its claims), ``compare`` (steadyscale against the baselines on the queue model).
"""
