//! The Rust reference app of the tunecon problem "dashboard", after the ISUCON5 final: a personal dashboard. People
//! sign up with a grade, sign in and subscribe on /modify to external services, each with its own parameters; the
//! dashboard page polls /data, which asks every service the user subscribes to and relays their answers. It is slow
//! on purpose, the way real apps are slow: /data calls the services one after another, on a new HTTP/1.1
//! connection each time, and caches nothing. It is also correct: keep it correct while you make it fast. The
//! contract it keeps is in ../../MANUAL.md; it behaves like the Go app in ../go.
//!
//! Build and run it from this directory (`tunecon serve dashboard --lang rust` does both, and starts the services):
//!
//!     cargo build --release && target/release/tunecon-dashboard

use std::collections::BTreeMap;
use std::error::Error as _;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Request, State};
use axum::handler::HandlerWithoutStateExt;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use chrono::Utc;
use minijinja::{Environment, Value, context};
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use serde::Serialize;
use sha2::{Digest, Sha512};
use sqlx::mysql::{MySqlConnectOptions, MySqlPool};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqliteSynchronous};
use subtle::ConstantTimeEq;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, Lines};
use tower_http::services::ServeDir;

/// The size of the initial data: POST /initialize deletes every user added after it.
const INITIAL_USERS: i64 = 10000;

const TIME_FORMAT: &str = "%Y-%m-%d %H:%M:%S"; // every time, in UTC
const SESSION_COOKIE: &str = "dashboard_session";
const SERVICE_TIMEOUT: Duration = Duration::from_secs(10); // for each call of a service

// The rules for what people type at sign-up, in characters.
const MAX_EMAIL: usize = 64;
const MIN_PASSWORD: usize = 8;
const MAX_PASSWORD: usize = 64;

/// The grades, from the least to the most.
const GRADES: [&str; 4] = ["micro", "small", "standard", "premium"];

/// The services each grade may subscribe to, in the manual's order, which is also the order /data calls them in.
fn allowed(grade: &str) -> &'static [&'static str] {
    match grade {
        "micro" => &["postal", "postal2", "surname"],
        "small" => &["postal", "postal2", "surname", "givenname"],
        "standard" => &["postal", "postal2", "surname", "givenname", "weather"],
        "premium" => &[
            "postal",
            "postal2",
            "surname",
            "givenname",
            "weather",
            "security",
            "attacked",
        ],
        _ => &[],
    }
}

/// The dashboard's refresh interval of each grade, in milliseconds (/user.js).
fn refresh_ms(grade: &str) -> i64 {
    match grade {
        "standard" => 20000,
        "premium" => 10000,
        _ => 30000,
    }
}

/// Each service's parameters, the form fields of /modify; None for a service that does not exist.
fn params(service: &str) -> Option<&'static [&'static str]> {
    match service {
        "postal" | "postal2" => Some(&["code"]),
        "surname" | "givenname" => Some(&["q"]),
        "weather" => Some(&["location"]),
        "security" => Some(&["req", "token"]),
        "attacked" => Some(&["token"]),
        _ => None,
    }
}

/// What each parameter may hold, as the pattern attribute of its input: always matched whole (valid_param).
fn param_pattern(name: &str) -> &'static str {
    match name {
        "code" => "[0-9]{7}",
        "q" => "[a-z]{1,8}",
        "location" => "L[0-9]{4}",
        "req" => "[a-z0-9]{1,16}",
        "token" => "[0-9a-f]{32}",
        _ => "",
    }
}

/// Whether v matches the whole of the parameter's pattern.
fn valid_param(name: &str, v: &[u8]) -> bool {
    let between = |lo: usize, hi: usize| (lo..=hi).contains(&v.len());
    match name {
        "code" => v.len() == 7 && v.iter().all(u8::is_ascii_digit),
        "q" => between(1, 8) && v.iter().all(u8::is_ascii_lowercase),
        "location" => v.len() == 5 && v[0] == b'L' && v[1..].iter().all(u8::is_ascii_digit),
        "req" => {
            between(1, 16)
                && v.iter()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        }
        "token" => {
            v.len() == 32
                && v.iter()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(b))
        }
        _ => false,
    }
}

/// A user's subscriptions, the JSON object of the column arg: service name -> parameter -> value. Sorted maps, so
/// that it is written with its keys in order, as the dump writes it.
type Subscriptions = BTreeMap<String, BTreeMap<String, String>>;

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

/// The signed-in user, as a session names it.
#[derive(sqlx::FromRow)]
struct UserRow {
    id: i64,
    email: Text,
    grade: Text,
}

#[derive(Serialize)]
struct User {
    id: i64,
    email: String,
    grade: String,
}

/// An input of a form of /modify.
#[derive(Serialize)]
struct Field {
    name: &'static str,
    value: String,
    pattern: &'static str,
}

/// The form of /modify for one service.
#[derive(Serialize)]
struct ServiceForm {
    service: &'static str,
    subscribed: bool,
    fields: Vec<Field>,
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

impl Db {
    fn is_mysql(&self) -> bool {
        matches!(self, Db::MySql(_))
    }

