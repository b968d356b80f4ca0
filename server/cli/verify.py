"""``ggp verify LOG``: check the host signature of a match record."""

from __future__ import annotations

import argparse
import sys


def register(subparsers: argparse._SubParsersAction) -> None:
    from .key import add_key_file_argument

    parser = subparsers.add_parser(
        "verify",
        help="check the host signature of a match log",
        description="Check that a match log carries a valid Ed25519 host signature and that "
        "no byte of its signed content changed. By default the signature must be by this "
        "host's own key; --key names another host's public key. Exit status: 0 valid, "
        "1 not valid (missing signature, key mismatch, bad signature), 2 unusable input.",
    )
    parser.add_argument("log", metavar="LOG", help="the match log (JSON)")
    parser.add_argument(
        "--key",
        metavar="PUBKEY_OR_FILE",
        help="the signer's public key (base64 as `ggp key` prints it, or PEM), "
        "or a file holding it",
    )
    add_key_file_argument(parser)
    parser.add_argument(
        "-q", "--quiet", action="store_true", help="print nothing; exit status only"
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from server.records.signing import (
        default_host_key_path,
        load_host_key,
        read_public_key,
        read_record_json,
        verify_record,
    )

    from ._common import one_line

    try:
        record = read_record_json(args.log)
    except (OSError, ValueError) as error:
        print(f"ggp verify: cannot read {args.log}: {one_line(error)}", file=sys.stderr)
        return 2
    try:
        if args.key:
            trusted = read_public_key(args.key)
        else:
            key_path = args.key_file or default_host_key_path()
            try:
                trusted = load_host_key(key_path).public_key()
            except FileNotFoundError:
                print(
                    f"ggp verify: this host has no key yet ({key_path}); "
                    "name the signer's key with --key",
                    file=sys.stderr,
                )
                return 2
    except (OSError, ValueError) as error:
        print(f"ggp verify: unusable key: {one_line(error)}", file=sys.stderr)
        return 2
    verification = verify_record(record, trusted)
    if not args.quiet:
        stream = sys.stdout if verification.ok else sys.stderr
        print(f"{args.log}: {one_line(verification.message)}", file=stream)
    return 0 if verification.ok else 1
