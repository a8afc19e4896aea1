"""``holdem-backoffice``: project, serve, migrate, add users, print statements and exports,
reconcile an operator's movements. Settings: ``HOLDEM_BACKOFFICE_*`` (``settings.py``)."""

from __future__ import annotations

import argparse
import getpass
import os
import sys
from datetime import date
from pathlib import Path

from holdem.backoffice import db, reconcile, reports
from holdem.backoffice.auth import ROLES, add_user, disable_user
from holdem.backoffice.settings import BackofficeSettings

EXIT_DIFFERENCES = 1  # reconcile: the lists differ (each difference printed)
EXIT_INPUT = 2  # reconcile: the operator's file cannot be read (one line on stderr), as argparse


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="holdem-backoffice", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("project", help="run the projection (Kafka -> PostgreSQL) until stopped")
    sub.add_parser("serve", help="run the web back office; prints its URL")
    sub.add_parser("migrate", help="bring the database schema to the latest revision")
    user = sub.add_parser(
        "add-user", help="add or update a user (password: HOLDEM_BACKOFFICE_PASSWORD or asked)"
    )
    user.add_argument("username")
    user.add_argument("--role", choices=ROLES, required=True)
    user.add_argument("--operator", required=True, help="the operator (tenant) the user may see")
    disable = sub.add_parser(
        "disable-user", help="a user may no longer log in; every session of theirs ends now"
    )
    disable.add_argument("username")
    for name, text in (
        ("statement", "a day's statement"),
        ("movements", "a day's money movements"),
    ):
        cmd = sub.add_parser(name, help=f"print {text} (CSV or JSON)")
        cmd.add_argument("--operator", required=True)
        cmd.add_argument("--day", type=date.fromisoformat, required=True, help="YYYY-MM-DD (UTC)")
        cmd.add_argument("--format", choices=("csv", "json"), default="csv")
    rec = sub.add_parser(
        "reconcile",
        help="compare our movements with an operator's CSV; exit 1 on any difference,"
        " 2 when the file cannot be read",
    )
    rec.add_argument("csv", type=Path)
    rec.add_argument("--operator", required=True)
    rec.add_argument("--day", type=date.fromisoformat, help="only that UTC day's movements")
    args = parser.parse_args(argv)
    settings = BackofficeSettings()
    if args.command == "project":
        from holdem.backoffice import project

        project.main()
        return 0
    if args.command == "serve":
        from holdem.backoffice.web import serve

        serve(settings)
        return 0
    if args.command == "reconcile":
        try:
            theirs = reconcile.read_operator_csv(args.csv)
        except reconcile.ReconcileInputError as error:
            print(f"holdem-backoffice reconcile: {error}", file=sys.stderr)
            return EXIT_INPUT
    db.upgrade(settings.dsn)
    if args.command == "migrate":
        return 0
    with db.connect(settings.dsn) as conn:
        if args.command == "add-user":
            password = os.environ.get("HOLDEM_BACKOFFICE_PASSWORD") or getpass.getpass()
            add_user(conn, args.username, password, args.role, args.operator)
            return 0
        if args.command == "disable-user":
            if disable_user(conn, args.username):
                return 0
            print(f"holdem-backoffice disable-user: no user {args.username!r}", file=sys.stderr)
            return EXIT_INPUT
        if args.command == "reconcile":
            found = reconcile.differences(reports.movements(conn, args.operator, args.day), theirs)
            for line in found:
                print(line)
            print(f"{len(found)} difference(s)", file=sys.stderr)
            return EXIT_DIFFERENCES if found else 0
        if args.command == "statement":
            rows = [line.as_dict() for line in reports.statement(conn, args.operator, args.day)]
        else:
            rows = reports.movements(conn, args.operator, args.day)
    print(reports.to_csv(rows) if args.format == "csv" else reports.to_json(rows), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