    /// The statement that begins a transaction. Every transaction here writes, and on SQLite one that read first
    /// could not take the write lock once another writer came in between (SQLITE_BUSY at once, whatever the busy
    /// timeout): BEGIN IMMEDIATE takes it at once.
    fn begin(&self) -> &'static str {
        match self {
            Db::Sqlite(_) => "BEGIN IMMEDIATE",
            Db::MySql(_) => "BEGIN",
        }
    }
}

struct App {
    db: Db,
    initial_sql: PathBuf,
    templates: Environment<'static>,
}

type AppState = State<Arc<App>>;

/// An error that ends a request with a 500: the response carries it as an extension, and the middleware `finish`
/// replaces the response with the error page, which needs the templates.
#[derive(Clone, Copy)]
struct ServerError;

struct AppError(Box<dyn std::error::Error + Send + Sync>);

impl<E: Into<Box<dyn std::error::Error + Send + Sync>>> From<E> for AppError {
    fn from(err: E) -> Self {
        AppError(err.into())
    }
}

impl IntoResponse for AppError {
    fn into_response(self) -> Response {
        eprintln!("error: {}", self.0);
        let mut response = StatusCode::INTERNAL_SERVER_ERROR.into_response();
        response.extensions_mut().insert(ServerError);
        response
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
    let root = PathBuf::from(getenv("DASHBOARD_ROOT", ".."));
    let addr = getenv("DASHBOARD_ADDR", "127.0.0.1:8080");
    let initial_sql = std::env::var("DASHBOARD_INITIAL_SQL")
        .ok()
        .filter(|s| !s.is_empty())
        .map_or_else(|| root.join("data").join("initial.sql"), PathBuf::from);

    let db = open_db(&std::env::var("DASHBOARD_DB").unwrap_or_default(), &root).await?;
    load_initial_data(&db, &root, &initial_sql).await?;
    store_endpoints_from_env(&db).await?;
    let templates = templates(&root.join("rust").join("templates"));
    let app = Arc::new(App {
        db,
        initial_sql,
        templates,
    });

    // The static files as the Go app serves them: a directory is not found rather than listed, what is not found
    // is Go's plain 404, and the headers are Go's (go_file_headers). Another method than GET or HEAD gets
    // ServeDir's 405 where Go answers its 404 page; no check asks.
    let files = ServeDir::new(root.join("public"))
        .append_index_html_on_directories(false)
        .not_found_service(static_not_found.into_service());
    let public = Router::new()
        .fallback_service(files)
        .layer(middleware::map_response(go_file_headers));
    let pages = Router::new()
        .route("/", get(get_index))
        .route("/signup", get(get_signup).post(post_signup))
        .route("/login", get(get_login).post(post_login))
        .route("/logout", post(post_logout))
        .route("/user.js", get(get_user_js))
        .route("/modify", get(get_modify).post(post_modify))
        .route("/data", get(get_data))
        .route("/initialize", post(post_initialize))
        .fallback(not_found)
        .method_not_allowed_fallback(not_found) // a path that exists with another method: 404 too, as in the Go app
        .with_state(app.clone());
    // `finish` wraps the pages from outside, where it sees the Allow header axum adds to that 404.
    let router = Router::new()
        .fallback_service(pages)
        .layer(middleware::from_fn_with_state(app, finish))
        .nest_service("/static", public);

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

// The database.

/// Opens the database named by dsn: "" or "sqlite:PATH" for SQLite, "mysql://user:pass@host:port/dbname" for
/// MariaDB or MySQL.
async fn open_db(dsn: &str, root: &Path) -> Result<Db, Box<dyn std::error::Error>> {
    if dsn.starts_with("mysql://") {
        // sqlx talks utf8mb4 and sets the session's time zone to UTC.
        let options =
            MySqlConnectOptions::from_str(dsn).map_err(|e| format!("DASHBOARD_DB: {e}"))?;
        return Ok(Db::MySql(MySqlPool::connect_with(options).await?));
    }
    let Some(path) = dsn
        .strip_prefix("sqlite:")
        .or(if dsn.is_empty() { Some("") } else { None })
    else {
        return Err(format!(
            "DASHBOARD_DB {dsn:?}: want empty, sqlite:PATH or mysql://user:pass@host:port/dbname"
        )
        .into());
    };
    let path = if path.is_empty() {
        root.join("data").join("dashboard-rust.db")
    } else {
        PathBuf::from(path)
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    // WAL lets readers run while someone writes; the busy timeout makes writers wait for each other. The pool is
    // sqlx's as it comes (10 connections at most, idle ones kept, statements cached on each), as database/sql's
    // is Go's: each language's usual pool, left as its developer would leave it.
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
                "the initial data {} does not exist: generate it with `tunecon serve dashboard`, which writes it \
                 and then starts this app (or set DASHBOARD_INITIAL_SQL to where it is)",
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
        let mut dump = tokio::io::BufReader::with_capacity(1 << 20, dump).lines();
        while let Some(statement) = next_statement(&mut dump).await? {
            sqlx::raw_sql(&statement).execute(&mut *tx).await?;
        }
        tx.commit().await?;
        Ok(())
    });
    if let Err(e) = loaded {
        if let Db::MySql(pool) = db {
            let _ = sqlx::query("DROP TABLE IF EXISTS users, subscriptions, sessions, endpoints")
                .execute(pool)
                .await;
        }
        return Err(format!("loading the initial data: {e}").into());
    }
    println!("loaded the initial data in {:?}", start.elapsed());
    Ok(())
}

/// Stores DASHBOARD_SERVICES_HTTP and DASHBOARD_SERVICES_HTTPS, when set: they say where the services are until a
/// POST /initialize says otherwise. One left unset keeps what the database has.
async fn store_endpoints_from_env(db: &Db) -> Result<(), Box<dyn std::error::Error>> {
    let mut http = std::env::var("DASHBOARD_SERVICES_HTTP").unwrap_or_default();
    let mut https = std::env::var("DASHBOARD_SERVICES_HTTPS").unwrap_or_default();
    if http.is_empty() && https.is_empty() {
        return Ok(());
    }
    let (old_http, old_https) = endpoints(db).await?;
    if http.is_empty() {
        http = old_http;
    }
    if https.is_empty() {
        https = old_https;
    }
    println!("the services: {http} and {https}");
    with_db!(db, |pool| {
        sqlx::query(STORE_ENDPOINTS)
            .bind(trimmed(&http))
            .bind(trimmed(&https))
            .execute(pool)
            .await?;
    });
    Ok(())
}

/// Where the services are: their HTTP and HTTPS base URLs, empty when no one said.
async fn endpoints(db: &Db) -> Result<(String, String), sqlx::Error> {
    let row: Option<(Text, Text)> = with_db!(db, |pool| {
        sqlx::query_as("SELECT http, https FROM endpoints WHERE id = 1")
            .fetch_optional(pool)
            .await?
    });
    Ok(row.map_or_else(Default::default, |(http, https)| (http.0, https.0)))
}

/// Stores the services' base URLs (bound with `trimmed`) in the database rather than in a variable, as the Go app
/// does: the Python app runs several processes, which must call the same services. REPLACE is understood by SQLite
/// and MariaDB alike.
const STORE_ENDPOINTS: &str = "REPLACE INTO endpoints (id, http, https) VALUES (1, ?, ?)";

/// A base URL without the slashes at its end.
fn trimmed(url: &str) -> String {
    url.trim_end_matches('/').to_string()
}

/// The next statement of an SQL file, where each ends with ";" at the end of a line, without its "--" comment
/// lines; None at its end.
async fn next_statement<R: AsyncBufRead + Unpin>(
    lines: &mut Lines<R>,
) -> std::io::Result<Option<String>> {
    let mut statement = String::new();
    while let Some(line) = lines.next_line().await? {
        if !line.trim_start_matches([' ', '\t']).starts_with("--") {
            statement.push_str(&line);
            statement.push('\n');
        }
        if line.trim_end().ends_with(';') {
            let s = statement.trim();
            if !s.is_empty() {
                return Ok(Some(s.to_string()));
            }
            statement.clear();
        }
    }
    let s = statement.trim();
    Ok(Some(s.to_string()).filter(|s| !s.is_empty()))
}

// Pages.

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

/// Renders a page; every page has the header, which shows who is signed in (user None: signed out).
fn render(
    app: &App,
    status: StatusCode,
    name: &str,
    user: Option<&User>,
    page: Value,
) -> Result<Response> {
    let html = app
        .templates
        .get_template(name)?
        .render(context! { user, ..page })?;
    Ok((status, Html(html)).into_response())
}

/// An error page, titled with its status, with the header of user.
fn render_error(
    app: &App,
    status: StatusCode,
    user: Option<&User>,
    message: &str,
) -> Result<Response> {
    let page = context! { title => status.as_u16().to_string(), message };
    render(app, status, "error.html", user, page)
}

fn json(status: StatusCode, body: String) -> Response {
    (status, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}

/// A JSON answer {"error": message}, with a newline as Go's encoder writes it.
fn json_error(status: StatusCode, message: &str) -> Response {
    let body = serde_json::json!({ "error": message });
    json(status, format!("{body}\n"))
}

/// A static file's headers as Go's file server sends them: a text type with its charset, and Last-Modified
/// without an ETag.
async fn go_file_headers(mut response: Response) -> Response {
    let headers = response.headers_mut();
    headers.remove(header::ETAG);
    let text = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .filter(|t| t.starts_with("text/") && !t.contains("charset"))
        .map(|t| format!("{t}; charset=utf-8"));
    if let Some(value) = text.and_then(|t| HeaderValue::try_from(t).ok()) {
        headers.insert(header::CONTENT_TYPE, value);
    }
    response
}

/// What Go's file server answers for a file it does not have.
async fn static_not_found() -> impl IntoResponse {
    (
        [(header::X_CONTENT_TYPE_OPTIONS, "nosniff")],
        "404 page not found\n",
    )
}

async fn not_found(State(app): AppState, headers: HeaderMap) -> Result<Response> {
    let user = current_user(&app, &headers).await?;
    render_error(
        &app,
        StatusCode::NOT_FOUND,
        user.as_ref(),
        "There is no such page.",
    )
}

/// What every answer of the app's own goes through. An answer to a request that carries a session cookie is for
/// that browser only: Cache-Control: private, whether it is signed in or not and even if it fails, as the Go app
/// marks it before it looks the session up. An error of the app's own becomes its error page, signed out: the
/// session may be what failed.
async fn finish(State(app): AppState, request: Request, next: Next) -> Response {
    let private = session_token(request.headers()).is_some()
        && !(request.method() == Method::POST && request.uri().path() == "/initialize");
    let mut response = next.run(request).await;
    if response.extensions().get::<ServerError>().is_some() {
        let page = context! { title => "500", message => "Something went wrong." };
        response = match render(
            &app,
            StatusCode::INTERNAL_SERVER_ERROR,
            "error.html",
            None,
            page,
        ) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("error: {}", e.0);
                (StatusCode::INTERNAL_SERVER_ERROR, "Internal Server Error\n").into_response()
            }
        };
    }
    // Go's server names no allowed methods: a path asked with another method is simply not found.
    response.headers_mut().remove(header::ALLOW);
    if private {
        response
            .headers_mut()
            .insert(header::CACHE_CONTROL, HeaderValue::from_static("private"));
    }
    response
}

