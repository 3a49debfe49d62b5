// The Node.js reference app of the tunecon problem "blog": a small blog whose
// every page lists the articles commented on most recently. It is slow on
// purpose, the way real apps are slow, and it is correct: keep it correct
// while you make it fast. The contract it keeps is in ../../MANUAL.md; it
// behaves like the Go app in ../go.
//
// Build and run it from this directory (`tunecon serve blog --lang node` does
// both, with its own pinned Node.js):
//
//     npm ci && npx tsc -p . && node dist/main.js

import { createReadStream, existsSync, mkdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { fileURLToPath } from "node:url";
import express from "express";
import type { NextFunction, Request, Response } from "express";
import mysql from "mysql2/promise";

// The sizes of the initial data: POST /initialize deletes every row added
// after it.
const initialArticles = 10000;
const initialComments = 300000;

const anonymousName = "名無しさん"; // shown for a comment with an empty name

// Limits of posted text, in characters (code points).
const maxTitle = 128;
const maxArticleBody = 4096;
const maxName = 64;
const maxCommentBody = 1024;

type Article = { id: number; title: string; body: string; created_at: string };
type Comment = {
  id: number;
  article_id: number;
  name: string;
  body: string;
  created_at: string;
};

type Params = (string | number)[];

// The database, SQLite or MariaDB. Times are read and written as text,
// "YYYY-MM-DD HH:MM:SS" in UTC, as the Go app writes them.
interface Db {
  isMySQL: boolean;
  all<T>(sql: string, params?: Params): Promise<T[]>;
  // run runs an INSERT, UPDATE or DELETE and returns the new row's id.
  run(sql: string, params?: Params): Promise<number>;
  // readTx runs read queries in one transaction and returns their rows, so
  // that they see one state of the data.
  readTx(queries: [string, Params][]): Promise<unknown[][]>;
  // load runs the schema and then the dump in one transaction.
  load(schema: string[], dump: AsyncIterable<string>): Promise<void>;
  close(): Promise<void>;
}

const root = getenv("BLOG_ROOT", "..");
const addr = getenv("BLOG_ADDR", "127.0.0.1:8080");
const initialSQL = getenv("BLOG_INITIAL_SQL", join(root, "data", "initial.sql"));

const db = await openDB(process.env.BLOG_DB ?? "").catch(exit);
await loadInitialData().catch(exit);

const app = express();
app.disable("x-powered-by");
app.set("etag", false); // the Go app sends no ETag
app.set("strict routing", true); // "/post/" is not "/post", as in Go
app.set("case sensitive routing", true);
app.set("views", join(dirname(fileURLToPath(import.meta.url)), "..", "views"));
// EJS's <%= %> escapes as Go's html/template does (&#34; and &#39; for
// quotes), but for "+", which Go writes &#43; (the same text in a browser),
// and NUL, which Go shows as U+FFFD.
app.set("view engine", "ejs");
app.set("view cache", true); // the Go app parses its templates once
app.locals.multiline = multiline;

// Posts are parsed by the handlers, from the raw body: express.urlencoded
// would turn bytes that are not UTF-8 into U+FFFD, and they must get a 400.
const rawBody = express.raw({ type: () => true, limit: "10mb" });

app.get("/", getIndex);
app.get("/articles/:id", getArticle);
app.get("/post", getPost);
app.post("/articles", rawBody, postArticle);
app.post("/articles/:id/comments", rawBody, postComment);
app.post("/initialize", postInitialize);
app.use(
  "/static",
  // No Cache-Control, as Go's http.FileServer: Last-Modified only. A missing
  // file or a directory gets the app's 404 page (Go's server answers a text
  // 404, or lists the directory).
  express.static(join(root, "public"), { etag: false, cacheControl: false, index: false, redirect: false }),
);
app.use(notFound);
app.use(serverError);

const [host, port] = splitAddr(addr);
const server = app.listen(port, host, () => {
  const a = server.address();
  if (a && typeof a === "object") {
    const h = a.family === "IPv6" ? `[${a.address}]` : a.address;
    console.log(`listening on http://${h}:${a.port}`);
  }
});
// Go's server keeps an idle connection open until the client closes it;
// Node's would close it after 5 s, under a client about to reuse it.
server.keepAliveTimeout = 0;
server.on("error", exit);
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => {
    setTimeout(() => process.exit(0), 5000).unref();
    server.close(() => db.close().finally(() => process.exit(0)));
    server.closeIdleConnections();
  });
}

