// The Node.js reference app of the tunecon problem "leagues": a software-as-a-
// service for e-sports leagues after the ISUCON12 qualifier. Each tenant,
// chosen by the first label of the host name, runs competitions among its
// players; organizers upload score CSVs, players read rankings, and the
// service bills each tenant per finished competition. It is slow on purpose,
// the way real apps are slow, and it is correct: keep it correct while you
// make it fast. The contract it keeps is in ../../MANUAL.md; it behaves like
// the Go app in ../go.
//
// Build and run it from this directory (`tunecon serve leagues --lang node`
// does both): npm ci && npx tsc -p . && node dist/main.js
//
// Node runs it in one process on one thread (no cluster). SQLite is Node's
// own node:sqlite, which is synchronous: a query holds the thread while it
// runs, where the Go app runs several at once on several cores. That is the
// cost of this stack, not a shortcut or a slowdown added on purpose.

import express, { type NextFunction, type Request, type Response } from "express";
import cookieParser from "cookie-parser";
import jwt from "jsonwebtoken";
import mysql from "mysql2/promise";
import { DatabaseSync, type SQLInputValue } from "node:sqlite";
import { createPublicKey, type KeyObject } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import readline from "node:readline";

// What POST /initialize restores: the initial tenants are ids 1 to
// INITIAL_TENANTS, every initial visit is before INITIAL_END (Unix seconds),
// and the id generator hands out INITIAL_NEXT_ID next. They must match the
// generated data (problems/leagues/data: a test there checks).
const INITIAL_TENANTS = 100;
const INITIAL_END = 1767225600;
const INITIAL_NEXT_ID = 14769;

const TOKEN_COOKIE = "leagues_token";
const ADMIN_LABEL = "admin"; // the host label, and the tokens' audience, of the service's admin
const RANKING_PAGE = 100; // ranks in one ranking answer
const BILLING_PAGE = 10; // tenants in one page of the admin's billing
const MAX_NEW_PLAYERS = 100; // names in one POST /api/organizer/players
const MAX_NAME = 64; // characters of a display name
const MAX_TITLE = 128; // characters of a competition's title
const MAX_BODY = 1 << 20; // bytes of a JSON body
const MAX_UPLOAD = 16 << 20; // bytes of a CSV upload
const YEN_PER_SCORED = 100;
const YEN_PER_VIEWER = 10;
const ROLE_ADMIN = "admin";
const ROLE_ORGANIZER = "organizer";
const ROLE_PLAYER = "player";
const SQLITE_BUSY_WAIT = 5000; // milliseconds a SQLite connection waits for a lock

const TENANT_NAME_PATTERN = /^[a-z][a-z0-9-]{0,61}[a-z0-9]$/;
const ID_PATTERN = /^[1-9][0-9]{0,17}$/;
const NUMBER_PATTERN = /^[0-9]{1,18}$/;
const SCORE_PATTERN = /^(0|[1-9][0-9]{0,8})$/;

// Rows of the admin data.

interface Tenant {
  id: number;
  name: string;
  display_name: string;
  created_at: number;
  updated_at: number;
}

// Rows of a tenant's SQLite file.

interface Player {
  id: number;
  display_name: string;
  is_disqualified: number;
  created_at: number;
  updated_at: number;
}

interface Competition {
  id: number;
  title: string;
  finished_at: number | null;
  last_upload: number;
  created_at: number;
  updated_at: number;
}

interface PlayerScore {
  id: number;
  competition_id: number;
  upload: number;
  row_num: number;
  player_id: number;
  score: number;
  created_at: number;
}

// What the API answers; every object is built with its keys in the manual's
// order.

interface CompetitionBilling {
  competition_id: number;
  title: string;
  is_finished: boolean;
  scored: number;
  viewed: number;
  billing: number;
}

function playerJSON(p: Player) {
  return { id: p.id, display_name: p.display_name, is_disqualified: p.is_disqualified !== 0 };
}

function competitionJSON(c: Competition) {
  return { id: c.id, title: c.title, is_finished: c.finished_at !== null };
}

// The admin data: SQLite or MariaDB, behind the few calls the handlers make.
// Both answer through promises, so each handler is written once for both.

interface AdminDB {
  all<T>(sql: string, ...params: SQLInputValue[]): Promise<T[]>;
  get<T>(sql: string, ...params: SQLInputValue[]): Promise<T | undefined>;
  run(sql: string, ...params: SQLInputValue[]): Promise<{ changes: number; insertId: number }>;
  // addTenant inserts a tenant in a transaction that commits only once
  // makeFile(id) has made the tenant's file. On SQLite it runs without a
  // break: another request's write on the one connection must not fall into
  // the transaction (and be rolled back with it).
  addTenant(name: string, displayName: string, now: number, makeFile: (id: number) => void): Promise<number>;
  isDuplicate(err: unknown): boolean;
  close(): Promise<void>;
}

// The admin data in SQLite: one connection, which node:sqlite uses
// synchronously (Go's database/sql keeps a pool of them).
class SqliteAdmin implements AdminDB {
  db: DatabaseSync;

  constructor(file: string) {
    this.db = new DatabaseSync(file, { timeout: SQLITE_BUSY_WAIT });
    // WAL lets readers run while someone writes; the busy timeout makes
    // writers wait for each other.
    this.db.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL");
  }

  async all<T>(sql: string, ...params: SQLInputValue[]) {
    return this.db.prepare(sql).all(...params) as T[];
  }

  async get<T>(sql: string, ...params: SQLInputValue[]) {
    return this.db.prepare(sql).get(...params) as T | undefined;
  }

  async run(sql: string, ...params: SQLInputValue[]) {
    const r = this.db.prepare(sql).run(...params);
    return { changes: Number(r.changes), insertId: Number(r.lastInsertRowid) };
  }

  async addTenant(name: string, displayName: string, now: number, makeFile: (id: number) => void) {
    this.db.exec("BEGIN");
    try {
      const r = this.db
        .prepare("INSERT INTO tenant (name, display_name, created_at, updated_at) VALUES (?, ?, ?, ?)")
        .run(name, displayName, now, now);
      const id = Number(r.lastInsertRowid);
      makeFile(id);
      this.db.exec("COMMIT");
      return id;
    } catch (err) {
      this.db.exec("ROLLBACK");
      throw err;
    }
  }