// Sessions.

/// The request's session cookie, read as Go's net/http reads one: the first of that name whose value holds only
/// the bytes a cookie may (a pair of double quotes around it taken off).
fn session_token(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .flat_map(|v| v.as_bytes().split(|&b| b == b';'))
        .map(|pair| {
            let pair = pair.trim_ascii();
            match pair.iter().position(|&b| b == b'=') {
                Some(i) => (&pair[..i], &pair[i + 1..]),
                None => (pair, &[][..]), // a cookie without "=" has an empty value
            }
        })
        .filter(|(name, _)| *name == SESSION_COOKIE.as_bytes())
        .find_map(|(_, value)| {
            let value = match value {
                [b'"', inner @ .., b'"'] => inner,
                v => v,
            };
            let valid = |&b: &u8| (0x20..0x7f).contains(&b) && !matches!(b, b'"' | b';' | b'\\');
            value
                .iter()
                .all(valid)
                .then(|| String::from_utf8_lossy(value).into_owned())
        })
}

/// The request's signed-in user, or None when its cookie names no session (or it has none).
async fn current_user(app: &App, headers: &HeaderMap) -> Result<Option<User>> {
    let Some(token) = session_token(headers) else {
        return Ok(None);
    };
    let row: Option<UserRow> = with_db!(&app.db, |pool| {
        sqlx::query_as(
            "SELECT u.id, u.email, u.grade FROM sessions s JOIN users u ON u.id = s.user_id \
             WHERE s.token = ?",
        )
        .bind(token)
        .fetch_optional(pool)
        .await?
    });
    Ok(row.map(|r| User {
        id: r.id,
        email: r.email.0,
        grade: r.grade.0,
    }))
}

