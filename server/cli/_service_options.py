"""Options shared by the commands that open the service's database."""

from __future__ import annotations

import argparse
import os
from pathlib import Path


def add_database_arguments(parser: argparse.ArgumentParser) -> None:
    """``--data DIR`` and ``--database URL``."""
    parser.add_argument(
        "--data",
        type=Path,
        metavar="DIR",
        help="the service's data folder (default $GGP_DATA_DIR, else ggp under $XDG_DATA_HOME)",
    )
    parser.add_argument(
        "--database",
        metavar="URL",
        help="postgresql://... or sqlite:///FILE (default $GGP_DATABASE_URL, else ggp.db in "
        "the data folder)",
    )


def database_url(args: argparse.Namespace) -> str:
    """The database the options (or the environment) name."""
    from server.web.settings import default_data_dir

    url = args.database or os.environ.get("GGP_DATABASE_URL")
    if url:
        return str(url)
    folder = args.data or default_data_dir()
    return f"sqlite:///{(Path(folder) / 'ggp.db').resolve()}"
