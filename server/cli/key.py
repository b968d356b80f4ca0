"""``ggp key``: print the host's public key, creating the host key on first use."""

from __future__ import annotations

import argparse
import sys


def add_key_file_argument(parser: argparse.ArgumentParser) -> None:
    """The ``--key-file`` option shared by the commands that use the host key."""
    parser.add_argument(
        "--key-file",
        metavar="PATH",
        help="the host's Ed25519 key (PEM); default $GGP_HOST_KEY, "
        "else ~/.local/share/ggp/host_key.pem ($XDG_DATA_HOME/ggp/host_key.pem)",
    )


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "key",
        help="print the host's public key (creates the host key if needed)",
        description="Print the public half of the host's Ed25519 key, the key that signs "
        "every match record this host writes. Publish it so others can check records "
        "with `ggp verify LOG --key KEY`. The key is created on first use.",
    )
    add_key_file_argument(parser)
    parser.add_argument(
        "--pem", action="store_true", help="print a PEM PUBLIC KEY block instead of base64"
    )
    parser.add_argument(
        "--path", action="store_true", help="also print where the host key file is (on stderr)"
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from server.records.signing import (
        default_host_key_path,
        load_or_create_host_key,
        public_key_pem,
        public_key_text,
    )

    from ._common import one_line

    path = args.key_file or default_host_key_path()
    try:
        key = load_or_create_host_key(path)
    except (OSError, ValueError) as error:
        reason = getattr(error, "strerror", None) or one_line(error, 200)
        print(f"ggp key: cannot use the host key {path}: {reason}", file=sys.stderr)
        return 2
    if args.path:
        print(f"host key: {path}", file=sys.stderr)
    sys.stdout.write(public_key_pem(key) if args.pem else public_key_text(key) + "\n")
    return 0