async fn get_signup(State(app): AppState, headers: HeaderMap) -> Result<Response> {
    let user = current_user(&app, &headers).await?;
    let page = context! { title => "Sign up", grades => GRADES, email => "", grade => "" };
    render(&app, StatusCode::OK, "signup.html", user.as_ref(), page)
}

async fn post_signup(State(app): AppState, headers: HeaderMap, body: Bytes) -> Result<Response> {
    let user = current_user(&app, &headers).await?;
    let user = user.as_ref();
    let form = Form::new(&headers, &body);
    let email = form.value("email");
    let password = form.value("password");
    let grade = String::from_utf8_lossy(form.value("grade")).into_owned();
    let shown_email = String::from_utf8_lossy(email).into_owned();
    let page = |message: &str| {
        context! { title => "Sign up", grades => GRADES, email => &shown_email, grade => &grade, message }
    };
    // An email that is not UTF-8 is refused too: MariaDB's utf8mb4 column could not store it.
    let valid_email = std::str::from_utf8(email)
        .ok()
        .filter(|e| e.matches('@').count() == 1 && e.chars().count() <= MAX_EMAIL);
    let Some(email) = valid_email.filter(|_| {
        (MIN_PASSWORD..=MAX_PASSWORD).contains(&rune_count(password))
            && GRADES.contains(&grade.as_str())
    }) else {
        let message = format!(
            "An email has one @ and at most {MAX_EMAIL} characters; a password is {MIN_PASSWORD} to \
             {MAX_PASSWORD} characters long; the grade is one of {}.",
            GRADES.join(", ")
        );
        return render(
            &app,
            StatusCode::BAD_REQUEST,
            "signup.html",
            user,
            page(&message),
        );
    };
    let taken = || {
        render(
            &app,
            StatusCode::CONFLICT,
            "signup.html",
            user,
            page("This email is taken."),
        )
    };
    // Look first: on MariaDB, an insert refused by the unique email still uses up an id. The unique email has the
    // last word when two people sign up with one email at once.
    let n: i64 = with_db!(&app.db, |pool| {
        sqlx::query_scalar("SELECT COUNT(*) FROM users WHERE email = ?")
            .bind(email)
            .fetch_one(pool)
            .await?
    });
    if n > 0 {
        return taken();
    }
    match insert_user(&app, email, password, &grade).await {
        Err(sqlx::Error::Database(e)) if e.is_unique_violation() => taken(),
        Err(e) => Err(e.into()),
        Ok(()) => Ok(Redirect::to("/login").into_response()),
    }
}

