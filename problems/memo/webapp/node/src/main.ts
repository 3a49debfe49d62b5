// The Node.js reference app of the tunecon problem "memo": a Markdown memo
// service after the ISUCON3 qualifier, where people sign up, write memos,
// public or private, and read the newest public ones. It is slow on purpose,
// the way real apps are slow, and it is correct: keep it correct while you
// make it fast. The contract it keeps is in ../../MANUAL.md; it behaves like
// the Go app in ../go.
//
// Build and run it from this directory (`tunecon serve memo --lang node` does
// both, with the pinned Node.js):
//
//     npm ci && npx tsc -p . && node dist/main.js
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { createReadStream, existsSync, mkdirSync, readFileSync } from "node:fs";
import { STATUS_CODES } from "node:http";
import path from "node:path";
import { createInterface } from "node:readline";
import { DatabaseSync } from "node:sqlite";
import cookieParser from "cookie-parser";
import express, { type NextFunction, type Request, type Response } from "express";
import MarkdownIt from "markdown-it";
import mysql from "mysql2/promise";

// The sizes of the initial data: POST /initialize deletes every row added
// after it.
const initialUsers = 1000;
const initialMemos = 50000;

const sessionCookie = "memo_session";
const pageSize = 100; // memos on / and on each /recent/N

// Limits of what users post, in characters (code points, as Go counts runes).
const maxContent = 10000;
const minPassword = 8;
const maxPassword = 64;

const usernamePattern = /^[a-z0-9_]{3,24}$/;
const pageNumber = /^(0|[1-9][0-9]*)$/;
const memoID = /^[1-9][0-9]*$/;

interface User {
  id: number;
  username: string;
  salt: string;
  password_hash: string;
}

// A row of memos. created_at is the text "YYYY-MM-DD HH:MM:SS" on both
// databases.
interface Memo {
  id: number;
  user_id: number;
  content: string;
  is_private: number;
  created_at: string;
}

// A signed-in session, with its user's name.
interface Session {
  id: string;
  user_id: number;
  csrf_token: string;
  username: string;
}

// A memo as the pages show it.
interface MemoItem {
  id: number;
  title: string;
  author: string;
  createdAt: string;
  isPrivate: boolean;
}

// What every template gets.
interface Page {
  title: string;
  session: Session | null; // null when signed out
  message: string;
  username: string; // what the sign-in or sign-up form was sent with
  total: number;
  memos: MemoItem[];
  more: string; // the link to older memos, if any
  memo: MemoItem | null;
  content: string; // the memo's HTML
  older: number;
  newer: number;
}

// The database: SQLite through node:sqlite, or MariaDB through a mysql2 pool.
// Queries are written once, with "?" placeholders, for both.
type Param = string | number;

interface Queryer {
  get<T>(sql: string, ...args: Param[]): Promise<T | undefined>;
  all<T>(sql: string, ...args: Param[]): Promise<T[]>;
  run(sql: string, ...args: Param[]): Promise<number>; // the id of an insert
}

// A transaction: Go's sqlx.Tx. rollback after commit does nothing, so that
// a finally can always call it, as Go defers tx.Rollback().
interface Tx extends Queryer {
  commit(): Promise<void>;
  rollback(): Promise<void>;
}

interface Store extends Queryer {
  isMySQL: boolean;
  begin(): Promise<Tx>;
  close(): Promise<void>;
}

// SqliteStore is one connection, and node:sqlite answers synchronously. The
// handlers are async all the same (for MariaDB), and while one of them is
// inside a transaction another could run its statements on the connection in
// between, inside that transaction (and a ROLLBACK would undo its insert). So
// a transaction holds the connection: other statements wait for its end.
// Go's database/sql gives a transaction a connection of its own instead, and
// runs queries on every core; here one thread runs them all, as Node does.
class SqliteStore implements Store {
  isMySQL = false;
  private inTx: Promise<void> | null = null;

  constructor(private db: DatabaseSync) {}

  async get<T>(sql: string, ...args: Param[]): Promise<T | undefined> {
    while (this.inTx) await this.inTx;
    return this.db.prepare(sql).get(...args) as T | undefined;
  }

