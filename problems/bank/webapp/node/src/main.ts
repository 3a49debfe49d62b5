// The Node.js reference app of the tunecon problem "bank": the login page of
// an online bank that locks users and bans addresses after too many failed
// attempts. It is slow on purpose, the way real apps are slow, and it is
// correct: keep it correct while you make it fast. The contract it keeps is
// in ../../MANUAL.md; it behaves like the Go app in ../go.
//
// Build and run it from this directory (`tunecon serve bank --lang node` does
// both, with the Node.js and the packages it pins):
//
//     npx tsc -p . && node dist/main.js
import { createHash, randomBytes } from "node:crypto";
import { createReadStream, existsSync, mkdirSync, readFileSync } from "node:fs";
import http from "node:http";
import path from "node:path";
import { createInterface } from "node:readline";
import { DatabaseSync, type SQLInputValue } from "node:sqlite";
import { Readable } from "node:stream";
import { buffer } from "node:stream/consumers";

import cookieParser from "cookie-parser";
import express from "express";
import mysql from "mysql2/promise";

// The size of the initial login log: POST /initialize deletes every row added
// after it.
const initialLogRows = 400000;

// The rules: a user is locked after lockThreshold failed attempts since its
// last successful login, an address is banned after banThreshold failed
// attempts from it since the last successful login from it.
const lockThreshold = 3;
const banThreshold = 10;

const sessionCookie = "bank_session";

// The messages the login page shows once, by reason.
const notices: Record<string, string> = {
  wrong: "Wrong login or password.",
  locked: "This account is locked after too many failed attempts.",
  banned: "Too many failed attempts from your address: it is banned.",
  "login-required": "Please log in first.",
};

interface User {
  id: number;
  login: string;
  password_hash: string;
  salt: string;
}

interface Session {
  id: string;
  user_id: number | null;
  login_log_id: number | null;
  notice: string | null;
}

// A successful login, as /mypage shows it.
interface LoginRecord {
  created_at: string;
  ip: string;
}

// The database, SQLite or MariaDB, behind the few calls the handlers make, so
// that each query is written once for both.
interface Store {
  mysql: boolean;
  get<T>(sql: string, ...args: SQLInputValue[]): Promise<T | undefined>;
  all<T>(sql: string, ...args: SQLInputValue[]): Promise<T[]>;
  // run returns the id of the row it inserted, if it inserted one.
  run(sql: string, ...args: SQLInputValue[]): Promise<number>;
  // load runs the schema's statements and then the dump's, the dump's in one
  // transaction.
  load(schema: AsyncIterable<string>, dump: AsyncIterable<string>): Promise<void>;
  close(): Promise<void>;
}

const root = getenv("BANK_ROOT", "..");
const db = await openDB(process.env.BANK_DB ?? "");
await loadInitialData(getenv("BANK_INITIAL_SQL", path.join(root, "data", "initial.sql")));

const app = express();
app.disable("x-powered-by");
app.set("etag", false); // the Go app sends no ETag
// Go's router tells /mypage from /mypage/ and /MyPage: the bank has only the
// first, and the benchmarker asks for the others expecting a 404.
app.set("strict routing", true);
app.set("case sensitive routing", true);
app.set("views", path.join(root, "node", "views"));
// EJS escapes as Go's html/template does (&#34; and &#39; for quotes) but
// for "+" and NUL, which Go writes as &#43; and U+FFFD: the same text, in
// other bytes (EJS 7 takes no escape function from Express's settings).
app.set("view engine", "ejs");
app.set("view cache", true); // the Go app parses its templates once
// The cookie's value as sent: cookie-parser would percent-decode it, and a
// value the app never issued must not name a session once decoded.
app.use(cookieParser(undefined, { decode: (v: string) => v }));

app.get("/", getIndex);
app.post("/login", express.urlencoded({ extended: false }), postLogin);
app.get("/mypage", getMypage);
app.get("/report", getReport);
app.post("/initialize", postInitialize);
// Go's http.ServeFile sends Last-Modified but neither ETag nor Cache-Control;
// a directory or a missing file falls through to the 404 page.
app.use("/static", express.static(path.join(root, "public"), {
  etag: false, cacheControl: false, index: false, redirect: false,
}));
app.use(notFound);
app.use(serverError);

