"""The output room: tables (markdown, CSV) and figures (timelines, Pareto fronts) of results."""
