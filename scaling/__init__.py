"""Threshold policy, guards and the Scaler: filtered volume in, operator count out."""