const server = http.createServer(app);
// Go's server keeps an idle connection open until the client closes it;
// Node's closes it after 5 s, and a request the client sends just then would
// be cut off.
server.keepAliveTimeout = 0;
server.headersTimeout = 10_000; // Go's ReadHeaderTimeout
const [host, port] = splitAddr(getenv("BANK_ADDR", "127.0.0.1:8080"));
server.on("error", (err) => {
  console.error(err.message);
  process.exit(1);
});
server.listen(port, host, () => {
  const a = server.address() as { address: string; port: number };
  const h = a.address.includes(":") ? `[${a.address}]` : a.address;
  console.log(`listening on http://${h}:${a.port}`);
});
for (const signal of ["SIGTERM", "SIGINT"]) {
  process.on(signal, () => {
    setTimeout(() => process.exit(0), 5000).unref(); // as Go's Shutdown, 5 s at most
    server.close(() => void db.close());
    server.closeIdleConnections();
  });
}

function getenv(key: string, def: string): string {
  return process.env[key] || def;
}

// splitAddr splits "host:port" ("[::1]:8080", ":8080") for listen.
function splitAddr(addr: string): [string | undefined, number] {
  const i = addr.lastIndexOf(":");
  const host = addr.slice(0, i).replace(/^\[(.*)\]$/, "$1");
  return [host || undefined, Number(addr.slice(i + 1))];
}

// openDB opens the database named by dsn: "" or "sqlite:PATH" for SQLite,
// "mysql://user:pass@host:port/dbname" for MariaDB or MySQL.
async function openDB(dsn: string): Promise<Store> {
  if (dsn.startsWith("mysql://")) {
    const u = new URL(dsn);
    const pool = mysql.createPool({
      host: u.hostname,
      port: Number(u.port || 3306),
      user: decodeURIComponent(u.username),
      password: decodeURIComponent(u.password),
      database: decodeURIComponent(u.pathname.slice(1)),
      charset: "utf8mb4",
      // DATETIME as the text it holds, "2025-12-04 05:20:00", as SQLite
      // hands it back, rather than a Date in the process's time zone.
      dateStrings: true,
    });
    await pool.query("SELECT 1"); // connect now, as the Go app's Ping
    return mysqlStore(pool);
  }
  if (dsn !== "" && !dsn.startsWith("sqlite:")) {
    throw new Error(`BANK_DB "${dsn}": want empty, sqlite:PATH or mysql://user:pass@host:port/dbname`);
  }
  const file = dsn.slice("sqlite:".length) || path.join(root, "data", "bank-node.db");
  mkdirSync(path.dirname(file), { recursive: true });
  // WAL lets readers run while someone writes; the busy timeout makes writers
  // wait for each other. NORMAL, as the Go app's driver sets it: SQLite's
  // default, FULL, adds an fsync to every commit.
  const sqlite = new DatabaseSync(file, { timeout: 5000 });
  sqlite.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL");
  return sqliteStore(sqlite);
}

// sqliteStore runs every query on the one connection, synchronously:
// node:sqlite has no other API. The Go app's pool runs reads side by side;
// here each query holds the event loop until it ends.
function sqliteStore(sqlite: DatabaseSync): Store {
  return {
    mysql: false,
    async get<T>(sql: string, ...args: SQLInputValue[]) {
      return sqlite.prepare(sql).get(...args) as T | undefined;
    },
    async all<T>(sql: string, ...args: SQLInputValue[]) {
      return sqlite.prepare(sql).all(...args) as T[];
    },
    async run(sql: string, ...args: SQLInputValue[]) {
      return Number(sqlite.prepare(sql).run(...args).lastInsertRowid);
    },
    // SQLite creates the tables inside the transaction, so an interrupted load
    // leaves nothing behind.
    async load(schema, dump) {
      sqlite.exec("BEGIN");
      try {
        for await (const s of schema) sqlite.exec(s);
        for await (const s of dump) sqlite.exec(s);
        sqlite.exec("COMMIT");
      } catch (err) {
        sqlite.exec("ROLLBACK");
        throw err;
      }
    },
    async close() {
      sqlite.close();
    },
  };
}

