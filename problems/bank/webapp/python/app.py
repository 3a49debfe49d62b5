"""The Python reference app of the tunecon problem "bank": the login page of an online bank that locks users and
bans addresses after too many failed attempts. It is slow on purpose, the way real apps are slow, and it is
correct: keep it correct while you make it fast. The contract it keeps is in ../../MANUAL.md; it behaves like the
Go app in ../go.

Run it with gunicorn from this directory (gunicorn.conf.py holds the settings and loads the initial data):

    python3 -m venv venv && venv/bin/pip install -r requirements.txt
    venv/bin/gunicorn
"""

import hashlib
import json
import mimetypes
import os
import secrets
import sqlite3
import time
import urllib.parse
from datetime import datetime, timezone

import pymysql
import pymysql.cursors
from flask import Flask, Response, render_template, request
from markupsafe import Markup, escape

ROOT = os.path.abspath(os.environ.get("BANK_ROOT") or "..")  # the webapp directory: public/, sql/, data/
DB = os.environ.get("BANK_DB", "")  # "" or "sqlite:PATH" for SQLite, "mysql://user:pass@host:port/dbname"
INITIAL_SQL = os.environ.get("BANK_INITIAL_SQL") or os.path.join(ROOT, "data", "initial.sql")
IS_MYSQL = DB.startswith("mysql://")

# The size of the initial login log: POST /initialize deletes every row added after it.
INITIAL_LOG_ROWS = 400000

# The rules: a user is locked after LOCK_THRESHOLD failed attempts since its last successful login, an address is
# banned after BAN_THRESHOLD failed attempts from it since the last successful login from it.
LOCK_THRESHOLD = 3
BAN_THRESHOLD = 10

TIME_FORMAT = "%Y-%m-%d %H:%M:%S"  # every time, in UTC
SESSION_COOKIE = "bank_session"

# The messages the login page shows once, by reason.
NOTICES = {
    "wrong": "Wrong login or password.",
    "locked": "This account is locked after too many failed attempts.",
    "banned": "Too many failed attempts from your address: it is banned.",
    "login-required": "Please log in first.",
}

mimetypes.add_type("text/javascript", ".js")  # the static files' type, whatever /etc/mime.types says
app = Flask(__name__, static_folder=os.path.join(ROOT, "public"), static_url_path="/static")
app.jinja_env.keep_trailing_newline = True  # pages end with "</html>\n", as the Go app's do


# The database.


