"""Tests of the decision service: storage, streams and the HTTP API."""
