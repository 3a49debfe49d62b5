//! The Rust reference app of the tunecon problem "memo": a Markdown memo service after the ISUCON3 qualifier, where
//! people sign up, write memos, public or private, and read the newest public ones. It is slow on purpose, the way
//! real apps are slow, and it is correct: keep it correct while you make it fast. The contract it keeps is in
//! ../../MANUAL.md; it behaves like the Go app in ../go.
//!
//! Build and run it from this directory (`tunecon serve memo --lang rust` does both):
//!
//!     cargo build --release && target/release/tunecon-memo

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path as UrlPath, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use chrono::{NaiveDateTime, Utc};
use minijinja::{Environment, Value, context};
use percent_encoding::percent_decode;
use pulldown_cmark::{Event, Parser};
use serde::Serialize;
use sha2::{Digest, Sha256};
use sqlx::mysql::{MySqlConnectOptions, MySqlPool};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqliteSynchronous};
use subtle::ConstantTimeEq;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, Lines};
use tower_http::services::ServeDir;

// The sizes of the initial data: POST /initialize deletes every row added after it.
const INITIAL_USERS: i64 = 1000;
const INITIAL_MEMOS: i64 = 50000;

const TIME_FORMAT: &str = "%Y-%m-%d %H:%M:%S"; // every time, in UTC
const SESSION_COOKIE: &str = "memo_session";
const PAGE_SIZE: i64 = 100; // memos on / and on each /recent/N

// Limits of what users post, in characters.
const MAX_CONTENT: usize = 10000;
const MIN_PASSWORD: usize = 8;
const MAX_PASSWORD: usize = 64;

/// Text from a column of the MariaDB schema, whose collation is binary (utf8mb4_nopad_bin): MariaDB flags such
/// columns BINARY, and sqlx will not decode them into a String (it takes them for VARBINARY), so Text reads their
/// bytes and then checks they are UTF-8. On SQLite it reads any text.
struct Text(String);

impl<DB: sqlx::Database> sqlx::Type<DB> for Text
where
    Vec<u8>: sqlx::Type<DB>,
{
    fn type_info() -> DB::TypeInfo {
        <Vec<u8> as sqlx::Type<DB>>::type_info()
    }

    fn compatible(ty: &DB::TypeInfo) -> bool {
        <Vec<u8> as sqlx::Type<DB>>::compatible(ty)
    }
}

impl<'r, DB: sqlx::Database> sqlx::Decode<'r, DB> for Text
where
    Vec<u8>: sqlx::Decode<'r, DB>,
{
    fn decode(value: DB::ValueRef<'r>) -> Result<Self, sqlx::error::BoxDynError> {
        Ok(Text(String::from_utf8(
            <Vec<u8> as sqlx::Decode<DB>>::decode(value)?,
        )?))
    }
}

#[derive(sqlx::FromRow)]
struct User {
    id: i64,
    #[allow(dead_code)]
    username: Text,
    salt: Text,
    password_hash: Text,
}

#[derive(sqlx::FromRow)]
struct Memo {
    id: i64,
    user_id: i64,
    content: Text,
    is_private: i64,
    created_at: NaiveDateTime,
}

/// A signed-in session, with its user's name.
#[derive(sqlx::FromRow)]
struct Session {
    id: Text,
    user_id: i64,
    csrf_token: Text,
    username: Text,
}

/// A memo as the pages show it.
#[derive(Serialize)]
struct MemoItem {
    id: i64,
    title: String,
    author: String,
    created_at: String,
    is_private: bool,
}

/// The database: sqlx's pools are typed by the database they talk to.
enum Db {
    Sqlite(SqlitePool),
    MySql(MySqlPool),
}

/// Runs `$body` with `$pool` bound to the pool, whichever database it is: each query is written once and compiled
/// for both.
macro_rules! with_db {
    ($db:expr, |$pool:ident| $body:expr) => {
        match $db {
            Db::Sqlite($pool) => $body,
            Db::MySql($pool) => $body,
        }
    };
}

struct App {
    db: Db,
    templates: Environment<'static>,
}

