"""The Python reference app of the tunecon problem "leagues": a software-as-a-service for e-sports leagues after
the ISUCON12 qualifier. Each tenant, chosen by the first label of the host name, runs competitions among its
players; organizers upload score CSVs, players read rankings, and the service bills each tenant per finished
competition. It is slow on purpose, the way real apps are slow, and it is correct: keep it correct while you make it
fast. The contract it keeps is in ../../MANUAL.md; it answers exactly what the Go app in ../go answers.

Run it with gunicorn from this directory (gunicorn.conf.py holds the settings and prepares the data):

    python3 -m venv venv && venv/bin/pip install -r requirements.txt
    venv/bin/gunicorn
"""

import contextlib
import fcntl
import json
import os
import re
import shutil
import sqlite3
import time
import urllib.parse

import jwt
import pymysql
import pymysql.cursors
from flask import Flask, Response, g, request, send_file
from werkzeug.exceptions import HTTPException

ROOT = os.path.abspath(os.environ.get("LEAGUES_ROOT") or "..")  # the webapp directory: public/, sql/, data/
DB = os.environ.get("LEAGUES_DB", "")  # "" or "sqlite:PATH" for SQLite, "mysql://user:pass@host:port/dbname"
IS_MYSQL = DB.startswith("mysql://")
INITIAL_DIR = os.environ.get("LEAGUES_INITIAL_DIR") or os.path.join(ROOT, "data", "initial")
PUBLIC_KEY_PATH = os.environ.get("LEAGUES_PUBLIC_KEY") or os.path.join(ROOT, "..", "keys", "public.pem")

if IS_MYSQL:
    _url = urllib.parse.urlsplit(DB)
    ADMIN_PATH = None
    DEFAULT_TENANT_DIR = os.path.join(ROOT, "data", "tenants-mysql-" + _url.path.lstrip("/"))
elif DB == "" or DB.startswith("sqlite:"):
    ADMIN_PATH = DB.removeprefix("sqlite:") or os.path.join(ROOT, "data", "leagues-python.db")
    DEFAULT_TENANT_DIR = ADMIN_PATH.removesuffix(".db") + "-tenants"
else:
    raise SystemExit(f"LEAGUES_DB {DB!r}: want empty, sqlite:PATH or mysql://user:pass@host:port/dbname")
TENANT_DIR = os.environ.get("LEAGUES_TENANT_DIR") or DEFAULT_TENANT_DIR

# What POST /initialize restores: the initial tenants are ids 1 to INITIAL_TENANTS, every initial visit is before
# INITIAL_END (Unix seconds), and the id generator hands out INITIAL_NEXT_ID next. They must match the generated
# data (problems/leagues/data: a test there checks).
INITIAL_TENANTS = 100
INITIAL_END = 1767225600
INITIAL_NEXT_ID = 14769

TOKEN_COOKIE = "leagues_token"
ADMIN_LABEL = "admin"  # the host label, and the tokens' audience, of the service's admin
RANKING_PAGE = 100  # ranks in one ranking answer
BILLING_PAGE = 10  # tenants in one page of the admin's billing
MAX_NEW_PLAYERS = 100  # names in one POST /api/organizer/players
MAX_NAME = 64  # characters of a display name
MAX_TITLE = 128  # characters of a competition's title
MAX_BODY = 1 << 20  # bytes of a JSON body
MAX_UPLOAD = 16 << 20  # bytes of a CSV upload
YEN_PER_SCORED = 100
YEN_PER_VIEWER = 10
ROLES = ("admin", "organizer", "player")
SQLITE_BUSY_WAIT = 5  # seconds a SQLite connection waits for a lock

# Whole strings only: always fullmatch.
TENANT_NAME = re.compile(r"[a-z][a-z0-9-]{0,61}[a-z0-9]")
ID = re.compile(r"[1-9][0-9]{0,17}")
NUMBER = re.compile(r"[0-9]{1,18}")
SCORE = re.compile(r"0|[1-9][0-9]{0,8}")

