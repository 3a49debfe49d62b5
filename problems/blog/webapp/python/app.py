"""The Python reference app of the tunecon problem "blog": a small blog whose every page lists the articles
commented on most recently. It is slow on purpose, the way real apps are slow, and it is correct: keep it correct
while you make it fast. The contract it keeps is in ../../MANUAL.md; it behaves like the Go app in ../go.

Run it with gunicorn from this directory (gunicorn.conf.py holds the settings and loads the initial data):

    python3 -m venv venv && venv/bin/pip install -r requirements.txt
    venv/bin/gunicorn
"""

import mimetypes
import os
import sqlite3
import time
import urllib.parse
from datetime import datetime, timezone

import pymysql
import pymysql.cursors
from flask import Flask, Response, redirect, render_template, request
from markupsafe import Markup, escape

ROOT = os.path.abspath(os.environ.get("BLOG_ROOT") or "..")  # the webapp directory: public/, sql/, data/
DB = os.environ.get("BLOG_DB", "")  # "" or "sqlite:PATH" for SQLite, "mysql://user:pass@host:port/dbname"
INITIAL_SQL = os.environ.get("BLOG_INITIAL_SQL") or os.path.join(ROOT, "data", "initial.sql")
IS_MYSQL = DB.startswith("mysql://")

# The sizes of the initial data: POST /initialize deletes every row added after it.
INITIAL_ARTICLES = 10000
INITIAL_COMMENTS = 300000

TIME_FORMAT = "%Y-%m-%d %H:%M:%S"  # every time, in UTC

# Limits of posted text, in characters.
MAX_TITLE = 128
MAX_ARTICLE_BODY = 4096
MAX_NAME = 64
MAX_COMMENT_BODY = 1024

mimetypes.add_type("text/javascript", ".js")  # the static files' type, whatever /etc/mime.types says
app = Flask(__name__, static_folder=os.path.join(ROOT, "public"), static_url_path="/static")
app.jinja_env.keep_trailing_newline = True  # pages end with "</html>\n", as the Go app's do


# The database.