// exit ends the process with the message of an error at start.
function exit(err: Error): never {
  console.error(err.message);
  process.exit(1);
}

function getenv(key: string, def: string): string {
  return process.env[key] || def;
}

// splitAddr splits "HOST:PORT" (or "[V6]:PORT").
function splitAddr(a: string): [string, number] {
  const i = a.lastIndexOf(":");
  return [a.slice(0, i).replace(/^\[(.*)\]$/, "$1"), Number(a.slice(i + 1))];
}

// openDB opens the database named by dsn: "" or "sqlite:PATH" for SQLite,
// "mysql://user:pass@host:port/dbname" for MariaDB or MySQL.
async function openDB(dsn: string): Promise<Db> {
  if (dsn.startsWith("mysql://")) {
    return openMySQL(new URL(dsn));
  }
  if (dsn !== "" && !dsn.startsWith("sqlite:")) {
    throw new Error(`BLOG_DB "${dsn}": want empty, sqlite:PATH or mysql://user:pass@host:port/dbname`);
  }
  const path = dsn.slice("sqlite:".length) || join(root, "data", "blog-node.db");
  mkdirSync(dirname(path), { recursive: true });
  return openSQLite(path);
}

// openSQLite opens SQLite with node:sqlite: one connection, whose queries
// block the process while they run (Go's pool runs several at once).
function openSQLite(path: string): Db {
  // The busy timeout makes writers wait for each other.
  const conn = new DatabaseSync(path, { timeout: 5000 });
  // WAL lets readers run while someone writes; NORMAL, as the Go app's driver
  // sets it, saves an fsync on every commit.
  conn.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL");
  return {
    isMySQL: false,
    async all<T>(sql: string, params: Params = []) {
      return conn.prepare(sql).all(...params) as T[];
    },
    async run(sql: string, params: Params = []) {
      return Number(conn.prepare(sql).run(...params).lastInsertRowid);
    },
    // The queries run one after the other, with no await in between: the one
    // connection is shared, and another request's statement must not run
    // inside this transaction.
    async readTx(queries: [string, Params][]) {
      conn.exec("BEGIN");
      try {
        return queries.map(([sql, params]) => conn.prepare(sql).all(...params));
      } finally {
        conn.exec("ROLLBACK"); // it only read
      }
    },
    // SQLite creates the tables inside the transaction, so an interrupted
    // load leaves nothing behind.
    async load(schema: string[], dump: AsyncIterable<string>) {
      conn.exec("BEGIN");
      try {
        for (const s of schema) conn.exec(s);
        for await (const s of dump) conn.exec(s);
        conn.exec("COMMIT");
      } catch (err) {
        conn.exec("ROLLBACK");
        throw err;
      }
    },
    async close() {
      conn.close();
    },
  };
}