/// Adds a user, with a new salt, and the user's row of subscriptions, in one transaction.
async fn insert_user(app: &App, email: &str, password: &[u8], grade: &str) -> Result<(), sqlx::Error> {
    let salt = hex::encode(rand::random::<[u8; 8]>());
    let passhash = hash_password(&salt, password);
    let sql = "INSERT INTO users (email, salt, passhash, grade, created_at) VALUES (?, ?, ?, ?, ?)";
    with_db!(&app.db, |pool| {
        async {
            let mut tx = pool.begin_with(app.db.begin()).await?;
            let q = sqlx::query(sql)
                .bind(email)
                .bind(&salt)
                .bind(&passhash)
                .bind(grade)
                .bind(now());
            let id = q.execute(&mut *tx).await?.id();
            // Every user has a row of subscriptions, as in the initial data: none yet.
            sqlx::query("INSERT INTO subscriptions (user_id, arg) VALUES (?, ?)")
                .bind(id)
                .bind("{}")
                .execute(&mut *tx)
                .await?;
            tx.commit().await
        }
        .await
    })
}

/// The id an insert gave its row, from either database's answer.
trait LastInsertId {
    fn id(&self) -> i64;
}

impl LastInsertId for sqlx::sqlite::SqliteQueryResult {
    fn id(&self) -> i64 {
        self.last_insert_rowid()
    }
}

impl LastInsertId for sqlx::mysql::MySqlQueryResult {
    fn id(&self) -> i64 {
        self.last_insert_id() as i64
    }
}

async fn get_login(State(app): AppState, headers: HeaderMap) -> Result<Response> {
    let user = current_user(&app, &headers).await?;
    let page = context! { title => "Log in", email => "" };
    render(&app, StatusCode::OK, "login.html", user.as_ref(), page)
}

#[derive(sqlx::FromRow)]
struct Credentials {
    id: i64,
    salt: Text,
    passhash: Text,
}

async fn post_login(State(app): AppState, headers: HeaderMap, body: Bytes) -> Result<Response> {
    let user = current_user(&app, &headers).await?;
    let form = Form::new(&headers, &body);
    let email = form.value("email");
    let password = form.value("password");
    // An email that is not UTF-8 names no user: none could sign up with it.
    let row: Option<Credentials> = match std::str::from_utf8(email) {
        Ok(email) => with_db!(&app.db, |pool| {
            sqlx::query_as("SELECT id, salt, passhash FROM users WHERE email = ?")
                .bind(email)
                .fetch_optional(pool)
                .await?
        }),
        Err(_) => None,
    };
    let right_password = |c: &Credentials| -> bool {
        hash_password(&c.salt.0, password)
            .as_bytes()
            .ct_eq(c.passhash.0.as_bytes())
            .into()
    };
    let Some(row) = row.filter(right_password) else {
        let page = context! {
            title => "Log in", message => "Wrong email or password.", email => String::from_utf8_lossy(email),
        };
        return render(
            &app,
            StatusCode::FORBIDDEN,
            "login.html",
            user.as_ref(),
            page,
        );
    };
    // A new session replaces the browser's old one.
    if let Some(old) = session_token(&headers) {
        with_db!(&app.db, |pool| {
            sqlx::query("DELETE FROM sessions WHERE token = ?")
                .bind(old)
                .execute(pool)
                .await?;
        });
    }
    let token = hex::encode(rand::random::<[u8; 32]>());
    with_db!(&app.db, |pool| {
        sqlx::query("INSERT INTO sessions (token, user_id, created_at) VALUES (?, ?, ?)")
            .bind(&token)
            .bind(row.id)
            .bind(now())
            .execute(pool)
            .await?;
    });
    let cookie = format!("{SESSION_COOKIE}={token}; Path=/; HttpOnly; SameSite=Lax");
    let headers = [
        (header::SET_COOKIE, cookie),
        (header::CACHE_CONTROL, "private".to_string()),
    ];
    Ok((headers, Redirect::to("/")).into_response())
}

async fn post_logout(State(app): AppState, headers: HeaderMap) -> Result<Response> {
    let Some(token) = session_token(&headers) else {
        return Ok(Redirect::to("/login").into_response());
    };
    with_db!(&app.db, |pool| {
        sqlx::query("DELETE FROM sessions WHERE token = ?")
            .bind(token)
            .execute(pool)
            .await?;
    });
    let cookie = format!("{SESSION_COOKIE}=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax");
    Ok(([(header::SET_COOKIE, cookie)], Redirect::to("/login")).into_response())
}

// The dashboard.

async fn get_index(State(app): AppState, headers: HeaderMap) -> Result<Response> {
    let Some(user) = current_user(&app, &headers).await? else {
        return Ok(Redirect::to("/login").into_response());
    };
    render(
        &app,
        StatusCode::OK,
        "index.html",
        Some(&user),
        context! { title => "Dashboard" },
    )
}

async fn get_user_js(State(app): AppState, headers: HeaderMap) -> Result<Response> {
    let Some(user) = current_user(&app, &headers).await? else {
        return Ok((StatusCode::FORBIDDEN, "sign in first\n").into_response());
    };
    let script = app
        .templates
        .get_template("user.js")?
        .render(context! { refresh_ms => refresh_ms(&user.grade) })?;
    Ok(([(header::CONTENT_TYPE, "application/javascript")], script).into_response())
}

