// The Node.js reference app of the tunecon problem "dashboard", after the
// ISUCON5 final: a personal dashboard. People sign up with a grade, sign in
// and subscribe on /modify to external services, each with its own
// parameters; the dashboard page polls /data, which asks every service the
// user subscribes to and relays their answers. It is slow on purpose, the way
// real apps are slow: /data calls the services one after another, on a new
// HTTP/1.1 connection each time, and caches nothing. It is also correct: keep
// it correct while you make it fast. The contract it keeps is in
// ../../MANUAL.md; it behaves like the Go app in ../go.
//
// Build and run it from this directory (`tunecon serve dashboard --lang node`
// does both, and starts the services):
//
//     npm ci && npx tsc -p . && node dist/main.js

import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { once } from "node:events";
import { existsSync, mkdirSync } from "node:fs";
import { readFile } from "node:fs/promises";
import http from "node:http";
import https from "node:https";
import path from "node:path";
import { DatabaseSync, type SQLInputValue } from "node:sqlite";
import { buffer } from "node:stream/consumers";
import ejs from "ejs";
import express, { type NextFunction, type Request, type Response } from "express";
import mysql from "mysql2/promise";

// The size of the initial data: POST /initialize deletes every user added
// after it.
const INITIAL_USERS = 10000;

const SESSION_COOKIE = "dashboard_session";
const SERVICE_TIMEOUT_MS = 10_000; // for each call of a service

// The rules for what people type at sign-up, in characters.
const MAX_EMAIL = 64;
const MIN_PASSWORD = 8;
const MAX_PASSWORD = 64;

// The grades, from the least to the most.
const GRADES = ["micro", "small", "standard", "premium"];

// The services each grade may subscribe to, in the manual's order, which is
// also the order /data calls them in. Maps rather than objects wherever a key
// comes from a request: an object would also "have" constructor or toString.
const ALLOWED = new Map([
  ["micro", ["postal", "postal2", "surname"]],
  ["small", ["postal", "postal2", "surname", "givenname"]],
  ["standard", ["postal", "postal2", "surname", "givenname", "weather"]],
  ["premium", ["postal", "postal2", "surname", "givenname", "weather", "security", "attacked"]],
]);

// The dashboard's refresh interval of each grade, in milliseconds (/user.js).
const REFRESH_MS = new Map([["micro", 30000], ["small", 30000], ["standard", 20000], ["premium", 10000]]);

// Each service's parameters, the form fields of /modify.
const PARAMS = new Map([
  ["postal", ["code"]],
  ["postal2", ["code"]],
  ["surname", ["q"]],
  ["givenname", ["q"]],
  ["weather", ["location"]],
  ["security", ["req", "token"]],
  ["attacked", ["token"]],
]);

// What each parameter may hold, as the pattern attribute of its input: always
// matched whole.
const PARAM_PATTERNS = new Map([
  ["code", "[0-9]{7}"],
  ["q", "[a-z]{1,8}"],
  ["location", "L[0-9]{4}"],
  ["req", "[a-z0-9]{1,16}"],
  ["token", "[0-9a-f]{32}"],
]);

const PARAM_REGEXPS = new Map([...PARAM_PATTERNS].map(([name, p]) => [name, new RegExp(`^(?:${p})$`)]));

// The signed-in user, as a session names it.
interface User {
  id: number;
  email: string;
  grade: string;
}

// A user's row of subscriptions, the JSON object arg: service name ->
// parameter -> value.
type Subscriptions = Record<string, Record<string, string>>;

// The form of /modify for one service.
interface ServiceForm {
  service: string;
  subscribed: boolean;
  fields: { name: string; value: string; pattern: string }[];
}

// What every page template gets.
interface Page {
  title: string;
  user: User | null; // null when signed out
  message: string;
  email: string; // what the sign-in or sign-up form was sent with
  grade: string;
  grades: string[];
  forms: ServiceForm[];
}

// The database.

type Param = string | number;

// What a handler asks of the database, or of a transaction.
interface Queryer {
  get<T>(sql: string, ...params: Param[]): Promise<T | undefined>;
  // run returns the id the statement gave its row, if it inserted one.
  run(sql: string, ...params: Param[]): Promise<number>;
}

interface Store extends Queryer {
  isMySQL: boolean;
  transaction<T>(fn: (tx: Queryer) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

const root = getenv("DASHBOARD_ROOT", "..");
const addr = getenv("DASHBOARD_ADDR", "127.0.0.1:8080");
const initialSQL = getenv("DASHBOARD_INITIAL_SQL", path.join(root, "data", "initial.sql"));

const db = await start().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});

async function start(): Promise<Store> {
  const db = await openDB(process.env.DASHBOARD_DB ?? "");
  await loadInitialData(db);
  await storeEndpointsFromEnv(db);
  return db;
}

