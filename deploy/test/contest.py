#!/usr/bin/env python3
"""Runs a small contest on a deployed portal through its HTTP interface, as
an organiser and two teams would in browsers: the admin sets the problem,
assigned servers and the contest's target networks, starts it and imports
the teams with their servers from a CSV file (twice: the second import
must change nothing); a member of each team signs in with the one-time
link the import made, picks the team's server, enqueues a benchmark and
reads the result with an API token. Exits 0 when every team's job passed,
on its own server.

    contest.py --portal https://10.77.0.10 --cafile CERT --admin root --admin-password-file F \
        --problem blog --networks 10.77.0.0/24 \
        --team team1=10.77.0.31 --team team2=10.77.0.32

Python's standard library only: make deploy-test runs it on the host.
"""

import argparse
import base64
import csv
import http.cookiejar
import io
import json
import re
import secrets
import ssl
import sys
import time
import urllib.error
import urllib.parse
import urllib.request


class Browser:
    """One person's browser: a cookie jar, forms posted, redirects followed."""

    def __init__(self, base, cafile=None):
        self.base = base.rstrip("/")
        tls = ssl.create_default_context(cafile=cafile)
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(self.jar),
            urllib.request.HTTPSHandler(context=tls))

    def post(self, path, **form):
        data = urllib.parse.urlencode(form).encode()
        return self._open(urllib.request.Request(self.base + path, data=data, method="POST"))

    def post_file(self, path, field, name, content):
        boundary = "tunecon" + secrets.token_hex(8)
        body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"{field}\"; filename=\"{name}\"\r\n"
                f"Content-Type: text/csv\r\n\r\n{content}\r\n--{boundary}--\r\n").encode()
        req = urllib.request.Request(self.base + path, data=body, method="POST")
        req.add_header("Content-Type", "multipart/form-data; boundary=" + boundary)
        return self._open(req)

    def get(self, path, token=None):
        req = urllib.request.Request(self.base + path)
        if token:
            req.add_header("Authorization", "Bearer " + token)
        return self._open(req)

    def _open(self, req):
        try:
            with self.opener.open(req, timeout=30) as res:
                return res.status, res.read().decode()
        except urllib.error.HTTPError as e:
            raise SystemExit(f"{req.get_method()} {req.full_url}: {e.code} {e.read().decode()[:500]}")


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] contest: {msg}", file=sys.stderr, flush=True)


def set_up_contest(args, password):
    admin = Browser(args.portal, args.cafile)
    admin.post("/login", login=args.admin, password=password)
    session = [c for c in admin.jar if c.name == "tunecon_session"]
    if not session:
        raise SystemExit(f"admin {args.admin}: not signed in")
    if args.portal.startswith("https:") and not session[0].secure:
        raise SystemExit("the portal is served over HTTPS but its session cookie is not Secure")
    admin.post("/admin/contest", problem=args.problem, load_seconds=str(args.load), targets="assigned",
               target_networks=args.networks)
    admin.post("/admin/timeline/now", event="start")
    log(f"admin {args.admin}: problem {args.problem}, {args.load} s loads, assigned servers in {args.networks}, started")
    return admin


def import_teams(admin, teams):
    """Imports the teams and their servers; returns each login's sign-in
    link. The same file imported again must change nothing."""
    rows = ["team,members,servers"] + [f"{name},{name}-member,{host}" for name, host in teams.items()]
    content = "\n".join(rows) + "\n"
    _, page = admin.post_file("/admin/import", "file", "teams.csv", content)
    found = re.search(r"data:text/csv;charset=utf-8;base64,([A-Za-z0-9+/=]+)", page)
    if not found:
        raise SystemExit("the import showed no sign-in links: " + re.sub(r"<[^>]+>", " ", page)[:800])
    links = {row["login"]: row["link"] for row in csv.DictReader(io.StringIO(base64.b64decode(found.group(1)).decode()))}
    log(f"imported {len(teams)} teams with their servers: {len(links)} sign-in links")
    _, again = admin.post_file("/admin/import", "file", "teams.csv", content)
    summary = re.search(r"teams: \d+ created, \d+ updated, \d+ unchanged", again)
    if not summary or summary.group(0) != f"teams: 0 created, 0 updated, {len(teams)} unchanged":
        raise SystemExit(f"importing the same file again changed something: {summary and summary.group(0)}")
    log(f"imported the same file again: {summary.group(0)}")
    return links


def join_team(args, name, link):
    """The team's member opens the one-time link, chooses a password, picks
    the team's server and makes an API token to read its jobs with."""
    member = Browser(args.portal, args.cafile)
    path = urllib.parse.urlparse(link).path
    member.get(path)
    password = secrets.token_urlsafe(12)
    member.post(path, password=password, again=password)
    _, page = member.get("/team")
    server = re.search(r'<select name="server">.*?<option value="(\d+)"', page, re.S)
    if not server:
        raise SystemExit(f"{name}: the team page lists no server")
    member.post("/team/server", server=server.group(1))
    _, page = member.post("/team/tokens", name="deploy-test")
    token = re.search(r"tct_[0-9a-f]{64}", page)
    if not token:
        raise SystemExit(f"{name}: no API token on the page that makes one")
    log(f"{name}: signed in with its link, picked its server")
    return member, token.group(0)


def wait_for_job(member, token, name, deadline):
    while time.time() < deadline:
        _, body = member.get("/api/v1/jobs?limit=1", token=token)
        jobs = json.loads(body)["jobs"]
        if jobs and jobs[0]["state"] not in ("queued", "running"):
            return jobs[0]
        time.sleep(5)
    raise SystemExit(f"{name}: the job did not end in time")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--portal", required=True)
    ap.add_argument("--admin", default="root")
    ap.add_argument("--admin-password-file", required=True)
    ap.add_argument("--problem", required=True)
    ap.add_argument("--networks", required=True)
    ap.add_argument("--load", type=int, default=30, help="the load's length in seconds")
    ap.add_argument("--team", action="append", required=True, help="NAME=SERVER (the team server's address)")
    ap.add_argument("--timeout", type=int, default=900)
    ap.add_argument("--cafile", help="the certificate the portal's HTTPS is checked with")
    args = ap.parse_args()
    with open(args.admin_password_file) as f:
        password = f.read().strip()

    admin = set_up_contest(args, password)
    hosts = dict(spec.split("=", 1) for spec in args.team)
    links = import_teams(admin, hosts)
    teams = {}
    for name, host in hosts.items():
        member, token = join_team(args, name, links[f"{name}-member"])
        member.post("/jobs")
        log(f"{name}: benchmark enqueued")
        teams[name] = (member, token, host)

    deadline, failed = time.time() + args.timeout, False
    for name, (member, token, target) in teams.items():
        job = wait_for_job(member, token, name, deadline)
        ok = (job["state"] == "finished" and job["verdict"] == "passed"
              and urllib.parse.urlparse(job["target"]).hostname == target)
        failed |= not ok
        log(f"{name}: job {job['id']} {job['state']} {job.get('verdict')}, score {job.get('score')}, "
            f"target {job['target']}: {'ok' if ok else 'NOT OK'} {job.get('messages') or ''}")
        print(json.dumps({"team": name, "job": job["id"], "state": job["state"], "verdict": job.get("verdict"),
                          "score": job.get("score"), "target": job["target"]}))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
