"""The Spark room: sessions, cells mapped over Spark jobs, the resumable store, event logs.

``session`` starts Spark quietly after the checks of ``checks`` (Java 17, the master URL);
``cells`` maps any pure function over a grid of cells and aggregates in Spark; ``store`` keeps
results per grid folder and resumes; ``events`` and ``stream_source`` make and read event logs.
Nothing here knows what a cell holds: ``simulator.experiments`` gives the functions.
"""
