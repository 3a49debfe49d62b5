"""The Python reference app of the tunecon problem "memo", after the ISUCON3 qualifier: a Markdown memo service.
People sign up, sign in and write memos, public or private; / and /recent/N list the newest public memos, a memo's
page renders its Markdown with links to its author's older and newer memos, and /mypage lists all of a user's own
memos. It is slow on purpose, the way real apps are slow, and it is correct: keep it correct while you make it fast.
The contract it keeps is in ../../MANUAL.md; it behaves like the Go app in ../go.

Run it with gunicorn from this directory (gunicorn.conf.py holds the settings and loads the initial data):

    python3 -m venv venv && venv/bin/pip install -r requirements.txt
    venv/bin/gunicorn
"""

import hashlib
import hmac
import mimetypes
import os
import re
import secrets
import sqlite3
import time
import urllib.parse
from datetime import datetime, timezone

import pymysql
import pymysql.cursors
from flask import Flask, Response, g, render_template, request
from markdown_it import MarkdownIt
from markupsafe import Markup, escape
from werkzeug.exceptions import HTTPException
from werkzeug.http import HTTP_STATUS_CODES

ROOT = os.path.abspath(os.environ.get("MEMO_ROOT") or "..")  # the webapp directory: public/, sql/, data/
DB = os.environ.get("MEMO_DB", "")  # "" or "sqlite:PATH" for SQLite, "mysql://user:pass@host:port/dbname"
INITIAL_SQL = os.environ.get("MEMO_INITIAL_SQL") or os.path.join(ROOT, "data", "initial.sql")
IS_MYSQL = DB.startswith("mysql://")

# The sizes of the initial data: POST /initialize deletes every row added after it.
INITIAL_USERS = 1000
INITIAL_MEMOS = 50000

PAGE_SIZE = 100  # memos on / and on each /recent/N
TIME_FORMAT = "%Y-%m-%d %H:%M:%S"  # every time, in UTC
SESSION_COOKIE = "memo_session"

# The rules for what people type, in characters.
MAX_CONTENT = 10000
USERNAME = re.compile(r"[a-z0-9_]{3,24}")  # whole names only: always fullmatch
MIN_PASSWORD, MAX_PASSWORD = 8, 64

# N of /recent/N: a decimal number without sign or leading zero. Past 16 digits no page can hold a memo, and
# 100 * N would overflow the database's integers.
PAGE_NUMBER = re.compile(r"0|[1-9][0-9]{0,15}")
MEMO_ID = re.compile(r"[1-9][0-9]{0,17}")

# CommonMark without raw HTML: any HTML in a memo is escaped and shown as text.
markdown = MarkdownIt("commonmark", {"html": False})

mimetypes.add_type("text/javascript", ".js")  # the static files' type, whatever /etc/mime.types says
app = Flask(__name__, static_folder=os.path.join(ROOT, "public"), static_url_path="/static")
app.jinja_env.keep_trailing_newline = True  # pages end with "</html>\n", as the Go app's do


# The database.


def connect():
    """Opens a connection to the database named by MEMO_DB."""
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
        raise SystemExit(f"MEMO_DB {DB!r}: want empty, sqlite:PATH or mysql://user:pass@host:port/dbname")
    path = DB.removeprefix("sqlite:") or os.path.join(ROOT, "data", "memo-python.db")
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
                f"the initial data {INITIAL_SQL} does not exist: generate it with `tunecon serve memo`, which writes "
                "it and then starts the Go app (or set MEMO_INITIAL_SQL to where it is)"
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
                cur.execute("DROP TABLE IF EXISTS users, memos, sessions")
            raise
        log.info("loaded the initial data in %.3fs", time.monotonic() - start)
    finally:
        conn.close()


