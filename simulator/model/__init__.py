"""The model room: what is simulated, with no Spark and no output.

``workloads`` (synthetic trends and recorded traces), ``noise`` (noise at a given SNR),
``engine`` (a Scaler over a series: ``simulate``), ``metrics`` (scaling operations and
provisioning), ``queue`` (a queue of records served by the instances a policy keeps).
"""