function mysqlStore(pool: mysql.Pool): Store {
  return {
    mysql: true,
    async get<T>(sql: string, ...args: SQLInputValue[]) {
      const [rows] = await pool.query<mysql.RowDataPacket[]>(sql, args);
      return rows[0] as T | undefined;
    },
    async all<T>(sql: string, ...args: SQLInputValue[]) {
      const [rows] = await pool.query<mysql.RowDataPacket[]>(sql, args);
      return rows as T[];
    },
    async run(sql: string, ...args: SQLInputValue[]) {
      const [res] = await pool.query<mysql.ResultSetHeader>(sql, args);
      return res.insertId;
    },
    // MariaDB commits on CREATE TABLE, so the tables come first, and
    // loadInitialData drops them again if the load fails.
    async load(schema, dump) {
      for await (const s of schema) await pool.query(s);
      const conn = await pool.getConnection();
      try {
        await conn.beginTransaction();
        for await (const s of dump) await conn.query(s);
        await conn.commit();
      } catch (err) {
        await conn.rollback();
        throw err;
      } finally {
        conn.release();
      }
    },
    async close() {
      await pool.end();
    },
  };
}

// loadInitialData creates the tables and loads the initial data unless the
// users table exists.
async function loadInitialData(dumpPath: string) {
  const query = db.mysql
    ? "SELECT COUNT(*) AS n FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = 'users'"
    : "SELECT COUNT(*) AS n FROM sqlite_master WHERE type = 'table' AND name = 'users'";
  const { n } = (await db.get<{ n: number }>(query))!;
  if (n > 0) {
    return;
  }
  if (!existsSync(dumpPath)) {
    throw new Error(`the initial data ${dumpPath} does not exist: generate it with \`tunecon serve bank\`, ` +
      "which writes it and then starts this app (or set BANK_INITIAL_SQL to where it is)");
  }
  const schema = readFileSync(path.join(root, "sql", db.mysql ? "schema.mysql.sql" : "schema.sqlite.sql"), "utf8");

  console.log(`loading the initial data from ${dumpPath}`);
  const start = Date.now();
  try {
    await db.load(statements(Readable.from([schema])), statements(createReadStream(dumpPath)));
  } catch (err) {
    if (db.mysql) {
      await db.run("DROP TABLE IF EXISTS users, login_log, sessions").catch(() => {});
    }
    throw new Error(`loading the initial data: ${(err as Error).message}`);
  }
  console.log(`loaded the initial data in ${Date.now() - start}ms`);
}

// statements yields the statements of an SQL file, each ending with ";" at
// the end of a line.
async function* statements(input: Readable): AsyncGenerator<string> {
  let stmt = "";
  for await (const line of createInterface({ input, crlfDelay: Infinity })) {
    stmt += line + "\n";
    if (line.trimEnd().endsWith(";")) {
      if (!isBlankSQL(stmt)) {
        yield stmt;
      }
      stmt = "";
    }
  }
  if (!isBlankSQL(stmt)) {
    yield stmt;
  }
}

// isBlankSQL reports whether s holds nothing but whitespace and "--" comments.
function isBlankSQL(s: string): boolean {
  return s.split("\n").every((l) => l.trim() === "" || l.trim().startsWith("--"));
}

function notFound(_req: express.Request, res: express.Response) {
  res.status(404).render("error", { title: "Not found", message: "There is no such page." });
}

function serverError(err: Error, _req: express.Request, res: express.Response, _next: express.NextFunction) {
  console.error(`error: ${err.message}`);
  res.status(500).set("X-Content-Type-Options", "nosniff").type("text/plain").send("Internal Server Error\n");
}

// Sessions.

// session returns the request's session, or undefined if it has none (or one
// the database does not know).
async function session(req: express.Request): Promise<Session | undefined> {
  const id = req.cookies[sessionCookie];
  if (typeof id !== "string") {
    return undefined;
  }
  return db.get<Session>("SELECT id, user_id, login_log_id, notice FROM sessions WHERE id = ?", id);
}

// newSession stores a new session and sends its cookie. userID and loginLogID
// are null for a session nobody is logged in to, notice is null when there is
// nothing to show.
async function newSession(res: express.Response, userID: number | null, loginLogID: number | null,
  notice: string | null) {
  const id = randomBytes(32).toString("hex");
  await db.run("INSERT INTO sessions (id, user_id, login_log_id, notice, created_at) VALUES (?, ?, ?, ?, ?)",
    id, userID, loginLogID, notice, now());
  res.cookie(sessionCookie, id, { path: "/", httpOnly: true, sameSite: "lax" });
}