  isDuplicate(err: unknown) {
    return String(err).includes("UNIQUE constraint failed");
  }

  async close() {
    this.db.close();
  }
}

// The admin data in MariaDB, through a pool of connections. A query with
// parameters is a prepared statement, as the Go driver makes it; one without
// is sent as text, as the Go driver sends it. mysql2 keeps each connection's
// prepared statements (the Go driver prepares and closes one per query), as
// the Rust app's sqlx does.
class MysqlAdmin implements AdminDB {
  pool: mysql.Pool;

  constructor(pool: mysql.Pool) {
    this.pool = pool;
  }

  async query(sql: string, params: SQLInputValue[]) {
    const [result] = params.length > 0 ? await this.pool.execute(sql, params as never[]) : await this.pool.query(sql);
    return result;
  }

  async all<T>(sql: string, ...params: SQLInputValue[]) {
    return (await this.query(sql, params)) as T[];
  }

  async get<T>(sql: string, ...params: SQLInputValue[]) {
    return ((await this.query(sql, params)) as T[])[0];
  }

  async run(sql: string, ...params: SQLInputValue[]) {
    const r = (await this.query(sql, params)) as mysql.ResultSetHeader;
    return { changes: r.affectedRows, insertId: r.insertId };
  }

  async addTenant(name: string, displayName: string, now: number, makeFile: (id: number) => void) {
    const conn = await this.pool.getConnection();
    try {
      await conn.beginTransaction();
      try {
        const [r] = await conn.execute<mysql.ResultSetHeader>(
          "INSERT INTO tenant (name, display_name, created_at, updated_at) VALUES (?, ?, ?, ?)",
          [name, displayName, now, now],
        );
        makeFile(r.insertId);
        await conn.commit();
        return r.insertId;
      } catch (err) {
        await conn.rollback();
        throw err;
      }
    } finally {
      conn.release();
    }
  }

  isDuplicate(err: unknown) {
    return (err as { errno?: number }).errno === 1062;
  }

  async close() {
    await this.pool.end();
  }
}

// The app's settings, read once at start.
const root = getenv("LEAGUES_ROOT", "..");
const initialDir = getenv("LEAGUES_INITIAL_DIR", path.join(root, "data", "initial"));
let tenantDir = process.env.LEAGUES_TENANT_DIR ?? "";
let admin: AdminDB;
let publicKey: KeyObject;

function getenv(key: string, def: string): string {
  return process.env[key] || def;
}

async function main() {
  const addr = getenv("LEAGUES_ADDR", "127.0.0.1:8080");
  await openApp(
    process.env.LEAGUES_DB ?? "",
    getenv("LEAGUES_PUBLIC_KEY", path.join(root, "..", "keys", "public.pem")),
  );

  const app = express();
  app.disable("x-powered-by");
  app.set("etag", false);
  // Paths match as Go's ServeMux matches them: in their case, and "/api/me/"
  // is not "/api/me".
  app.set("case sensitive routing", true);
  app.set("strict routing", true);
  // A cookie's value is taken as it is, as Go takes it: no %-decoding.
  app.use(cookieParser(undefined, { decode: (v: string) => v }));
  app.post("/api/admin/tenants", postAdminTenants);
  app.get("/api/admin/billing", getAdminBilling);
  app.get("/api/organizer/players", getOrganizerPlayers);
  app.post("/api/organizer/players", postOrganizerPlayers);
  app.post("/api/organizer/players/:id/disqualify", postDisqualify);
  app.get("/api/organizer/competitions", (req, res) => listCompetitions(req, res, ROLE_ORGANIZER));
  app.post("/api/organizer/competitions", postCompetitions);
  app.post("/api/organizer/competitions/:id/finish", postFinish);
  app.post("/api/organizer/competitions/:id/scores", postScores);
  app.get("/api/organizer/billing", getOrganizerBilling);
  app.get("/api/player/competitions", (req, res) => listCompetitions(req, res, ROLE_PLAYER));
  app.get("/api/player/players/:id", getPlayer);
  app.get("/api/player/competitions/:id/ranking", getRanking);
  app.get("/api/me", getMe);
  app.post("/initialize", postInitialize);
  app.get("/", getIndex);
  app.get("/static/*file", getStatic);
  // Any other path, or a known path with another method: 404, as in Go.
  app.use((_req, res) => writeError(res, 404, "not found"));
  app.use((err: Error & { status?: number }, _req: Request, res: Response, _next: NextFunction) => {
    if (err.status === 400) {
      writeError(res, 400, "bad request"); // a path that is not %-encoded right
    } else {
      serverError(res, err);
    }
  });

  const { host, port } = splitAddr(addr);
  const server = app.listen(port, host);
  await new Promise<void>((resolve, reject) => {
    server.once("listening", resolve);
    server.once("error", reject);
  });
  // Go's server keeps an idle connection as long as its client does, and
  // gives a request 10 s to send its headers; Node would close an idle one
  // after 5 s, and a client that sends on it just then sees it broken.
  server.keepAliveTimeout = 0;
  server.headersTimeout = 10_000;
  server.requestTimeout = 0;
  const a = server.address();
  if (a && typeof a === "object") {
    console.log(`listening on http://${a.family === "IPv6" ? `[${a.address}]` : a.address}:${a.port}`);
  }
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    process.once(signal, () => {
      // Finish the requests under way, 5 s at most, as Go's Shutdown does.
      setTimeout(() => process.exit(0), 5000).unref();
      server.close(() => void admin.close().finally(() => process.exit(0)));
    });
  }
}

// splitAddr splits "HOST:PORT" (HOST may be "[v6]").
function splitAddr(addr: string): { host: string; port: number } {
  const i = addr.lastIndexOf(":");
  return { host: addr.slice(0, i).replace(/^\[(.*)\]$/, "$1"), port: Number(addr.slice(i + 1)) };
}