type AppState = State<Arc<App>>;

/// An error that ends a request with a 500.
struct AppError(Box<dyn std::error::Error + Send + Sync>);

impl<E: Into<Box<dyn std::error::Error + Send + Sync>>> From<E> for AppError {
    fn from(err: E) -> Self {
        AppError(err.into())
    }
}

impl IntoResponse for AppError {
    fn into_response(self) -> Response {
        eprintln!("error: {}", self.0);
        (StatusCode::INTERNAL_SERVER_ERROR, "Internal Server Error\n").into_response()
    }
}

type Result<T, E = AppError> = std::result::Result<T, E>;

#[tokio::main]
async fn main() {
    if let Err(err) = run().await {
        eprintln!("{err}");
        std::process::exit(1);
    }
}

async fn run() -> Result<(), Box<dyn std::error::Error>> {
    let root = PathBuf::from(getenv("MEMO_ROOT", ".."));
    let addr = getenv("MEMO_ADDR", "127.0.0.1:8080");
    let initial_sql = std::env::var("MEMO_INITIAL_SQL")
        .ok()
        .filter(|s| !s.is_empty())
        .map_or_else(|| root.join("data").join("initial.sql"), PathBuf::from);

    let db = open_db(&std::env::var("MEMO_DB").unwrap_or_default(), &root).await?;
    load_initial_data(&db, &root, &initial_sql).await?;
    let templates = templates(&root.join("rust").join("templates"));
    let app = Arc::new(App { db, templates });

    let router = Router::new()
        .route("/", get(get_index))
        .route("/recent/{n}", get(get_recent))
        .route("/memos/{id}", get(get_memo))
        .route("/memos", post(post_memo))
        .route("/mypage", get(get_mypage))
        .route("/signin", get(get_signin).post(post_signin))
        .route("/signup", get(get_signup).post(post_signup))
        .route("/signout", post(post_signout))
        .route("/initialize", post(post_initialize))
        .nest_service("/static", ServeDir::new(root.join("public")))
        .fallback(not_found)
        .method_not_allowed_fallback(not_found) // a path that exists with another method: 404 too, as in the Go app
        .with_state(app);

    let listener = tokio::net::TcpListener::bind(&addr).await?;
    println!("listening on http://{}", listener.local_addr()?);
    axum::serve(listener, router)
        .with_graceful_shutdown(terminated())
        .await?;
    Ok(())
}

fn getenv(key: &str, default: &str) -> String {
    std::env::var(key)
        .ok()
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| default.to_string())
}

async fn terminated() {
    let mut term =
        tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).expect("SIGTERM");
    tokio::select! {
        _ = term.recv() => {}
        _ = tokio::signal::ctrl_c() => {}
    }
}