with open(PUBLIC_KEY_PATH, "rb") as f:
    PUBLIC_KEY = f.read()

app = Flask(__name__, static_folder=os.path.join(ROOT, "public"), static_url_path="/static")
app.config["MAX_CONTENT_LENGTH"] = MAX_UPLOAD


class Answer(Exception):
    """Ends a request with an error answer."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status
        self.message = message


# Answers.


def dump_json(value):
    """Compact JSON with non-ASCII characters and "<", ">", "&" as they are, and U+2028 and U+2029 escaped: what
    the Go app writes."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def answer(value, status=200):
    """Every API answer is for the one who asked: Cache-Control: private."""
    return Response(dump_json(value), status=status, content_type="application/json",
                    headers={"Cache-Control": "private"})


@app.errorhandler(Answer)
def handle_answer(e):
    return answer({"error": e.message}, e.status)


@app.errorhandler(HTTPException)
def handle_http_error(e):
    if e.code == 413:  # an upload over MAX_UPLOAD
        return answer({"error": "bad request"}, 400)
    # Any other path, or a known path with another method: not found, as the Go app answers.
    return answer({"error": "not found"}, 404)


@app.errorhandler(Exception)
def handle_error(e):
    app.logger.exception("error: %s", e)
    return answer({"error": "internal error"}, 500)


# The admin data.