  async all<T>(sql: string, ...args: Param[]): Promise<T[]> {
    while (this.inTx) await this.inTx;
    return this.db.prepare(sql).all(...args) as T[];
  }

  async run(sql: string, ...args: Param[]): Promise<number> {
    while (this.inTx) await this.inTx;
    return Number(this.db.prepare(sql).run(...args).lastInsertRowid);
  }

  async begin(): Promise<Tx> {
    while (this.inTx) await this.inTx;
    const db = this.db;
    db.exec("BEGIN");
    let release = () => {};
    this.inTx = new Promise((resolve) => (release = resolve));
    let done = false;
    const end = async (sql: string) => {
      if (done) return;
      done = true;
      try {
        db.exec(sql);
      } finally {
        this.inTx = null;
        release();
      }
    };
    return {
      get: async <U>(sql: string, ...args: Param[]) => db.prepare(sql).get(...args) as U | undefined,
      all: async <U>(sql: string, ...args: Param[]) => db.prepare(sql).all(...args) as U[],
      run: async (sql: string, ...args: Param[]) => Number(db.prepare(sql).run(...args).lastInsertRowid),
      commit: () => end("COMMIT"),
      rollback: () => end("ROLLBACK"),
    };
  }

  async close(): Promise<void> {
    this.db.close();
  }
}

// MysqlQueryer runs statements on a pool or on one connection of it.
// mysql2's query() fills in the "?" on the client; the server runs the same
// SQL as for the Go app, whose driver prepares each statement instead.
class MysqlQueryer implements Queryer {
  constructor(protected conn: mysql.Pool | mysql.PoolConnection) {}

  async get<T>(sql: string, ...args: Param[]): Promise<T | undefined> {
    return (await this.all<T>(sql, ...args))[0];
  }

  async all<T>(sql: string, ...args: Param[]): Promise<T[]> {
    const [rows] = await this.conn.query(sql, args);
    return rows as T[];
  }

  async run(sql: string, ...args: Param[]): Promise<number> {
    const [result] = await this.conn.query<mysql.ResultSetHeader>(sql, args);
    return result.insertId;
  }
}

class MysqlTx extends MysqlQueryer implements Tx {
  private done = false;

  constructor(private c: mysql.PoolConnection) {
    super(c);
  }

  async commit(): Promise<void> {
    this.done = true;
    try {
      await this.c.commit();
    } finally {
      this.c.release();
    }
  }

  async rollback(): Promise<void> {
    if (this.done) return;
    this.done = true;
    try {
      await this.c.rollback();
    } finally {
      this.c.release();
    }
  }
}

class MysqlStore extends MysqlQueryer implements Store {
  isMySQL = true;

  constructor(private pool: mysql.Pool) {
    super(pool);
  }