/// Opens the database named by dsn: "" or "sqlite:PATH" for SQLite, "mysql://user:pass@host:port/dbname" for
/// MariaDB or MySQL.
async fn open_db(dsn: &str, root: &Path) -> Result<Db, Box<dyn std::error::Error>> {
    if dsn.starts_with("mysql://") {
        // sqlx talks utf8mb4 and sets the session's time zone to UTC.
        let options = MySqlConnectOptions::from_str(dsn).map_err(|e| format!("MEMO_DB: {e}"))?;
        return Ok(Db::MySql(MySqlPool::connect_with(options).await?));
    }
    let Some(path) = dsn
        .strip_prefix("sqlite:")
        .or(if dsn.is_empty() { Some("") } else { None })
    else {
        return Err(format!(
            "MEMO_DB {dsn:?}: want empty, sqlite:PATH or mysql://user:pass@host:port/dbname"
        )
        .into());
    };
    let path = if path.is_empty() {
        root.join("data").join("memo-rust.db")
    } else {
        PathBuf::from(path)
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    // WAL lets readers run while someone writes; the busy timeout makes writers wait for each other.
    let options = SqliteConnectOptions::new()
        .filename(&path)
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        // NORMAL, as the Go app's driver sets it: sqlx leaves SQLite's
        // FULL, an fsync more on every commit.
        .synchronous(SqliteSynchronous::Normal)
        .busy_timeout(Duration::from_secs(5));
    Ok(Db::Sqlite(SqlitePool::connect_with(options).await?))
}

/// Creates the tables and loads the initial data unless the users table exists.
async fn load_initial_data(
    db: &Db,
    root: &Path,
    dump_path: &Path,
) -> Result<(), Box<dyn std::error::Error>> {
    let (exists_query, schema_file) = match db {
        Db::Sqlite(_) => (
            "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'users'",
            "schema.sqlite.sql",
        ),
        Db::MySql(_) => (
            "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = 'users'",
            "schema.mysql.sql",
        ),
    };
    let n: i64 = with_db!(db, |pool| sqlx::query_scalar(exists_query)
        .fetch_one(pool)
        .await?);
    if n > 0 {
        return Ok(());
    }
    let dump = match tokio::fs::File::open(dump_path).await {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(format!(
                "the initial data {} does not exist: generate it with `tunecon serve memo`, which writes it and then \
                 starts this app (or set MEMO_INITIAL_SQL to where it is)",
                dump_path.display()
            )
            .into());
        }
        Err(e) => return Err(e.into()),
    };
    let schema = tokio::fs::read_to_string(root.join("sql").join(schema_file)).await?;

    println!("loading the initial data from {}", dump_path.display());
    let start = Instant::now();
    // SQLite creates the tables inside the transaction, so an interrupted load leaves nothing behind. MariaDB
    // commits on CREATE TABLE, so it creates them first and drops them again if the load fails.
    let loaded: Result<(), Box<dyn std::error::Error>> = with_db!(db, |pool| {
        let mut tx = pool.begin().await?;
        let mut schema = tokio::io::BufReader::new(schema.as_bytes()).lines();
        while let Some(statement) = next_statement(&mut schema).await? {
            match db {
                Db::MySql(_) => sqlx::raw_sql(&statement).execute(pool).await?,
                Db::Sqlite(_) => sqlx::raw_sql(&statement).execute(&mut *tx).await?,
            };
        }
        let mut dump = tokio::io::BufReader::new(dump).lines();
        while let Some(statement) = next_statement(&mut dump).await? {
            sqlx::raw_sql(&statement).execute(&mut *tx).await?;
        }
        tx.commit().await?;
        Ok(())
    });
    if let Err(e) = loaded {
        if let Db::MySql(pool) = db {
            let _ = sqlx::query("DROP TABLE IF EXISTS users, memos, sessions")
                .execute(pool)
                .await;
        }
        return Err(format!("loading the initial data: {e}").into());
    }
    println!("loaded the initial data in {:?}", start.elapsed());
    Ok(())
}

/// The next statement of an SQL file, where each ends with ";" at the end of a line; None at its end.
async fn next_statement<R: AsyncBufRead + Unpin>(
    lines: &mut Lines<R>,
) -> std::io::Result<Option<String>> {
    let mut statement = String::new();
    while let Some(line) = lines.next_line().await? {
        statement.push_str(&line);
        statement.push('\n');
        if line.trim_end().ends_with(';') {
            if !is_blank_sql(&statement) {
                return Ok(Some(statement));
            }
            statement.clear();
        }
    }
    Ok(Some(statement).filter(|s| !is_blank_sql(s)))
}

/// Whether s holds nothing but whitespace and "--" comments.
fn is_blank_sql(s: &str) -> bool {
    s.lines()
        .map(str::trim)
        .all(|l| l.is_empty() || l.starts_with("--"))
}

fn templates(dir: &Path) -> Environment<'static> {
    let mut env = Environment::new();
    env.set_loader(minijinja::path_loader(dir));
    env.set_keep_trailing_newline(true); // pages end with "</html>\n", as the Go app's do
    // Escape every {{ ... }} as Go's html/template does, so that the apps send the same bytes.
    env.set_formatter(|out, state, value| match value.as_str() {
        Some(s) if !value.is_safe() => Ok(out.write_str(&go_escape(s))?),
        _ => minijinja::escape_formatter(out, state, value),
    });
    env
}