def connect():
    """Opens a connection to the database named by BLOG_DB."""
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
        raise SystemExit(f"BLOG_DB {DB!r}: want empty, sqlite:PATH or mysql://user:pass@host:port/dbname")
    path = DB.removeprefix("sqlite:") or os.path.join(ROOT, "data", "blog-python.db")
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
    """Creates the tables and loads the initial data unless the article table exists. gunicorn.conf.py calls it in
    the master process, before the workers start."""
    conn = connect()
    try:
        if IS_MYSQL:
            sql = ("SELECT COUNT(*) AS n FROM information_schema.tables "
                   "WHERE table_schema = DATABASE() AND table_name = 'article'")
        else:
            sql = "SELECT COUNT(*) AS n FROM sqlite_master WHERE type = 'table' AND name = 'article'"
        if execute(sql, conn=conn).fetchone()["n"] > 0:
            return
        if not os.path.exists(INITIAL_SQL):
            raise SystemExit(
                f"the initial data {INITIAL_SQL} does not exist: generate it with `tunecon serve blog`, which writes "
                "it and then starts the Go app (or set BLOG_INITIAL_SQL to where it is)"
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
                cur.execute("DROP TABLE IF EXISTS article, comment")
            raise
        log.info("loaded the initial data in %.3fs", time.monotonic() - start)
    finally:
        conn.close()


def sql_statements(path):
    """The statements of an SQL file, each ending with ";" at the end of a line (the dump is about 100 MB, so it is
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


@app.template_filter("multiline")
def multiline(text):
    """Escapes text and shows each line break as <br>."""
    return Markup(go_escape(text).replace("\r\n", "<br>").replace("\n", "<br>"))


def escape_output(value):
    """Escapes every {{ ... }} in the templates (what Jinja's autoescaping would do), plus "+" as &#43;, as Go's
    html/template does."""
    if isinstance(value, Markup):  # already HTML
        return value
    return Markup(go_escape(value).replace("+", "&#43;"))


def go_escape(value):
    """Escapes like the Go app (&#34; and &#39; for quotes, NUL shown as U+FFFD), so that both apps send the same
    bytes. Returns a str: Markup.replace would escape its arguments."""
    return str(escape(value)).replace("\0", "\ufffd")


app.jinja_env.finalize = escape_output


def render(status, template, **page):
    """Renders a page with the sidebar, which every page has."""
    recent = query(
        "SELECT a.id, a.title FROM comment c JOIN article a ON a.id = c.article_id "
        "GROUP BY a.id, a.title ORDER BY MAX(c.id) DESC LIMIT 10"
    )
    return render_template(template, recent=recent, **page), status


@app.errorhandler(404)
@app.errorhandler(405)  # a path that exists with another method: 404 too, as in the Go app
def not_found(error=None):
    return render(404, "error.html", title="Not found", message="There is no such page.")


def bad_request(message):
    return render(400, "error.html", title="Bad request", message=message)


# Handlers.


@app.get("/")
def get_index():
    articles = query("SELECT id, title, body, created_at FROM article ORDER BY id DESC LIMIT 10")
    return render(200, "index.html", articles=articles)


@app.get("/articles/<id>")
def get_article(id):
    article_id = parse_id(id)
    if article_id is None:
        return not_found()
    article = query_one("SELECT id, title, body, created_at FROM article WHERE id = ?", article_id)
    if article is None:
        return not_found()
    # The count and the list come from one transaction, so that a comment posted in between cannot make them
    # disagree.
    execute("BEGIN")
    try:
        count = query_one("SELECT COUNT(*) AS n FROM comment WHERE article_id = ?", article_id)["n"]
        comments = query(
            "SELECT id, article_id, name, body, created_at FROM comment WHERE article_id = ? ORDER BY id", article_id
        )
    finally:
        execute("ROLLBACK")  # it only read
    return render(200, "article.html", title=article["title"], article=article, comments=comments,
                  comment_count=count)


@app.get("/post")
def get_post():
    return render(200, "post.html", title="Write an article")


@app.post("/articles")
def post_article():
    title = form_value("title")
    body = form_value("body")
    if not valid_text(title, 1, MAX_TITLE) or "\r" in title or "\n" in title:
        return bad_request(f"The title must be one line of 1 to {MAX_TITLE} characters.")
    if not valid_text(body, 1, MAX_ARTICLE_BODY):
        return bad_request(f"The body must be 1 to {MAX_ARTICLE_BODY} characters long.")
    cur = execute("INSERT INTO article (title, body, created_at) VALUES (?, ?, ?)", title, body, now())
    return redirect(f"/articles/{cur.lastrowid}", 303)


@app.post("/articles/<id>/comments")
def post_comment(id):
    article_id = parse_id(id)
    if article_id is None:
        return not_found()
    if query_one("SELECT COUNT(*) AS n FROM article WHERE id = ?", article_id)["n"] == 0:
        return not_found()
    name = form_value("name")
    body = form_value("body")
    if not valid_text(name, 0, MAX_NAME):
        return bad_request(f"The name must be at most {MAX_NAME} characters long.")
    if not valid_text(body, 1, MAX_COMMENT_BODY):
        return bad_request(f"The comment must be 1 to {MAX_COMMENT_BODY} characters long.")
    cur = execute(
        "INSERT INTO comment (article_id, name, body, created_at) VALUES (?, ?, ?, ?)", article_id, name, body, now()
    )
    return redirect(f"/articles/{article_id}#comment-{cur.lastrowid}", 303)


@app.post("/initialize")
def post_initialize():
    """Restores the initial data by deleting everything added since."""
    execute(f"DELETE FROM comment WHERE id > {INITIAL_COMMENTS}")
    execute(f"DELETE FROM article WHERE id > {INITIAL_ARTICLES}")
    if IS_MYSQL:
        execute(f"ALTER TABLE comment AUTO_INCREMENT = {INITIAL_COMMENTS + 1}")
        execute(f"ALTER TABLE article AUTO_INCREMENT = {INITIAL_ARTICLES + 1}")
    return Response('{"language":"python"}', mimetype="application/json")


# Helpers.


def parse_id(s):
    """A positive decimal id, digits only, or None."""
    if not s or len(s) > 18 or not (s.isascii() and s.isdigit()) or int(s) == 0:
        return None
    return int(s)


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


def valid_text(s, lo, hi):
    """Whether s is valid UTF-8 (not None) of lo to hi characters."""
    return s is not None and lo <= len(s) <= hi


def now():
    """The current UTC time, in whole seconds."""
    return datetime.now(timezone.utc).strftime(TIME_FORMAT)
