"""The rooms of ``benchmarks.spark_e2e``: the input (``workload``), the job (``job``), its
calibration (``calibration``), the measurements from Spark's event log (``measure``), the
queue model's prediction (``sim``) and the figure (``plot``)."""
