"""The decision service (FastAPI): volume samples in over HTTP, scaling decisions out.

``app`` builds the app (``create_app``) and its middleware; ``routes`` holds the thin HTTP
routes; ``streams`` the domain layer (one Scaler per stream, batches applied atomically and
exactly once); ``storage`` the SQLite database behind a narrow interface; ``models`` the
request, response and error bodies; ``metrics`` the Prometheus series; ``settings`` the
``STEADYSCALE_*`` settings.
"""