/// Escapes text for HTML as Go's html/template does: &#34; and &#39; for quotes, &#43; for "+", NUL shown as
/// U+FFFD.
fn go_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&#34;"),
            '\'' => out.push_str("&#39;"),
            '+' => out.push_str("&#43;"),
            '\0' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

/// Renders a page; every page has the header, which shows who is signed in. A page shown to a signed-in session is
/// for that browser only: Cache-Control: private.
async fn render(
    app: &App,
    sess: Option<&Session>,
    status: StatusCode,
    name: &str,
    page: Value,
) -> Result<Response> {
    let viewer =
        sess.map(|s| context! { username => &s.username.0, csrf_token => &s.csrf_token.0 });
    let html = app
        .templates
        .get_template(name)?
        .render(context! { viewer, ..page })?;
    Ok(private(sess, (status, Html(html)).into_response()))
}

/// Marks a response to a signed-in session Cache-Control: private.
fn private(sess: Option<&Session>, mut response: Response) -> Response {
    if sess.is_some() || response.headers().contains_key(header::SET_COOKIE) {
        response
            .headers_mut()
            .insert(header::CACHE_CONTROL, HeaderValue::from_static("private"));
    }
    response
}

/// An error page, titled with the status's name ("Not Found"), with the header of sess.
async fn render_error(
    app: &App,
    sess: Option<&Session>,
    status: StatusCode,
    message: &str,
) -> Result<Response> {
    let page = context! { title => status.canonical_reason(), message };
    render(app, sess, status, "error.html", page).await
}

async fn not_found(State(app): AppState, headers: HeaderMap) -> Result<Response> {
    let sess = session(&app, &headers).await?;
    render_error(
        &app,
        sess.as_ref(),
        StatusCode::NOT_FOUND,
        "There is no such page.",
    )
    .await
}

// Sessions.

/// The request's session token, from its cookie.
fn session_token(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == SESSION_COOKIE)
        .map(|(_, value)| value.trim_matches('"').to_string())
}

/// The request's session, or None if it is signed out (a cookie naming no session counts as no cookie).
async fn session(app: &App, headers: &HeaderMap) -> Result<Option<Session>> {
    let Some(token) = session_token(headers) else {
        return Ok(None);
    };
    Ok(with_db!(&app.db, |pool| {
        sqlx::query_as(
            "SELECT s.id, s.user_id, s.csrf_token, u.username FROM sessions s \
             JOIN users u ON u.id = s.user_id WHERE s.id = ?",
        )
        .bind(token)
        .fetch_optional(pool)
        .await?
    }))
}

/// Ends the session the request came with, if any, and starts a new one signed in to the user; returns the
/// Set-Cookie header that sends it.
async fn sign_in(
    app: &App,
    headers: &HeaderMap,
    user_id: i64,
) -> Result<[(header::HeaderName, String); 1]> {
    if let Some(token) = session_token(headers) {
        with_db!(&app.db, |pool| {
            sqlx::query("DELETE FROM sessions WHERE id = ?")
                .bind(token)
                .execute(pool)
                .await?;
        });
    }
    let id = random_token();
    with_db!(&app.db, |pool| {
        sqlx::query(
            "INSERT INTO sessions (id, user_id, csrf_token, created_at) VALUES (?, ?, ?, ?)",
        )
        .bind(&id)
        .bind(user_id)
        .bind(random_token())
        .bind(now())
        .execute(pool)
        .await?;
    });
    Ok([(
        header::SET_COOKIE,
        format!("{SESSION_COOKIE}={id}; Path=/; HttpOnly; SameSite=Lax"),
    )])
}

/// Whether the form carries the session's CSRF token.
fn valid_csrf(body: &[u8], sess: &Session) -> bool {
    let token = form_value(body, "csrf_token").unwrap_or_default();
    token.as_bytes().ct_eq(sess.csrf_token.0.as_bytes()).into()
}

// Memo lists.

