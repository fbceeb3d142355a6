"""Pull mode: the service polls a stream's ``source`` (Prometheus) instead of taking POSTs.

``spec`` (the ``source`` of a PUT body), ``settings`` (Prometheus' URL and credentials),
``prometheus`` (one query, one number), ``sources`` (which URL, the check at PUT), ``health``
(last success, last error, failures), ``catalogue`` (the streams with a source), ``lease``
(one replica per stream on PostgreSQL), ``poller`` (the loop), ``errors`` (409 for POSTs),
``runner`` (wired into the app). Guide: docs/pull.md.
"""
