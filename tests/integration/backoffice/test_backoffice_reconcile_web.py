"""Issue 29 gap: finance reconciles in the web back office: uploads the operator's CSV, sees
every difference, downloads them; a file that cannot be read is a 400 that says why; support
may not; every upload is in the search log."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator

import pytest
import requests
from support.bo_web import fill, running_web

from holdem.backoffice import db
from holdem.backoffice.auth import add_user

pytestmark = pytest.mark.postgres

DAY = "2026-11-30"


@pytest.fixture
def site(dsn: str) -> Iterator[str]:
    fill(dsn, "op-a", 12, free_every=4, credits=300)
    with db.connect(dsn) as conn:
        add_user(conn, "fin", "pw", "finance", "op-a")
        add_user(conn, "sue", "pw", "support", "op-a")
    with running_web(dsn) as url:
        yield url


def login(url: str, user: str) -> requests.Session:
    session = requests.Session()
    session.post(f"{url}/login", data={"username": user, "password": "pw"})
    return session


def upload(session: requests.Session, url: str, body: str, **form: str) -> requests.Response:
    files = {"file": ("operator.csv", body.encode(), "text/csv")}
    return session.post(f"{url}/reconcile", data={"day": DAY, **form}, files=files)


def test_finance_uploads_sees_and_downloads_the_differences(site: str, dsn: str) -> None:
    fin = login(site, "fin")
    assert fin.get(f"{site}/reconcile").ok
    exported = fin.get(f"{site}/exports/movements.csv?day={DAY}").text
    agreed = upload(fin, site, exported)
    assert agreed.ok and 'id="no-differences"' in agreed.text
    rows = list(csv.DictReader(io.StringIO(exported)))
    rows[2]["amount"] = str(int(rows[2]["amount"]) + 1)
    dropped = rows.pop(4)
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    page = upload(fin, site, out.getvalue())
    assert page.ok and page.text.count('class="difference"') == 2
    assert f"{rows[2]['tx_id']}: amount ours" in page.text
    assert dropped["tx_id"] in page.text
    download = upload(fin, site, out.getvalue(), download="csv")
    assert download.headers["content-type"].startswith("text/csv")
    assert "attachment" in download.headers["content-disposition"]
    found = list(csv.DictReader(io.StringIO(download.text)))
    assert {(d["player_id"], d["tx_id"]) for d in found} == {
        (rows[2]["player_id"], rows[2]["tx_id"]), (dropped["player_id"], dropped["tx_id"])
    }  # fmt: skip
    with db.connect(dsn) as conn:
        logged = conn.execute(
            "SELECT count(*) FROM search_log WHERE username = 'fin' AND page = 'reconcile'"
        ).fetchone()
    assert logged == (3,)


def test_a_file_that_cannot_be_read_is_a_400_that_says_why(site: str) -> None:
    fin = login(site, "fin")
    answer = upload(fin, site, "tx_id,player_id,kind,amount,currency\nt,p,stake,12.50,EUR\n")
    assert answer.status_code == 400 and "&#39;12.50&#39; is not minor units" in answer.text
    assert upload(fin, site, "").status_code == 400


def test_support_may_not_reconcile(site: str) -> None:
    sue = login(site, "sue")
    assert sue.get(f"{site}/reconcile", allow_redirects=False).status_code == 403
    assert upload(sue, site, "tx_id\n").status_code == 403