function getenv(key: string, def: string): string {
  return process.env[key] || def;
}

// openDB opens the database named by dsn: "" or "sqlite:PATH" for SQLite,
// "mysql://user:pass@host:port/dbname" for MariaDB or MySQL.
async function openDB(dsn: string): Promise<Store> {
  if (dsn.startsWith("mysql://")) {
    const u = new URL(dsn);
    // mysql2's pool as it comes (10 connections at most), as database/sql's
    // is Go's: each language's usual pool, left as its developer would leave
    // it. Its connections speak utf8mb4.
    const pool = mysql.createPool({
      host: u.hostname.replace(/^\[(.*)\]$/, "$1"),
      port: Number(u.port || 3306),
      user: decodeURIComponent(u.username),
      password: decodeURIComponent(u.password),
      database: decodeURIComponent(u.pathname.slice(1)),
      charset: "utf8mb4",
    });
    try {
      const conn = await pool.getConnection();
      await conn.ping();
      conn.release();
    } catch (err) {
      throw new Error(`connecting to the database: ${err instanceof Error ? err.message : err}`);
    }
    return {
      isMySQL: true,
      ...mysqlQueryer(pool),
      async transaction(fn) {
        const conn = await pool.getConnection();
        try {
          await conn.beginTransaction();
          const result = await fn(mysqlQueryer(conn));
          await conn.commit();
          return result;
        } catch (err) {
          await conn.rollback().catch(() => {});
          throw err;
        } finally {
          conn.release();
        }
      },
      close: () => pool.end(),
    };
  }
  if (dsn !== "" && !dsn.startsWith("sqlite:")) {
    throw new Error(`DASHBOARD_DB "${dsn}": want empty, sqlite:PATH or mysql://user:pass@host:port/dbname`);
  }
  const file = dsn.slice("sqlite:".length) || path.join(root, "data", "dashboard-node.db");
  mkdirSync(path.dirname(file), { recursive: true });
  // node:sqlite is synchronous and this is one connection, where Go's pool
  // has several: each query holds the event loop, as queries here are short.
  // WAL lets readers run while someone writes; the busy timeout makes writers
  // wait for each other; synchronous=NORMAL, as the Go app's driver sets it.
  const sqlite = new DatabaseSync(file, { timeout: 5000 });
  sqlite.exec("PRAGMA journal_mode = WAL");
  sqlite.exec("PRAGMA synchronous = NORMAL");
  const queryer: Queryer = {
    async get<T>(sql: string, ...params: Param[]) {
      return sqlite.prepare(sql).get(...params) as T | undefined;
    },
    async run(sql: string, ...params: Param[]) {
      return Number(sqlite.prepare(sql).run(...(params as SQLInputValue[])).lastInsertRowid);
    },
  };
  return {
    isMySQL: false,
    ...queryer,
    // Every transaction here writes: BEGIN IMMEDIATE takes the write lock at
    // once, as the Go app's _txlock=immediate does. On the one connection no
    // other request may run a query inside it, so fn must await nothing but
    // its queries, which resolve at once: no other request then runs before
    // the transaction ends.
    async transaction(fn) {
      sqlite.exec("BEGIN IMMEDIATE");
      try {
        const result = await fn(queryer);
        sqlite.exec("COMMIT");
        return result;
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

function mysqlQueryer(conn: mysql.Pool | mysql.PoolConnection): Queryer {
  // query, not execute: the values are escaped into the statement, which is
  // not kept prepared (the dump's statements are each run once).
  const query = (sql: string, params: Param[]) => (params.length ? conn.query(sql, params) : conn.query(sql));
  return {
    async get<T>(sql: string, ...params: Param[]) {
      const [rows] = await query(sql, params);
      return (rows as T[])[0];
    },
    async run(sql: string, ...params: Param[]) {
      const [result] = await query(sql, params);
      return (result as mysql.ResultSetHeader).insertId;
    },
  };
}

// loadInitialData creates the tables and loads the initial data unless the
// users table exists.
async function loadInitialData(db: Store) {
  const query = db.isMySQL
    ? "SELECT COUNT(*) AS n FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = 'users'"
    : "SELECT COUNT(*) AS n FROM sqlite_master WHERE type = 'table' AND name = 'users'";
  const row = await db.get<{ n: number }>(query);
  if (row && row.n > 0) {
    return;
  }
  if (!existsSync(initialSQL)) {
    throw new Error(
      `the initial data ${initialSQL} does not exist: generate it with \`tunecon serve dashboard\`, which ` +
        "writes it and then starts this app (or set DASHBOARD_INITIAL_SQL to where it is)",
    );
  }
  const schemaFile = db.isMySQL ? "schema.mysql.sql" : "schema.sqlite.sql";
  const schema = await readFile(path.join(root, "sql", schemaFile), "utf8");
  // Read whole, not streamed as Go does: a SQLite transaction must await
  // nothing but its queries (openDB).
  const dump = await readFile(initialSQL, "utf8");

  console.log(`loading the initial data from ${initialSQL}`);
  const started = Date.now();
  try {
    // SQLite creates the tables inside the transaction, so an interrupted load
    // leaves nothing behind. MariaDB commits on CREATE TABLE, so it creates
    // them first and drops them again if the load fails.
    if (db.isMySQL) {
      await execStatements(db, schema);
    }
    await db.transaction(async (tx) => {
      if (!db.isMySQL) {
        await execStatements(tx, schema);
      }
      await execStatements(tx, dump);
    });
  } catch (err) {
    if (db.isMySQL) {
      await db.run("DROP TABLE IF EXISTS users, subscriptions, sessions, endpoints").catch(() => {});
    }
    throw new Error(`loading the initial data: ${err instanceof Error ? err.message : err}`);
  }
  console.log(`loaded the initial data in ${(Date.now() - started) / 1000}s`);
}

// storeEndpointsFromEnv stores DASHBOARD_SERVICES_HTTP and
// DASHBOARD_SERVICES_HTTPS, when set: they say where the services are until a
// POST /initialize says otherwise. One left unset keeps what the database has.
async function storeEndpointsFromEnv(db: Store) {
  let httpURL = process.env.DASHBOARD_SERVICES_HTTP ?? "";
  let httpsURL = process.env.DASHBOARD_SERVICES_HTTPS ?? "";
  if (httpURL === "" && httpsURL === "") {
    return;
  }
  const old = await endpoints(db);
  httpURL ||= old.http;
  httpsURL ||= old.https;
  console.log(`the services: ${httpURL} and ${httpsURL}`);
  await storeEndpoints(db, httpURL, httpsURL);
}

// endpoints returns where the services are, empty when no one said.
async function endpoints(q: Queryer) {
  const row = await q.get<{ http: string; https: string }>("SELECT http, https FROM endpoints WHERE id = 1");
  return row ?? { http: "", https: "" };
}

// storeEndpoints keeps the services' base URLs in the database rather than in
// a variable, as the Go app does (the Python app runs several processes,
// which must call the same services). REPLACE is understood by SQLite and
// MariaDB alike.
async function storeEndpoints(q: Queryer, httpURL: string, httpsURL: string) {
  await q.run(
    "REPLACE INTO endpoints (id, http, https) VALUES (1, ?, ?)",
    httpURL.replace(/\/+$/, ""),
    httpsURL.replace(/\/+$/, ""),
  );
}

// execStatements runs the statements of an SQL file.
async function execStatements(q: Queryer, text: string) {
  for (const s of statements(text)) {
    await q.run(s);
  }
}

// statements returns the statements of an SQL file, each ending with ";" at
// the end of a line, without its "--" comment lines.
function statements(text: string): string[] {
  const out: string[] = [];
  let stmt = "";
  for (const line of text.split(/(?<=\n)/)) {
    if (!line.replace(/^[ \t]+/, "").startsWith("--")) {
      stmt += line;
    }
    if (line.replace(/[ \t\r\n]+$/, "").endsWith(";")) {
      if (stmt.trim() !== "") {
        out.push(stmt.trim());
      }
      stmt = "";
    }
  }
  if (stmt.trim() !== "") {
    out.push(stmt.trim());
  }
  return out;
}

// The app.

const app = express();
app.disable("x-powered-by");
app.set("etag", false); // the Go app sends no ETag
app.set("case sensitive routing", true); // paths as Go's mux matches them:
app.set("strict routing", true); // "/login/" is not "/login"
app.set("views", path.join(import.meta.dirname, "..", "views"));
app.set("view engine", "ejs");
app.set("view cache", true); // parsed once, as the Go app parses its templates
// EJS, but escaping as Go's html/template does, so that the apps send the same
// bytes: &#34; and &#39; for quotes, &#43; for "+", NUL shown as U+FFFD.
app.engine("ejs", (file, data, done) => {
  ejs.renderFile(file, data, { escape: goEscape, cache: app.enabled("view cache") }, done);
});

// A form as Go's PostFormValue reads it: a urlencoded body of up to 10 MB,
// the first value of a name (Go would read a multipart form too; the pages'
// forms send none).
const form = express.urlencoded({ extended: false, limit: "10mb", parameterLimit: Infinity });

app.get("/", getIndex);
app.get("/signup", getSignup);
app.post("/signup", form, postSignup);
app.get("/login", getLogin);
app.post("/login", form, postLogin);
app.post("/logout", postLogout);
app.get("/user.js", getUserJS);
app.get("/modify", getModify);
app.post("/modify", form, postModify);
app.get("/data", getData);
// The body is JSON whatever its Content-Type says, as Go's decoder reads it.
app.post("/initialize", express.text({ type: () => true }), postInitialize);
// The static files as Go's file server serves them: Last-Modified without an
// ETag or a Cache-Control, a directory not found rather than listed, and
// what is not found Go's plain 404. Another method than GET or HEAD gets the
// app's 404 page.
const publicFiles = express.static(path.join(root, "public"), {
  etag: false,
  cacheControl: false,
  index: false,
  redirect: false,
  dotfiles: "allow",
});
app.use("/static", (req, res, next) => {
  if (req.method !== "GET" && req.method !== "HEAD") {
    next();
    return;
  }
  publicFiles(req, res, () => {
    res.setHeader("X-Content-Type-Options", "nosniff");
    send(res, 404, "text/plain; charset=utf-8", "404 page not found\n");
  });
});
app.use(notFound);
app.use(serverError);

const server = http.createServer(app);
// Go's server keeps an idle connection open for as long as its client does,
// and gives a request 10 s to send its headers.
server.keepAliveTimeout = 0;
server.headersTimeout = 10_000;
const { host, port } = splitAddr(addr);
server.once("error", (err) => {
  console.error(err.message);
  process.exit(1);
});
server.listen(port, host, () => {
  const a = server.address() as { address: string; family: string; port: number };
  const shown = a.family === "IPv6" ? `[${a.address}]` : a.address;
  console.log(`listening on http://${shown}:${a.port}`);
});
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.once(signal, () => {
    setTimeout(() => process.exit(0), 5000).unref(); // as Go's Shutdown, 5 s at most
    server.close(() => void db.close().finally(() => process.exit(0)));
  });
}

// splitAddr splits HOST:PORT; an empty host is every address, as in Go.
function splitAddr(hostPort: string) {
  const i = hostPort.lastIndexOf(":");
  const host = hostPort.slice(0, i).replace(/^\[(.*)\]$/, "$1");
  return { host: host || undefined, port: Number(hostPort.slice(i + 1)) };
}

// Pages.

function page(title: string, user: User | null, more: Partial<Page> = {}): Page {
  return { title, user, message: "", email: "", grade: "", grades: GRADES, forms: [], ...more };
}

// render writes a page; every page has the header, which shows who is signed
// in.
function render(res: Response, status: number, name: string, p: Page): Promise<void> {
  return new Promise((resolve, reject) => {
    res.render(name, p, (err, html) => {
      if (err) {
        reject(err);
        return;
      }
      send(res, status, "text/html; charset=utf-8", html);
      resolve();
    });
  });
}

// renderError writes an error page, with the header of user (null: signed
// out).
function renderError(res: Response, user: User | null, status: number, message: string) {
  return render(res, status, "error", page(String(status), user, { message }));
}

// send writes an answer with exactly this Content-Type: Express's send would
// add a charset to it. Its Content-Length is said even to a HEAD, as Go does.
function send(res: Response, status: number, type: string, body: string | Buffer) {
  res.status(status).setHeader("Content-Type", type);
  res.setHeader("Content-Length", Buffer.byteLength(body));
  res.end(body);
}

// sendJSON writes v as JSON, with a newline as Go's encoder writes it.
function sendJSON(res: Response, status: number, v: unknown) {
  send(res, status, "application/json", JSON.stringify(v) + "\n");
}

function seeOther(res: Response, location: string) {
  res.status(303).setHeader("Location", location);
  res.end();
}

async function notFound(req: Request, res: Response) {
  const user = await currentUser(req, res);
  await renderError(res, user, 404, "There is no such page.");
}

// serverError writes the page of an error of the app's own, signed out: the
// session may be what failed.
async function serverError(err: unknown, _req: Request, res: Response, next: NextFunction) {
  console.error(`error: ${err instanceof Error ? err.message : err}`);
  if (res.headersSent) {
    next(err);
    return;
  }
  try {
    await render(res, 500, "error", page("500", null, { message: "Something went wrong." }));
  } catch {
    send(res, 500, "text/plain; charset=utf-8", "Internal Server Error\n");
  }
}

// goEscape escapes text for HTML as Go's html/template does.
function goEscape(v: unknown): string {
  const escapes: Record<string, string> = {
    "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&#34;", "'": "&#39;", "+": "&#43;", "\0": "\uFFFD",
  };
  return v == null ? "" : String(v).replace(/[&<>"'+\0]/g, (c) => escapes[c]);
}

// Sessions.

// sessionToken returns the request's session cookie as Go's r.Cookie reads
// it: the first of that name whose value holds only the bytes a cookie may (a
// pair of double quotes around it taken off), as it was sent. cookie-parser
// would percent-decode it, and read "j:..." as JSON.
function sessionToken(req: Request): string | undefined {
  for (const part of (req.headers.cookie ?? "").split(";")) {
    const pair = part.replace(/^[ \t]+|[ \t]+$/g, "");
    const eq = pair.indexOf("=");
    if ((eq < 0 ? pair : pair.slice(0, eq)) !== SESSION_COOKIE) {
      continue;
    }
    let value = eq < 0 ? "" : pair.slice(eq + 1);
    if (value.length > 1 && value.startsWith('"') && value.endsWith('"')) {
      value = value.slice(1, -1);
    }
    if (/^[\x20\x21\x23-\x5b\x5d-\x7e]*$/.test(value)) {
      return value;
    }
  }
  return undefined;
}

// currentUser returns the request's signed-in user, or null when its cookie
// names no session (or it has none). An answer to a request that carries a
// session cookie is for that browser only: currentUser marks it Cache-Control:
// private, before the lookup, so that even an answer that fails has it.
async function currentUser(req: Request, res: Response): Promise<User | null> {
  const token = sessionToken(req);
  if (token === undefined) {
    return null;
  }
  res.setHeader("Cache-Control", "private");
  const user = await db.get<User>(
    "SELECT u.id, u.email, u.grade FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.token = ?",
    token,
  );
  return user ?? null;
}

// formValue is the first value of a field of the request's form, "" if it has
// none.
function formValue(req: Request, name: string): string {
  const body = req.body as Record<string, unknown> | undefined;
  const v = body && Object.hasOwn(body, name) ? body[name] : undefined;
  const first = Array.isArray(v) ? v[0] : v;
  return typeof first === "string" ? first : "";
}

async function getSignup(req: Request, res: Response) {
  const user = await currentUser(req, res);
  await render(res, 200, "signup", page("Sign up", user));
}

async function postSignup(req: Request, res: Response) {
  const user = await currentUser(req, res);
  const email = formValue(req, "email");
  const password = formValue(req, "password");
  const grade = formValue(req, "grade");
  const p = page("Sign up", user, { email, grade });
  // Lengths in characters, as Go counts them. A form's bytes that are not
  // UTF-8 come here as U+FFFD (Go refuses such an email).
  const length = (s: string) => [...s].length;
  if (
    email.split("@").length !== 2 || length(email) > MAX_EMAIL ||
    length(password) < MIN_PASSWORD || length(password) > MAX_PASSWORD || !GRADES.includes(grade)
  ) {
    p.message = `An email has one @ and at most ${MAX_EMAIL} characters; a password is ${MIN_PASSWORD} to ` +
      `${MAX_PASSWORD} characters long; the grade is one of ${GRADES.join(", ")}.`;
    await render(res, 400, "signup", p);
    return;
  }
  // Look first: on MariaDB, an insert refused by the unique email still uses
  // up an id. The unique email has the last word when two people sign up with
  // one email at once.
  const row = await db.get<{ n: number }>("SELECT COUNT(*) AS n FROM users WHERE email = ?", email);
  if (row && row.n > 0) {
    await render(res, 409, "signup", { ...p, message: "This email is taken." });
    return;
  }
  const salt = randomBytes(8).toString("hex");
  try {
    await db.transaction(async (tx) => {
      const id = await tx.run(
        "INSERT INTO users (email, salt, passhash, grade, created_at) VALUES (?, ?, ?, ?, ?)",
        email, salt, hashPassword(salt, password), grade, now(),
      );
      // Every user has a row of subscriptions, as in the initial data: none
      // yet.
      await tx.run("INSERT INTO subscriptions (user_id, arg) VALUES (?, ?)", id, "{}");
    });
  } catch (err) {
    if (!isDuplicate(err)) {
      throw err;
    }
    await render(res, 409, "signup", { ...p, message: "This email is taken." });
    return;
  }
  seeOther(res, "/login");
}

async function getLogin(req: Request, res: Response) {
  const user = await currentUser(req, res);
  await render(res, 200, "login", page("Log in", user));
}

async function postLogin(req: Request, res: Response) {
  const user = await currentUser(req, res);
  const email = formValue(req, "email");
  const password = formValue(req, "password");
  const row = await db.get<{ id: number; salt: string; passhash: string }>(
    "SELECT id, salt, passhash FROM users WHERE email = ?",
    email,
  );
  if (!row || !sameText(hashPassword(row.salt, password), row.passhash)) {
    await render(res, 403, "login", page("Log in", user, { message: "Wrong email or password.", email }));
    return;
  }
  // A new session replaces the browser's old one.
  const old = sessionToken(req);
  if (old !== undefined) {
    await db.run("DELETE FROM sessions WHERE token = ?", old);
  }
  const token = randomBytes(32).toString("hex");
  await db.run("INSERT INTO sessions (token, user_id, created_at) VALUES (?, ?, ?)", token, row.id, now());
  res.setHeader("Set-Cookie", `${SESSION_COOKIE}=${token}; Path=/; HttpOnly; SameSite=Lax`);
  res.setHeader("Cache-Control", "private");
  seeOther(res, "/");
}

async function postLogout(req: Request, res: Response) {
  const token = sessionToken(req);
  if (token !== undefined) {
    res.setHeader("Cache-Control", "private");
    await db.run("DELETE FROM sessions WHERE token = ?", token);
    res.setHeader("Set-Cookie", `${SESSION_COOKIE}=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax`);
  }
  seeOther(res, "/login");
}

// The dashboard.

async function getIndex(req: Request, res: Response) {
  const user = await currentUser(req, res);
  if (!user) {
    seeOther(res, "/login");
    return;
  }
  await render(res, 200, "index", page("Dashboard", user));
}

async function getUserJS(req: Request, res: Response) {
  const user = await currentUser(req, res);
  if (!user) {
    send(res, 403, "text/plain; charset=utf-8", "sign in first\n");
    return;
  }
  const script = await new Promise<string>((resolve, reject) => {
    res.render("user.js.ejs", { refreshMS: REFRESH_MS.get(user.grade) }, (err, js) => (err ? reject(err) : resolve(js)));
  });
  send(res, 200, "application/javascript", script);
}

async function getModify(req: Request, res: Response) {
  const user = await currentUser(req, res);
  if (!user) {
    seeOther(res, "/login");
    return;
  }
  const subs = await loadSubscriptions(db, user.id);
  const forms = (ALLOWED.get(user.grade) ?? []).map((service) => ({
    service,
    subscribed: Object.hasOwn(subs, service),
    fields: (PARAMS.get(service) ?? []).map((name) => ({
      name,
      value: subs[service]?.[name] ?? "",
      pattern: PARAM_PATTERNS.get(name) ?? "",
    })),
  }));
  await render(res, 200, "modify", page("Services", user, { forms }));
}

async function postModify(req: Request, res: Response) {
  const user = await currentUser(req, res);
  if (!user) {
    await renderError(res, null, 403, "Sign in to change your services.");
    return;
  }
  const service = formValue(req, "service");
  const names = PARAMS.get(service);
  if (!names) {
    await renderError(res, user, 400, "There is no such service.");
    return;
  }
  if (!ALLOWED.get(user.grade)?.includes(service)) {
    await renderError(res, user, 403, `The ${user.grade} grade cannot subscribe to ${service}.`);
    return;
  }
  let values: Record<string, string> | null = null; // null: a removal
  if (formValue(req, "remove") !== "1") {
    // Only the service's own fields: anything else the form carries is left
    // out.
    values = {};
    for (const name of names) {
      const v = formValue(req, name);
      if (!PARAM_REGEXPS.get(name)?.test(v)) {
        await renderError(res, user, 400, `${service}: ${name} ${goQuote(v)} is not valid.`);
        return;
      }
      values[name] = v;
    }
  }
  // Read, change and write the user's subscriptions in one transaction, so
  // that two changes at once do not undo each other. SQLite's transactions
  // hold the write lock from BEGIN IMMEDIATE; MariaDB locks the row.
  await db.transaction(async (tx) => {
    const subs = await loadSubscriptions(tx, user.id, db.isMySQL ? " FOR UPDATE" : "");
    if (values === null) {
      delete subs[service];
    } else {
      subs[service] = values;
    }
    await tx.run("REPLACE INTO subscriptions (user_id, arg) VALUES (?, ?)", user.id, sortedJSON(subs));
  });
  seeOther(res, "/modify");
}

// getData asks every service the user subscribes to, one after another in the
// manual's order, and relays their answers.
async function getData(req: Request, res: Response) {
  const user = await currentUser(req, res);
  if (!user) {
    sendJSON(res, 403, { error: "sign in first" });
    return;
  }
  const subs = await loadSubscriptions(db, user.id);
  // Where the services are is read on every request: POST /initialize may
  // have changed it.
  const { http: httpBase, https: httpsBase } = await endpoints(db);
  // The calls stop when the client goes away, as Go's request context does.
  const gone = new AbortController();
  res.on("close", () => gone.abort());
  const items: Buffer[] = [];
  for (const service of ALLOWED.get(user.grade) ?? []) {
    if (!Object.hasOwn(subs, service)) {
      continue;
    }
    try {
      if (httpBase === "" && httpsBase === "") {
        throw new Error("no one said where the services are (POST /initialize)");
      }
      const answer = await callService(service, subs[service], httpBase, httpsBase, gone.signal);
      items.push(Buffer.concat([Buffer.from(`{"service":"${service}","data":`), answer, Buffer.from("}")]));
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      console.error(`/data of user ${user.id}: ${service}: ${message}`);
      sendJSON(res, 502, { error: `${service}: ${message}` });
      return;
    }
  }
  const comma = Buffer.from(",");
  const body = [Buffer.from("["), ...items.flatMap((item, i) => (i ? [comma, item] : [item])), Buffer.from("]\n")];
  send(res, 200, "application/json", Buffer.concat(body));
}

// callService asks one service with the user's parameters and returns its JSON
// answer as it came, without the whitespace between its tokens (as Go's
// encoder relays a json.RawMessage). Like a naive client, each call makes an
// agent of its own: a new connection every time, closed after the answer
// (Connection: close, as Go's transport without keep-alives sends), HTTP/1.1
// only (node:https offers no other), no proxy from the environment (an agent
// made here reads none, whatever NODE_USE_ENV_PROXY says), nothing cached, no
// TLS session resumed, no conditional request. A status other than 200, or an
// answer that is not JSON, is an error.
async function callService(
  service: string,
  p: Record<string, string>,
  httpBase: string,
  httpsBase: string,
  gone: AbortSignal,
): Promise<Buffer> {
  let url: string;
  const query = new URLSearchParams();
  const headers: Record<string, string> = {};
  switch (service) {
    case "postal":
      url = `${httpBase}/postal/${encodeURIComponent(p.code ?? "")}`;
      break;
    case "postal2":
      url = `${httpBase}/postal`;
      query.set("code", p.code ?? "");
      break;
    case "surname":
    case "givenname":
      url = `${httpBase}/${service}`;
      query.set("q", p.q ?? "");
      break;
    case "weather":
      url = `${httpBase}/weather`;
      query.set("location", p.location ?? "");
      break;
    case "security":
      url = `${httpsBase}/tokens`;
      query.set("req", p.req ?? "");
      headers["X-Security-Token"] = p.token ?? "";
      break;
    case "attacked":
      url = `${httpsBase}/attacked`;
      headers["X-Security-Token"] = p.token ?? "";
      break;
    default:
      throw new Error(`unknown service "${service}"`);
  }
  if (query.size > 0) {
    url += "?" + query.toString();
  }
  const target = new URL(url);
  const timeout = AbortSignal.timeout(SERVICE_TIMEOUT_MS);
  const signal = AbortSignal.any([gone, timeout]);
  // The HTTPS services' certificate is made for each run and no one can
  // verify it (MANUAL.md).
  const agent = target.protocol === "https:" ? new https.Agent({ rejectUnauthorized: false }) : new http.Agent();
  try {
    const request = target.protocol === "https:"
      ? https.get(target, { agent, headers, signal })
      : http.get(target, { agent, headers, signal });
    const [res] = (await once(request, "response")) as [http.IncomingMessage];
    const body = await buffer(res);
    if (res.statusCode !== 200) {
      throw new Error(`${url} answered ${res.statusCode} ${res.statusMessage}`);
    }
    return compactJSON(body, url);
  } catch (err) {
    if (timeout.aborted) {
      throw new Error(`${url}: no answer within ${SERVICE_TIMEOUT_MS / 1000} s`);
    }
    throw err;
  } finally {
    agent.destroy();
  }
}

// compactJSON checks that body is one JSON value and returns it without the
// whitespace between its tokens: the bytes of its strings and numbers as they
// came.
function compactJSON(body: Buffer, url: string): Buffer {
  try {
    JSON.parse(body.toString());
  } catch (err) {
    throw new Error(`${url}: ${err instanceof Error ? err.message : err}`);
  }
  const out: number[] = [];
  let inString = false;
  let escaped = false;
  for (const b of body) {
    if (inString) {
      if (escaped) {
        escaped = false;
      } else if (b === 0x5c) {
        escaped = true;
      } else if (b === 0x22) {
        inString = false;
      }
    } else if (b === 0x20 || b === 0x09 || b === 0x0a || b === 0x0d) {
      continue;
    } else if (b === 0x22) {
      inString = true;
    }
    out.push(b);
  }
  return Buffer.from(out);
}

// postInitialize restores the initial data (the users and their
// subscriptions as the dump has them, no sessions) and takes the services'
// base URLs.
async function postInitialize(req: Request, res: Response) {
  const body = initializeBody(typeof req.body === "string" ? req.body : "");
  if (!body) {
    sendJSON(res, 400, { error: 'want a JSON body {"http": "URL", "https": "URL"}' });
    return;
  }
  // The run changes the initial users' subscriptions in place, so they are
  // loaded again from the dump, whose INSERT INTO subscriptions statements
  // hold them all. Read before the transaction, which must await nothing but
  // its queries (openDB).
  const dump = await readFile(initialSQL, "utf8");
  await db.transaction(async (tx) => {
    await tx.run("DELETE FROM sessions");
    await tx.run("DELETE FROM subscriptions");
    await tx.run(`DELETE FROM users WHERE id > ${INITIAL_USERS}`);
    if (!db.isMySQL) {
      // New users get ids from INITIAL_USERS + 1 on again, as after the first
      // load.
      await tx.run(`UPDATE sqlite_sequence SET seq = ${INITIAL_USERS} WHERE name = 'users'`);
    }
    for (const s of statements(dump)) {
      if (s.startsWith("INSERT INTO subscriptions")) {
        await tx.run(s);
      }
    }
    await storeEndpoints(tx, body.http, body.https);
  });
  if (db.isMySQL) {
    // ALTER TABLE commits on MariaDB: it runs after the transaction.
    await db.run(`ALTER TABLE users AUTO_INCREMENT = ${INITIAL_USERS + 1}`);
  }
  sendJSON(res, 200, { ok: true });
}

// initializeBody returns the base URLs of a POST /initialize's body: a JSON
// object whose "http" and "https" (in any letter case, as Go's decoder
// matches them) are strings; null if it is not one.
function initializeBody(text: string): { http: string; https: string } | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return null;
  }
  const urls: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    const name = key.toLowerCase();
    if (name === "http" || name === "https") {
      urls[name] = v;
    }
  }
  const { http: httpURL, https: httpsURL } = urls;
  if ((httpURL != null && typeof httpURL !== "string") || (httpsURL != null && typeof httpsURL !== "string")) {
    return null;
  }
  return typeof httpURL === "string" && typeof httpsURL === "string" ? { http: httpURL, https: httpsURL } : null;
}

// Helpers.

// loadSubscriptions returns the user's subscriptions ({} if it has no row);
// suffix ends the query (" FOR UPDATE").
async function loadSubscriptions(q: Queryer, userID: number, suffix = ""): Promise<Subscriptions> {
  const row = await q.get<{ arg: string }>("SELECT arg FROM subscriptions WHERE user_id = ?" + suffix, userID);
  if (!row) {
    return {};
  }
  try {
    return JSON.parse(row.arg) as Subscriptions;
  } catch (err) {
    throw new Error(`the subscriptions of user ${userID}: ${err instanceof Error ? err.message : err}`);
  }
}

// sortedJSON writes the subscriptions with their keys sorted, no spaces: as
// the dump writes them (and Go's json.Marshal of its maps).
function sortedJSON(subs: Subscriptions): string {
  const sorted = (o: object) => Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return JSON.stringify(sorted(Object.fromEntries(Object.entries(subs).map(([s, p]) => [s, sorted(p)]))));
}

// hashPassword is what the users table stores: the SHA-512 of salt +
// password, in lowercase hex.
function hashPassword(salt: string, password: string): string {
  return createHash("sha512").update(salt + password).digest("hex");
}

// sameText compares in constant time, as Go's subtle.ConstantTimeCompare.
function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

// isDuplicate reports whether err is an insert refused by a unique key.
function isDuplicate(err: unknown): boolean {
  const e = err as { errcode?: number; errno?: number };
  return e.errcode === 2067 /* SQLITE_CONSTRAINT_UNIQUE */ || e.errno === 1062 /* ER_DUP_ENTRY */;
}

// goQuote writes s in double quotes as Go's %q does: backslash escapes for
// quotes, backslashes and characters Go does not call printable.
function goQuote(s: string): string {
  const short: Record<string, string> = {
    '"': '\\"', "\\": "\\\\", "\x07": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v",
  };
  const quoted = [...s].map((c) => {
    const code = c.codePointAt(0) ?? 0;
    if (short[c]) {
      return short[c];
    } else if (code < 0x20 || code === 0x7f) {
      return "\\x" + code.toString(16).padStart(2, "0");
    } else if (c !== " " && /[^\p{L}\p{M}\p{N}\p{P}\p{S}]/u.test(c)) {
      return code < 0x10000 ? "\\u" + code.toString(16).padStart(4, "0") : "\\U" + code.toString(16).padStart(8, "0");
    }
    return c;
  });
  return `"${quoted.join("")}"`;
}

// now is the current UTC time, in whole seconds.
function now(): string {
  return new Date().toISOString().slice(0, 19).replace("T", " ");
}