async fn get_index(State(app): AppState, headers: HeaderMap) -> Result<Response> {
    render_list(&app, &headers, 0, false).await
}

async fn get_recent(
    State(app): AppState,
    headers: HeaderMap,
    UrlPath(s): UrlPath<String>,
) -> Result<Response> {
    let page_number =
        s == "0" || (!s.starts_with('0') && !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()));
    match s.parse::<i64>() {
        Ok(n) if page_number && n < i64::MAX / PAGE_SIZE => {
            render_list(&app, &headers, n, true).await
        }
        _ => not_found(State(app), headers).await,
    }
}

/// Page n of the public memos, newest first: / is page 0, and the only page that is there even without a memo on
/// it (/recent/N, recent, is 404 when empty, /recent/0 too).
async fn render_list(app: &App, headers: &HeaderMap, n: i64, recent: bool) -> Result<Response> {
    let sess = session(app, headers).await?;
    // The count and the list come from one transaction, so that a memo posted in between cannot make them
    // disagree.
    let (total, items): (i64, Vec<MemoItem>) = with_db!(&app.db, |pool| {
        let mut tx = pool.begin().await?;
        let total: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM memos WHERE is_private = 0")
            .fetch_one(&mut *tx)
            .await?;
        let memos: Vec<Memo> = sqlx::query_as(
            "SELECT id, user_id, content, is_private, created_at FROM memos WHERE is_private = 0 \
             ORDER BY id DESC LIMIT ? OFFSET ?",
        )
        .bind(PAGE_SIZE)
        .bind(n * PAGE_SIZE)
        .fetch_all(&mut *tx)
        .await?;
        let mut items = Vec::with_capacity(memos.len());
        for m in memos {
            let author: Text = sqlx::query_scalar("SELECT username FROM users WHERE id = ?")
                .bind(m.user_id)
                .fetch_one(&mut *tx)
                .await?;
            items.push(memo_item(m, author.0));
        }
        tx.rollback().await?; // it only read
        (total, items)
    });
    if recent && items.is_empty() {
        return render_error(
            app,
            sess.as_ref(),
            StatusCode::NOT_FOUND,
            "There is no such page.",
        )
        .await;
    }
    let title = if n > 0 {
        Some(format!("Public memos, page {n}"))
    } else {
        None
    };
    let more = if total > (n + 1) * PAGE_SIZE {
        Some(format!("/recent/{}", n + 1))
    } else {
        None
    };
    let page = context! { title, total, memos => items, more };
    render(app, sess.as_ref(), StatusCode::OK, "index.html", page).await
}

// A memo.

async fn get_memo(
    State(app): AppState,
    headers: HeaderMap,
    UrlPath(s): UrlPath<String>,
) -> Result<Response> {
    let sess = session(&app, &headers).await?;
    let sess = sess.as_ref();
    let id = s.parse::<i64>().ok().filter(|_| {
        s.starts_with(|c: char| ('1'..='9').contains(&c)) && s.bytes().all(|b| b.is_ascii_digit())
    });
    let Some(id) = id else {
        return render_error(&app, sess, StatusCode::NOT_FOUND, "There is no such memo.").await;
    };
    let memo: Option<Memo> = with_db!(&app.db, |pool| {
        sqlx::query_as(
            "SELECT id, user_id, content, is_private, created_at FROM memos WHERE id = ?",
        )
        .bind(id)
        .fetch_optional(pool)
        .await?
    });
    let is_author = |m: &Memo| sess.is_some_and(|s| s.user_id == m.user_id);
    // To anyone but its author, a private memo does not exist.
    let Some(memo) = memo.filter(|m| m.is_private == 0 || is_author(m)) else {
        return render_error(&app, sess, StatusCode::NOT_FOUND, "There is no such memo.").await;
    };
    let author: Text = with_db!(&app.db, |pool| {
        sqlx::query_scalar("SELECT username FROM users WHERE id = ?")
            .bind(memo.user_id)
            .fetch_one(pool)
            .await?
    });
    let content = markdown(&memo.content.0);

    // The older and the newer memo of the author that the viewer may see.
    let memos: Vec<Memo> = with_db!(&app.db, |pool| {
        sqlx::query_as("SELECT id, user_id, content, is_private, created_at FROM memos WHERE user_id = ? ORDER BY id")
            .bind(memo.user_id)
            .fetch_all(pool)
            .await?
    });
    let (mut older, mut newer) = (0, 0);
    for m in &memos {
        if m.is_private != 0 && !is_author(m) {
            continue;
        }
        if m.id < memo.id {
            older = m.id;
        } else if m.id > memo.id && newer == 0 {
            newer = m.id;
        }
    }

    let item = memo_item(memo, author.0);
    let page = context! {
        title => &item.title, author => &item.author, memo => item, content => Value::from_safe_string(content),
        older, newer,
    };
    render(&app, sess, StatusCode::OK, "memo.html", page).await
}

