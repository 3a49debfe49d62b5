"""The Python reference app of the tunecon problem "dashboard", after the ISUCON5 final: a personal dashboard.
People sign up with a grade, sign in and subscribe on /modify to external services, each with its own parameters;
the dashboard page polls /data, which asks every service the user subscribes to and relays their answers. It is
slow on purpose, the way real apps are slow, and it is correct: keep it correct while you make it fast. The
contract it keeps is in ../../MANUAL.md; it behaves like the Go app in ../go.

Run it with gunicorn from this directory (gunicorn.conf.py holds the settings and loads the initial data):

    python3 -m venv venv && venv/bin/pip install -r requirements.txt
    venv/bin/gunicorn
"""

import contextlib
import hashlib
import hmac
import json
import mimetypes
import os
import re
import secrets
import sqlite3
import threading
import time
import urllib.parse
from datetime import datetime, timezone

import pymysql
import pymysql.cursors
import requests
import urllib3
from flask import Flask, Response, g, render_template, request
from werkzeug.exceptions import HTTPException
from werkzeug.http import HTTP_STATUS_CODES

ROOT = os.path.abspath(os.environ.get("DASHBOARD_ROOT") or "..")  # the webapp directory: public/, sql/, data/
DB = os.environ.get("DASHBOARD_DB", "")  # "" or "sqlite:PATH" for SQLite, "mysql://user:pass@host:port/dbname"
INITIAL_SQL = os.environ.get("DASHBOARD_INITIAL_SQL") or os.path.join(ROOT, "data", "initial.sql")
IS_MYSQL = DB.startswith("mysql://")

# The size of the initial data: POST /initialize deletes every user added after it.
INITIAL_USERS = 10000

TIME_FORMAT = "%Y-%m-%d %H:%M:%S"  # every time, in UTC
SESSION_COOKIE = "dashboard_session"

# The grades, from the least to the most, and what each may do.
GRADES = ("micro", "small", "standard", "premium")
REFRESH_MS = {"micro": 30000, "small": 30000, "standard": 20000, "premium": 10000}  # /user.js

# The services in the manual's order, which is also the order /data calls them in, and their parameters.
SERVICES = ("postal", "postal2", "surname", "givenname", "weather", "security", "attacked")
ALLOWED = {
    "micro": ("postal", "postal2", "surname"),
    "small": ("postal", "postal2", "surname", "givenname"),
    "standard": ("postal", "postal2", "surname", "givenname", "weather"),
    "premium": SERVICES,
}
PARAMS = {
    "postal": ("code",),
    "postal2": ("code",),
    "surname": ("q",),
    "givenname": ("q",),
    "weather": ("location",),
    "security": ("req", "token"),
    "attacked": ("token",),
}
# What each parameter may hold, whole values only (always fullmatch). [0-9], not \d, which takes any Unicode digit.
PARAM_PATTERNS = {
    "code": re.compile(r"[0-9]{7}"),
    "q": re.compile(r"[a-z]{1,8}"),
    "location": re.compile(r"L[0-9]{4}"),
    "req": re.compile(r"[a-z0-9]{1,16}"),
    "token": re.compile(r"[0-9a-f]{32}"),
}

# The rules for what people type at sign-up, in characters.
MAX_EMAIL = 64
MIN_PASSWORD, MAX_PASSWORD = 8, 64

SERVICE_TIMEOUT = 10  # seconds, for each call of a service

# The HTTPS services' certificate is made for each run and no one can verify it (MANUAL.md): the calls do not check
# it, and urllib3 would warn about that on every call.
urllib3.disable_warnings(urllib3.exceptions.InsecureRequestWarning)

mimetypes.add_type("text/javascript", ".js")  # the static files' type, whatever /etc/mime.types says
mimetypes.add_type("text/css", ".css")
app = Flask(__name__, static_folder=os.path.join(ROOT, "public"), static_url_path="/static")
app.jinja_env.keep_trailing_newline = True  # pages and /user.js end with a newline


# The database.