def connect():
    """Opens a connection to the database named by BANK_DB."""
    if IS_MYSQL:
        url = urllib.parse.urlsplit(DB)
        return pymysql.connect(
            host=url.hostname,
            port=url.port or 3306,
            user=urllib.parse.unquote(url.username or ""),
            password=urllib.parse.unquote(url.password or ""),
            database=url.path.lstrip("/"),
            charset="utf8mb4",
            autocommit=True,  # every statement sees the latest data
            cursorclass=pymysql.cursors.DictCursor,
        )
    if DB and not DB.startswith("sqlite:"):
        raise SystemExit(f"BANK_DB {DB!r}: want empty, sqlite:PATH or mysql://user:pass@host:port/dbname")
    path = DB.removeprefix("sqlite:") or os.path.join(ROOT, "data", "bank-python.db")
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    # isolation_level=None: no implicit transactions, BEGIN ... COMMIT where we want one. WAL lets readers run while
    # someone writes; the busy timeout (5 s) makes writers wait for each other.
    conn = sqlite3.connect(path, timeout=5, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.row_factory = sqlite3.Row
    return conn


_connection = None


def db():
    """This worker's connection. Each gunicorn worker opens its own on first use (a connection must not be shared
    across the fork) and keeps it: a sync worker serves one request at a time."""
    global _connection
    if _connection is None:
        _connection = connect()
    return _connection


@app.before_request
def reconnect_if_needed():
    if IS_MYSQL and _connection is not None:
        _connection.ping(reconnect=True)  # MariaDB drops idle connections


def execute(sql, *args, conn=None):
    """Runs one statement, written with "?" placeholders, and returns its cursor."""
    cur = (conn or db()).cursor()
    if IS_MYSQL:
        sql = sql.replace("?", "%s")  # PyMySQL's placeholder
    cur.execute(sql, args)
    return cur


def query(sql, *args):
    return execute(sql, *args).fetchall()


def query_one(sql, *args):
    return execute(sql, *args).fetchone()


def load_initial_data(log):
    """Creates the tables and loads the initial data unless the users table exists. gunicorn.conf.py calls it in
    the master process, before the workers start."""
    conn = connect()
    try:
        if IS_MYSQL:
            sql = ("SELECT COUNT(*) AS n FROM information_schema.tables "
                   "WHERE table_schema = DATABASE() AND table_name = 'users'")
        else:
            sql = "SELECT COUNT(*) AS n FROM sqlite_master WHERE type = 'table' AND name = 'users'"
        if execute(sql, conn=conn).fetchone()["n"] > 0:
            return
        if not os.path.exists(INITIAL_SQL):
            raise SystemExit(
                f"the initial data {INITIAL_SQL} does not exist: generate it with `tunecon serve bank`, which writes "
                "it and then starts the Go app (or set BANK_INITIAL_SQL to where it is)"
            )
        schema = os.path.join(ROOT, "sql", "schema.mysql.sql" if IS_MYSQL else "schema.sqlite.sql")

        log.info("loading the initial data from %s", INITIAL_SQL)
        start = time.monotonic()
        cur = conn.cursor()
        # SQLite creates the tables inside the transaction, so an interrupted load leaves nothing behind. MariaDB
        # commits on CREATE TABLE, so it creates them first and drops them again if the load fails.
        if IS_MYSQL:
            for statement in sql_statements(schema):
                cur.execute(statement)
        cur.execute("BEGIN")
        try:
            if not IS_MYSQL:
                for statement in sql_statements(schema):
                    cur.execute(statement)
            for statement in sql_statements(INITIAL_SQL):
                cur.execute(statement)
            cur.execute("COMMIT")
        except BaseException:
            cur.execute("ROLLBACK")
            if IS_MYSQL:
                cur.execute("DROP TABLE IF EXISTS users, login_log, sessions")
            raise
        log.info("loaded the initial data in %.3fs", time.monotonic() - start)
    finally:
        conn.close()


def sql_statements(path):
    """The statements of an SQL file, each ending with ";" at the end of a line (the dump is about 50 MB, so it is
    read line by line)."""
    lines = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            lines.append(line)
            if line.rstrip(" \r\n").endswith(";"):
                yield from non_blank("".join(lines))
                lines = []
    yield from non_blank("".join(lines))


def non_blank(statement):
    """The statement, unless it holds nothing but whitespace and "--" comments."""
    for line in statement.splitlines():
        line = line.strip()
        if line and not line.startswith("--"):
            return [statement]
    return []


# Templates.


def escape_output(value):
    """Escapes every {{ ... }} in the templates (what Jinja's autoescaping would do) the way Go's html/template does
    (&#34; and &#39; for quotes, &#43; for "+", NUL shown as U+FFFD), so that both apps send the same bytes."""
    if isinstance(value, Markup):  # already HTML
        return value
    return Markup(str(escape(value)).replace("\0", "\ufffd").replace("+", "&#43;"))


app.jinja_env.finalize = escape_output


def render(status, template, **page):
    return render_template(template, **page), status


def format_time(value):
    # SQLite hands back the text that was stored, already in this format; MariaDB a datetime.
    return value if isinstance(value, str) else value.strftime(TIME_FORMAT)


@app.errorhandler(404)
@app.errorhandler(405)  # a path that exists with another method: 404 too, as in the Go app
def not_found(error=None):
    return render(404, "error.html", title="Not found", message="There is no such page.")


# Sessions.


def current_session():
    """The request's session, or None if it has none (or one the database does not know)."""
    token = request.cookies.get(SESSION_COOKIE)
    if token is None:
        return None
    return query_one("SELECT id, user_id, login_log_id, notice FROM sessions WHERE id = ?", token)


def new_session(response, user_id=None, login_log_id=None, notice=None):
    """Stores a new session and sends its cookie. user_id and login_log_id are None for a session nobody is logged
    in to, notice is None when there is nothing to show."""
    token = secrets.token_hex(32)
    execute(
        "INSERT INTO sessions (id, user_id, login_log_id, notice, created_at) VALUES (?, ?, ?, ?, ?)",
        token, user_id, login_log_id, notice, now(),
    )
    response.set_cookie(SESSION_COOKIE, token, path="/", httponly=True, samesite="Lax")


def see_other(location):
    return Response(status=303, headers={"Location": location})


# Handlers.


@app.get("/")
def get_index():
    session = current_session()
    page = {"title": "Log in"}
    if session is not None and session["notice"] is not None:
        page["notice"] = session["notice"]
        page["notice_text"] = NOTICES.get(session["notice"], "")
        execute("UPDATE sessions SET notice = NULL WHERE id = ?", session["id"])  # shown once
    body, status = render(200, "index.html", **page)
    return Response(body, status, headers={"Cache-Control": "private"})


@app.post("/login")
def post_login():
    login = request.form.get("login", "")
    password = request.form.get("password", "")
    ip = client_ip()

    user = query_one("SELECT id, login, password_hash, salt FROM users WHERE login = ?", login)

    # The checks, in order: the address, the user, the password.
    reason = None
    ip_failures = query_one(
        "SELECT COUNT(*) AS n FROM login_log WHERE ip = ? AND "
        "id > IFNULL((SELECT MAX(id) FROM login_log WHERE ip = ? AND succeeded = 1), 0)",
        ip, ip,
    )["n"]
    if ip_failures >= BAN_THRESHOLD:
        reason = "banned"
    elif user is not None:
        user_failures = query_one(
            "SELECT COUNT(*) AS n FROM login_log WHERE user_id = ? AND "
            "id > IFNULL((SELECT MAX(id) FROM login_log WHERE user_id = ? AND succeeded = 1), 0)",
            user["id"], user["id"],
        )["n"]
        if user_failures >= LOCK_THRESHOLD:
            reason = "locked"
    if reason is None and (user is None or hash_password(password, user["salt"]) != user["password_hash"]):
        reason = "wrong"

    # Every attempt goes into the log.
    cur = execute(
        "INSERT INTO login_log (created_at, user_id, login, ip, succeeded) VALUES (?, ?, ?, ?, ?)",
        now(), user["id"] if user is not None else None, login, ip, 1 if reason is None else 0,
    )
    log_id = cur.lastrowid

    # The attempt ends the session it came with and starts a new one.
    token = request.cookies.get(SESSION_COOKIE)
    if token is not None:
        execute("DELETE FROM sessions WHERE id = ?", token)
    if reason is not None:
        response = see_other("/")
        new_session(response, notice=reason)
        return response
    response = see_other("/mypage")
    new_session(response, user_id=user["id"], login_log_id=log_id)
    return response


@app.get("/mypage")
def get_mypage():
    session = current_session()
    if session is None or session["user_id"] is None:
        # Back to the login page, with a notice in the session (a new one if it has none).
        response = see_other("/")
        if session is not None:
            execute("UPDATE sessions SET notice = ? WHERE id = ?", "login-required", session["id"])
        else:
            new_session(response, notice="login-required")
        return response
    login = query_one("SELECT login FROM users WHERE id = ?", session["user_id"])["login"]
    # The login before the one that started this session; on a first login ever, that one.
    last = query_one(
        "SELECT created_at, ip FROM login_log WHERE user_id = ? AND succeeded = 1 AND id < ? ORDER BY id DESC LIMIT 1",
        session["user_id"], session["login_log_id"],
    )
    if last is None:
        last = query_one("SELECT created_at, ip FROM login_log WHERE id = ?", session["login_log_id"])
    body, status = render(
        200, "mypage.html", title="My page", login=login, last_at=format_time(last["created_at"]), last_ip=last["ip"]
    )
    return Response(body, status, headers={"Cache-Control": "private"})


@app.get("/report")
def get_report():
    """Lists every banned address and every locked user, replaying the whole log in id order."""
    user_failures, ip_failures = {}, {}
    for row in query("SELECT user_id, ip, succeeded FROM login_log ORDER BY id"):
        if row["succeeded"]:
            ip_failures[row["ip"]] = 0
            if row["user_id"] is not None:
                user_failures[row["user_id"]] = 0
            continue
        ip_failures[row["ip"]] = ip_failures.get(row["ip"], 0) + 1
        if row["user_id"] is not None:
            user_failures[row["user_id"]] = user_failures.get(row["user_id"], 0) + 1
    banned = [{"ip": ip} for ip, n in ip_failures.items() if n >= BAN_THRESHOLD]
    locked = [
        query_one("SELECT login FROM users WHERE id = ?", user_id)
        for user_id, n in user_failures.items()
        if n >= LOCK_THRESHOLD
    ]
    body = json.dumps(
        {"banned_ips": sorted(row["ip"] for row in banned), "locked_users": sorted(row["login"] for row in locked)},
        separators=(",", ":"),
    )
    return Response(body, mimetype="application/json")


@app.post("/initialize")
def post_initialize():
    """Restores the initial data by deleting everything added since."""
    execute(f"DELETE FROM login_log WHERE id > {INITIAL_LOG_ROWS}")
    execute("DELETE FROM sessions")
    if IS_MYSQL:
        execute(f"ALTER TABLE login_log AUTO_INCREMENT = {INITIAL_LOG_ROWS + 1}")
    return Response('{"language":"python"}', mimetype="application/json")


# Helpers.


def client_ip():
    """The first address in X-Forwarded-For (the app is meant to sit behind a proxy), or the address of the
    connection's other end when the header is absent or its first entry empty."""
    header = request.headers.get("X-Forwarded-For") or ""
    header = header.encode("latin-1").decode("utf-8", "replace")  # WSGI hands headers over as Latin-1
    first = header.split(",", 1)[0].strip(" \t")
    return first or request.remote_addr


def hash_password(password, salt):
    """What the users table stores: the SHA-256 of password + ":" + salt, in lowercase hex."""
    return hashlib.sha256((password + ":" + salt).encode()).hexdigest()


def now():
    """The current UTC time, in whole seconds."""
    return datetime.now(timezone.utc).strftime(TIME_FORMAT)