/// A memo's content as HTML: CommonMark without raw HTML (any HTML in a memo is escaped and shown as text).
fn markdown(content: &str) -> String {
    let events = Parser::new(content).map(|event| match event {
        Event::Html(html) | Event::InlineHtml(html) => Event::Text(html),
        event => event,
    });
    let mut out = String::new();
    pulldown_cmark::html::push_html(&mut out, events);
    out
}

// The user's own page, and writing.

async fn get_mypage(State(app): AppState, headers: HeaderMap) -> Result<Response> {
    let Some(sess) = session(&app, &headers).await? else {
        return Ok(Redirect::to("/signin").into_response());
    };
    let memos: Vec<Memo> = with_db!(&app.db, |pool| {
        sqlx::query_as(
            "SELECT id, user_id, content, is_private, created_at FROM memos WHERE user_id = ? ORDER BY id DESC",
        )
        .bind(sess.user_id)
        .fetch_all(pool)
        .await?
    });
    let items: Vec<MemoItem> = memos
        .into_iter()
        .map(|m| memo_item(m, sess.username.0.clone()))
        .collect();
    let page = context! { title => "My page", memos => items };
    render(&app, Some(&sess), StatusCode::OK, "mypage.html", page).await
}

async fn post_memo(State(app): AppState, headers: HeaderMap, body: Bytes) -> Result<Response> {
    let Some(sess) = session(&app, &headers).await? else {
        return render_error(
            &app,
            None,
            StatusCode::FORBIDDEN,
            "Sign in to write a memo.",
        )
        .await;
    };
    if !valid_csrf(&body, &sess) {
        let message = "The form has expired: reload the page and try again.";
        return render_error(&app, Some(&sess), StatusCode::BAD_REQUEST, message).await;
    }
    let content = form_value(&body, "content");
    let Some(content) = content.filter(|c| valid_text(c, 1, MAX_CONTENT) && !title(c).is_empty())
    else {
        let message = format!(
            "A memo is 1 to {MAX_CONTENT} characters long, and its first line is its title."
        );
        return render_error(&app, Some(&sess), StatusCode::BAD_REQUEST, &message).await;
    };
    let is_private = i64::from(form_value(&body, "is_private").as_deref() == Some("1"));
    let sql = "INSERT INTO memos (user_id, content, is_private, created_at) VALUES (?, ?, ?, ?)";
    let id = match &app.db {
        Db::Sqlite(pool) => {
            let q = sqlx::query(sql)
                .bind(sess.user_id)
                .bind(content)
                .bind(is_private)
                .bind(now());
            q.execute(pool).await?.last_insert_rowid()
        }
        Db::MySql(pool) => {
            let q = sqlx::query(sql)
                .bind(sess.user_id)
                .bind(content)
                .bind(is_private)
                .bind(now());
            q.execute(pool).await?.last_insert_id() as i64
        }
    };
    Ok(private(
        Some(&sess),
        Redirect::to(&format!("/memos/{id}")).into_response(),
    ))
}

// Signing in and out.

async fn get_signin(State(app): AppState, headers: HeaderMap) -> Result<Response> {
    let sess = session(&app, &headers).await?;
    render(
        &app,
        sess.as_ref(),
        StatusCode::OK,
        "signin.html",
        context! { title => "Sign in" },
    )
    .await
}