// openApp opens the admin data named by dsn, makes the working data from the
// initial data if it is missing, and reads the public key. An empty tenantDir
// means the one beside the admin data.
async function openApp(dsn: string, publicKeyPath: string) {
  let pem: Buffer;
  try {
    pem = fs.readFileSync(publicKeyPath);
  } catch (err) {
    throw new Error(`reading the public key: ${err}`);
  }
  try {
    publicKey = createPublicKey(pem);
  } catch (err) {
    throw new Error(`${publicKeyPath}: ${err}`);
  }
  if (dsn.startsWith("mysql://")) {
    const u = new URL(dsn);
    const database = decodeURIComponent(u.pathname.replace(/^\//, ""));
    const pool = mysql.createPool({
      host: u.hostname.replace(/^\[(.*)\]$/, "$1"),
      port: Number(u.port || 3306),
      user: decodeURIComponent(u.username),
      password: decodeURIComponent(u.password),
      database,
      charset: "utf8mb4",
    });
    if (tenantDir === "") {
      tenantDir = path.join(root, "data", "tenants-mysql-" + database);
    }
    try {
      await pool.query("SELECT 1");
    } catch (err) {
      throw new Error(`connecting to the database: ${err}`);
    }
    admin = new MysqlAdmin(pool);
    await loadMySQL(pool);
  } else if (dsn === "" || dsn.startsWith("sqlite:")) {
    const file = dsn.replace(/^sqlite:/, "") || path.join(root, "data", "leagues-node.db");
    if (tenantDir === "") {
      tenantDir = file.replace(/\.db$/, "") + "-tenants";
    }
    if (!fs.existsSync(file)) {
      console.log(`copying the initial admin data to ${file}`);
      for (const suffix of ["-wal", "-shm"]) {
        fs.rmSync(file + suffix, { force: true });
      }
      initialData(() => copyFile(path.join(initialDir, "admin.db"), file));
    }
    admin = new SqliteAdmin(file);
  } else {
    throw new Error(`LEAGUES_DB ${JSON.stringify(dsn)}: want empty, sqlite:PATH or mysql://user:pass@host:port/dbname`);
  }
  if (!fs.existsSync(tenantDir)) {
    console.log(`copying the initial tenants to ${tenantDir}`);
    initialData(() => copyTenants(path.join(initialDir, "tenants"), tenantDir));
  }
}

// initialData runs f, which reads the initial data, and says how to make the
// data when it is missing.
function initialData(f: () => void) {
  try {
    f();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") {
      throw new Error(
        `${err}: generate the initial data with \`tunecon serve leagues\`, which writes it and then ` +
          "starts this app (or set LEAGUES_INITIAL_DIR to where it is)",
      );
    }
    throw err;
  }
}

// loadMySQL creates the admin tables and loads the initial admin data unless
// the tenant table exists.
async function loadMySQL(pool: mysql.Pool) {
  const [rows] = await pool.query<mysql.RowDataPacket[]>(
    "SELECT COUNT(*) AS n FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = 'tenant'",
  );
  if (rows[0].n > 0) {
    return;
  }
  const dumpPath = path.join(initialDir, "admin.mysql.sql");
  initialData(() => fs.accessSync(dumpPath));
  const schema = fs.readFileSync(path.join(root, "sql", "admin.mysql.sql"), "utf8");
  console.log(`loading the initial admin data from ${dumpPath}`);
  const start = Date.now();
  try {
    // MariaDB commits on CREATE TABLE: the tables are made first and dropped
    // again if the load fails.
    for await (const s of statements(schema.split("\n"))) {
      await pool.query(s);
    }
    const conn = await pool.getConnection();
    try {
      await conn.beginTransaction();
      try {
        const lines = readline.createInterface({ input: fs.createReadStream(dumpPath), crlfDelay: Infinity });
        for await (const s of statements(lines)) {
          await conn.query(s);
        }
        await conn.commit();
      } catch (err) {
        await conn.rollback();
        throw err;
      }
    } finally {
      conn.release();
    }
    await resetAdmin();
  } catch (err) {
    await pool.query("DROP TABLE IF EXISTS tenant, id_generator, visit_history").catch(() => {});
    throw new Error(`loading the initial data: ${err}`);
  }
  console.log(`loaded the initial admin data in ${Date.now() - start}ms`);
}

// statements yields the statements of an SQL file's lines, each statement
// ending with ";" at the end of a line, skipping those that hold nothing but
// whitespace and "--" comments.
async function* statements(lines: AsyncIterable<string> | Iterable<string>) {
  let stmt: string[] = [];
  const blank = () => stmt.every((l) => l.trim() === "" || l.trim().startsWith("--"));
  for await (const line of lines) {
    stmt.push(line);
    if (line.trimEnd().endsWith(";")) {
      if (!blank()) {
        yield stmt.join("\n");
      }
      stmt = [];
    }
  }
  if (!blank()) {
    yield stmt.join("\n");
  }
}

// copyFile copies src to dst through a temporary file beside dst, so that dst
// is always whole.
function copyFile(src: string, dst: string) {
  fs.mkdirSync(path.dirname(dst), { recursive: true });
  const tmp = dst + ".tmp";
  try {
    fs.copyFileSync(src, tmp);
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    throw err;
  }
  fs.renameSync(tmp, dst);
}

// copyTenants copies every file of the initial tenant directory src into a
// new directory dst.
function copyTenants(src: string, dst: string) {
  const entries = fs.readdirSync(src);
  const tmp = dst + ".tmp";
  fs.rmSync(tmp, { recursive: true, force: true });
  fs.mkdirSync(tmp, { recursive: true });
  for (const name of entries) {
    copyFile(path.join(src, name), path.join(tmp, name));
  }
  fs.renameSync(tmp, dst);
}

// Answers.

// writeJSON writes v as the answer, compact JSON. Every API answer is for the
// one who asked: Cache-Control: private. (Express's res.json would add a
// charset to the Content-Type, which Go's answers do not carry.)
function writeJSON(res: Response, status: number, v: unknown) {
  res.statusCode = status;
  res.setHeader("Content-Type", "application/json");
  res.setHeader("Cache-Control", "private");
  res.end(JSON.stringify(v));
}

function writeError(res: Response, status: number, message: string) {
  writeJSON(res, status, { error: message });
}

function serverError(res: Response, err: unknown) {
  console.error(`error: ${err instanceof Error ? (err.stack ?? err.message) : err}`);
  if (res.headersSent) {
    res.destroy();
    return;
  }
  writeJSON(res, 500, { error: "internal error" });
}

// Who is asking.

// Viewer is the one a request comes from, as its token and host say.
interface Viewer {
  role: string;
  subject: string;
  tenant: Tenant | null; // null on the admin host
  player: Player | null; // for a player
}

// hostLabel returns the first label of the request's host name, in lower
// case, its port cut off as Go's net.SplitHostPort cuts it.
function hostLabel(req: Request): string {
  let host = req.headers.host ?? "";
  const v6 = /^\[([^\]]*)\]:[^:\]]*$/.exec(host);
  if (v6) {
    host = v6[1];
  } else if (!host.startsWith("[") && host.indexOf(":") === host.lastIndexOf(":") && host.includes(":")) {
    host = host.slice(0, host.indexOf(":"));
  }
  return host.split(".")[0].toLowerCase();
}

