"""Workloads, noise at a given SNR, the simulation engine, metrics and reports."""