async fn post_signin(State(app): AppState, headers: HeaderMap, body: Bytes) -> Result<Response> {
    let sess = session(&app, &headers).await?;
    let username = form_value(&body, "username").unwrap_or_default();
    let password = form_value(&body, "password").unwrap_or_default();
    let user: Option<User> = with_db!(&app.db, |pool| {
        sqlx::query_as("SELECT id, username, salt, password_hash FROM users WHERE username = ?")
            .bind(&username)
            .fetch_optional(pool)
            .await?
    });
    let Some(user) = user.filter(|u| hash_password(&u.salt.0, &password) == u.password_hash.0)
    else {
        let page = context! { title => "Sign in", message => "Wrong name or password.", username };
        return render(
            &app,
            sess.as_ref(),
            StatusCode::UNAUTHORIZED,
            "signin.html",
            page,
        )
        .await;
    };
    let cookie = sign_in(&app, &headers, user.id).await?;
    Ok(private(
        sess.as_ref(),
        (cookie, Redirect::to("/mypage")).into_response(),
    ))
}

async fn get_signup(State(app): AppState, headers: HeaderMap) -> Result<Response> {
    let sess = session(&app, &headers).await?;
    render(
        &app,
        sess.as_ref(),
        StatusCode::OK,
        "signup.html",
        context! { title => "Sign up" },
    )
    .await
}

async fn post_signup(State(app): AppState, headers: HeaderMap, body: Bytes) -> Result<Response> {
    let sess = session(&app, &headers).await?;
    let sess = sess.as_ref();
    let username = form_value(&body, "username").unwrap_or_default();
    let password = form_value(&body, "password");
    let valid_name = (3..=24).contains(&username.len())
        && username
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    let Some(password) =
        password.filter(|p| valid_name && valid_text(p, MIN_PASSWORD, MAX_PASSWORD))
    else {
        let message = format!(
            "A name is 3 to 24 characters of a-z, 0-9 and _; a password is {MIN_PASSWORD} to {MAX_PASSWORD} \
             characters long."
        );
        let page = context! { title => "Sign up", message, username };
        return render(&app, sess, StatusCode::BAD_REQUEST, "signup.html", page).await;
    };
    let taken_page =
        context! { title => "Sign up", message => "This name is taken.", username => &username };
    // Look first: on MariaDB, an insert refused by the unique name still uses up an id. The unique name has the
    // last word when two people sign up with one name at once.
    let taken: i64 = with_db!(&app.db, |pool| {
        sqlx::query_scalar("SELECT COUNT(*) FROM users WHERE username = ?")
            .bind(&username)
            .fetch_one(pool)
            .await?
    });
    if taken > 0 {
        return render(&app, sess, StatusCode::CONFLICT, "signup.html", taken_page).await;
    }
    let salt = hex::encode(rand::random::<[u8; 8]>());
    let sql = "INSERT INTO users (username, salt, password_hash, created_at) VALUES (?, ?, ?, ?)";
    let hash = hash_password(&salt, &password);
    let inserted = match &app.db {
        Db::Sqlite(pool) => {
            let q = sqlx::query(sql)
                .bind(&username)
                .bind(&salt)
                .bind(&hash)
                .bind(now());
            q.execute(pool).await.map(|r| r.last_insert_rowid())
        }
        Db::MySql(pool) => {
            let q = sqlx::query(sql)
                .bind(&username)
                .bind(&salt)
                .bind(&hash)
                .bind(now());
            q.execute(pool).await.map(|r| r.last_insert_id() as i64)
        }
    };
    let id = match inserted {
        Err(sqlx::Error::Database(e)) if e.is_unique_violation() => {
            return render(&app, sess, StatusCode::CONFLICT, "signup.html", taken_page).await;
        }
        result => result?,
    };
    let cookie = sign_in(&app, &headers, id).await?;
    Ok(private(
        sess,
        (cookie, Redirect::to("/mypage")).into_response(),
    ))
}