async fn get_modify(State(app): AppState, headers: HeaderMap) -> Result<Response> {
    let Some(user) = current_user(&app, &headers).await? else {
        return Ok(Redirect::to("/login").into_response());
    };
    let arg: Option<Text> = with_db!(&app.db, |pool| {
        sqlx::query_scalar("SELECT arg FROM subscriptions WHERE user_id = ?")
            .bind(user.id)
            .fetch_optional(pool)
            .await?
    });
    let subs = subscriptions(user.id, arg)?;
    let forms: Vec<ServiceForm> = allowed(&user.grade)
        .iter()
        .map(|&service| {
            let current = subs.get(service);
            let fields = params(service)
                .unwrap_or_default()
                .iter()
                .map(|&name| Field {
                    name,
                    value: current
                        .and_then(|p| p.get(name))
                        .cloned()
                        .unwrap_or_default(),
                    pattern: param_pattern(name),
                })
                .collect();
            ServiceForm {
                service,
                subscribed: current.is_some(),
                fields,
            }
        })
        .collect();
    let page = context! { title => "Services", forms };
    render(&app, StatusCode::OK, "modify.html", Some(&user), page)
}

async fn post_modify(State(app): AppState, headers: HeaderMap, body: Bytes) -> Result<Response> {
    let Some(user) = current_user(&app, &headers).await? else {
        return render_error(
            &app,
            StatusCode::FORBIDDEN,
            None,
            "Sign in to change your services.",
        );
    };
    let form = Form::new(&headers, &body);
    let service = String::from_utf8_lossy(form.value("service")).into_owned();
    let Some(names) = params(&service) else {
        return render_error(
            &app,
            StatusCode::BAD_REQUEST,
            Some(&user),
            "There is no such service.",
        );
    };
    if !allowed(&user.grade).contains(&service.as_str()) {
        let message = format!("The {} grade cannot subscribe to {service}.", user.grade);
        return render_error(&app, StatusCode::FORBIDDEN, Some(&user), &message);
    }
    let mut values = None; // None: a removal
    if form.value("remove") != b"1" {
        // Only the service's own fields: anything else the form carries is left out.
        let mut p = BTreeMap::new();
        for &name in names {
            let v = form.value(name);
            if !valid_param(name, v) {
                let message = format!("{service}: {name} {} is not valid.", go_quote(v));
                return render_error(&app, StatusCode::BAD_REQUEST, Some(&user), &message);
            }
            p.insert(name.to_string(), String::from_utf8_lossy(v).into_owned());
        }
        values = Some(p);
    }
    // Read, change and write the user's subscriptions in one transaction, so that two changes at once do not undo
    // each other. SQLite's transaction holds the write lock from BEGIN IMMEDIATE; MariaDB locks the row.
    let mut sql = "SELECT arg FROM subscriptions WHERE user_id = ?".to_string();
    if app.db.is_mysql() {
        sql.push_str(" FOR UPDATE");
    }
    with_db!(&app.db, |pool| {
        let mut tx = pool.begin_with(app.db.begin()).await?;
        let arg: Option<Text> = sqlx::query_scalar(&sql)
            .bind(user.id)
            .fetch_optional(&mut *tx)
            .await?;
        let mut subs = subscriptions(user.id, arg)?;
        match values {
            None => subs.remove(&service),
            Some(p) => subs.insert(service, p),
        };
        let arg = serde_json::to_string(&subs)?; // keys sorted, no spaces: as the dump writes it
        sqlx::query("REPLACE INTO subscriptions (user_id, arg) VALUES (?, ?)")
            .bind(user.id)
            .bind(arg)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
    });
    Ok(Redirect::to("/modify").into_response())
}