// verifyToken returns the claims of a token that is signed with RS256 by the
// public key, unexpired and for audience label, or null: what Go's jwt.
// ParseWithClaims checks with the Go app's options, and nothing else.
// jsonwebtoken checks the signature, the algorithm and the audience; the
// rest is checked here, as golang-jwt checks it: exp is required, a claim of
// the wrong type refuses the token, and exp and nbf count whole seconds (a
// token expires at the start of its exp second).
function verifyToken(token: string, label: string): { sub: string; role: string } | null {
  let claims: jwt.JwtPayload;
  try {
    const payload = jwt.verify(token, publicKey, {
      algorithms: ["RS256"],
      audience: label,
      ignoreExpiration: true,
      ignoreNotBefore: true,
    });
    if (typeof payload !== "object" || payload === null || Array.isArray(payload)) {
      return null;
    }
    claims = payload;
  } catch {
    return null;
  }
  const isString = (v: unknown) => v === undefined || v === null || typeof v === "string";
  const aud: unknown = claims.aud;
  const exp = numericDate(claims.exp);
  const nbf = numericDate(claims.nbf);
  if (
    ![claims.sub, claims.role, claims.iss, claims.jti].every(isString) ||
    !(isString(aud) || (Array.isArray(aud) && aud.every((a) => typeof a === "string"))) ||
    numericDate(claims.iat) === undefined ||
    exp === undefined ||
    exp === null ||
    nbf === undefined
  ) {
    return null;
  }
  const now = unixNow();
  if (now >= Math.trunc(exp) || (nbf !== null && now < Math.trunc(nbf))) {
    return null;
  }
  return { sub: claims.sub ?? "", role: claims.role ?? "" };
}

// numericDate reads a time claim as golang-jwt reads it: null when absent, a
// JSON number or a string that holds one, undefined (refused) otherwise.
function numericDate(v: unknown): number | null | undefined {
  if (v === undefined || v === null) {
    return null;
  }
  if (typeof v === "string" && /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$/.test(v)) {
    v = Number(v);
  }
  return typeof v === "number" && Number.isFinite(v) ? v : undefined;
}

// authorize finds the viewer of a request and checks that their role is one
// of roles, answering the request itself when not (and returning null): 404
// for a host that names no tenant, 401 for a missing or bad token, 403 for a
// role that may not ask, or for a disqualified player.
async function authorize(req: Request, res: Response, ...roles: string[]): Promise<Viewer | null> {
  const label = hostLabel(req);
  const v: Viewer = { role: "", subject: "", tenant: null, player: null };
  if (label !== ADMIN_LABEL) {
    const t = await admin.get<Tenant>("SELECT * FROM tenant WHERE name = ?", label);
    if (!t) {
      writeError(res, 404, "not found");
      return null;
    }
    v.tenant = t;
  }

  const token: unknown = req.cookies?.[TOKEN_COOKIE];
  const claims = typeof token === "string" ? verifyToken(token, label) : null;
  if (
    claims === null ||
    claims.sub === "" ||
    (claims.role !== ROLE_ADMIN && claims.role !== ROLE_ORGANIZER && claims.role !== ROLE_PLAYER)
  ) {
    writeError(res, 401, "invalid token");
    return null;
  }
  v.role = claims.role;
  v.subject = claims.sub;

  if (v.role === ROLE_PLAYER) {
    if (v.tenant === null || !ID_PATTERN.test(v.subject)) {
      writeError(res, 401, "invalid token");
      return null;
    }
    const tdb = tenantDB(v.tenant.id);
    try {
      v.player = one<Player>(tdb, "SELECT * FROM player WHERE id = ?", Number(v.subject)) ?? null;
    } finally {
      tdb.close();
    }
    if (v.player === null) {
      writeError(res, 401, "invalid token");
      return null;
    }
  }
  // A role goes with its host: the admin on the admin host, the others on a
  // tenant's.
  if (!roles.includes(v.role) || (v.role === ROLE_ADMIN) !== (v.tenant === null)) {
    writeError(res, 403, "forbidden");
    return null;
  }
  if (v.player !== null && v.player.is_disqualified !== 0) {
    writeError(res, 403, "disqualified");
    return null;
  }
  return v;
}

// Tenants' files.

function tenantPath(id: number): string {
  return path.join(tenantDir, `${id}.db`);
}

// Queries on a tenant's file: each prepares its statement anew, as Go's
// database/sql does for every query. (node:sqlite binds a JS number as a
// REAL where Go binds an INTEGER: the columns' INTEGER affinity stores the
// same integers, and lookups by id still seek the key.)

function one<T>(db: DatabaseSync, sql: string, ...params: SQLInputValue[]): T | undefined {
  return db.prepare(sql).get(...params) as T | undefined;
}

function all<T>(db: DatabaseSync, sql: string, ...params: SQLInputValue[]): T[] {
  return db.prepare(sql).all(...params) as T[];
}