// seeOther redirects with an empty body, as the Go app does (Express's
// res.redirect would write a line of text).
function seeOther(res: express.Response, location: string) {
  res.status(303).location(location).end();
}

// Handlers.

async function getIndex(req: express.Request, res: express.Response) {
  const sess = await session(req);
  let notice = "";
  if (sess?.notice != null) {
    notice = sess.notice;
    // Shown once.
    await db.run("UPDATE sessions SET notice = NULL WHERE id = ?", sess.id);
  }
  res.set("Cache-Control", "private");
  res.render("index", { title: "Log in", notice, noticeText: notices[notice] ?? "" });
}

async function postLogin(req: express.Request, res: express.Response) {
  const { login, password } = await loginForm(req);
  const ip = clientIP(req);

  const user = await db.get<User>("SELECT id, login, password_hash, salt FROM users WHERE login = ?", login);

  // The checks, in order: the address, the user, the password.
  let reason = "";
  const ipFailures = (await db.get<{ n: number }>("SELECT COUNT(*) AS n FROM login_log WHERE ip = ? AND " +
    "id > IFNULL((SELECT MAX(id) FROM login_log WHERE ip = ? AND succeeded = 1), 0)", ip, ip))!.n;
  if (ipFailures >= banThreshold) {
    reason = "banned";
  } else if (user) {
    const userFailures = (await db.get<{ n: number }>("SELECT COUNT(*) AS n FROM login_log WHERE user_id = ? AND " +
      "id > IFNULL((SELECT MAX(id) FROM login_log WHERE user_id = ? AND succeeded = 1), 0)", user.id, user.id))!.n;
    if (userFailures >= lockThreshold) {
      reason = "locked";
    }
  }
  if (reason === "" && (!user || hashPassword(password, user.salt) !== user.password_hash)) {
    reason = "wrong";
  }

  // Every attempt goes into the log.
  const logID = await db.run("INSERT INTO login_log (created_at, user_id, login, ip, succeeded) VALUES (?, ?, ?, ?, ?)",
    now(), user ? user.id : null, login, ip, reason === "" ? 1 : 0);

  // The attempt ends the session it came with and starts a new one.
  const old = req.cookies[sessionCookie];
  if (typeof old === "string") {
    await db.run("DELETE FROM sessions WHERE id = ?", old);
  }
  if (reason !== "") {
    await newSession(res, null, null, reason);
    seeOther(res, "/");
    return;
  }
  await newSession(res, user!.id, logID, null);
  seeOther(res, "/mypage");
}

async function getMypage(req: express.Request, res: express.Response) {
  const sess = await session(req);
  if (!sess || sess.user_id === null) {
    // Back to the login page, with a notice in the session (a new one if it
    // has none).
    if (sess) {
      await db.run("UPDATE sessions SET notice = ? WHERE id = ?", "login-required", sess.id);
    } else {
      await newSession(res, null, null, "login-required");
    }
    seeOther(res, "/");
    return;
  }
  const user = await db.get<{ login: string }>("SELECT login FROM users WHERE id = ?", sess.user_id);
  // The login before the one that started this session; on a first login
  // ever, that one.
  let last = await db.get<LoginRecord>("SELECT created_at, ip FROM login_log WHERE user_id = ? AND succeeded = 1 " +
    "AND id < ? ORDER BY id DESC LIMIT 1", sess.user_id, sess.login_log_id ?? 0);
  if (!last) {
    last = await db.get<LoginRecord>("SELECT created_at, ip FROM login_log WHERE id = ?", sess.login_log_id ?? 0);
  }
  if (!user || !last) {
    throw new Error(`session ${sess.id}: its user or its login is missing`);
  }
  res.set("Cache-Control", "private");
  res.render("mypage", { title: "My page", login: user.login, lastAt: last.created_at, lastIP: last.ip });
}