def sql_statements(path):
    """The statements of an SQL file, each ending with ";" at the end of a line (the dump is tens of MB, so it is
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


@app.template_filter("datetime")
def format_datetime(value):
    # SQLite hands back the text that was stored, already in this format; MariaDB a datetime.
    return value if isinstance(value, str) else value.strftime(TIME_FORMAT)


def escape_output(value):
    """Escapes every {{ ... }} in the templates (what Jinja's autoescaping would do) the way Go's html/template does
    (&#34; and &#39; for quotes, &#43; for "+", NUL shown as U+FFFD), so that both apps escape alike."""
    if isinstance(value, Markup):  # already HTML
        return value
    return Markup(str(escape(value)).replace("\0", "\ufffd").replace("+", "&#43;"))


app.jinja_env.finalize = escape_output


def render(status, template, **page):
    """Renders a page; every page has the header, which shows who is signed in."""
    return render_template(template, viewer=current_session(), **page), status


def error_page(status, message):
    """An error page, titled with the status's name ("Not Found"), as the Go app's are."""
    return render(status, "error.html", title=HTTP_STATUS_CODES[status], message=message)


def not_found(message="There is no such page."):
    return error_page(404, message)


@app.errorhandler(HTTPException)
def http_error(error):
    """Flask's own error pages (an unknown path, a path that exists with another method, ...) as the app's pages:
    a path that exists with another method is 404 too, as in the Go app."""
    if error.code in (404, 405):
        return not_found()
    if error.code == 500:
        # An error of the app's own, shown signed out: the session may be what failed.
        page = render_template("error.html", viewer=None, title=HTTP_STATUS_CODES[500],
                               message="Something went wrong. Please try again.")
        return page, 500
    return error_page(error.code, error.description)


@app.after_request
def private_pages(response):
    """A page shown to a signed-in session, or one that signs a session in, is for that browser only."""
    if g.get("session") is not None or "Set-Cookie" in response.headers:
        response.headers["Cache-Control"] = "private"
    return response


# Sessions.


def current_session():
    """The request's session with its user's name, or None when it has none (or one the database does not know).
    It is looked up once per request, when a handler or a page first needs it."""
    if "session" not in g:
        token = request.cookies.get(SESSION_COOKIE)
        g.session = None
        if token is not None:
            g.session = query_one(
                "SELECT s.id, s.user_id, s.csrf_token, u.username FROM sessions s JOIN users u ON u.id = s.user_id "
                "WHERE s.id = ?",
                token,
            )
    return g.session


def sign_in(user_id, location):
    """Starts a new session signed in to the user, ending the request's old one, and sends the browser on."""
    old = request.cookies.get(SESSION_COOKIE)
    if old is not None:
        execute("DELETE FROM sessions WHERE id = ?", old)
    token = secrets.token_hex(16)
    execute(
        "INSERT INTO sessions (id, user_id, csrf_token, created_at) VALUES (?, ?, ?, ?)",
        token, user_id, secrets.token_hex(16), now(),
    )
    response = see_other(location)
    response.set_cookie(SESSION_COOKIE, token, path="/", httponly=True, samesite="Lax")
    return response


def valid_csrf_token(session):
    """Whether the form carries the session's CSRF token."""
    token = form_value("csrf_token")
    return token is not None and hmac.compare_digest(token.encode(), session["csrf_token"].encode())


def see_other(location):
    return Response(status=303, headers={"Location": location})


# Handlers.


@app.get("/")
def get_index():
    return list_page(0, index=True)


@app.get("/recent/<page>")
def get_recent(page):
    if not PAGE_NUMBER.fullmatch(page):
        return not_found()
    return list_page(int(page))


def list_page(page, index=False):
    """Page `page` of the public memos, newest first. The index, /, is page 0, and the only page that is there even
    without a memo on it: /recent/0 lists what / lists, but is 404, as any empty page, when there is no public memo."""
    # The count and the list come from one transaction, so that a memo posted in between cannot make them disagree.
    execute("BEGIN")
    try:
        total = query_one("SELECT COUNT(*) AS n FROM memos WHERE is_private = 0")["n"]
        rows = query(
            "SELECT id, user_id, content, is_private, created_at FROM memos WHERE is_private = 0 "
            "ORDER BY id DESC LIMIT ? OFFSET ?",
            PAGE_SIZE, page * PAGE_SIZE,
        )
        memos = []
        for row in rows:
            author = query_one("SELECT username FROM users WHERE id = ?", row["user_id"])
            memos.append(listed(row, author["username"]))
    finally:
        execute("ROLLBACK")  # it only read
    if not memos and not index:
        return not_found()
    more = f"/recent/{page + 1}" if total > (page + 1) * PAGE_SIZE else None
    title = f"Public memos, page {page}" if page > 0 else ""
    return render(200, "index.html", title=title, total=total, memos=memos, more=more)


def listed(row, author):
    """A memo as the lists show it, with its author's name."""
    return {
        "id": row["id"],
        "title": title_of(row["content"]),
        "author": author,
        "created_at": row["created_at"],
        "is_private": row["is_private"],
    }


@app.get("/memos/<id>")
def get_memo(id):
    if not MEMO_ID.fullmatch(id):
        return not_found("There is no such memo.")
    memo = query_one("SELECT id, user_id, content, is_private, created_at FROM memos WHERE id = ?", int(id))
    if memo is None:
        return not_found("There is no such memo.")
    session = current_session()
    is_author = session is not None and session["user_id"] == memo["user_id"]
    if memo["is_private"] and not is_author:
        return not_found("There is no such memo.")  # to anyone but its author, a private memo does not exist
    author = query_one("SELECT username FROM users WHERE id = ?", memo["user_id"])
    content = Markup(markdown.render(memo["content"]))

    # The older and the newer memo of the author that the viewer may see.
    memos = query(
        "SELECT id, user_id, content, is_private, created_at FROM memos WHERE user_id = ? ORDER BY id", memo["user_id"]
    )
    older = newer = None
    for other in memos:
        if other["is_private"] and not is_author:
            continue
        if other["id"] < memo["id"]:
            older = other["id"]
        elif other["id"] > memo["id"] and newer is None:
            newer = other["id"]

    return render(
        200, "memo.html", title=title_of(memo["content"]), memo=memo, author=author["username"], content=content,
        older=older, newer=newer,
    )


@app.get("/mypage")
def get_mypage():
    session = current_session()
    if session is None:
        return see_other("/signin")
    rows = query(
        "SELECT id, user_id, content, is_private, created_at FROM memos WHERE user_id = ? ORDER BY id DESC",
        session["user_id"],
    )
    memos = [listed(row, session["username"]) for row in rows]
    return render(200, "mypage.html", title="My page", memos=memos)


@app.post("/memos")
def post_memo():
    session = current_session()
    if session is None:
        return error_page(403, "Sign in to write a memo.")
    if not valid_csrf_token(session):
        return error_page(400, "The form has expired: reload the page and try again.")
    content = form_value("content")
    if content is None or not 1 <= len(content) <= MAX_CONTENT or not title_of(content):
        return error_page(400, f"A memo is 1 to {MAX_CONTENT} characters long, and its first line is its title.")
    is_private = 1 if form_value("is_private") == "1" else 0
    cur = execute(
        "INSERT INTO memos (user_id, content, is_private, created_at) VALUES (?, ?, ?, ?)",
        session["user_id"], content, is_private, now(),
    )
    return see_other(f"/memos/{cur.lastrowid}")


@app.get("/signin")
def get_signin():
    return render(200, "signin.html", title="Sign in")


@app.post("/signin")
def post_signin():
    username = form_value("username")
    password = form_value("password")
    user = None
    if username is not None and password is not None:
        user = query_one("SELECT id, salt, password_hash FROM users WHERE username = ?", username)
    if user is None or not hmac.compare_digest(hash_password(user["salt"], password), user["password_hash"]):
        return render(401, "signin.html", title="Sign in", message="Wrong name or password.", username=username)
    return sign_in(user["id"], "/mypage")


@app.get("/signup")
def get_signup():
    return render(200, "signup.html", title="Sign up")


@app.post("/signup")
def post_signup():
    username = form_value("username")
    password = form_value("password")
    if (username is None or not USERNAME.fullmatch(username)
            or password is None or not MIN_PASSWORD <= len(password) <= MAX_PASSWORD):
        message = (f"A name is 3 to 24 characters of a-z, 0-9 and _; a password is {MIN_PASSWORD} to {MAX_PASSWORD} "
                   "characters long.")
        return render(400, "signup.html", title="Sign up", message=message, username=username)
    # Look first: on MariaDB, an insert refused by the unique name still uses up an id.
    if query_one("SELECT id FROM users WHERE username = ?", username) is not None:
        return render(409, "signup.html", title="Sign up", message="This name is taken.", username=username)
    salt = secrets.token_hex(8)
    try:
        cur = execute(
            "INSERT INTO users (username, salt, password_hash, created_at) VALUES (?, ?, ?, ?)",
            username, salt, hash_password(salt, password), now(),
        )
    except (sqlite3.IntegrityError, pymysql.err.IntegrityError):
        # Someone took the name since the SELECT: the unique name has the last word.
        return render(409, "signup.html", title="Sign up", message="This name is taken.", username=username)
    return sign_in(cur.lastrowid, "/mypage")


@app.post("/signout")
def post_signout():
    session = current_session()
    response = see_other("/")
    if session is not None:
        if not valid_csrf_token(session):
            return error_page(400, "The form has expired: reload the page and try again.")
        execute("DELETE FROM sessions WHERE id = ?", session["id"])
        response.delete_cookie(SESSION_COOKIE, path="/", httponly=True, samesite="Lax")
    return response


@app.post("/initialize")
def post_initialize():
    """Restores the initial data by deleting everything added since."""
    execute("DELETE FROM sessions")
    execute(f"DELETE FROM memos WHERE id > {INITIAL_MEMOS}")
    execute(f"DELETE FROM users WHERE id > {INITIAL_USERS}")
    if IS_MYSQL:
        execute(f"ALTER TABLE memos AUTO_INCREMENT = {INITIAL_MEMOS + 1}")
        execute(f"ALTER TABLE users AUTO_INCREMENT = {INITIAL_USERS + 1}")
    return Response('{"language":"python"}', mimetype="application/json")


# Helpers.


def title_of(content):
    """A memo's title: its first line without the "#" characters and spaces at its start and the spaces and tabs at
    its end."""
    return content.split("\n", 1)[0].lstrip("# ").rstrip(" \t")


def hash_password(salt, password):
    """What the users table stores: the SHA-256 of salt + password, in lowercase hex."""
    return hashlib.sha256((salt + password).encode()).hexdigest()


def form_value(name):
    """The first value of the form field, "" if it is absent, or None if it is not valid UTF-8.

    request.form never fails on bytes that are not UTF-8: it re-quotes them (URL-encoded forms) or replaces them
    with U+FFFD (multipart forms). They must get a 400, so URL-encoded forms are parsed here, as Latin-1 (which
    keeps every byte) and then decoded strictly; a multipart value with U+FFFD must be in the raw body as it is."""
    data = request.get_data()  # the raw body; request.form parses it from this copy
    if request.mimetype == "application/x-www-form-urlencoded":
        for key, value in urllib.parse.parse_qsl(data.decode("latin-1"), keep_blank_values=True, encoding="latin-1"):
            if key == name:
                try:
                    return value.encode("latin-1").decode("utf-8")
                except UnicodeDecodeError:
                    return None
        return ""
    value = request.form.get(name, "")
    if "\ufffd" in value and value.encode() not in data:
        return None  # Werkzeug replaced bytes that are not UTF-8
    return value


def now():
    """The current UTC time, in whole seconds."""
    return datetime.now(timezone.utc).strftime(TIME_FORMAT)
