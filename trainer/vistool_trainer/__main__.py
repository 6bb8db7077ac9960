"""Command line: `python -m vistool_trainer {check-env,train,eval,demo}`.

Commands print JSON events on stdout (one object per line) and human logs on stderr, so the
VS Code extension and scripts can follow a run without parsing prose.
"""
from __future__ import annotations

import argparse
import json
import sys


def _check_env(args: argparse.Namespace) -> int:
    from .environment_check import check_environment, format_report, report_as_dict

    report = check_environment()
    if args.json:
        print(json.dumps(report_as_dict(report)))
    else:
        print(format_report(report))
    return 0 if report.ok else 1


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="vistool_trainer", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    check = commands.add_parser("check-env", help="report versions, CUDA devices and what is missing")
    check.add_argument("--json", action="store_true", help="one JSON object instead of text")
    check.set_defaults(handler=_check_env)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    return int(args.handler(args))


if __name__ == "__main__":
    sys.exit(main())