/// Asks every service the user subscribes to, one after another in the manual's order, and relays their answers.
async fn get_data(State(app): AppState, headers: HeaderMap) -> Result<Response> {
    let Some(user) = current_user(&app, &headers).await? else {
        return Ok(json_error(StatusCode::FORBIDDEN, "sign in first"));
    };
    let arg: Option<Text> = with_db!(&app.db, |pool| {
        sqlx::query_scalar("SELECT arg FROM subscriptions WHERE user_id = ?")
            .bind(user.id)
            .fetch_optional(pool)
            .await?
    });
    let subs = subscriptions(user.id, arg)?;
    // Where the services are is read on every request: POST /initialize may have changed it.
    let (http, https) = endpoints(&app.db).await?;
    let mut body = b"[".to_vec();
    for &service in allowed(&user.grade) {
        let Some(p) = subs.get(service) else {
            continue;
        };
        let answer = if http.is_empty() && https.is_empty() {
            Err("no one said where the services are (POST /initialize)".to_string())
        } else {
            call_service(service, p, &http, &https).await
        };
        let answer = match answer {
            Ok(answer) => answer,
            Err(e) => {
                eprintln!("/data of user {}: {service}: {e}", user.id);
                return Ok(json_error(
                    StatusCode::BAD_GATEWAY,
                    &format!("{service}: {e}"),
                ));
            }
        };
        if body.len() > 1 {
            body.push(b',');
        }
        body.extend_from_slice(format!(r#"{{"service":"{service}","data":"#).as_bytes());
        body.extend_from_slice(&answer);
        body.push(b'}');
    }
    body.extend_from_slice(b"]\n");
    Ok(([(header::CONTENT_TYPE, "application/json")], body).into_response())
}

/// What url.PathEscape and url.QueryEscape of Go leave as they are.
const UNRESERVED: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// Asks one service with the user's parameters and returns its JSON answer as it came, without the whitespace
/// between its tokens. Like a naive client, each call makes a client of its own: a new connection every time,
/// closed by the service after its answer (Connection: close, as the Go app's transport without keep-alives
/// sends), HTTP/1.1 only, no proxy from the environment (Go's bare transport reads none), nothing cached, no
/// conditional request. A status other than 200, or an answer that is not JSON, is an error.
async fn call_service(
    service: &str,
    p: &BTreeMap<String, String>,
    http: &str,
    https: &str,
) -> std::result::Result<Vec<u8>, String> {
    let raw = |name: &str| p.get(name).map_or("", String::as_str);
    let param = |name: &str| utf8_percent_encode(raw(name), UNRESERVED).to_string();
    let (url, token) = match service {
        "postal" => (format!("{http}/postal/{}", param("code")), None),
        "postal2" => (format!("{http}/postal?code={}", param("code")), None),
        "surname" | "givenname" => (format!("{http}/{service}?q={}", param("q")), None),
        "weather" => (
            format!("{http}/weather?location={}", param("location")),
            None,
        ),
        "security" => (
            format!("{https}/tokens?req={}", param("req")),
            Some(raw("token")),
        ),
        "attacked" => (format!("{https}/attacked"), Some(raw("token"))),
        _ => return Err(format!("unknown service {service:?}")),
    };
    let client = reqwest::Client::builder()
        .http1_only()
        .no_proxy()
        // The HTTPS services' certificate is made for each run and no one can verify it (MANUAL.md).
        .danger_accept_invalid_certs(true)
        .timeout(SERVICE_TIMEOUT)
        .build()
        .map_err(|e| causes(&e))?;
    let mut request = client.get(&url).header(header::CONNECTION, "close");
    if let Some(token) = token {
        request = request.header("X-Security-Token", token);
    }
    let response = request.send().await.map_err(|e| causes(&e))?;
    let status = response.status();
    let body = response.bytes().await.map_err(|e| causes(&e))?;
    if status != StatusCode::OK {
        return Err(format!("{url} answered {status}"));
    }
    compact_json(&body).map_err(|e| format!("{url}: {e}"))
}

/// An error with its causes, each after a colon: reqwest's own message names only the URL.
fn causes(e: &reqwest::Error) -> String {
    let mut message = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        message.push_str(": ");
        message.push_str(&s.to_string());
        source = s.source();
    }
    message
}

/// Checks that body is one JSON value and returns it without the whitespace between its tokens, as Go's encoder
/// writes a json.RawMessage: the bytes of its strings and numbers as they came.
fn compact_json(body: &[u8]) -> std::result::Result<Vec<u8>, serde_json::Error> {
    serde_json::from_slice::<serde::de::IgnoredAny>(body)?;
    let mut out = Vec::with_capacity(body.len());
    let (mut in_string, mut escaped) = (false, false);
    for &b in body {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
        } else if matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
            continue;
        } else if b == b'"' {
            in_string = true;
        }
        out.push(b);
    }
    Ok(out)
}

/// Restores the initial data (the users and their subscriptions as the dump has them, no sessions) and takes the
/// services' base URLs.
async fn post_initialize(State(app): AppState, body: Bytes) -> Result<Response> {
    let Some((http, https)) = initialize_body(&body) else {
        let message = r#"want a JSON body {"http": "URL", "https": "URL"}"#;
        return Ok(json_error(StatusCode::BAD_REQUEST, message));
    };
    // The run changes the initial users' subscriptions in place, so they are loaded again from the dump, whose
    // INSERT INTO subscriptions statements hold them all.
    let dump = tokio::fs::File::open(&app.initial_sql).await?;
    let mut statements = vec![
        "DELETE FROM sessions".to_string(),
        "DELETE FROM subscriptions".to_string(),
        format!("DELETE FROM users WHERE id > {INITIAL_USERS}"),
    ];
    if !app.db.is_mysql() {
        // New users get ids from INITIAL_USERS + 1 on again, as after the first load.
        statements.push(format!(
            "UPDATE sqlite_sequence SET seq = {INITIAL_USERS} WHERE name = 'users'"
        ));
    }
    with_db!(&app.db, |pool| {
        let mut tx = pool.begin_with(app.db.begin()).await?;
        for s in &statements {
            sqlx::query(s).execute(&mut *tx).await?;
        }
        let mut dump = tokio::io::BufReader::with_capacity(1 << 20, dump).lines();
        while let Some(statement) = next_statement(&mut dump).await? {
            if statement.starts_with("INSERT INTO subscriptions") {
                // Not raw_sql, whose future a handler could not hold across an await (sqlx's executor is not
                // general enough for axum's Send bound); a statement used once is not kept prepared.
                let insert = sqlx::query(&statement).persistent(false);
                insert.execute(&mut *tx).await?;
            }
        }
        sqlx::query(STORE_ENDPOINTS)
            .bind(trimmed(&http))
            .bind(trimmed(&https))
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
    });
    if let Db::MySql(pool) = &app.db {
        // ALTER TABLE commits on MariaDB: it runs after the transaction.
        sqlx::query(&format!(
            "ALTER TABLE users AUTO_INCREMENT = {}",
            INITIAL_USERS + 1
        ))
        .execute(pool)
        .await?;
    }
    Ok(json(StatusCode::OK, "{\"ok\":true}\n".to_string()))
}