  async begin(): Promise<Tx> {
    const conn = await this.pool.getConnection();
    try {
      await conn.beginTransaction();
    } catch (err) {
      conn.release();
      throw err;
    }
    return new MysqlTx(conn);
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}

const root = getenv("MEMO_ROOT", "..");
const addr = getenv("MEMO_ADDR", "127.0.0.1:8080");
const initialSQL = getenv("MEMO_INITIAL_SQL", path.join(root, "data", "initial.sql"));

let db: Store;
try {
  db = await openDB(process.env.MEMO_DB ?? "", root);
  await loadInitialData(db, root, initialSQL);
} catch (err) {
  console.error((err as Error).message);
  process.exit(1);
}

// Pure CommonMark, as goldmark renders it: HTML ("<hr>", not "<hr />"), and
// raw HTML in a memo escaped (goldmark leaves it out; the manual allows
// either).
const markdown = new MarkdownIt("commonmark", { html: false, xhtmlOut: false });

const app = express();
app.disable("x-powered-by");
app.set("etag", false); // the Go app sends no ETag
app.set("case sensitive routing", true); // as Go's ServeMux: /MyPage is 404
app.set("strict routing", true); // and so is /mypage/
app.set("views", path.join(root, "node", "views"));
// EJS escapes as Go's html/template does but for "+" and NUL, which Go
// writes as &#43; and U+FFFD: the same text to a browser.
app.set("view engine", "ejs");
app.set("view cache", true); // the Go app parses its templates once

// Session cookies are taken as they are sent, as Go reads them: cookie-parser
// would percent-decode them, making "%61..." name the session "a...".
app.use(cookieParser(undefined, { decode: (s: string) => s }));
// Forms are parsed by formValue from the raw body, to tell bytes that are not
// UTF-8 (a 400, as in Go) from U+FFFD; 10 MB, as Go's ParseForm reads.
app.use(express.raw({ type: "application/x-www-form-urlencoded", limit: "10mb" }));

app.get("/", getIndex);
app.get("/recent/:n", getRecent);
app.get("/memos/:id", getMemo);
app.post("/memos", postMemo);
app.get("/mypage", getMypage);
app.get("/signin", getSignin);
app.post("/signin", postSignin);
app.get("/signup", getSignup);
app.post("/signup", postSignup);
app.post("/signout", postSignout);
app.post("/initialize", postInitialize);
app.use(
  "/static",
  express.static(path.join(root, "public"), {
    etag: false, // Go's http.ServeFile sends Last-Modified, no ETag,
    cacheControl: false, // and no Cache-Control
    index: false,
    redirect: false, // a directory is not found
    dotfiles: "allow",
  }),
);
app.use(notFound);
app.use(serverError);

const [host, port] = splitAddr(addr);
const server = app.listen(port, host, (err) => {
  if (err) throw err; // Express 5 hands the listening error here
  const a = server.address();
  if (a && typeof a === "object") {
    const h = a.family === "IPv6" ? `[${a.address}]` : a.address;
    console.log(`listening on http://${h}:${a.port}`);
  }
});
// Go's server keeps an idle connection open as long as the client does;
// Node's would close it after 5 s, racing the benchmarker's next request.
server.keepAliveTimeout = 0;
for (const signal of ["SIGTERM", "SIGINT"]) {
  process.on(signal, () => {
    server.close(() => void db.close().then(() => process.exit(0)));
    server.closeIdleConnections();
  });
}

function getenv(key: string, def: string): string {
  return process.env[key] || def;
}

function splitAddr(a: string): [string, number] {
  const i = a.lastIndexOf(":");
  return [a.slice(0, i).replace(/^\[(.*)\]$/, "$1"), Number(a.slice(i + 1))];
}

// openDB opens the database named by dsn: "" or "sqlite:PATH" for SQLite,
// "mysql://user:pass@host:port/dbname" for MariaDB or MySQL.
async function openDB(dsn: string, root: string): Promise<Store> {
  if (dsn.startsWith("mysql://")) {
    const u = new URL(dsn);
    const pool = mysql.createPool({
      host: u.hostname.replace(/^\[(.*)\]$/, "$1"),
      port: Number(u.port || 3306),
      user: decodeURIComponent(u.username),
      password: decodeURIComponent(u.password),
      database: decodeURIComponent(u.pathname.slice(1)),
      charset: "utf8mb4",
      // A DATETIME comes back as its text, "YYYY-MM-DD HH:MM:SS", as a TEXT
      // does from SQLite (Go's driver, without parseTime, does the same).
      dateStrings: true,
    });
    await pool.query("SELECT 1").catch((err) => {
      throw new Error(`connecting to the database: ${err.message}`);
    });
    return new MysqlStore(pool);
  }
  if (dsn !== "" && !dsn.startsWith("sqlite:")) {
    throw new Error(`MEMO_DB ${JSON.stringify(dsn)}: want empty, sqlite:PATH or mysql://user:pass@host:port/dbname`);
  }
  const file = dsn.slice("sqlite:".length) || path.join(root, "data", "memo-node.db");
  mkdirSync(path.dirname(file), { recursive: true });
  // WAL lets readers run while someone writes; the busy timeout makes
  // writers wait for each other; NORMAL, as Go's driver sets it.
  const sqlite = new DatabaseSync(file, { timeout: 5000 });
  sqlite.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL");
  return new SqliteStore(sqlite);
}

// loadInitialData creates the tables and loads the initial data unless the
// users table exists.
async function loadInitialData(db: Store, root: string, dumpPath: string): Promise<void> {
  const query = db.isMySQL
    ? "SELECT COUNT(*) AS n FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = 'users'"
    : "SELECT COUNT(*) AS n FROM sqlite_master WHERE type = 'table' AND name = 'users'";
  const row = await db.get<{ n: number }>(query);
  if (Number(row?.n) > 0) {
    return;
  }
  if (!existsSync(dumpPath)) {
    throw new Error(
      `the initial data ${dumpPath} does not exist: generate it with \`tunecon serve memo\`, which writes it and ` +
        "then starts this app (or set MEMO_INITIAL_SQL to where it is)",
    );
  }
  const schema = readFileSync(path.join(root, "sql", db.isMySQL ? "schema.mysql.sql" : "schema.sqlite.sql"), "utf8");

  console.log(`loading the initial data from ${dumpPath}`);
  const start = Date.now();
  // SQLite creates the tables inside the transaction, so an interrupted load
  // leaves nothing behind. MariaDB commits on CREATE TABLE, so it creates
  // them first and drops them again if the load fails.
  const tx = await db.begin();
  try {
    const schemaExec: Queryer = db.isMySQL ? db : tx;
    for await (const s of statements(schema.split("\n"))) {
      await schemaExec.run(s);
    }
    for await (const s of statements(createInterface({ input: createReadStream(dumpPath), crlfDelay: Infinity }))) {
      await tx.run(s);
    }
    await tx.commit();
  } catch (err) {
    await tx.rollback();
    if (db.isMySQL) {
      await db.run("DROP TABLE IF EXISTS users, memos, sessions").catch(() => {});
    }
    throw new Error(`loading the initial data: ${(err as Error).message}`);
  }
  console.log(`loaded the initial data in ${Date.now() - start}ms`);
}

// statements yields the statements of an SQL file's lines, each ending with
// ";" at the end of a line.
async function* statements(lines: AsyncIterable<string> | Iterable<string>): AsyncGenerator<string> {
  let stmt = "";
  for await (const line of lines) {
    stmt += line + "\n";
    if (line.trimEnd().endsWith(";")) {
      if (!isBlankSQL(stmt)) yield stmt;
      stmt = "";
    }
  }
  if (!isBlankSQL(stmt)) yield stmt;
}

// isBlankSQL reports whether s holds nothing but whitespace and "--"
// comments.
function isBlankSQL(s: string): boolean {
  return s.split("\n").every((line) => line.trim() === "" || line.trim().startsWith("--"));
}

function page(p: Partial<Page>): Page {
  return {
    title: "", session: null, message: "", username: "", total: 0, memos: [], more: "",
    memo: null, content: "", older: 0, newer: 0, ...p,
  };
}

function render(res: Response, status: number, view: string, p: Partial<Page>): void {
  res.status(status).render(view, page(p));
}

// renderError writes an error page: the layout, with the header of sess, and
// a message.
function renderError(res: Response, sess: Session | null, status: number, message: string): void {
  render(res, status, "error", { title: STATUS_CODES[status], session: sess, message });
}

// serverError writes the page of an error of the app's own, signed out: the
// session may be what failed.
function serverError(err: Error, _req: Request, res: Response, next: NextFunction): void {
  console.error(`error: ${err.message}`);
  if (res.headersSent) {
    next(err); // Express's own handler cuts the answer off
    return;
  }
  render(res, 500, "error", { title: STATUS_CODES[500], message: "Something went wrong. Please try again." });
}

async function notFound(req: Request, res: Response): Promise<void> {
  const sess = await session(req, res);
  renderError(res, sess, 404, "There is no such page.");
}

// Sessions.

// session returns the request's session, or null if it is signed out (a
// cookie naming no session counts as no cookie). A response to a signed-in
// session is for its user only: session marks it Cache-Control: private.
async function session(req: Request, res: Response): Promise<Session | null> {
  const id: unknown = req.cookies[sessionCookie];
  if (typeof id !== "string") {
    return null;
  }
  const s = await db.get<Session>(
    "SELECT s.id, s.user_id, s.csrf_token, u.username FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.id = ?",
    id,
  );
  if (!s) {
    return null;
  }
  res.set("Cache-Control", "private");
  return s;
}

// signIn ends the session the request came with, if any, and starts a new
// one signed in to the user.
async function signIn(req: Request, res: Response, userID: number): Promise<void> {
  const old: unknown = req.cookies[sessionCookie];
  if (typeof old === "string") {
    await db.run("DELETE FROM sessions WHERE id = ?", old);
  }
  const id = randomToken();
  await db.run(
    "INSERT INTO sessions (id, user_id, csrf_token, created_at) VALUES (?, ?, ?, ?)",
    id, userID, randomToken(), now(),
  );
  res.cookie(sessionCookie, id, { path: "/", httpOnly: true, sameSite: "lax" });
  res.set("Cache-Control", "private");
}

// validCSRF reports whether the form carries the session's CSRF token.
function validCSRF(req: Request, sess: Session): boolean {
  const got = Buffer.from(formValue(req, "csrf_token") ?? "");
  const want = Buffer.from(sess.csrf_token);
  return got.length === want.length && timingSafeEqual(got, want);
}

function seeOther(res: Response, location: string): void {
  res.set("Location", location).status(303).end();
}

// Memo lists.

async function getIndex(req: Request, res: Response): Promise<void> {
  await renderList(req, res, 0, false);
}

async function getRecent(req: Request, res: Response): Promise<void> {
  const s = String(req.params.n);
  const n = Number(s);
  if (!pageNumber.test(s) || n > Math.floor(Number.MAX_SAFE_INTEGER / pageSize) - 1) {
    await notFound(req, res);
    return;
  }
  await renderList(req, res, n, true);
}

// renderList writes page n of the public memos, newest first: / is page 0,
// and the only page that is there even without a memo on it (/recent/N,
// recent, is 404 when empty, /recent/0 too).
async function renderList(req: Request, res: Response, n: number, recent: boolean): Promise<void> {
  const sess = await session(req, res);
  // The count and the list come from one transaction, so that a memo posted
  // in between cannot make them disagree.
  const tx = await db.begin();
  let total: number;
  const items: MemoItem[] = [];
  try {
    const row = await tx.get<{ n: number }>("SELECT COUNT(*) AS n FROM memos WHERE is_private = 0");
    total = Number(row!.n);
    const memos = await tx.all<Memo>(
      "SELECT id, user_id, content, is_private, created_at FROM memos WHERE is_private = 0 " +
        "ORDER BY id DESC LIMIT ? OFFSET ?",
      pageSize, n * pageSize,
    );
    for (const m of memos) {
      const author = await tx.get<{ username: string }>("SELECT username FROM users WHERE id = ?", m.user_id);
      items.push(memoItem(m, author!.username));
    }
  } finally {
    await tx.rollback(); // it only read
  }
  if (recent && items.length === 0) {
    renderError(res, sess, 404, "There is no such page.");
    return;
  }
  render(res, 200, "index", {
    title: n > 0 ? `Public memos, page ${n}` : "",
    session: sess,
    total,
    memos: items,
    more: total > (n + 1) * pageSize ? `/recent/${n + 1}` : "",
  });
}

// A memo.

async function getMemo(req: Request, res: Response): Promise<void> {
  const sess = await session(req, res);
  const s = String(req.params.id);
  if (!memoID.test(s) || !Number.isSafeInteger(Number(s))) {
    renderError(res, sess, 404, "There is no such memo.");
    return;
  }
  const memo = await db.get<Memo>("SELECT id, user_id, content, is_private, created_at FROM memos WHERE id = ?", Number(s));
  if (!memo) {
    renderError(res, sess, 404, "There is no such memo.");
    return;
  }
  const isAuthor = sess !== null && sess.user_id === memo.user_id;
  if (memo.is_private && !isAuthor) {
    // To anyone but its author, a private memo does not exist.
    renderError(res, sess, 404, "There is no such memo.");
    return;
  }
  const author = await db.get<{ username: string }>("SELECT username FROM users WHERE id = ?", memo.user_id);
  const content = markdown.render(memo.content);

  // The older and the newer memo of the author that the viewer may see.
  const memos = await db.all<Memo>(
    "SELECT id, user_id, content, is_private, created_at FROM memos WHERE user_id = ? ORDER BY id",
    memo.user_id,
  );
  let older = 0;
  let newer = 0;
  for (const m of memos) {
    if (m.is_private && !isAuthor) {
      continue;
    }
    if (m.id < memo.id) {
      older = m.id;
    } else if (m.id > memo.id && newer === 0) {
      newer = m.id;
    }
  }

  const item = memoItem(memo, author!.username);
  render(res, 200, "memo", { title: item.title, session: sess, memo: item, content, older, newer });
}

// The user's own page, and writing.

async function getMypage(req: Request, res: Response): Promise<void> {
  const sess = await session(req, res);
  if (!sess) {
    seeOther(res, "/signin");
    return;
  }
  const memos = await db.all<Memo>(
    "SELECT id, user_id, content, is_private, created_at FROM memos WHERE user_id = ? ORDER BY id DESC",
    sess.user_id,
  );
  const items = memos.map((m) => memoItem(m, sess.username));
  render(res, 200, "mypage", { title: "My page", session: sess, memos: items });
}

async function postMemo(req: Request, res: Response): Promise<void> {
  const sess = await session(req, res);
  if (!sess) {
    renderError(res, null, 403, "Sign in to write a memo.");
    return;
  }
  if (!validCSRF(req, sess)) {
    renderError(res, sess, 400, "The form has expired: reload the page and try again.");
    return;
  }
  const content = formValue(req, "content");
  if (content === null || !validText(content, 1, maxContent) || title(content) === "") {
    renderError(res, sess, 400, `A memo is 1 to ${maxContent} characters long, and its first line is its title.`);
    return;
  }
  const isPrivate = formValue(req, "is_private") === "1" ? 1 : 0;
  const id = await db.run(
    "INSERT INTO memos (user_id, content, is_private, created_at) VALUES (?, ?, ?, ?)",
    sess.user_id, content, isPrivate, now(),
  );
  seeOther(res, `/memos/${id}`);
}

// Signing in and out.

async function getSignin(req: Request, res: Response): Promise<void> {
  const sess = await session(req, res);
  render(res, 200, "signin", { title: "Sign in", session: sess });
}

async function postSignin(req: Request, res: Response): Promise<void> {
  const sess = await session(req, res);
  const username = formValue(req, "username");
  const password = formValue(req, "password");
  let user: User | undefined;
  if (username !== null && password !== null) {
    user = await db.get<User>("SELECT id, username, salt, password_hash FROM users WHERE username = ?", username);
  }
  if (!user || hashPassword(user.salt, password!) !== user.password_hash) {
    render(res, 401, "signin", {
      title: "Sign in",
      session: sess,
      message: "Wrong name or password.",
      username: username ?? "",
    });
    return;
  }
  await signIn(req, res, user.id);
  seeOther(res, "/mypage");
}

async function getSignup(req: Request, res: Response): Promise<void> {
  const sess = await session(req, res);
  render(res, 200, "signup", { title: "Sign up", session: sess });
}

async function postSignup(req: Request, res: Response): Promise<void> {
  const sess = await session(req, res);
  const username = formValue(req, "username");
  const password = formValue(req, "password");
  const p = { title: "Sign up", session: sess, username: username ?? "" };
  if (username === null || !usernamePattern.test(username) || password === null ||
      !validText(password, minPassword, maxPassword)) {
    const message = `A name is 3 to 24 characters of a-z, 0-9 and _; a password is ${minPassword} to ${maxPassword} ` +
      "characters long.";
    render(res, 400, "signup", { ...p, message });
    return;
  }
  // Look first: on MariaDB, an insert refused by the unique name still uses
  // up an id. The unique name has the last word when two people sign up with
  // one name at once.
  const taken = await db.get<{ n: number }>("SELECT COUNT(*) AS n FROM users WHERE username = ?", username);
  if (Number(taken!.n) > 0) {
    render(res, 409, "signup", { ...p, message: "This name is taken." });
    return;
  }
  const salt = randomHex(8);
  let id: number;
  try {
    id = await db.run(
      "INSERT INTO users (username, salt, password_hash, created_at) VALUES (?, ?, ?, ?)",
      username, salt, hashPassword(salt, password), now(),
    );
  } catch (err) {
    if (!isDuplicate(err)) throw err;
    render(res, 409, "signup", { ...p, message: "This name is taken." });
    return;
  }
  await signIn(req, res, id);
  seeOther(res, "/mypage");
}

async function postSignout(req: Request, res: Response): Promise<void> {
  const sess = await session(req, res);
  if (sess) {
    if (!validCSRF(req, sess)) {
      renderError(res, sess, 400, "The form has expired: reload the page and try again.");
      return;
    }
    await db.run("DELETE FROM sessions WHERE id = ?", sess.id);
    res.cookie(sessionCookie, "", { path: "/", maxAge: 0, httpOnly: true, sameSite: "lax" });
  }
  seeOther(res, "/");
}

// The rest.

// postInitialize restores the initial data by deleting everything added
// since.
async function postInitialize(_req: Request, res: Response): Promise<void> {
  const statements = [
    `DELETE FROM memos WHERE id > ${initialMemos}`,
    `DELETE FROM users WHERE id > ${initialUsers}`,
    "DELETE FROM sessions",
  ];
  if (db.isMySQL) {
    statements.push(
      `ALTER TABLE memos AUTO_INCREMENT = ${initialMemos + 1}`,
      `ALTER TABLE users AUTO_INCREMENT = ${initialUsers + 1}`,
    );
  }
  for (const s of statements) {
    await db.run(s);
  }
  res.json({ language: "node" });
}

// Helpers.

// title is a memo's title: the first line of its content without the '#'
// characters and spaces at its start and the spaces and tabs at its end.
function title(content: string): string {
  return content.split("\n", 1)[0].replace(/^[# ]+/, "").replace(/[ \t]+$/, "");
}

function memoItem(m: Memo, author: string): MemoItem {
  return { id: m.id, title: title(m.content), author, createdAt: m.created_at, isPrivate: m.is_private !== 0 };
}

// hashPassword is what the users table stores: the SHA-256 of salt +
// password, in lowercase hex.
function hashPassword(salt: string, password: string): string {
  return createHash("sha256").update(salt + password).digest("hex");
}

// isDuplicate reports whether err is an insert refused by a unique key.
function isDuplicate(err: unknown): boolean {
  const e = err as { errcode?: number; errno?: number };
  return e.errcode === 2067 || e.errno === 1062; // SQLITE_CONSTRAINT_UNIQUE, ER_DUP_ENTRY
}

// randomToken is a session id or a CSRF token: 32 random hex digits.
function randomToken(): string {
  return randomHex(16);
}

// randomHex is n random bytes in hex.
function randomHex(n: number): string {
  return randomBytes(n).toString("hex");
}

// formValue is the first value of the URL-encoded form field, "" if it is
// absent, or null if it is not valid UTF-8. express.urlencoded would replace
// such bytes with U+FFFD; Go keeps them, and they get a 400. A multipart
// form, which no page of the app sends, is not read (Go reads it).
function formValue(req: Request, name: string): string | null {
  if (!Buffer.isBuffer(req.body)) {
    return "";
  }
  for (const pair of req.body.toString("latin1").split("&")) {
    const i = pair.indexOf("=");
    const key = urlDecode(i < 0 ? pair : pair.slice(0, i));
    if (key === name) {
      return urlDecode(i < 0 ? "" : pair.slice(i + 1));
    }
  }
  return "";
}

// urlDecode decodes a form's key or value, given as Latin-1 (one character a
// byte): "+" is a space, %XX a byte. It is null when the bytes are not UTF-8.
function urlDecode(s: string): string | null {
  const bytes = Buffer.from(
    s.replace(/\+/g, " ").replace(/%([0-9a-fA-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))),
    "latin1",
  );
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return null;
  }
}

// validText reports whether s is lo to hi characters long.
function validText(s: string, lo: number, hi: number): boolean {
  const n = [...s].length;
  return n >= lo && n <= hi;
}

// now is the current UTC time, in whole seconds, "YYYY-MM-DD HH:MM:SS".
function now(): string {
  return new Date().toISOString().slice(0, 19).replace("T", " ");
}
