//! The Rust reference app of the tunecon problem "bank": the login page of an online bank that locks users and bans
//! addresses after too many failed attempts. It is slow on purpose, the way real apps are slow, and it is correct:
//! keep it correct while you make it fast. The contract it keeps is in ../../MANUAL.md; it behaves like the Go app
//! in ../go.
//!
//! Build and run it from this directory (`tunecon serve bank --lang rust` does both):
//!
//!     cargo build --release && target/release/tunecon-bank

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{ConnectInfo, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use chrono::{NaiveDateTime, Utc};
use futures_util::TryStreamExt;
use minijinja::{Environment, Value, context};
use percent_encoding::percent_decode;
use serde::Serialize;
use sha2::{Digest, Sha256};
use sqlx::Row;
use sqlx::mysql::{MySqlConnectOptions, MySqlPool};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqliteSynchronous};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, Lines};
use tower_http::services::ServeDir;

/// The size of the initial login log: POST /initialize deletes every row added after it.
const INITIAL_LOG_ROWS: i64 = 400000;

// The rules: a user is locked after LOCK_THRESHOLD failed attempts since its last successful login, an address is
// banned after BAN_THRESHOLD failed attempts from it since the last successful login from it.
const LOCK_THRESHOLD: i64 = 3;
const BAN_THRESHOLD: i64 = 10;

const TIME_FORMAT: &str = "%Y-%m-%d %H:%M:%S"; // every time, in UTC
const SESSION_COOKIE: &str = "bank_session";

/// The message the login page shows once, by reason.
fn notice_text(reason: &str) -> &'static str {
    match reason {
        "wrong" => "Wrong login or password.",
        "locked" => "This account is locked after too many failed attempts.",
        "banned" => "Too many failed attempts from your address: it is banned.",
        "login-required" => "Please log in first.",
        _ => "",
    }
}

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
    login: Text,
    password_hash: Text,
    salt: Text,
}

#[derive(sqlx::FromRow)]
struct Session {
    id: Text,
    user_id: Option<i64>,
    login_log_id: Option<i64>,
    notice: Option<Text>,
}

/// A successful login, as /mypage shows it.
#[derive(sqlx::FromRow)]
struct LoginRecord {
    created_at: NaiveDateTime,
    ip: Text,
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
    let root = PathBuf::from(getenv("BANK_ROOT", ".."));
    let addr = getenv("BANK_ADDR", "127.0.0.1:8080");
    let initial_sql = std::env::var("BANK_INITIAL_SQL")
        .ok()
        .filter(|s| !s.is_empty())
        .map_or_else(|| root.join("data").join("initial.sql"), PathBuf::from);

    let db = open_db(&std::env::var("BANK_DB").unwrap_or_default(), &root).await?;
    load_initial_data(&db, &root, &initial_sql).await?;
    let templates = templates(&root.join("rust").join("templates"));
    let app = Arc::new(App { db, templates });

    let router = Router::new()
        .route("/", get(get_index))
        .route("/login", post(post_login))
        .route("/mypage", get(get_mypage))
        .route("/report", get(get_report))
        .route("/initialize", post(post_initialize))
        .nest_service("/static", ServeDir::new(root.join("public")))
        .fallback(not_found)
        .method_not_allowed_fallback(not_found) // a path that exists with another method: 404 too, as in the Go app
        .with_state(app);

