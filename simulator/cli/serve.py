"""``steadyscale serve``: the decision service under uvicorn, the one door to ``service``."""

from __future__ import annotations

import argparse

from simulator.cli.options import Commands, add_command


def add(commands: Commands) -> None:
    serve = add_command(
        commands,
        "serve",
        run,
        help="run the decision service (HTTP API, SQLite file in --data-dir)",
        description=(
            "Run the decision service: POST volume samples per stream, get scaling decisions. "
            "Settings come from STEADYSCALE_* environment variables (see service/settings.py); "
            "the options below override them."
        ),
    )
    serve.add_argument("--host", help="address to listen on (default 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port (default 8000)")
    serve.add_argument("--data-dir", metavar="DIR", help="where the SQLite file lives (data)")
    serve.add_argument(
        "--database-url",
        metavar="URL",
        help="postgresql://user:password@host:port/db: keep the streams in PostgreSQL, shared "
        "by several replicas, instead of the SQLite file",
    )
    serve.add_argument(
        "--grpc-port", type=int, metavar="N", help="also serve KEDA's external scaler on port N"
    )
    serve.add_argument("--log-level", default="info", help="uvicorn's log level (%(default)s)")


def run(args: argparse.Namespace) -> int:
    from service.app import create_app
    from service.server import serve
    from service.settings import settings_from

    given = {
        "host": args.host,
        "port": args.port,
        "data_dir": args.data_dir,
        "database_url": args.database_url,
        "grpc_port": args.grpc_port,
    }
    options = {key: "--" + key.replace("_", "-") for key in given}
    settings = settings_from({key: value for key, value in given.items() if value is not None},
                             options)  # fmt: skip
    serve(create_app(settings), settings, log_level=args.log_level)
    return 0