// getReport lists every banned address and every locked user, from the whole
// log.
async function getReport(_req: express.Request, res: express.Response) {
  // Replay the whole log in id order, as the rules read it. The Go app reads
  // the rows one by one; here they are read all at once (some 400,000 small
  // rows), as both drivers' plain calls do.
  const rows = await db.all<{ user_id: number | null; ip: string; succeeded: number }>(
    "SELECT user_id, ip, succeeded FROM login_log ORDER BY id");
  const userFailures = new Map<number, number>();
  const ipFailures = new Map<string, number>();
  for (const { user_id, ip, succeeded } of rows) {
    if (succeeded) {
      ipFailures.set(ip, 0);
      if (user_id !== null) {
        userFailures.set(user_id, 0);
      }
      continue;
    }
    ipFailures.set(ip, (ipFailures.get(ip) ?? 0) + 1);
    if (user_id !== null) {
      userFailures.set(user_id, (userFailures.get(user_id) ?? 0) + 1);
    }
  }
  const banned = [...ipFailures].filter(([, n]) => n >= banThreshold).map(([ip]) => ip);
  const locked: string[] = [];
  for (const [id, n] of userFailures) {
    if (n < lockThreshold) {
      continue;
    }
    const user = await db.get<{ login: string }>("SELECT login FROM users WHERE id = ?", id);
    locked.push(user!.login);
  }
  banned.sort(byteOrder);
  locked.sort(byteOrder);
  // Buffer, not text: res.send would add "; charset=utf-8" to the type.
  res.setHeader("Content-Type", "application/json");
  res.send(Buffer.from(JSON.stringify({ banned_ips: banned, locked_users: locked })));
}

// postInitialize restores the initial data by deleting everything added since.
async function postInitialize(_req: express.Request, res: express.Response) {
  const statements = [`DELETE FROM login_log WHERE id > ${initialLogRows}`, "DELETE FROM sessions"];
  if (db.mysql) {
    statements.push(`ALTER TABLE login_log AUTO_INCREMENT = ${initialLogRows + 1}`);
  }
  for (const s of statements) {
    await db.run(s);
  }
  res.setHeader("Content-Type", "application/json");
  res.send(Buffer.from(`{"language":"node"}`));
}

// Helpers.

// loginForm reads the form's login and password, "" when missing. Go's
// PostFormValue reads multipart/form-data too; Express parses only URL-encoded
// forms, and Node's own Response.formData parses the rest.
async function loginForm(req: express.Request): Promise<{ login: string; password: string }> {
  if (req.is("multipart/form-data")) {
    const body = new Uint8Array(await buffer(req));
    const form = await new Response(body, { headers: { "content-type": req.get("content-type")! } }).formData();
    const value = (name: string) => {
      const v = form.get(name);
      return typeof v === "string" ? v : "";
    };
    return { login: value("login"), password: value("password") };
  }
  // A field sent twice counts once, its first value, as in Go.
  const value = (v: unknown) => (Array.isArray(v) ? String(v[0]) : typeof v === "string" ? v : "");
  return { login: value(req.body?.login), password: value(req.body?.password) };
}

// clientIP is the first address in X-Forwarded-For (the app is meant to sit
// behind a proxy), or the address of the connection's other end when the
// header is absent or its first entry empty.
function clientIP(req: express.Request): string {
  // The first header of that name only, as Go's Header.Get (Node joins them
  // all with commas), and its bytes read as UTF-8 (Node reads them as
  // Latin-1).
  const header = Buffer.from(req.headersDistinct["x-forwarded-for"]?.[0] ?? "", "latin1").toString("utf8");
  const ip = header.split(",")[0].replace(/^[ \t]+|[ \t]+$/g, "");
  if (ip !== "") {
    return ip;
  }
  // An IPv4 client of a socket that listens on IPv6 too is "::ffff:1.2.3.4"
  // to Node, "1.2.3.4" to Go.
  return (req.socket.remoteAddress ?? "").replace(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/i, "$1");
}

// hashPassword is what the users table stores: the SHA-256 of password + ":"
// + salt, in lowercase hex.
function hashPassword(password: string, salt: string): string {
  return createHash("sha256").update(password + ":" + salt).digest("hex");
}

// byteOrder sorts as Go's sort.Strings does, by the bytes of UTF-8.
function byteOrder(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}

// now is the current UTC time, in whole seconds: "2026-01-02 15:04:05".
function now(): string {
  return new Date().toISOString().slice(0, 19).replace("T", " ");
}