// tenantDB opens a tenant's SQLite file. The caller closes it.
function tenantDB(id: number): DatabaseSync {
  const p = tenantPath(id);
  if (!fs.existsSync(p)) {
    throw new Error(`the file of tenant ${id}: ${p} does not exist`); // opening would make it
  }
  return new DatabaseSync(p, { timeout: SQLITE_BUSY_WAIT });
}

// Each tenant's lock: the tail of the queue of its holders.
const tenantLocks = new Map<number, Promise<void>>();

// lockTenant takes the tenant's exclusive lock, which every write to the
// tenant holds, and every read of its scores; the returned function releases
// it. The Go app locks a file (ID.lock, with flock) because its requests run
// on many threads; a Node app is one process, so a lock in memory, one per
// tenant, gives the same guarantee: no two of its requests write a tenant, or
// read its scores while another writes them, at once. (It leaves no ID.lock
// file in the tenant directory.)
async function lockTenant(id: number): Promise<() => void> {
  const previous = tenantLocks.get(id) ?? Promise.resolve();
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  tenantLocks.set(id, held);
  await previous;
  return () => {
    if (tenantLocks.get(id) === held) {
      tenantLocks.delete(id);
    }
    release();
  };
}

// newID hands out the next id for a player or a competition.
async function newID(): Promise<number> {
  return (await admin.run("REPLACE INTO id_generator (stub) VALUES ('a')")).insertId;
}

// Request bodies and parameters.

// readBody reads the request's body, or returns null when it is longer than
// max bytes (the connection then closes after the answer, as in Go).
async function readBody(req: Request, res: Response, max: number): Promise<Buffer<ArrayBuffer> | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += chunk.length;
    if (size <= max) {
      chunks.push(chunk);
    }
  }
  if (size > max) {
    res.setHeader("Connection", "close");
    return null;
  }
  return Buffer.concat(chunks);
}

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

// readJSON decodes the request's JSON body, answering 400 (and returning
// null) when it is not valid UTF-8 or not a JSON object. (A JSON null is let
// through as an empty object, as Go decodes it: its fields are then missing.)
async function readJSON(req: Request, res: Response): Promise<Record<string, unknown> | null> {
  const body = await readBody(req, res, MAX_BODY);
  let v: unknown;
  try {
    v = body === null ? undefined : JSON.parse(utf8.decode(body));
  } catch {
    v = undefined;
  }
  if (v === null) {
    return {};
  }
  if (typeof v !== "object" || Array.isArray(v)) {
    writeError(res, 400, "bad request");
    return null;
  }
  return v as Record<string, unknown>;
}

// validText reports whether s is a name or title of 1 to max characters
// without control characters.
function validText(s: unknown, max: number): s is string {
  if (typeof s !== "string") {
    return false;
  }
  const n = [...s].length;
  return n >= 1 && n <= max && !/[\u0000-\u001f\u007f]/.test(s);
}

// pathID returns the :id of the path, or null for one that cannot name
// anything.
function pathID(req: Request): number | null {
  const s = req.params.id;
  return typeof s === "string" && ID_PATTERN.test(s) ? Number(s) : null;
}

// query returns the first value of the query's parameter name, "" when
// absent.
function query(req: Request, name: string): string {
  return new URLSearchParams(req.url.split("?")[1] ?? "").get(name) ?? "";
}

// Admin.

async function postAdminTenants(req: Request, res: Response) {
  if (!(await authorize(req, res, ROLE_ADMIN))) {
    return;
  }
  const body = await readJSON(req, res);
  if (!body) {
    return;
  }
  const { name, display_name: displayName } = body;
  if (
    typeof name !== "string" ||
    !TENANT_NAME_PATTERN.test(name) ||
    name === ADMIN_LABEL ||
    !validText(displayName, MAX_NAME)
  ) {
    writeError(res, 400, "bad request");
    return;
  }
  const taken = await admin.get<{ n: number }>("SELECT COUNT(*) AS n FROM tenant WHERE name = ?", name);
  if (taken!.n > 0) {
    writeError(res, 409, "name taken");
    return;
  }
  let id: number;
  try {
    // The tenant's file exists before its row is committed: its host works
    // as soon as it is found.
    id = await admin.addTenant(name, displayName, unixNow(), createTenantDB);
  } catch (err) {
    if (admin.isDuplicate(err)) {
      writeError(res, 409, "name taken");
      return;
    }
    throw err;
  }
  writeJSON(res, 200, { tenant: { id, name, display_name: displayName, billing: 0 } });
}

// createTenantDB makes a new tenant's file with the tenant schema.
function createTenantDB(id: number) {
  const schema = fs.readFileSync(path.join(root, "sql", "tenant.sql"), "utf8");
  const p = tenantPath(id);
  fs.rmSync(p, { force: true });
  fs.rmSync(p + "-journal", { force: true });
  const db = new DatabaseSync(p);
  try {
    db.exec(schema);
  } finally {
    db.close();
  }
}

async function getAdminBilling(req: Request, res: Response) {
  if (!(await authorize(req, res, ROLE_ADMIN))) {
    return;
  }
  const before = query(req, "before");
  let tenants: Tenant[];
  if (before === "") {
    tenants = await admin.all<Tenant>("SELECT * FROM tenant ORDER BY id DESC LIMIT ?", BILLING_PAGE);
  } else if (!NUMBER_PATTERN.test(before)) {
    writeError(res, 400, "bad request");
    return;
  } else {
    tenants = await admin.all<Tenant>(
      "SELECT * FROM tenant WHERE id < ? ORDER BY id DESC LIMIT ?",
      Number(before),
      BILLING_PAGE,
    );
  }
  const list = [];
  for (const t of tenants) {
    const bills = await tenantBilling(t.id);
    const billing = bills.reduce((sum, b) => sum + b.billing, 0);
    list.push({ id: t.id, name: t.name, display_name: t.display_name, billing });
  }
  writeJSON(res, 200, { tenants: list });
}

// Billing.

// tenantBilling computes the bill of every competition of a tenant, the
// highest id first.
async function tenantBilling(tenantID: number): Promise<CompetitionBilling[]> {
  const tdb = tenantDB(tenantID);
  try {
    const competitions = all<Competition>(tdb, "SELECT * FROM competition ORDER BY id DESC");
    const bills = [];
    for (const c of competitions) {
      bills.push(await competitionBilling(tdb, tenantID, c));
    }
    return bills;
  } finally {
    tdb.close();
  }
}

