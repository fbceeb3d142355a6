"""The decision service (FastAPI): routes, storage, settings."""