def connect():
    """Opens a connection to the database named by DASHBOARD_DB."""
    if IS_MYSQL:
        url = urllib.parse.urlsplit(DB)
        return pymysql.connect(
            host=url.hostname,
            port=url.port or 3306,
            user=urllib.parse.unquote(url.username or ""),
            password=urllib.parse.unquote(url.password or ""),
            database=url.path.lstrip("/"),
            charset="utf8mb4",
            autocommit=True,  # every statement outside BEGIN ... COMMIT sees the latest data
            cursorclass=pymysql.cursors.DictCursor,
        )
    if DB and not DB.startswith("sqlite:"):
        raise SystemExit(f"DASHBOARD_DB {DB!r}: want empty, sqlite:PATH or mysql://user:pass@host:port/dbname")
    path = DB.removeprefix("sqlite:") or os.path.join(ROOT, "data", "dashboard-python.db")
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    # isolation_level=None: no implicit transactions, BEGIN ... COMMIT where we want one. WAL lets readers run while
    # someone writes; the busy timeout (5 s) makes writers wait for each other.
    conn = sqlite3.connect(path, timeout=5, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.row_factory = sqlite3.Row
    return conn


# gunicorn runs this app in threads (gunicorn.conf.py), and a connection serves one thread at a time: each thread
# opens its own on first use and keeps it. None is opened before the fork, so none is shared across processes.
_local = threading.local()


def db():
    """This thread's connection."""
    conn = getattr(_local, "conn", None)
    if conn is None:
        conn = _local.conn = connect()
    return conn


@app.before_request
def reconnect_if_needed():
    conn = getattr(_local, "conn", None)
    if IS_MYSQL and conn is not None:
        conn.ping(reconnect=True)  # MariaDB drops idle connections


def execute(sql, *args, conn=None):
    """Runs one statement, written with "?" placeholders, and returns its cursor."""
    cur = (conn or db()).cursor()
    if IS_MYSQL:
        # PyMySQL's placeholder is %s, and it formats the statement with % only when it gets arguments.
        cur.execute(sql.replace("?", "%s"), args or None)
    else:
        cur.execute(sql, args)
    return cur


def query_one(sql, *args):
    return execute(sql, *args).fetchone()


@contextlib.contextmanager
def transaction(conn=None):
    """BEGIN ... COMMIT around the block, ROLLBACK if it fails. On SQLite the transaction takes the write lock at
    once (IMMEDIATE): one that read first and wrote later could not get it once another writer came in between."""
    execute("BEGIN" if IS_MYSQL else "BEGIN IMMEDIATE", conn=conn)
    try:
        yield
    except BaseException:
        execute("ROLLBACK", conn=conn)
        raise
    execute("COMMIT", conn=conn)


def load_initial_data(log):
    """Creates the tables and loads the initial data unless the users table exists, then stores the services' base
    URLs from the environment. gunicorn.conf.py calls it in the master process, before the workers start."""
    conn = connect()
    try:
        if IS_MYSQL:
            sql = ("SELECT COUNT(*) AS n FROM information_schema.tables "
                   "WHERE table_schema = DATABASE() AND table_name = 'users'")
        else:
            sql = "SELECT COUNT(*) AS n FROM sqlite_master WHERE type = 'table' AND name = 'users'"
        if execute(sql, conn=conn).fetchone()["n"] == 0:
            load_dump(conn, log)
        store_endpoints_from_env(conn, log)
    finally:
        conn.close()


def load_dump(conn, log):
    if not os.path.exists(INITIAL_SQL):
        raise SystemExit(
            f"the initial data {INITIAL_SQL} does not exist: generate it with `tunecon serve dashboard`, which "
            "writes it and then starts the Go app (or set DASHBOARD_INITIAL_SQL to where it is)"
        )
    schema = os.path.join(ROOT, "sql", "schema.mysql.sql" if IS_MYSQL else "schema.sqlite.sql")
    log.info("loading the initial data from %s", INITIAL_SQL)
    start = time.monotonic()
    # SQLite creates the tables inside the transaction, so an interrupted load leaves nothing behind. MariaDB
    # commits on CREATE TABLE, so it creates them first and drops them again if the load fails.
    if IS_MYSQL:
        for statement in sql_statements(schema):
            execute(statement, conn=conn)
    try:
        with transaction(conn):
            if not IS_MYSQL:
                for statement in sql_statements(schema):
                    execute(statement, conn=conn)
            for statement in sql_statements(INITIAL_SQL):
                execute(statement, conn=conn)
    except BaseException:
        if IS_MYSQL:
            execute("DROP TABLE IF EXISTS users, subscriptions, sessions, endpoints", conn=conn)
        raise
    log.info("loaded the initial data in %.3fs", time.monotonic() - start)


def store_endpoints_from_env(conn, log):
    """DASHBOARD_SERVICES_HTTP and DASHBOARD_SERVICES_HTTPS, when set, say where the services are until a POST
    /initialize says otherwise; one left unset keeps what the database has."""
    http = os.environ.get("DASHBOARD_SERVICES_HTTP", "")
    https = os.environ.get("DASHBOARD_SERVICES_HTTPS", "")
    if not http and not https:
        return
    row = execute("SELECT http, https FROM endpoints WHERE id = 1", conn=conn).fetchone()
    if row is not None:
        http, https = http or row["http"], https or row["https"]
    store_endpoints(http, https, conn=conn)
    log.info("the services: %s and %s", http or "(none)", https or "(none)")


def store_endpoints(http, https, conn=None):
    # The endpoints live in the database, not in a variable: gunicorn runs several processes, and POST /initialize
    # reaches only one of them. REPLACE is understood by SQLite and MariaDB alike.
    execute("REPLACE INTO endpoints (id, http, https) VALUES (1, ?, ?)",
            http.rstrip("/"), https.rstrip("/"), conn=conn)


def sql_statements(path):
    """The statements of an SQL file, each ending with ";" at the end of a line, without their "--" comment lines
    (the file is read line by line, as a statement at a time is all that is needed)."""
    lines = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if not line.lstrip().startswith("--"):
                lines.append(line)
            if line.rstrip(" \t\r\n").endswith(";"):
                statement = "".join(lines).strip()
                lines = []
                if statement:
                    yield statement
    statement = "".join(lines).strip()
    if statement:
        yield statement


# Pages.


def render(status, template, **page):
    """Renders a page; every page has the header, which shows who is signed in."""
    return render_template(template, user=current_user(), **page), status


def error_page(status, message):
    return render(status, "error.html", title=f"{status} {HTTP_STATUS_CODES[status]}", message=message)


def see_other(location):
    return Response(status=303, headers={"Location": location})


@app.errorhandler(HTTPException)
def http_error(error):
    """Flask's own errors (an unknown path, a method a path does not take, ...) as the app's pages."""
    if error.code == 500:
        # An error of the app's own, shown signed out: the session may be what failed.
        page = render_template("error.html", user=None, title="500 Internal Server Error",
                               message="Something went wrong.")
        return page, 500
    return error_page(error.code, error.description)


@app.after_request
def private_answers(response):
    """An answer to a request that carries a session, or one that starts a session, is for that browser only.
    Looking at the cookie, not at the session, costs no query and covers every signed-in request."""
    if SESSION_COOKIE in request.cookies or "Set-Cookie" in response.headers:
        response.cache_control.private = True
    return response


# Sessions.


def current_user():
    """The request's signed-in user (id, email, grade), or None when its cookie names no session. It is looked up
    once per request, when a handler or a page first needs it."""
    if "user" not in g:
        token = request.cookies.get(SESSION_COOKIE)
        g.user = None
        if token is not None:
            g.user = query_one(
                "SELECT u.id, u.email, u.grade FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.token = ?",
                token,
            )
    return g.user


# Handlers.


@app.get("/signup")
def get_signup():
    return render(200, "signup.html", title="Sign up", grades=GRADES)


@app.post("/signup")
def post_signup():
    email = request.form.get("email", "")
    password = request.form.get("password", "")
    grade = request.form.get("grade", "")
    if (email.count("@") != 1 or len(email) > MAX_EMAIL
            or not MIN_PASSWORD <= len(password) <= MAX_PASSWORD or grade not in GRADES):
        message = (f"An email has one @ and at most {MAX_EMAIL} characters; a password is {MIN_PASSWORD} to "
                   f"{MAX_PASSWORD} characters long; the grade is one of {', '.join(GRADES)}.")
        return render(400, "signup.html", title="Sign up", grades=GRADES, message=message, email=email, grade=grade)

    def taken():
        return render(409, "signup.html", title="Sign up", grades=GRADES, message="This email is taken.",
                      email=email, grade=grade)

    # Look first: on MariaDB, an insert refused by the unique email still uses up an id.
    if query_one("SELECT id FROM users WHERE email = ?", email) is not None:
        return taken()
    salt = secrets.token_hex(8)
    try:
        with transaction():
            cur = execute(
                "INSERT INTO users (email, salt, passhash, grade, created_at) VALUES (?, ?, ?, ?, ?)",
                email, salt, hash_password(salt, password), grade, now(),
            )
            # Every user has a row of subscriptions, as in the initial data: none yet.
            execute("INSERT INTO subscriptions (user_id, arg) VALUES (?, ?)", cur.lastrowid, "{}")
    except (sqlite3.IntegrityError, pymysql.err.IntegrityError):
        return taken()  # someone took the email since the SELECT: the unique email has the last word
    return see_other("/login")


@app.get("/login")
def get_login():
    return render(200, "login.html", title="Log in")


@app.post("/login")
def post_login():
    email = request.form.get("email", "")
    password = request.form.get("password", "")
    user = query_one("SELECT id, salt, passhash FROM users WHERE email = ?", email)
    if user is None or not hmac.compare_digest(hash_password(user["salt"], password), user["passhash"]):
        return render(403, "login.html", title="Log in", message="Wrong email or password.", email=email)
    old = request.cookies.get(SESSION_COOKIE)
    if old is not None:
        execute("DELETE FROM sessions WHERE token = ?", old)  # a new session replaces the browser's old one
    token = secrets.token_hex(32)
    execute("INSERT INTO sessions (token, user_id, created_at) VALUES (?, ?, ?)", token, user["id"], now())
    response = see_other("/")
    response.set_cookie(SESSION_COOKIE, token, path="/", httponly=True, samesite="Lax")
    return response


@app.post("/logout")
def post_logout():
    token = request.cookies.get(SESSION_COOKIE)
    if token is not None:
        execute("DELETE FROM sessions WHERE token = ?", token)
    response = see_other("/login")
    response.delete_cookie(SESSION_COOKIE, path="/", httponly=True, samesite="Lax")
    return response


@app.get("/")
def get_index():
    user = current_user()
    if user is None:
        return see_other("/login")
    return render(200, "index.html", title="")


@app.get("/user.js")
def get_user_js():
    user = current_user()
    if user is None:
        return Response("sign in first\n", status=403, mimetype="text/plain")
    script = render_template("user.js", refresh_ms=REFRESH_MS[user["grade"]])
    return Response(script, mimetype="application/javascript")


@app.get("/modify")
def get_modify():
    user = current_user()
    if user is None:
        return see_other("/login")
    subscriptions = load_subscriptions(user["id"])
    forms = []
    for service in ALLOWED[user["grade"]]:
        current = subscriptions.get(service)
        fields = [
            {"name": name, "value": (current or {}).get(name, ""), "pattern": PARAM_PATTERNS[name].pattern}
            for name in PARAMS[service]
        ]
        forms.append({"service": service, "subscribed": current is not None, "fields": fields})
    return render(200, "modify.html", title="Services", forms=forms)


@app.post("/modify")
def post_modify():
    user = current_user()
    if user is None:
        return error_page(403, "Sign in to change your services.")
    service = request.form.get("service", "")
    if service not in SERVICES:
        return error_page(400, "There is no such service.")
    if service not in ALLOWED[user["grade"]]:
        return error_page(403, f"The {user['grade']} grade cannot subscribe to {service}.")
    params = None  # a removal
    if request.form.get("remove") != "1":
        # Only the service's own fields: anything else the form carries is left out.
        params = {name: request.form.get(name, "") for name in PARAMS[service]}
        for name, value in params.items():
            if not PARAM_PATTERNS[name].fullmatch(value):
                return error_page(400, f"{service}: {name} {value!r} is not valid.")
    # Read, change and write the user's subscriptions in one transaction, so that two changes at once do not undo
    # each other.
    with transaction():
        subscriptions = load_subscriptions(user["id"], for_update=True)
        if params is None:
            subscriptions.pop(service, None)
        else:
            subscriptions[service] = params
        arg = json.dumps(subscriptions, sort_keys=True, separators=(",", ":"))  # as the dump writes it
        execute("REPLACE INTO subscriptions (user_id, arg) VALUES (?, ?)", user["id"], arg)
    return see_other("/modify")


@app.get("/data")
def get_data():
    user = current_user()
    if user is None:
        return json_response({"error": "sign in first"}, 403)
    subscriptions = load_subscriptions(user["id"])
    endpoints = query_one("SELECT http, https FROM endpoints WHERE id = 1")
    items = []
    # One service after another, in the manual's order; only those the grade allows.
    for service in ALLOWED[user["grade"]]:
        params = subscriptions.get(service)
        if params is None:
            continue
        try:
            if endpoints is None:
                raise RuntimeError("no one said where the services are (POST /initialize)")
            answer = call_service(service, params, endpoints["http"], endpoints["https"])
        except (requests.RequestException, ValueError, RuntimeError) as e:
            app.logger.warning("/data of user %d: %s: %s", user["id"], service, e)
            return json_response({"error": f"{service}: {e}"}, 502)
        items.append({"service": service, "data": answer})
    return json_response(items, 200)


@app.post("/initialize")
def post_initialize():
    """Restores the initial data (the users and their subscriptions as the dump has them, no sessions) and takes
    the services' base URLs."""
    body = request.get_json(force=True, silent=True)
    if not isinstance(body, dict) or not isinstance(body.get("http"), str) or not isinstance(body.get("https"), str):
        return json_response({"error": 'want a JSON body {"http": "URL", "https": "URL"}'}, 400)
    # The subscriptions of the initial users are changed in place by the run, so they are loaded again from the
    # dump, whose INSERT INTO subscriptions statements hold them all.
    inserts = [s for s in sql_statements(INITIAL_SQL) if s.startswith("INSERT INTO subscriptions")]
    with transaction():
        execute("DELETE FROM sessions")
        execute("DELETE FROM subscriptions")
        execute("DELETE FROM users WHERE id > ?", INITIAL_USERS)
        if not IS_MYSQL:
            # New users get ids from INITIAL_USERS + 1 on again, as after the first load.
            execute("UPDATE sqlite_sequence SET seq = ? WHERE name = 'users'", INITIAL_USERS)
        for statement in inserts:
            execute(statement)
        store_endpoints(body["http"], body["https"])
    if IS_MYSQL:
        execute(f"ALTER TABLE users AUTO_INCREMENT = {INITIAL_USERS + 1}")  # it commits: outside the transaction
    return json_response({"ok": True}, 200)


# Helpers.


def load_subscriptions(user_id, for_update=False):
    """The user's subscriptions, service -> parameters ({} if it has no row)."""
    sql = "SELECT arg FROM subscriptions WHERE user_id = ?"
    if for_update and IS_MYSQL:
        sql += " FOR UPDATE"  # SQLite's BEGIN IMMEDIATE already holds the write lock
    row = query_one(sql, user_id)
    return json.loads(row["arg"]) if row is not None else {}


def call_service(service, params, http, https):
    """Asks the service, with the user's parameters, and returns its parsed JSON answer. Each call opens a new
    connection (requests.get makes a session of its own and closes it) and speaks HTTP/1.1; nothing is cached and
    no request is conditional. A status other than 200, or an answer that is not JSON, raises."""
    query, headers, verify = None, {}, True
    if service == "postal":
        url = f"{http}/postal/{params['code']}"
    elif service == "postal2":
        url, query = f"{http}/postal", {"code": params["code"]}
    elif service in ("surname", "givenname"):
        url, query = f"{http}/{service}", {"q": params["q"]}
    elif service == "weather":
        url, query = f"{http}/weather", {"location": params["location"]}
    elif service == "security":
        url, query = f"{https}/tokens", {"req": params["req"]}
        headers, verify = {"X-Security-Token": params["token"]}, False
    elif service == "attacked":
        url = f"{https}/attacked"
        headers, verify = {"X-Security-Token": params["token"]}, False
    else:
        raise RuntimeError(f"unknown service {service!r}")
    res = requests.get(url, params=query, headers=headers, verify=verify, timeout=SERVICE_TIMEOUT)
    if res.status_code != 200:
        raise RuntimeError(f"{url} answered {res.status_code}")
    return res.json()  # a ValueError if it is not JSON


def json_response(value, status):
    # json.dumps rather than Flask's jsonify, which sorts keys: the services' answers are relayed in their order.
    return Response(json.dumps(value, ensure_ascii=False), status=status, mimetype="application/json")


def hash_password(salt, password):
    """What the users table stores: the SHA-512 of salt + password, in lowercase hex."""
    return hashlib.sha512((salt + password).encode()).hexdigest()


def now():
    """The current UTC time, in whole seconds."""
    return datetime.now(timezone.utc).strftime(TIME_FORMAT)