// competitionBilling computes a competition's bill from its score rows and
// the whole visit history: 100 for each player with a score, 10 for each
// other player who read the ranking by the second it finished. A competition
// still running is billed nothing.
async function competitionBilling(tdb: DatabaseSync, tenantID: number, c: Competition): Promise<CompetitionBilling> {
  const b = {
    competition_id: c.id,
    title: c.title,
    is_finished: c.finished_at !== null,
    scored: 0,
    viewed: 0,
    billing: 0,
  };
  if (c.finished_at === null) {
    return b;
  }
  const visits = await admin.all<{ player_id: number; first_at: number }>(
    "SELECT player_id, MIN(created_at) AS first_at FROM visit_history " +
      "WHERE tenant_id = ? AND competition_id = ? GROUP BY player_id",
    tenantID,
    c.id,
  );
  // The scores are read under the tenant's lock, lest an upload change them
  // half way.
  const unlock = await lockTenant(tenantID);
  try {
    const scores = all<PlayerScore>(
      tdb,
      "SELECT * FROM player_score WHERE competition_id = ? AND upload = ?",
      c.id,
      c.last_upload,
    );
    const scored = new Set(scores.map((s) => s.player_id));
    for (const v of visits) {
      if (v.first_at <= c.finished_at && !scored.has(v.player_id)) {
        b.viewed++;
      }
    }
    b.scored = scored.size;
    b.billing = YEN_PER_SCORED * b.scored + YEN_PER_VIEWER * b.viewed;
    return b;
  } finally {
    unlock();
  }
}

// Organizer.

async function getOrganizerPlayers(req: Request, res: Response) {
  const v = await authorize(req, res, ROLE_ORGANIZER);
  if (!v) {
    return;
  }
  const tdb = tenantDB(v.tenant!.id);
  try {
    const players = all<Player>(tdb, "SELECT * FROM player ORDER BY id");
    writeJSON(res, 200, { players: players.map(playerJSON) });
  } finally {
    tdb.close();
  }
}

async function postOrganizerPlayers(req: Request, res: Response) {
  const v = await authorize(req, res, ROLE_ORGANIZER);
  if (!v) {
    return;
  }
  const body = await readJSON(req, res);
  if (!body) {
    return;
  }
  const names = body.display_names;
  if (
    !Array.isArray(names) ||
    names.length < 1 ||
    names.length > MAX_NEW_PLAYERS ||
    !names.every((n) => validText(n, MAX_NAME))
  ) {
    writeError(res, 400, "bad request");
    return;
  }
  const unlock = await lockTenant(v.tenant!.id);
  try {
    const tdb = tenantDB(v.tenant!.id);
    try {
      const list = [];
      for (const name of names as string[]) {
        const id = await newID();
        const now = unixNow();
        tdb
          .prepare("INSERT INTO player (id, display_name, is_disqualified, created_at, updated_at) VALUES (?, ?, 0, ?, ?)")
          .run(id, name, now, now);
        list.push(playerJSON(one<Player>(tdb, "SELECT * FROM player WHERE id = ?", id)!));
      }
      writeJSON(res, 200, { players: list });
    } finally {
      tdb.close();
    }
  } finally {
    unlock();
  }
}

async function postDisqualify(req: Request, res: Response) {
  const v = await authorize(req, res, ROLE_ORGANIZER);
  if (!v) {
    return;
  }
  const id = pathID(req);
  if (id === null) {
    writeError(res, 404, "not found");
    return;
  }
  const unlock = await lockTenant(v.tenant!.id);
  try {
    const tdb = tenantDB(v.tenant!.id);
    try {
      const r = tdb.prepare("UPDATE player SET is_disqualified = 1, updated_at = ? WHERE id = ?").run(unixNow(), id);
      if (Number(r.changes) === 0) {
        writeError(res, 404, "not found");
        return;
      }
      const p = one<Player>(tdb, "SELECT * FROM player WHERE id = ?", id)!;
      writeJSON(res, 200, { player: playerJSON(p) });
    } finally {
      tdb.close();
    }
  } finally {
    unlock();
  }
}

// listCompetitions answers a list of the tenant's competitions, the highest
// id first, to role.
async function listCompetitions(req: Request, res: Response, role: string) {
  const v = await authorize(req, res, role);
  if (!v) {
    return;
  }
  const tdb = tenantDB(v.tenant!.id);
  try {
    const competitions = all<Competition>(tdb, "SELECT * FROM competition ORDER BY id DESC");
    writeJSON(res, 200, { competitions: competitions.map(competitionJSON) });
  } finally {
    tdb.close();
  }
}

async function postCompetitions(req: Request, res: Response) {
  const v = await authorize(req, res, ROLE_ORGANIZER);
  if (!v) {
    return;
  }
  const body = await readJSON(req, res);
  if (!body) {
    return;
  }
  if (!validText(body.title, MAX_TITLE)) {
    writeError(res, 400, "bad request");
    return;
  }
  const unlock = await lockTenant(v.tenant!.id);
  try {
    const tdb = tenantDB(v.tenant!.id);
    try {
      const id = await newID();
      const now = unixNow();
      tdb
        .prepare(
          "INSERT INTO competition (id, title, finished_at, last_upload, created_at, updated_at) VALUES (?, ?, NULL, 0, ?, ?)",
        )
        .run(id, body.title, now, now);
      const c = one<Competition>(tdb, "SELECT * FROM competition WHERE id = ?", id)!;
      writeJSON(res, 200, { competition: competitionJSON(c) });
    } finally {
      tdb.close();
    }
  } finally {
    unlock();
  }
}