// openMySQL opens a pool of connections to MariaDB or MySQL: mysql2's
// default of 10 (Go's pool opens one per request at once, without a limit;
// the Rust app's sqlx pool has 10 too). Its queries are sent as text with
// the values escaped in (mysql2's query, its usual API); Go's driver
// prepares each statement on the server and closes it after.
function openMySQL(u: URL): Db {
  const pool = mysql.createPool({
    host: u.hostname,
    port: Number(u.port || 3306),
    user: decodeURIComponent(u.username),
    password: decodeURIComponent(u.password),
    database: u.pathname.slice(1),
    charset: "utf8mb4",
    dateStrings: true, // DATETIME as the text Go formats, no time zone applied
  });
  return {
    isMySQL: true,
    async all<T>(sql: string, params: Params = []) {
      const [rows] = await pool.query(sql, params);
      return rows as T[];
    },
    async run(sql: string, params: Params = []) {
      const [res] = await pool.query<mysql.ResultSetHeader>(sql, params);
      return res.insertId;
    },
    async readTx(queries: [string, Params][]) {
      const conn = await pool.getConnection();
      try {
        await conn.beginTransaction();
        const out: unknown[][] = [];
        for (const [sql, params] of queries) {
          const [rows] = await conn.query(sql, params);
          out.push(rows as unknown[]);
        }
        return out;
      } finally {
        await conn.rollback().catch(() => {}); // it only read
        conn.release();
      }
    },
    // MariaDB commits on CREATE TABLE, so it creates them first and drops
    // them again if the load fails.
    async load(schema: string[], dump: AsyncIterable<string>) {
      for (const s of schema) await pool.query(s);
      const conn = await pool.getConnection();
      try {
        await conn.beginTransaction();
        for await (const s of dump) await conn.query(s);
        await conn.commit();
      } catch (err) {
        await conn.rollback().catch(() => {});
        await pool.query("DROP TABLE IF EXISTS article, comment").catch(() => {});
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
// article table exists.
async function loadInitialData() {
  const query = db.isMySQL
    ? "SELECT COUNT(*) AS n FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = 'article'"
    : "SELECT COUNT(*) AS n FROM sqlite_master WHERE type = 'table' AND name = 'article'";
  const [{ n }] = await db.all<{ n: number }>(query);
  if (n > 0) {
    return;
  }
  if (!existsSync(initialSQL)) {
    throw new Error(
      `the initial data ${initialSQL} does not exist: generate it with \`tunecon serve blog\`, which ` +
        "writes it and then starts this app (or set BLOG_INITIAL_SQL to where it is)",
    );
  }
  const schemaFile = db.isMySQL ? "schema.mysql.sql" : "schema.sqlite.sql";
  const schema: string[] = [];
  for await (const s of statements(readFileSync(join(root, "sql", schemaFile), "utf8").split("\n"))) {
    schema.push(s);
  }

  console.log(`loading the initial data from ${initialSQL}`);
  const start = Date.now();
  try {
    await db.load(schema, statements(readLines(initialSQL)));
  } catch (err) {
    throw new Error(`loading the initial data: ${(err as Error).message}`);
  }
  console.log(`loaded the initial data in ${Date.now() - start}ms`);
}

// readLines yields the lines of a file, without their "\n", reading it
// only once the first line is asked for. (A readline interface starts
// reading when it is made, and drops the lines it reads before a loop asks
// for them: MariaDB creates its tables first.)
async function* readLines(path: string) {
  let rest = "";
  for await (const chunk of createReadStream(path, { encoding: "utf8" })) {
    const lines = (rest + chunk).split("\n");
    rest = lines.pop()!;
    yield* lines;
  }
  if (rest !== "") yield rest;
}

// statements yields the statements of an SQL file's lines, each statement
// ending with ";" at the end of a line.
async function* statements(lines: AsyncIterable<string> | Iterable<string>) {
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
  return s.split("\n").every((l) => l.trim() === "" || l.trim().startsWith("--"));
}

// multiline escapes text for HTML, as EJS's <%= %> does, and shows each line
// break as <br>.
function multiline(s: string): string {
  const entities: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&#34;", "'": "&#39;" };
  return s.replace(/[&<>"']/g, (c) => entities[c]).replace(/\r?\n/g, "<br>");
}

type Page = {
  title?: string;
  message?: string;
  articles?: Article[];
  article?: Article;
  comments?: Comment[];
  commentCount?: number;
};

// render sends a page with the sidebar, which every page has: the view
// named, inside views/layout.ejs.
async function render(res: Response, status: number, name: string, page: Page) {
  const recent = await db.all(
    "SELECT a.id, a.title FROM comment c JOIN article a ON a.id = c.article_id " +
      "GROUP BY a.id, a.title ORDER BY MAX(c.id) DESC LIMIT 10",
  );
  const data = { title: "", message: "", ...page, recent, anonymousName };
  const main = await renderView(res, name, data);
  const html = await renderView(res, "layout", { ...data, main });
  res.status(status).type("text/html; charset=utf-8").send(html);
}

function renderView(res: Response, name: string, data: object): Promise<string> {
  return new Promise((resolve, reject) => {
    res.render(name, data, (err, html) => (err ? reject(err) : resolve(html)));
  });
}

// serverError answers a request that failed: 500, or the 4xx of a body
// Express could not read.
function serverError(err: Error & { status?: number }, _req: Request, res: Response, _next: NextFunction) {
  const status = err.status && err.status < 500 ? err.status : 500;
  if (status === 500) {
    console.error(`error: ${err.message}`);
  }
  const text = status === 500 ? "Internal Server Error" : err.message;
  res.status(status).type("text/plain; charset=utf-8").send(`${text}\n`);
}

async function notFound(_req: Request, res: Response) {
  await render(res, 404, "error", { title: "Not found", message: "There is no such page." });
}

async function badRequest(res: Response, message: string) {
  await render(res, 400, "error", { title: "Bad request", message });
}

async function getIndex(_req: Request, res: Response) {
  const articles = await db.all<Article>("SELECT id, title, body, created_at FROM article ORDER BY id DESC LIMIT 10");
  await render(res, 200, "index", { articles });
}

async function getArticle(req: Request<{ id: string }>, res: Response) {
  const id = parseID(req.params.id);
  if (id === null) {
    return notFound(req, res);
  }
  const [article] = await db.all<Article>("SELECT id, title, body, created_at FROM article WHERE id = ?", [id]);
  if (!article) {
    return notFound(req, res);
  }
  // The count and the list come from one transaction, so that a comment
  // posted in between cannot make them disagree.
  const [counts, comments] = await db.readTx([
    ["SELECT COUNT(*) AS n FROM comment WHERE article_id = ?", [id]],
    ["SELECT id, article_id, name, body, created_at FROM comment WHERE article_id = ? ORDER BY id", [id]],
  ]);
  await render(res, 200, "article", {
    title: article.title,
    article,
    comments: comments as Comment[],
    commentCount: (counts[0] as { n: number }).n,
  });
}

async function getPost(_req: Request, res: Response) {
  await render(res, 200, "post", { title: "Write an article" });
}

async function postArticle(req: Request, res: Response) {
  const title = await formValue(req, "title");
  const body = await formValue(req, "body");
  if (!validText(title, 1, maxTitle) || /[\r\n]/.test(title)) {
    return badRequest(res, `The title must be one line of 1 to ${maxTitle} characters.`);
  }
  if (!validText(body, 1, maxArticleBody)) {
    return badRequest(res, `The body must be 1 to ${maxArticleBody} characters long.`);
  }
  const id = await db.run("INSERT INTO article (title, body, created_at) VALUES (?, ?, ?)", [title, body, now()]);
  res.status(303).location(`/articles/${id}`).end();
}

async function postComment(req: Request<{ id: string }>, res: Response) {
  const articleID = parseID(req.params.id);
  if (articleID === null) {
    return notFound(req, res);
  }
  const [{ n }] = await db.all<{ n: number }>("SELECT COUNT(*) AS n FROM article WHERE id = ?", [articleID]);
  if (n === 0) {
    return notFound(req, res);
  }
  const name = await formValue(req, "name");
  const body = await formValue(req, "body");
  if (!validText(name, 0, maxName)) {
    return badRequest(res, `The name must be at most ${maxName} characters long.`);
  }
  if (!validText(body, 1, maxCommentBody)) {
    return badRequest(res, `The comment must be 1 to ${maxCommentBody} characters long.`);
  }
  const id = await db.run("INSERT INTO comment (article_id, name, body, created_at) VALUES (?, ?, ?, ?)",
    [articleID, name, body, now()]);
  res.status(303).location(`/articles/${articleID}#comment-${id}`).end();
}

// postInitialize restores the initial data by deleting everything added
// since.
async function postInitialize(_req: Request, res: Response) {
  const statements = [
    `DELETE FROM comment WHERE id > ${initialComments}`,
    `DELETE FROM article WHERE id > ${initialArticles}`,
  ];
  if (db.isMySQL) {
    statements.push(
      `ALTER TABLE comment AUTO_INCREMENT = ${initialComments + 1}`,
      `ALTER TABLE article AUTO_INCREMENT = ${initialArticles + 1}`,
    );
  }
  for (const s of statements) {
    await db.run(s);
  }
  // Not res.type or res.send: they add "; charset=utf-8", which Go does not.
  res.setHeader("Content-Type", "application/json");
  res.end('{"language":"node"}');
}

// parseID parses a positive decimal id, digits only. An id too large for a
// JavaScript number names no article (Go's int64 holds it, and finds none).
function parseID(s: string): number | null {
  if (!/^[0-9]{1,18}$/.test(s)) {
    return null;
  }
  const id = Number(s);
  return id > 0 && Number.isSafeInteger(id) ? id : null;
}

// formValue returns the first value of a posted form field, "" if it is
// absent, or null if it is not valid UTF-8. It reads URL-encoded and
// multipart forms, as Go's PostFormValue does.
async function formValue(req: Request, name: string): Promise<string | null> {
  const body: Buffer = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
  const type = req.get("content-type") ?? "";
  if (req.is("application/x-www-form-urlencoded")) {
    return urlencodedValue(body, name);
  }
  if (req.is("multipart/form-data")) {
    // fetch's Response parses multipart bodies; it replaces bytes that are
    // not UTF-8 with U+FFFD, so such a value must be in the raw body as it is.
    const parsed = new globalThis.Response(new Uint8Array(body), { headers: { "content-type": type } });
    const form = await parsed.formData().catch(() => null);
    const value = form?.get(name);
    if (typeof value !== "string") {
      return "";
    }
    return value.includes("\uFFFD") && !body.includes(Buffer.from(value)) ? null : value;
  }
  return "";
}

// urlencodedValue finds a field of an application/x-www-form-urlencoded
// body. Like Go's url.ParseQuery it skips pairs with a bad escape or a ";"
// in their key.
function urlencodedValue(body: Buffer, name: string): string | null {
  const unescape = (s: string): Buffer | null => {
    s = s.replaceAll("+", " ");
    if (/%(?![0-9a-fA-F]{2})/.test(s)) {
      return null;
    }
    const bytes = s.replace(/%([0-9a-fA-F]{2})/g, (_, h) => String.fromCharCode(parseInt(h, 16)));
    return Buffer.from(bytes, "latin1");
  };
  for (const pair of body.toString("latin1").split("&")) {
    const i = pair.indexOf("=");
    const [k, v] = i < 0 ? [pair, ""] : [pair.slice(0, i), pair.slice(i + 1)];
    if (k === "" || k.includes(";")) {
      continue;
    }
    const key = unescape(k);
    const value = unescape(v);
    if (key === null || value === null || !key.equals(Buffer.from(name))) {
      continue;
    }
    try {
      return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(value);
    } catch {
      return null;
    }
  }
  return "";
}

// validText reports whether s is valid text (not null) of lo to hi
// characters.
function validText(s: string | null, lo: number, hi: number): s is string {
  if (s === null) {
    return false;
  }
  const n = [...s].length;
  return n >= lo && n <= hi;
}

// now is the current UTC time, in whole seconds.
function now(): string {
  return new Date().toISOString().slice(0, 19).replace("T", " ");
}