    let listener = tokio::net::TcpListener::bind(&addr).await?;
    println!("listening on http://{}", listener.local_addr()?);
    axum::serve(
        listener,
        router.into_make_service_with_connect_info::<SocketAddr>(),
    )
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
        let options = MySqlConnectOptions::from_str(dsn).map_err(|e| format!("BANK_DB: {e}"))?;
        return Ok(Db::MySql(MySqlPool::connect_with(options).await?));
    }
    let Some(path) = dsn
        .strip_prefix("sqlite:")
        .or(if dsn.is_empty() { Some("") } else { None })
    else {
        return Err(format!(
            "BANK_DB {dsn:?}: want empty, sqlite:PATH or mysql://user:pass@host:port/dbname"
        )
        .into());
    };
    let path = if path.is_empty() {
        root.join("data").join("bank-rust.db")
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
                "the initial data {} does not exist: generate it with `tunecon serve bank`, which writes it and then \
                 starts this app (or set BANK_INITIAL_SQL to where it is)",
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
            let _ = sqlx::query("DROP TABLE IF EXISTS users, login_log, sessions")
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

async fn render(app: &App, status: StatusCode, name: &str, page: Value) -> Result<Response> {
    let html = app.templates.get_template(name)?.render(page)?;
    Ok((status, Html(html)).into_response())
}

async fn not_found(State(app): AppState) -> Result<Response> {
    let page = context! { title => "Not found", message => "There is no such page." };
    render(&app, StatusCode::NOT_FOUND, "error.html", page).await
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

/// The request's session, or None if it has none (or one the database does not know).
async fn session(app: &App, headers: &HeaderMap) -> Result<Option<Session>> {
    let Some(token) = session_token(headers) else {
        return Ok(None);
    };
    Ok(with_db!(&app.db, |pool| {
        sqlx::query_as("SELECT id, user_id, login_log_id, notice FROM sessions WHERE id = ?")
            .bind(token)
            .fetch_optional(pool)
            .await?
    }))
}

/// Stores a new session and returns the Set-Cookie header that sends it. user_id and login_log_id are None for a
/// session nobody is logged in to, notice is None when there is nothing to show.
async fn new_session(
    app: &App,
    user_id: Option<i64>,
    login_log_id: Option<i64>,
    notice: Option<&str>,
) -> Result<[(header::HeaderName, String); 1]> {
    let id = hex::encode(rand::random::<[u8; 32]>());
    with_db!(&app.db, |pool| {
        sqlx::query("INSERT INTO sessions (id, user_id, login_log_id, notice, created_at) VALUES (?, ?, ?, ?, ?)")
            .bind(&id)
            .bind(user_id)
            .bind(login_log_id)
            .bind(notice)
            .bind(now())
            .execute(pool)
            .await?;
    });
    Ok([(
        header::SET_COOKIE,
        format!("{SESSION_COOKIE}={id}; Path=/; HttpOnly; SameSite=Lax"),
    )])
}

// Handlers.

async fn get_index(State(app): AppState, headers: HeaderMap) -> Result<Response> {
    let sess = session(&app, &headers).await?;
    let mut page = context! { title => "Log in" };
    if let Some(Session {
        id,
        notice: Some(notice),
        ..
    }) = sess
    {
        let notice = notice.0;
        page = context! { notice_text => notice_text(&notice), notice, ..page };
        // Shown once.
        with_db!(&app.db, |pool| {
            sqlx::query("UPDATE sessions SET notice = NULL WHERE id = ?")
                .bind(id.0)
                .execute(pool)
                .await?;
        });
    }
    let page = render(&app, StatusCode::OK, "index.html", page).await?;
    Ok(([(header::CACHE_CONTROL, "private")], page).into_response())
}

async fn post_login(
    State(app): AppState,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response> {
    let login = form_value(&body, "login");
    let password = form_value(&body, "password");
    let ip = client_ip(&headers, peer);

    let user: Option<User> = with_db!(&app.db, |pool| {
        sqlx::query_as("SELECT id, login, password_hash, salt FROM users WHERE login = ?")
            .bind(&login)
            .fetch_optional(pool)
            .await?
    });

    // The checks, in order: the address, the user, the password.
    let mut reason = None;
    let ip_failures: i64 = with_db!(&app.db, |pool| {
        sqlx::query_scalar(
            "SELECT COUNT(*) FROM login_log WHERE ip = ? AND \
             id > IFNULL((SELECT MAX(id) FROM login_log WHERE ip = ? AND succeeded = 1), 0)",
        )
        .bind(&ip)
        .bind(&ip)
        .fetch_one(pool)
        .await?
    });
    if ip_failures >= BAN_THRESHOLD {
        reason = Some("banned");
    } else if let Some(user) = &user {
        let user_failures: i64 = with_db!(&app.db, |pool| {
            sqlx::query_scalar(
                "SELECT COUNT(*) FROM login_log WHERE user_id = ? AND \
                 id > IFNULL((SELECT MAX(id) FROM login_log WHERE user_id = ? AND succeeded = 1), 0)",
            )
            .bind(user.id)
            .bind(user.id)
            .fetch_one(pool)
            .await?
        });
        if user_failures >= LOCK_THRESHOLD {
            reason = Some("locked");
        }
    }
    let wrong_password = |u: &User| hash_password(&password, &u.salt.0) != u.password_hash.0;
    if reason.is_none() && user.as_ref().is_none_or(wrong_password) {
        reason = Some("wrong");
    }

    // Every attempt goes into the log.
    let user_id = user.as_ref().map(|u| u.id);
    let succeeded = if reason.is_none() { 1 } else { 0 };
    let sql =
        "INSERT INTO login_log (created_at, user_id, login, ip, succeeded) VALUES (?, ?, ?, ?, ?)";
    let log_id = match &app.db {
        Db::Sqlite(pool) => {
            let q = sqlx::query(sql)
                .bind(now())
                .bind(user_id)
                .bind(&login)
                .bind(&ip)
                .bind(succeeded);
            q.execute(pool).await?.last_insert_rowid()
        }
        Db::MySql(pool) => {
            let q = sqlx::query(sql)
                .bind(now())
                .bind(user_id)
                .bind(&login)
                .bind(&ip)
                .bind(succeeded);
            q.execute(pool).await?.last_insert_id() as i64
        }
    };

    // The attempt ends the session it came with and starts a new one.
    if let Some(token) = session_token(&headers) {
        with_db!(&app.db, |pool| {
            sqlx::query("DELETE FROM sessions WHERE id = ?")
                .bind(token)
                .execute(pool)
                .await?;
        });
    }
    if reason.is_some() {
        let cookie = new_session(&app, None, None, reason).await?;
        return Ok((cookie, Redirect::to("/")).into_response());
    }
    let cookie = new_session(&app, user_id, Some(log_id), None).await?;
    Ok((cookie, Redirect::to("/mypage")).into_response())
}

async fn get_mypage(State(app): AppState, headers: HeaderMap) -> Result<Response> {
    let sess = session(&app, &headers).await?;
    let Some(Session {
        user_id: Some(user_id),
        login_log_id,
        ..
    }) = sess
    else {
        // Back to the login page, with a notice in the session (a new one if it has none).
        if let Some(sess) = sess {
            with_db!(&app.db, |pool| {
                sqlx::query("UPDATE sessions SET notice = ? WHERE id = ?")
                    .bind("login-required")
                    .bind(sess.id.0)
                    .execute(pool)
                    .await?;
            });
            return Ok(Redirect::to("/").into_response());
        }
        let cookie = new_session(&app, None, None, Some("login-required")).await?;
        return Ok((cookie, Redirect::to("/")).into_response());
    };
    let login_log_id = login_log_id.unwrap_or_default();
    let login: Text = with_db!(&app.db, |pool| {
        sqlx::query_scalar("SELECT login FROM users WHERE id = ?")
            .bind(user_id)
            .fetch_one(pool)
            .await?
    });
    let login = login.0;
    // The login before the one that started this session; on a first login ever, that one.
    let mut last: Option<LoginRecord> = with_db!(&app.db, |pool| {
        sqlx::query_as(
            "SELECT created_at, ip FROM login_log WHERE user_id = ? AND succeeded = 1 AND id < ? \
             ORDER BY id DESC LIMIT 1",
        )
        .bind(user_id)
        .bind(login_log_id)
        .fetch_optional(pool)
        .await?
    });
    if last.is_none() {
        last = with_db!(&app.db, |pool| {
            sqlx::query_as("SELECT created_at, ip FROM login_log WHERE id = ?")
                .bind(login_log_id)
                .fetch_optional(pool)
                .await?
        });
    }
    let last = last.ok_or("the session's login is not in the log")?;
    let page = context! {
        title => "My page",
        login,
        last_at => last.created_at.format(TIME_FORMAT).to_string(),
        last_ip => last.ip.0,
    };
    let page = render(&app, StatusCode::OK, "mypage.html", page).await?;
    Ok(([(header::CACHE_CONTROL, "private")], page).into_response())
}

#[derive(Serialize)]
struct Report {
    banned_ips: Vec<String>,
    locked_users: Vec<String>,
}

/// Lists every banned address and every locked user, from the whole log.
async fn get_report(State(app): AppState) -> Result<Response> {
    // Replay the whole log in id order, as the rules read it.
    let mut user_failures: HashMap<i64, i64> = HashMap::new();
    let mut ip_failures: HashMap<String, i64> = HashMap::new();
    with_db!(&app.db, |pool| {
        let mut rows =
            sqlx::query("SELECT user_id, ip, succeeded FROM login_log ORDER BY id").fetch(pool);
        while let Some(row) = rows.try_next().await? {
            let user_id: Option<i64> = row.try_get("user_id")?;
            let ip = row.try_get::<Text, _>("ip")?.0;
            let succeeded: i64 = row.try_get("succeeded")?;
            if succeeded != 0 {
                ip_failures.insert(ip, 0);
                if let Some(id) = user_id {
                    user_failures.insert(id, 0);
                }
                continue;
            }
            *ip_failures.entry(ip).or_default() += 1;
            if let Some(id) = user_id {
                *user_failures.entry(id).or_default() += 1;
            }
        }
    });
    let mut banned: Vec<String> = ip_failures
        .into_iter()
        .filter(|(_, n)| *n >= BAN_THRESHOLD)
        .map(|(ip, _)| ip)
        .collect();
    let mut locked = Vec::new();
    for (id, n) in user_failures {
        if n < LOCK_THRESHOLD {
            continue;
        }
        let login: Text = with_db!(&app.db, |pool| {
            sqlx::query_scalar("SELECT login FROM users WHERE id = ?")
                .bind(id)
                .fetch_one(pool)
                .await?
        });
        locked.push(login.0);
    }
    banned.sort();
    locked.sort();
    let body = serde_json::to_string(&Report {
        banned_ips: banned,
        locked_users: locked,
    })?;
    Ok(([(header::CONTENT_TYPE, "application/json")], body).into_response())
}

/// Restores the initial data by deleting everything added since.
async fn post_initialize(State(app): AppState) -> Result<Response> {
    let mut statements = vec![
        format!("DELETE FROM login_log WHERE id > {INITIAL_LOG_ROWS}"),
        "DELETE FROM sessions".into(),
    ];
    if let Db::MySql(_) = app.db {
        statements.push(format!(
            "ALTER TABLE login_log AUTO_INCREMENT = {}",
            INITIAL_LOG_ROWS + 1
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

/// The first address in X-Forwarded-For (the app is meant to sit behind a proxy), or the address of the
/// connection's other end when the header is absent or its first entry empty.
fn client_ip(headers: &HeaderMap, peer: SocketAddr) -> String {
    let forwarded = headers
        .get("x-forwarded-for")
        .map(|v| String::from_utf8_lossy(v.as_bytes()))
        .unwrap_or_default();
    let first = forwarded
        .split(',')
        .next()
        .unwrap_or("")
        .trim_matches([' ', '\t']);
    if first.is_empty() {
        peer.ip().to_string()
    } else {
        first.to_string()
    }
}

/// The first value of the URL-encoded form field, "" if it is absent.
fn form_value(body: &[u8], name: &str) -> String {
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
            return String::from_utf8_lossy(&decode(value)).into_owned();
        }
    }
    String::new()
}

/// What the users table stores: the SHA-256 of password + ":" + salt, in lowercase hex.
fn hash_password(password: &str, salt: &str) -> String {
    hex::encode(Sha256::digest(format!("{password}:{salt}")))
}

/// The current UTC time, in whole seconds.
fn now() -> String {
    Utc::now().format(TIME_FORMAT).to_string()
}