async fn post_signout(State(app): AppState, headers: HeaderMap, body: Bytes) -> Result<Response> {
    let Some(sess) = session(&app, &headers).await? else {
        return Ok(Redirect::to("/").into_response());
    };
    if !valid_csrf(&body, &sess) {
        let message = "The form has expired: reload the page and try again.";
        return render_error(&app, Some(&sess), StatusCode::BAD_REQUEST, message).await;
    }
    with_db!(&app.db, |pool| {
        sqlx::query("DELETE FROM sessions WHERE id = ?")
            .bind(&sess.id.0)
            .execute(pool)
            .await?;
    });
    let cookie = [(
        header::SET_COOKIE,
        format!("{SESSION_COOKIE}=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax"),
    )];
    Ok(private(
        Some(&sess),
        (cookie, Redirect::to("/")).into_response(),
    ))
}

// The rest.

/// Restores the initial data by deleting everything added since.
async fn post_initialize(State(app): AppState) -> Result<Response> {
    let mut statements = vec![
        format!("DELETE FROM memos WHERE id > {INITIAL_MEMOS}"),
        format!("DELETE FROM users WHERE id > {INITIAL_USERS}"),
        "DELETE FROM sessions".to_string(),
    ];
    if let Db::MySql(_) = app.db {
        statements.push(format!(
            "ALTER TABLE memos AUTO_INCREMENT = {}",
            INITIAL_MEMOS + 1
        ));
        statements.push(format!(
            "ALTER TABLE users AUTO_INCREMENT = {}",
            INITIAL_USERS + 1
        ));
    }
    for s in &statements {
        with_db!(&app.db, |pool| {
            sqlx::query(s).execute(pool).await?;
        });
    }
    Ok((
        [(header::CONTENT_TYPE, "application/json")],
        r#"{"language":"rust"}"#,
    )
        .into_response())
}

// Helpers.

/// A memo's title: the first line of its content without the '#' characters and spaces at its start and the
/// spaces and tabs at its end.
fn title(content: &str) -> &str {
    let line = content.split('\n').next().unwrap_or("");
    line.trim_start_matches(['#', ' '])
        .trim_end_matches([' ', '\t'])
}

fn memo_item(m: Memo, author: String) -> MemoItem {
    MemoItem {
        id: m.id,
        title: title(&m.content.0).to_string(),
        author,
        created_at: m.created_at.format(TIME_FORMAT).to_string(),
        is_private: m.is_private != 0,
    }
}

/// What the users table stores: the SHA-256 of salt + password, in lowercase hex.
fn hash_password(salt: &str, password: &str) -> String {
    hex::encode(Sha256::digest(format!("{salt}{password}")))
}

/// A session id or a CSRF token: 32 random hex digits.
fn random_token() -> String {
    hex::encode(rand::random::<[u8; 16]>())
}

/// The first value of the URL-encoded form field, "" if it is absent, or None if it is not valid UTF-8 (axum's
/// Form would replace such bytes with U+FFFD; they must get a 400).
fn form_value(body: &[u8], name: &str) -> Option<String> {
    let decode = |s: &[u8]| -> Vec<u8> {
        let spaced: Vec<u8> = s
            .iter()
            .map(|&b| if b == b'+' { b' ' } else { b })
            .collect();
        percent_decode(&spaced).collect()
    };
    for pair in body.split(|&b| b == b'&') {
        let (key, value) = match pair.iter().position(|&b| b == b'=') {
            Some(i) => (&pair[..i], &pair[i + 1..]),
            None => (pair, &[][..]),
        };
        if decode(key) == name.as_bytes() {
            return String::from_utf8(decode(value)).ok();
        }
    }
    Some(String::new())
}

/// Whether s is lo to hi characters long.
fn valid_text(s: &str, lo: usize, hi: usize) -> bool {
    (lo..=hi).contains(&s.chars().count())
}

/// The current UTC time, in whole seconds.
fn now() -> String {
    Utc::now().format(TIME_FORMAT).to_string()
}