async function postFinish(req: Request, res: Response) {
  const v = await authorize(req, res, ROLE_ORGANIZER);
  if (!v) {
    return;
  }
  const id = pathID(req);
  if (id === null) {
    writeError(res, 404, "not found");
    return;
  }
  const unlock = await lockTenant(v.tenant!.id);
  try {
    const tdb = tenantDB(v.tenant!.id);
    try {
      let c = one<Competition>(tdb, "SELECT * FROM competition WHERE id = ?", id);
      if (!c) {
        writeError(res, 404, "not found");
        return;
      }
      if (c.finished_at !== null) {
        writeError(res, 409, "competition finished");
        return;
      }
      const now = unixNow();
      tdb.prepare("UPDATE competition SET finished_at = ?, updated_at = ? WHERE id = ?").run(now, now, id);
      c = one<Competition>(tdb, "SELECT * FROM competition WHERE id = ?", id)!;
      writeJSON(res, 200, { competition: competitionJSON(c) });
    } finally {
      tdb.close();
    }
  } finally {
    unlock();
  }
}

// parseScores reads a score CSV as the manual defines it: [player id, score]
// for each data line, or null.
function parseScores(body: Buffer): [number, number][] | null {
  let text: string;
  try {
    text = utf8.decode(body);
  } catch {
    return null;
  }
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") {
    lines.pop(); // the file's last "\n"
  }
  if (lines.length === 0) {
    return null;
  }
  const trimmed = lines.map((l) => (l.endsWith("\r") ? l.slice(0, -1) : l));
  if (trimmed[0] !== "player_id,score") {
    return null;
  }
  const rows: [number, number][] = [];
  for (const line of trimmed.slice(1)) {
    const comma = line.indexOf(",");
    const id = line.slice(0, comma);
    const score = line.slice(comma + 1);
    if (comma < 0 || !ID_PATTERN.test(id) || !SCORE_PATTERN.test(score)) {
      return null;
    }
    rows.push([Number(id), Number(score)]);
  }
  return rows;
}

// readScoresFile reads the file in the part "scores" of a multipart/form-data
// body, or returns null. Express parses no multipart body: Node's own fetch
// Response does.
async function readScoresFile(req: Request, res: Response): Promise<Buffer | null> {
  const body = await readBody(req, res, MAX_UPLOAD);
  if (body === null) {
    return null;
  }
  try {
    const headers = { "content-type": req.headers["content-type"] ?? "" };
    const form = await new Response(body, { headers }).formData();
    const file = form.get("scores");
    return file instanceof File ? Buffer.from(await file.arrayBuffer()) : null;
  } catch {
    return null;
  }
}

async function postScores(req: Request, res: Response) {
  const v = await authorize(req, res, ROLE_ORGANIZER);
  if (!v) {
    return;
  }
  const id = pathID(req);
  if (id === null) {
    writeError(res, 404, "not found");
    return;
  }
  const unlock = await lockTenant(v.tenant!.id);
  try {
    const tdb = tenantDB(v.tenant!.id);
    try {
      const c = one<Competition>(tdb, "SELECT * FROM competition WHERE id = ?", id);
      if (!c) {
        writeError(res, 404, "not found");
        return;
      }
      if (c.finished_at !== null) {
        writeError(res, 409, "competition finished");
        return;
      }
      const file = await readScoresFile(req, res);
      const rows = file === null ? null : parseScores(file);
      if (rows === null) {
        writeError(res, 400, "bad request");
        return;
      }
      // Every player named must be the tenant's.
      for (const [playerID] of rows) {
        const { n } = one<{ n: number }>(tdb, "SELECT COUNT(*) AS n FROM player WHERE id = ?", playerID)!;
        if (n === 0) {
          writeError(res, 400, "bad request");
          return;
        }
      }
      const upload = c.last_upload + 1;
      const now = unixNow();
      tdb.exec("BEGIN");
      try {
        rows.forEach(([playerID, score], i) => {
          tdb
            .prepare(
              "INSERT INTO player_score (competition_id, upload, row_num, player_id, score, created_at) VALUES (?, ?, ?, ?, ?, ?)",
            )
            .run(id, upload, i + 1, playerID, score, now);
        });
        tdb.prepare("UPDATE competition SET last_upload = ?, updated_at = ? WHERE id = ?").run(upload, now, id);
        tdb.exec("COMMIT");
      } catch (err) {
        tdb.exec("ROLLBACK");
        throw err;
      }
      writeJSON(res, 200, { rows: rows.length });
    } finally {
      tdb.close();
    }
  } finally {
    unlock();
  }
}

async function getOrganizerBilling(req: Request, res: Response) {
  const v = await authorize(req, res, ROLE_ORGANIZER);
  if (!v) {
    return;
  }
  const bills = await tenantBilling(v.tenant!.id);
  const total = bills.reduce((sum, b) => sum + b.billing, 0);
  writeJSON(res, 200, { billing: { total, competitions: bills } });
}

// Player.

async function getPlayer(req: Request, res: Response) {
  const v = await authorize(req, res, ROLE_PLAYER);
  if (!v) {
    return;
  }
  const id = pathID(req);
  if (id === null) {
    writeError(res, 404, "not found");
    return;
  }
  const tdb = tenantDB(v.tenant!.id);
  try {
    const p = one<Player>(tdb, "SELECT * FROM player WHERE id = ?", id);
    if (!p) {
      writeError(res, 404, "not found");
      return;
    }
    // The scores are read under the tenant's lock, lest an upload change
    // them half way.
    const unlock = await lockTenant(v.tenant!.id);
    try {
      const competitions = all<Competition>(tdb, "SELECT * FROM competition ORDER BY id");
      const scores = [];
      for (const c of competitions) {
        // The player's last row in the competition's last upload.
        const s = one<PlayerScore>(
          tdb,
          "SELECT * FROM player_score WHERE competition_id = ? AND upload = ? AND player_id = ? ORDER BY row_num DESC LIMIT 1",
          c.id,
          c.last_upload,
          p.id,
        );
        if (s) {
          scores.push({ competition_id: c.id, title: c.title, score: s.score });
        }
      }
      writeJSON(res, 200, { player: playerJSON(p), scores });
    } finally {
      unlock();
    }
  } finally {
    tdb.close();
  }
}