/// The base URLs of a POST /initialize's body: the first JSON value in it, an object whose "http" and "https"
/// (in any letter case, as Go's decoder matches them) are strings.
fn initialize_body(body: &[u8]) -> Option<(String, String)> {
    let value = serde_json::Deserializer::from_slice(body)
        .into_iter::<serde_json::Value>()
        .next()?
        .ok()?;
    let mut http = None;
    let mut https = None;
    for (key, v) in value.as_object()? {
        let slot = match key.to_ascii_lowercase().as_str() {
            "http" => &mut http,
            "https" => &mut https,
            _ => continue,
        };
        *slot = match v {
            serde_json::Value::String(s) => Some(s.clone()),
            serde_json::Value::Null => None,
            _ => return None,
        };
    }
    Some((http?, https?))
}

// Helpers.

/// The user's subscriptions from their row's arg ({} if they have no row).
fn subscriptions(user_id: i64, arg: Option<Text>) -> Result<Subscriptions> {
    let Some(arg) = arg else {
        return Ok(Subscriptions::new());
    };
    serde_json::from_str(&arg.0)
        .map_err(|e| format!("the subscriptions of user {user_id}: {e}").into())
}

/// A URL-encoded form, as Go's Request.PostFormValue reads one: only a body of type
/// application/x-www-form-urlencoded, the first value of each name, and a pair that does not decode left out.
/// Values are bytes, as they came: what is not UTF-8 is refused where it matters.
struct Form(Vec<(Vec<u8>, Vec<u8>)>);

impl Form {
    fn new(headers: &HeaderMap, body: &[u8]) -> Form {
        let media_type = headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(';').next())
            .map(|v| v.trim().to_ascii_lowercase());
        if media_type.as_deref() != Some("application/x-www-form-urlencoded") {
            return Form(Vec::new());
        }
        let pairs = body
            .split(|&b| b == b'&')
            .filter(|pair| !pair.is_empty() && !pair.contains(&b';'))
            .filter_map(|pair| {
                let (key, value) = match pair.iter().position(|&b| b == b'=') {
                    Some(i) => (&pair[..i], &pair[i + 1..]),
                    None => (pair, &[][..]),
                };
                Some((unescape(key)?, unescape(value)?))
            })
            .collect();
        Form(pairs)
    }

    /// The first value of the field, empty if it is absent.
    fn value(&self, name: &str) -> &[u8] {
        self.0
            .iter()
            .find(|(key, _)| key == name.as_bytes())
            .map_or(&[][..], |(_, value)| value.as_slice())
    }
}

/// Decodes a part of a form: "+" is a space, "%XX" a byte; None if a "%" is not followed by two hex digits.
fn unescape(s: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        match s[i] {
            b'+' => out.push(b' '),
            b'%' => {
                let hex = s
                    .get(i + 1..i + 3)
                    .filter(|h| h.iter().all(u8::is_ascii_hexdigit))?;
                out.push(u8::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()?);
                i += 2;
            }
            b => out.push(b),
        }
        i += 1;
    }
    Some(out)
}

/// The number of characters in s, as Go counts them: each byte that is not UTF-8 counts as one.
fn rune_count(s: &[u8]) -> usize {
    s.utf8_chunks()
        .map(|c| c.valid().chars().count() + c.invalid().len())
        .sum()
}

/// s in double quotes as Go's %q writes it: backslash escapes for quotes, backslashes, control characters and bytes
/// that are not UTF-8. (Go also escapes the few other characters Unicode does not call printable.)
fn go_quote(s: &[u8]) -> String {
    let mut out = String::from("\"");
    for chunk in s.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\u{7}' => out.push_str("\\a"),
                '\u{8}' => out.push_str("\\b"),
                '\u{c}' => out.push_str("\\f"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                '\u{b}' => out.push_str("\\v"),
                c if (c as u32) < 0x20 || c == '\u{7f}' => {
                    out.push_str(&format!("\\x{:02x}", c as u32))
                }
                c if c.is_control() || (c.is_whitespace() && c != ' ') || c == '\u{feff}' => {
                    if (c as u32) < 0x10000 {
                        out.push_str(&format!("\\u{:04x}", c as u32));
                    } else {
                        out.push_str(&format!("\\U{:08x}", c as u32));
                    }
                }
                c => out.push(c),
            }
        }
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out.push('"');
    out
}

/// What the users table stores: the SHA-512 of salt + password, in lowercase hex.
fn hash_password(salt: &str, password: &[u8]) -> String {
    let mut hasher = Sha512::new();
    hasher.update(salt.as_bytes());
    hasher.update(password);
    hex::encode(hasher.finalize())
}

/// The current UTC time, in whole seconds.
fn now() -> String {
    Utc::now().format(TIME_FORMAT).to_string()
}