def connect_admin():
    """Opens a connection to the admin data named by LEAGUES_DB."""
    if IS_MYSQL:
        return pymysql.connect(
            host=_url.hostname,
            port=_url.port or 3306,
            user=urllib.parse.unquote(_url.username or ""),
            password=urllib.parse.unquote(_url.password or ""),
            database=_url.path.lstrip("/"),
            charset="utf8mb4",
            autocommit=True,  # every statement outside BEGIN ... COMMIT sees the latest data
            cursorclass=pymysql.cursors.DictCursor,
        )
    # isolation_level=None: no implicit transactions. WAL lets readers run while someone writes; the busy timeout
    # makes writers wait for each other.
    conn = sqlite3.connect(ADMIN_PATH, timeout=SQLITE_BUSY_WAIT, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.row_factory = sqlite3.Row
    return conn


_admin = None


def admin_db():
    """This worker's admin connection. Each gunicorn worker opens its own on first use (a connection must not be
    shared across the fork) and keeps it: a sync worker serves one request at a time."""
    global _admin
    if _admin is None:
        _admin = connect_admin()
    return _admin


@app.before_request
def reconnect_if_needed():
    if IS_MYSQL and _admin is not None:
        _admin.ping(reconnect=True)  # MariaDB drops idle connections


def execute(sql, *args, conn=None):
    """Runs one statement on the admin data, written with "?" placeholders, and returns its cursor."""
    cur = (conn or admin_db()).cursor()
    if IS_MYSQL:
        sql = sql.replace("?", "%s")  # PyMySQL's placeholder
    cur.execute(sql, args)
    return cur


def admin_query(sql, *args):
    return execute(sql, *args).fetchall()


def admin_query_one(sql, *args):
    return execute(sql, *args).fetchone()


# Making the working data.


def initial_data_error(err):
    return SystemExit(f"{err}: generate the initial data with `tunecon serve leagues`, which writes it and then "
                      "starts this app (or set LEAGUES_INITIAL_DIR to where it is)")


def copy_file(src, dst):
    """Copies src to dst through a temporary file beside dst, so that dst is always whole."""
    os.makedirs(os.path.dirname(os.path.abspath(dst)), exist_ok=True)
    tmp = dst + ".tmp"
    shutil.copyfile(src, tmp)
    os.replace(tmp, dst)


def prepare_data(log):
    """Makes the working data from the initial data if it is missing: the admin data, then the tenants' files.
    gunicorn.conf.py calls it in the master process, before the workers start."""
    try:
        if IS_MYSQL:
            load_mysql(log)
        elif not os.path.exists(ADMIN_PATH):
            log.info("copying the initial admin data to %s", ADMIN_PATH)
            for suffix in ("-wal", "-shm"):
                if os.path.exists(ADMIN_PATH + suffix):
                    os.remove(ADMIN_PATH + suffix)
            copy_file(os.path.join(INITIAL_DIR, "admin.db"), ADMIN_PATH)
        if not os.path.exists(TENANT_DIR):
            log.info("copying the initial tenants to %s", TENANT_DIR)
            src = os.path.join(INITIAL_DIR, "tenants")
            names = os.listdir(src)
            tmp = TENANT_DIR + ".tmp"
            shutil.rmtree(tmp, ignore_errors=True)
            os.makedirs(tmp)
            for name in names:
                copy_file(os.path.join(src, name), os.path.join(tmp, name))
            os.replace(tmp, TENANT_DIR)
    except FileNotFoundError as e:
        raise initial_data_error(e)


def load_mysql(log):
    """Creates the admin tables and loads the initial admin data unless the tenant table exists."""
    conn = connect_admin()
    try:
        row = execute("SELECT COUNT(*) AS n FROM information_schema.tables "
                      "WHERE table_schema = DATABASE() AND table_name = 'tenant'", conn=conn).fetchone()
        if row["n"] > 0:
            return
        dump_path = os.path.join(INITIAL_DIR, "admin.mysql.sql")
        if not os.path.exists(dump_path):
            raise initial_data_error(f"{dump_path} does not exist")
        with open(os.path.join(ROOT, "sql", "admin.mysql.sql"), encoding="utf-8") as f:
            schema = f.read()
        log.info("loading the initial admin data from %s", dump_path)
        start = time.monotonic()
        # MariaDB commits on CREATE TABLE: the tables are made first and dropped again if the load fails.
        try:
            for stmt in statements(schema.splitlines(keepends=True)):
                execute(stmt, conn=conn)
            execute("BEGIN", conn=conn)
            with open(dump_path, encoding="utf-8") as f:
                for stmt in statements(f):
                    conn.cursor().execute(stmt)  # no placeholders: PyMySQL must not read "%" in the data
            execute("COMMIT", conn=conn)
            reset_admin(conn)
        except Exception:
            conn.rollback()
            execute("DROP TABLE IF EXISTS tenant, id_generator, visit_history", conn=conn)
            raise
        log.info("loaded the initial admin data in %.1f s", time.monotonic() - start)
    finally:
        conn.close()


def statements(lines):
    """The statements of an SQL file, each ending with ";" at the end of a line; comments and blank lines are
    skipped."""
    stmt = []
    for line in lines:
        stmt.append(line)
        if line.rstrip(" \r\n").endswith(";"):
            text = "".join(stmt)
            stmt = []
            if any(l.strip() and not l.strip().startswith("--") for l in text.split("\n")):
                yield text
    text = "".join(stmt)
    if any(l.strip() and not l.strip().startswith("--") for l in text.split("\n")):
        yield text


# Tenants' files.


def tenant_path(tenant_id):
    return os.path.join(TENANT_DIR, f"{tenant_id}.db")


def tenant_db(tenant_id):
    """Opens a tenant's SQLite file; the request closes it at its end."""
    path = tenant_path(tenant_id)
    if not os.path.exists(path):
        raise RuntimeError(f"the file of tenant {tenant_id} does not exist")
    conn = sqlite3.connect(path, timeout=SQLITE_BUSY_WAIT, isolation_level=None)
    conn.row_factory = sqlite3.Row
    g.setdefault("tenant_dbs", []).append(conn)
    return conn


@app.teardown_request
def close_tenant_dbs(_exc):
    for conn in g.pop("tenant_dbs", []):
        conn.close()
    lock = g.pop("tenant_lock", None)
    if lock is not None:
        unlock(lock)


def lock_tenant(tenant_id):
    """Takes the tenant's exclusive file lock, which every write to the tenant holds until the request ends (and
    every read of its scores, for the read: tenant_lock)."""
    lock = open(os.path.join(TENANT_DIR, f"{tenant_id}.lock"), "a+")
    fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
    g.tenant_lock = lock


def unlock(lock):
    fcntl.flock(lock.fileno(), fcntl.LOCK_UN)
    lock.close()


@contextlib.contextmanager
def tenant_lock(tenant_id):
    """Holds the tenant's exclusive file lock for a read of its scores, lest an upload change them half way."""
    lock = open(os.path.join(TENANT_DIR, f"{tenant_id}.lock"), "a+")
    fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
    try:
        yield
    finally:
        unlock(lock)


def new_id():
    """Hands out the next id for a player or a competition."""
    return execute("REPLACE INTO id_generator (stub) VALUES ('a')").lastrowid


# Who is asking.


def host_label():
    """The first label of the request's host name, in lower case."""
    host = request.host
    if host.startswith("[") and "]:" in host:
        host = host[1:host.index("]:")]
    elif host.count(":") == 1:
        host = host.partition(":")[0]
    return host.partition(".")[0].lower()


def authorize(*roles):
    """Finds the viewer of the request and checks that their role is one of roles: 404 for a host that names no
    tenant, 401 for a missing or bad token, 403 for a role that may not ask, or for a disqualified player. Returns
    (role, subject, tenant or None, player or None)."""
    label = host_label()
    tenant = None
    if label != ADMIN_LABEL:
        tenant = admin_query_one("SELECT * FROM tenant WHERE name = ?", label)
        if tenant is None:
            raise Answer(404, "not found")

    token = request.cookies.get(TOKEN_COOKIE)
    if token is None:
        raise Answer(401, "invalid token")
    try:
        claims = jwt.decode(token, PUBLIC_KEY, algorithms=["RS256"], audience=label,
                            options={"require": ["exp"]})
    except jwt.InvalidTokenError:
        raise Answer(401, "invalid token")
    role, subject = claims.get("role"), claims.get("sub")
    if not isinstance(subject, str) or subject == "" or role not in ROLES:
        raise Answer(401, "invalid token")

    player = None
    if role == "player":
        if tenant is None or not ID.fullmatch(subject):
            raise Answer(401, "invalid token")
        player = tenant_db(tenant["id"]).execute("SELECT * FROM player WHERE id = ?", (int(subject),)).fetchone()
        if player is None:
            raise Answer(401, "invalid token")
    # A role goes with its host: the admin on the admin host, the others on a tenant's.
    if role not in roles or (role == "admin") != (tenant is None):
        raise Answer(403, "forbidden")
    if player is not None and player["is_disqualified"]:
        raise Answer(403, "disqualified")
    return role, subject, tenant, player


# Request bodies and parameters.


def _no_constants(name):
    raise ValueError(f"{name} is not JSON")


def read_json():
    """The request's JSON body as a dict; 400 when it is not valid UTF-8, not JSON or not an object."""
    body = request.get_data(cache=False)
    if len(body) > MAX_BODY:
        raise Answer(400, "bad request")
    try:
        value = json.loads(body.decode("utf-8"), parse_constant=_no_constants)
    except ValueError:
        raise Answer(400, "bad request")
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise Answer(400, "bad request")
    return value


def valid_text(s, maximum):
    """Whether s is a name or title of 1 to maximum characters without control characters."""
    return (isinstance(s, str) and 1 <= len(s) <= maximum
            and not any(ord(c) < 0x20 or ord(c) == 0x7F for c in s))


def path_id(s):
    """The id in a path, or a 404 for one that cannot name anything."""
    if not ID.fullmatch(s):
        raise Answer(404, "not found")
    return int(s)


def player_json(p):
    return {"id": p["id"], "display_name": p["display_name"], "is_disqualified": bool(p["is_disqualified"])}


def competition_json(c):
    return {"id": c["id"], "title": c["title"], "is_finished": c["finished_at"] is not None}


# Admin.


@app.post("/api/admin/tenants")
def post_admin_tenants():
    authorize("admin")
    req = read_json()
    name, display_name = req.get("name"), req.get("display_name")
    if (not isinstance(name, str) or not TENANT_NAME.fullmatch(name) or name == ADMIN_LABEL
            or not valid_text(display_name, MAX_NAME)):
        raise Answer(400, "bad request")
    if admin_query_one("SELECT COUNT(*) AS n FROM tenant WHERE name = ?", name)["n"] > 0:
        raise Answer(409, "name taken")
    now = int(time.time())
    execute("BEGIN")
    try:
        try:
            tenant_id = execute("INSERT INTO tenant (name, display_name, created_at, updated_at) VALUES (?, ?, ?, ?)",
                                name, display_name, now, now).lastrowid
        except (sqlite3.IntegrityError, pymysql.err.IntegrityError):
            raise Answer(409, "name taken")
        # The tenant's file exists before its row is committed: its host works as soon as it is found.
        create_tenant_db(tenant_id)
        execute("COMMIT")
    except BaseException:
        execute("ROLLBACK")
        raise
    return answer({"tenant": {"id": tenant_id, "name": name, "display_name": display_name, "billing": 0}})


def create_tenant_db(tenant_id):
    """Makes a new tenant's file with the tenant schema."""
    with open(os.path.join(ROOT, "sql", "tenant.sql"), encoding="utf-8") as f:
        schema = f.read()
    path = tenant_path(tenant_id)
    for p in (path, path + "-journal"):
        if os.path.exists(p):
            os.remove(p)
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.executescript(schema)
    finally:
        conn.close()


@app.get("/api/admin/billing")
def get_admin_billing():
    authorize("admin")
    before = request.args.get("before", "")
    if before == "":
        tenants = admin_query("SELECT * FROM tenant ORDER BY id DESC LIMIT ?", BILLING_PAGE)
    elif not NUMBER.fullmatch(before):
        raise Answer(400, "bad request")
    else:
        tenants = admin_query("SELECT * FROM tenant WHERE id < ? ORDER BY id DESC LIMIT ?", int(before), BILLING_PAGE)
    result = []
    for t in tenants:
        bills = tenant_billing(t["id"])
        result.append({"id": t["id"], "name": t["name"], "display_name": t["display_name"],
                       "billing": sum(b["billing"] for b in bills)})
    return answer({"tenants": result})


# Billing.


def tenant_billing(tenant_id):
    """The bill of every competition of a tenant, the highest id first."""
    tdb = tenant_db(tenant_id)
    competitions = tdb.execute("SELECT * FROM competition ORDER BY id DESC").fetchall()
    return [competition_billing(tdb, tenant_id, c) for c in competitions]


def competition_billing(tdb, tenant_id, c):
    """A competition's bill from its score rows and the whole visit history: 100 for each player with a score, 10
    for each other player who read the ranking by the second it finished. A competition still running is billed
    nothing."""
    bill = {"competition_id": c["id"], "title": c["title"], "is_finished": c["finished_at"] is not None,
            "scored": 0, "viewed": 0, "billing": 0}
    if c["finished_at"] is None:
        return bill
    visits = admin_query("SELECT player_id, MIN(created_at) AS first_at FROM visit_history "
                         "WHERE tenant_id = ? AND competition_id = ? GROUP BY player_id", tenant_id, c["id"])
    # The scores are read under the tenant's lock, lest an upload change them half way.
    with tenant_lock(tenant_id):
        scores = tdb.execute("SELECT * FROM player_score WHERE competition_id = ? AND upload = ?",
                             (c["id"], c["last_upload"])).fetchall()
        scored = {s["player_id"] for s in scores}
    viewed = sum(1 for v in visits if v["first_at"] <= c["finished_at"] and v["player_id"] not in scored)
    bill["scored"], bill["viewed"] = len(scored), viewed
    bill["billing"] = YEN_PER_SCORED * len(scored) + YEN_PER_VIEWER * viewed
    return bill


# Organizer.


@app.get("/api/organizer/players")
def get_organizer_players():
    _, _, tenant, _ = authorize("organizer")
    players = tenant_db(tenant["id"]).execute("SELECT * FROM player ORDER BY id").fetchall()
    return answer({"players": [player_json(p) for p in players]})


@app.post("/api/organizer/players")
def post_organizer_players():
    _, _, tenant, _ = authorize("organizer")
    names = read_json().get("display_names")
    if (not isinstance(names, list) or not 1 <= len(names) <= MAX_NEW_PLAYERS
            or not all(valid_text(n, MAX_NAME) for n in names)):
        raise Answer(400, "bad request")
    lock_tenant(tenant["id"])
    tdb = tenant_db(tenant["id"])
    result = []
    for name in names:
        player_id = new_id()
        now = int(time.time())
        tdb.execute("INSERT INTO player (id, display_name, is_disqualified, created_at, updated_at) "
                    "VALUES (?, ?, 0, ?, ?)", (player_id, name, now, now))
        p = tdb.execute("SELECT * FROM player WHERE id = ?", (player_id,)).fetchone()
        result.append(player_json(p))
    return answer({"players": result})


@app.post("/api/organizer/players/<player_id>/disqualify")
def post_disqualify(player_id):
    _, _, tenant, _ = authorize("organizer")
    player_id = path_id(player_id)
    lock_tenant(tenant["id"])
    tdb = tenant_db(tenant["id"])
    cur = tdb.execute("UPDATE player SET is_disqualified = 1, updated_at = ? WHERE id = ?", (int(time.time()), player_id))
    if cur.rowcount == 0:
        raise Answer(404, "not found")
    p = tdb.execute("SELECT * FROM player WHERE id = ?", (player_id,)).fetchone()
    return answer({"player": player_json(p)})


@app.get("/api/organizer/competitions")
def get_organizer_competitions():
    return list_competitions("organizer")


@app.get("/api/player/competitions")
def get_player_competitions():
    return list_competitions("player")


def list_competitions(role):
    """A list of the tenant's competitions, the highest id first, for role."""
    _, _, tenant, _ = authorize(role)
    competitions = tenant_db(tenant["id"]).execute("SELECT * FROM competition ORDER BY id DESC").fetchall()
    return answer({"competitions": [competition_json(c) for c in competitions]})


@app.post("/api/organizer/competitions")
def post_competitions():
    _, _, tenant, _ = authorize("organizer")
    title = read_json().get("title")
    if not valid_text(title, MAX_TITLE):
        raise Answer(400, "bad request")
    lock_tenant(tenant["id"])
    tdb = tenant_db(tenant["id"])
    competition_id = new_id()
    now = int(time.time())
    tdb.execute("INSERT INTO competition (id, title, finished_at, last_upload, created_at, updated_at) "
                "VALUES (?, ?, NULL, 0, ?, ?)", (competition_id, title, now, now))
    c = tdb.execute("SELECT * FROM competition WHERE id = ?", (competition_id,)).fetchone()
    return answer({"competition": competition_json(c)})


@app.post("/api/organizer/competitions/<competition_id>/finish")
def post_finish(competition_id):
    _, _, tenant, _ = authorize("organizer")
    competition_id = path_id(competition_id)
    lock_tenant(tenant["id"])
    tdb = tenant_db(tenant["id"])
    c = tdb.execute("SELECT * FROM competition WHERE id = ?", (competition_id,)).fetchone()
    if c is None:
        raise Answer(404, "not found")
    if c["finished_at"] is not None:
        raise Answer(409, "competition finished")
    now = int(time.time())
    tdb.execute("UPDATE competition SET finished_at = ?, updated_at = ? WHERE id = ?", (now, now, competition_id))
    c = tdb.execute("SELECT * FROM competition WHERE id = ?", (competition_id,)).fetchone()
    return answer({"competition": competition_json(c)})


def parse_scores(body):
    """The (player id, score) rows of a score CSV as the manual defines it, or None."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return None
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()  # the file's last "\n"
    if not lines:
        return None
    lines = [line[:-1] if line.endswith("\r") else line for line in lines]
    if lines[0] != "player_id,score":
        return None
    rows = []
    for line in lines[1:]:
        player_id, comma, score = line.partition(",")
        if not comma or not ID.fullmatch(player_id) or not SCORE.fullmatch(score):
            return None
        rows.append((int(player_id), int(score)))
    return rows


@app.post("/api/organizer/competitions/<competition_id>/scores")
def post_scores(competition_id):
    _, _, tenant, _ = authorize("organizer")
    competition_id = path_id(competition_id)
    lock_tenant(tenant["id"])
    tdb = tenant_db(tenant["id"])
    c = tdb.execute("SELECT * FROM competition WHERE id = ?", (competition_id,)).fetchone()
    if c is None:
        raise Answer(404, "not found")
    if c["finished_at"] is not None:
        raise Answer(409, "competition finished")
    file = request.files.get("scores")
    if file is None:
        raise Answer(400, "bad request")
    rows = parse_scores(file.read())
    if rows is None:
        raise Answer(400, "bad request")
    # Every player named must be the tenant's.
    for player_id, _ in rows:
        if tdb.execute("SELECT COUNT(*) FROM player WHERE id = ?", (player_id,)).fetchone()[0] == 0:
            raise Answer(400, "bad request")
    upload = c["last_upload"] + 1
    now = int(time.time())
    tdb.execute("BEGIN")
    try:
        for i, (player_id, score) in enumerate(rows):
            tdb.execute("INSERT INTO player_score (competition_id, upload, row_num, player_id, score, created_at) "
                        "VALUES (?, ?, ?, ?, ?, ?)", (competition_id, upload, i + 1, player_id, score, now))
        tdb.execute("UPDATE competition SET last_upload = ?, updated_at = ? WHERE id = ?", (upload, now, competition_id))
        tdb.execute("COMMIT")
    except BaseException:
        tdb.execute("ROLLBACK")
        raise
    return answer({"rows": len(rows)})


@app.get("/api/organizer/billing")
def get_organizer_billing():
    _, _, tenant, _ = authorize("organizer")
    bills = tenant_billing(tenant["id"])
    return answer({"billing": {"total": sum(b["billing"] for b in bills), "competitions": bills}})


# Player.


@app.get("/api/player/players/<player_id>")
def get_player(player_id):
    _, _, tenant, _ = authorize("player")
    player_id = path_id(player_id)
    tdb = tenant_db(tenant["id"])
    p = tdb.execute("SELECT * FROM player WHERE id = ?", (player_id,)).fetchone()
    if p is None:
        raise Answer(404, "not found")
    scores = []
    with tenant_lock(tenant["id"]):
        for c in tdb.execute("SELECT * FROM competition ORDER BY id").fetchall():
            # The player's last row in the competition's last upload.
            s = tdb.execute("SELECT * FROM player_score WHERE competition_id = ? AND upload = ? AND player_id = ? "
                            "ORDER BY row_num DESC LIMIT 1", (c["id"], c["last_upload"], p["id"])).fetchone()
            if s is not None:
                scores.append({"competition_id": c["id"], "title": c["title"], "score": s["score"]})
    return answer({"player": player_json(p), "scores": scores})


@app.get("/api/player/competitions/<competition_id>/ranking")
def get_ranking(competition_id):
    _, _, tenant, player = authorize("player")
    competition_id = path_id(competition_id)
    rank_after = request.args.get("rank_after", "")
    if rank_after == "":
        rank_after = 0
    elif NUMBER.fullmatch(rank_after):
        rank_after = int(rank_after)
    else:
        raise Answer(400, "bad request")
    tdb = tenant_db(tenant["id"])
    c = tdb.execute("SELECT * FROM competition WHERE id = ?", (competition_id,)).fetchone()
    if c is None:
        raise Answer(404, "not found")
    execute("INSERT INTO visit_history (player_id, tenant_id, competition_id, created_at) VALUES (?, ?, ?, ?)",
            player["id"], tenant["id"], c["id"], int(time.time()))
    entries = []
    with tenant_lock(tenant["id"]):
        # Every row of the last upload, the last first: a player's last row is the one that counts.
        rows = tdb.execute("SELECT * FROM player_score WHERE competition_id = ? AND upload = ? ORDER BY row_num DESC",
                           (c["id"], c["last_upload"])).fetchall()
        seen = set()
        for s in rows:
            if s["player_id"] in seen:
                continue
            seen.add(s["player_id"])
            p = tdb.execute("SELECT * FROM player WHERE id = ?", (s["player_id"],)).fetchone()
            entries.append((s, p))
    entries.sort(key=lambda e: (-e[0]["score"], e[0]["row_num"]))
    ranks = []
    for i, (s, p) in enumerate(entries):
        rank = i + 1
        if rank <= rank_after:
            continue
        ranks.append({"rank": rank, "player_id": p["id"], "display_name": p["display_name"], "score": s["score"]})
        if len(ranks) == RANKING_PAGE:
            break
    return answer({"competition": competition_json(c), "ranks": ranks})


# Common.


@app.get("/api/me")
def get_me():
    role, subject, tenant, player = authorize("admin", "organizer", "player")
    return answer({
        "role": role,
        "subject": subject,
        "tenant": None if tenant is None else
        {"id": tenant["id"], "name": tenant["name"], "display_name": tenant["display_name"]},
        "player": None if player is None else player_json(player),
    })


@app.post("/initialize")
def post_initialize():
    """Restores the initial data: deletes what was added to the admin data, sets the id generator back, and puts
    the initial tenant files back in place."""
    reset_admin(admin_db())
    reset_tenants()
    return answer({"lang": "python"})


def reset_admin(conn):
    statements = [
        f"DELETE FROM tenant WHERE id > {INITIAL_TENANTS}",
        f"DELETE FROM visit_history WHERE created_at >= {INITIAL_END}",
        "DELETE FROM id_generator",
    ]
    if IS_MYSQL:
        statements += [
            f"ALTER TABLE id_generator AUTO_INCREMENT = {INITIAL_NEXT_ID}",
            f"ALTER TABLE tenant AUTO_INCREMENT = {INITIAL_TENANTS + 1}",
        ]
    else:
        statements += [
            "DELETE FROM sqlite_sequence WHERE name = 'id_generator'",
            f"INSERT INTO sqlite_sequence (name, seq) VALUES ('id_generator', {INITIAL_NEXT_ID - 1})",
        ]
    for s in statements:
        execute(s, conn=conn)


def reset_tenants():
    """Removes the files of the tenants added since and copies every initial tenant's file back, each under its
    tenant's lock."""
    for name in os.listdir(TENANT_DIR):
        stem = name.partition(".")[0]
        if ID.fullmatch(stem) and int(stem) > INITIAL_TENANTS:
            os.remove(os.path.join(TENANT_DIR, name))
    for tenant_id in range(1, INITIAL_TENANTS + 1):
        with open(os.path.join(TENANT_DIR, f"{tenant_id}.lock"), "a+") as lock:
            fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
            journal = tenant_path(tenant_id) + "-journal"
            if os.path.exists(journal):
                os.remove(journal)
            copy_file(os.path.join(INITIAL_DIR, "tenants", f"{tenant_id}.db"), tenant_path(tenant_id))


# The single-page app.


@app.get("/")
def get_index():
    return send_file(os.path.join(ROOT, "public", "index.html"))
