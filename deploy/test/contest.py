#!/usr/bin/env python3
"""Runs a small contest on a deployed portal through its HTTP interface, as
an organiser and two teams would in browsers: the admin sets the problem,
the contest's target networks and starts it; each team signs up, makes its
team, registers its own server, enqueues a benchmark and reads the result
with an API token. Exits 0 when every team's job passed, on its own server.

    contest.py --portal https://10.77.0.10 --cafile CERT --admin root --admin-password-file F \
        --problem blog --networks 10.77.0.0/24 \
        --team team1=http://10.77.0.31/ --team team2=http://10.77.0.32/

Python's standard library only: make deploy-test runs it on the host.
"""

import argparse
import http.cookiejar
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
    admin.post("/admin/contest", problem=args.problem, load_seconds=str(args.load),
               target_networks=args.networks)
    admin.post("/admin/timeline/now", event="start")
    log(f"admin {args.admin}: problem {args.problem}, {args.load} s loads, targets in {args.networks}, started")


def register_team(args, name, target):
    """A team member signs up, makes the team and registers its server.

    TODO(issue 28, team import): once the portal imports teams from a CSV
    with their servers (being built on another branch), import
    NAME,bracket,member,server lines here as the admin instead, and let the
    member pick the team's assigned server; the sign-up and "Save the
    target" below are the portal's existing self-registration.
    """
    member = Browser(args.portal, args.cafile)
    login = f"{name}-member"
    password = secrets.token_urlsafe(12)
    member.post("/signup", login=login, password=password)
    member.post("/team", name=name)
    member.post("/team/target", target=target)
    _, page = member.post("/team/tokens", name="deploy-test")
    token = re.search(r"tct_[0-9a-f]{64}", page)
    if not token:
        raise SystemExit(f"{name}: no API token on the page that makes one")
    log(f"{name}: signed up as {login}, target {target}")
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
    ap.add_argument("--team", action="append", required=True, help="NAME=TARGET")
    ap.add_argument("--timeout", type=int, default=900)
    ap.add_argument("--cafile", help="the certificate the portal's HTTPS is checked with")
    args = ap.parse_args()
    with open(args.admin_password_file) as f:
        password = f.read().strip()

    set_up_contest(args, password)
    teams = {}
    for spec in args.team:
        name, target = spec.split("=", 1)
        member, token = register_team(args, name, target)
        member.post("/jobs")
        log(f"{name}: benchmark enqueued")
        teams[name] = (member, token, target)

    deadline, failed = time.time() + args.timeout, False
    for name, (member, token, target) in teams.items():
        job = wait_for_job(member, token, name, deadline)
        ok = job["state"] == "finished" and job["verdict"] == "passed" and job["target"] == target
        failed |= not ok
        log(f"{name}: job {job['id']} {job['state']} {job.get('verdict')}, score {job.get('score')}, "
            f"target {job['target']}: {'ok' if ok else 'NOT OK'} {job.get('messages') or ''}")
        print(json.dumps({"team": name, "job": job["id"], "state": job["state"], "verdict": job.get("verdict"),
                          "score": job.get("score"), "target": job["target"]}))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