async function getRanking(req: Request, res: Response) {
  const v = await authorize(req, res, ROLE_PLAYER);
  if (!v) {
    return;
  }
  const id = pathID(req);
  if (id === null) {
    writeError(res, 404, "not found");
    return;
  }
  let rankAfter = 0;
  const after = query(req, "rank_after");
  if (after !== "") {
    if (!NUMBER_PATTERN.test(after)) {
      writeError(res, 400, "bad request");
      return;
    }
    rankAfter = Number(after);
  }
  const tdb = tenantDB(v.tenant!.id);
  try {
    const c = one<Competition>(tdb, "SELECT * FROM competition WHERE id = ?", id);
    if (!c) {
      writeError(res, 404, "not found");
      return;
    }
    await admin.run(
      "INSERT INTO visit_history (player_id, tenant_id, competition_id, created_at) VALUES (?, ?, ?, ?)",
      v.player!.id,
      v.tenant!.id,
      c.id,
      unixNow(),
    );
    // The scores are read under the tenant's lock, lest an upload change
    // them half way.
    const unlock = await lockTenant(v.tenant!.id);
    try {
      // Every row of the last upload, the last first: a player's last row is
      // the one that counts.
      const rows = all<PlayerScore>(
        tdb,
        "SELECT * FROM player_score WHERE competition_id = ? AND upload = ? ORDER BY row_num DESC",
        c.id,
        c.last_upload,
      );
      const entries: { score: PlayerScore; player: Player }[] = [];
      const seen = new Set<number>();
      for (const s of rows) {
        if (seen.has(s.player_id)) {
          continue;
        }
        seen.add(s.player_id);
        const p = one<Player>(tdb, "SELECT * FROM player WHERE id = ?", s.player_id);
        if (!p) {
          throw new Error(`competition ${c.id}: no player ${s.player_id}`);
        }
        entries.push({ score: s, player: p });
      }
      entries.sort((a, b) => b.score.score - a.score.score || a.score.row_num - b.score.row_num);
      const ranks = [];
      for (const [i, e] of entries.entries()) {
        const rank = i + 1;
        if (rank <= rankAfter) {
          continue;
        }
        ranks.push({ rank, player_id: e.player.id, display_name: e.player.display_name, score: e.score.score });
        if (ranks.length === RANKING_PAGE) {
          break;
        }
      }
      writeJSON(res, 200, { competition: competitionJSON(c), ranks });
    } finally {
      unlock();
    }
  } finally {
    tdb.close();
  }
}

// Common.

async function getMe(req: Request, res: Response) {
  const v = await authorize(req, res, ROLE_ADMIN, ROLE_ORGANIZER, ROLE_PLAYER);
  if (!v) {
    return;
  }
  writeJSON(res, 200, {
    role: v.role,
    subject: v.subject,
    tenant: v.tenant && { id: v.tenant.id, name: v.tenant.name, display_name: v.tenant.display_name },
    player: v.player && playerJSON(v.player),
  });
}

// postInitialize restores the initial data: it deletes what was added to the
// admin data, sets the id generator back, and puts the initial tenant files
// back in place.
async function postInitialize(_req: Request, res: Response) {
  await resetAdmin();
  await resetTenants();
  writeJSON(res, 200, { lang: "node" });
}

async function resetAdmin() {
  const statements = [
    `DELETE FROM tenant WHERE id > ${INITIAL_TENANTS}`,
    `DELETE FROM visit_history WHERE created_at >= ${INITIAL_END}`,
    "DELETE FROM id_generator",
  ];
  if (admin instanceof MysqlAdmin) {
    statements.push(
      `ALTER TABLE id_generator AUTO_INCREMENT = ${INITIAL_NEXT_ID}`,
      `ALTER TABLE tenant AUTO_INCREMENT = ${INITIAL_TENANTS + 1}`,
    );
  } else {
    statements.push(
      "DELETE FROM sqlite_sequence WHERE name = 'id_generator'",
      `INSERT INTO sqlite_sequence (name, seq) VALUES ('id_generator', ${INITIAL_NEXT_ID - 1})`,
    );
  }
  for (const s of statements) {
    await admin.run(s);
  }
}

// resetTenants removes the files of the tenants added since and copies every
// initial tenant's file back, each under its tenant's lock.
async function resetTenants() {
  for (const name of fs.readdirSync(tenantDir)) {
    const id = name.split(".")[0];
    if (/^[0-9]+$/.test(id) && Number(id) > INITIAL_TENANTS) {
      fs.rmSync(path.join(tenantDir, name), { force: true });
    }
  }
  for (let id = 1; id <= INITIAL_TENANTS; id++) {
    const unlock = await lockTenant(id);
    try {
      fs.rmSync(tenantPath(id) + "-journal", { force: true });
      copyFile(path.join(initialDir, "tenants", `${id}.db`), tenantPath(id));
    } finally {
      unlock();
    }
  }
}

function unixNow(): number {
  return Math.floor(Date.now() / 1000);
}

// The single-page app.

// Go's http.ServeFile sends these types, a Last-Modified date and no
// Cache-Control or ETag; Express's sendFile is told to do the same.
const contentTypes: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
};

function serveFile(res: Response, file: string) {
  const type = contentTypes[path.extname(file)];
  if (type) {
    res.setHeader("Content-Type", type);
  }
  res.sendFile(path.resolve(file), { cacheControl: false, etag: false, dotfiles: "allow" }, (err) => {
    if (err && !res.headersSent) {
      writeError(res, 404, "not found");
    }
  });
}

function getIndex(_req: Request, res: Response) {
  serveFile(res, path.join(root, "public", "index.html"));
}

// getStatic serves the files under public/; anything else there (a
// directory, a missing file) is not found.
function getStatic(req: Request, res: Response) {
  const file = ([] as string[]).concat(req.params.file).join("/");
  // Go's ServeFile sends a path ending in /index.html to its directory.
  if (req.path.endsWith("/index.html")) {
    res.statusCode = 301;
    res.setHeader("Location", "./");
    res.end();
    return;
  }
  // The path, cleaned as if rooted: ".." goes no higher than public/.
  const name = path.join(root, "public", path.posix.normalize("/" + file));
  let isFile = false;
  try {
    isFile = fs.statSync(name).isFile();
  } catch {
    isFile = false;
  }
  if (!isFile) {
    writeError(res, 404, "not found");
    return;
  }
  serveFile(res, name);
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
