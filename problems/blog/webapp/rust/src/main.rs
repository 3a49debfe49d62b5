//! The Rust reference app of the tunecon problem "blog": a small blog whose every page lists the articles commented
//! on most recently. It is slow on purpose, the way real apps are slow, and it is correct: keep it correct while you
//! make it fast. The contract it keeps is in ../../MANUAL.md; it behaves like the Go app in ../go.
//!
//! Build and run it from this directory (`tunecon serve blog --lang rust` does both):
//!
//!     cargo build --release && target/release/tunecon-blog

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path as UrlPath, State};
use axum::http::{StatusCode, header};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use chrono::{NaiveDateTime, Utc};
use minijinja::{Environment, Value, context};
use percent_encoding::percent_decode;
use serde::Serialize;
use sqlx::mysql::{MySqlConnectOptions, MySqlPool};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqliteSynchronous};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, Lines};
use tower_http::services::ServeDir;

// The sizes of the initial data: POST /initialize deletes every row added after it.
const INITIAL_ARTICLES: i64 = 10000;
const INITIAL_COMMENTS: i64 = 300000;

const TIME_FORMAT: &str = "%Y-%m-%d %H:%M:%S"; // every time, in UTC

// Limits of posted text, in characters.
const MAX_TITLE: usize = 128;
const MAX_ARTICLE_BODY: usize = 4096;
const MAX_NAME: usize = 64;
const MAX_COMMENT_BODY: usize = 1024;

#[derive(sqlx::FromRow, Serialize)]
struct Article {
    id: i64,
    title: String,
    body: String,
    #[serde(serialize_with = "datetime")]
    created_at: NaiveDateTime,
}

#[derive(sqlx::FromRow, Serialize)]
struct Comment {
    id: i64,
    article_id: i64,
    name: String,
    body: String,
    #[serde(serialize_with = "datetime")]
    created_at: NaiveDateTime,
}

/// One entry of the sidebar.
#[derive(sqlx::FromRow, Serialize)]
struct RecentArticle {
    id: i64,
    title: String,
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
    let root = PathBuf::from(getenv("BLOG_ROOT", ".."));
    let addr = getenv("BLOG_ADDR", "127.0.0.1:8080");
    let initial_sql = std::env::var("BLOG_INITIAL_SQL")
        .ok()
        .filter(|s| !s.is_empty())
        .map_or_else(|| root.join("data").join("initial.sql"), PathBuf::from);

    let db = open_db(&std::env::var("BLOG_DB").unwrap_or_default(), &root).await?;
    load_initial_data(&db, &root, &initial_sql).await?;
    let templates = templates(&root.join("rust").join("templates"));
    let app = Arc::new(App { db, templates });

    let router = Router::new()
        .route("/", get(get_index))
        .route("/articles/{id}", get(get_article))
        .route("/post", get(get_post))
        .route("/articles", post(post_article))
        .route("/articles/{id}/comments", post(post_comment))
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
        let options = MySqlConnectOptions::from_str(dsn).map_err(|e| format!("BLOG_DB: {e}"))?;
        return Ok(Db::MySql(MySqlPool::connect_with(options).await?));
    }
    let Some(path) = dsn
        .strip_prefix("sqlite:")
        .or(if dsn.is_empty() { Some("") } else { None })
    else {
        return Err(format!(
            "BLOG_DB {dsn:?}: want empty, sqlite:PATH or mysql://user:pass@host:port/dbname"
        )
        .into());
    };
    let path = if path.is_empty() {
        root.join("data").join("blog-rust.db")
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

/// Creates the tables and loads the initial data unless the article table exists.
async fn load_initial_data(
    db: &Db,
    root: &Path,
    dump_path: &Path,
) -> Result<(), Box<dyn std::error::Error>> {
    let (exists_query, schema_file) = match db {
        Db::Sqlite(_) => (
            "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'article'",
            "schema.sqlite.sql",
        ),
        Db::MySql(_) => (
            "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = 'article'",
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
                "the initial data {} does not exist: generate it with `tunecon serve blog`, which writes it and then \
                 starts this app (or set BLOG_INITIAL_SQL to where it is)",
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
            let _ = sqlx::query("DROP TABLE IF EXISTS article, comment")
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
    env.add_filter("multiline", |text: &str| {
        Value::from_safe_string(
            go_escape(text)
                .replace("\r\n", "<br>")
                .replace('\n', "<br>"),
        )
    });
    // Escape every {{ ... }} as Go's html/template does, so that the apps send the same bytes.
    env.set_formatter(|out, state, value| match value.as_str() {
        Some(s) if !value.is_safe() => Ok(out.write_str(&go_escape(s).replace('+', "&#43;"))?),
        _ => minijinja::escape_formatter(out, state, value),
    });
    env
}

/// Escapes text for HTML as Go's html/template does: &#34; and &#39; for quotes, NUL shown as U+FFFD.
fn go_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&#34;"),
            '\'' => out.push_str("&#39;"),
            '\0' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

fn datetime<S: serde::Serializer>(t: &NaiveDateTime, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(&t.format(TIME_FORMAT))
}

/// Renders a page with the sidebar, which every page has.
async fn render(app: &App, status: StatusCode, name: &str, page: Value) -> Result<Response> {
    let recent: Vec<RecentArticle> = with_db!(&app.db, |pool| {
        sqlx::query_as(
            "SELECT a.id, a.title FROM comment c JOIN article a ON a.id = c.article_id \
             GROUP BY a.id, a.title ORDER BY MAX(c.id) DESC LIMIT 10",
        )
        .fetch_all(pool)
        .await?
    });
    let html = app
        .templates
        .get_template(name)?
        .render(context! { recent, ..page })?;
    Ok((status, Html(html)).into_response())
}

async fn not_found(State(app): AppState) -> Result<Response> {
    let page = context! { title => "Not found", message => "There is no such page." };
    render(&app, StatusCode::NOT_FOUND, "error.html", page).await
}

async fn bad_request(app: &App, message: String) -> Result<Response> {
    let page = context! { title => "Bad request", message };
    render(app, StatusCode::BAD_REQUEST, "error.html", page).await
}

async fn get_index(State(app): AppState) -> Result<Response> {
    let articles: Vec<Article> = with_db!(&app.db, |pool| {
        sqlx::query_as("SELECT id, title, body, created_at FROM article ORDER BY id DESC LIMIT 10")
            .fetch_all(pool)
            .await?
    });
    render(&app, StatusCode::OK, "index.html", context! { articles }).await
}

async fn get_article(state: AppState, UrlPath(id): UrlPath<String>) -> Result<Response> {
    let app = &state.0;
    let Some(id) = parse_id(&id) else {
        return not_found(state).await;
    };
    let article: Option<Article> = with_db!(&app.db, |pool| {
        sqlx::query_as("SELECT id, title, body, created_at FROM article WHERE id = ?")
            .bind(id)
            .fetch_optional(pool)
            .await?
    });
    let Some(article) = article else {
        return not_found(state).await;
    };
    // The count and the list come from one transaction, so that a comment posted in between cannot make them
    // disagree.
    let (count, comments): (i64, Vec<Comment>) = with_db!(&app.db, |pool| {
        let mut tx = pool.begin().await?;
        let count = sqlx::query_scalar("SELECT COUNT(*) FROM comment WHERE article_id = ?")
            .bind(id)
            .fetch_one(&mut *tx)
            .await?;
        let comments = sqlx::query_as("SELECT id, article_id, name, body, created_at FROM comment WHERE article_id = ? ORDER BY id")
            .bind(id)
            .fetch_all(&mut *tx)
            .await?;
        tx.rollback().await?; // it only read
        (count, comments)
    });
    let page = context! { title => &article.title, article, comments, comment_count => count };
    render(app, StatusCode::OK, "article.html", page).await
}

async fn get_post(State(app): AppState) -> Result<Response> {
    render(
        &app,
        StatusCode::OK,
        "post.html",
        context! { title => "Write an article" },
    )
    .await
}

async fn post_article(State(app): AppState, body: Bytes) -> Result<Response> {
    let Some(title) = form_value(&body, "title")
        .filter(|t| valid_text(t, 1, MAX_TITLE) && !t.contains(['\r', '\n']))
    else {
        return bad_request(
            &app,
            format!("The title must be one line of 1 to {MAX_TITLE} characters."),
        )
        .await;
    };
    let Some(text) = form_value(&body, "body").filter(|t| valid_text(t, 1, MAX_ARTICLE_BODY))
    else {
        return bad_request(
            &app,
            format!("The body must be 1 to {MAX_ARTICLE_BODY} characters long."),
        )
        .await;
    };
    let sql = "INSERT INTO article (title, body, created_at) VALUES (?, ?, ?)";
    let id = match &app.db {
        Db::Sqlite(pool) => sqlx::query(sql)
            .bind(title)
            .bind(text)
            .bind(now())
            .execute(pool)
            .await?
            .last_insert_rowid(),
        Db::MySql(pool) => sqlx::query(sql)
            .bind(title)
            .bind(text)
            .bind(now())
            .execute(pool)
            .await?
            .last_insert_id() as i64,
    };
    Ok(Redirect::to(&format!("/articles/{id}")).into_response())
}

async fn post_comment(
    state: AppState,
    UrlPath(id): UrlPath<String>,
    body: Bytes,
) -> Result<Response> {
    let app = &state.0;
    let Some(article_id) = parse_id(&id) else {
        return not_found(state).await;
    };
    let found: i64 = with_db!(&app.db, |pool| {
        sqlx::query_scalar("SELECT COUNT(*) FROM article WHERE id = ?")
            .bind(article_id)
            .fetch_one(pool)
            .await?
    });
    if found == 0 {
        return not_found(state).await;
    }
    let Some(name) = form_value(&body, "name").filter(|n| valid_text(n, 0, MAX_NAME)) else {
        return bad_request(
            app,
            format!("The name must be at most {MAX_NAME} characters long."),
        )
        .await;
    };
    let Some(text) = form_value(&body, "body").filter(|t| valid_text(t, 1, MAX_COMMENT_BODY))
    else {
        return bad_request(
            app,
            format!("The comment must be 1 to {MAX_COMMENT_BODY} characters long."),
        )
        .await;
    };
    let sql = "INSERT INTO comment (article_id, name, body, created_at) VALUES (?, ?, ?, ?)";
    let id = match &app.db {
        Db::Sqlite(pool) => {
            let q = sqlx::query(sql)
                .bind(article_id)
                .bind(name)
                .bind(text)
                .bind(now());
            q.execute(pool).await?.last_insert_rowid()
        }
        Db::MySql(pool) => {
            let q = sqlx::query(sql)
                .bind(article_id)
                .bind(name)
                .bind(text)
                .bind(now());
            q.execute(pool).await?.last_insert_id() as i64
        }
    };
    Ok(Redirect::to(&format!("/articles/{article_id}#comment-{id}")).into_response())
}

/// Restores the initial data by deleting everything added since.
async fn post_initialize(State(app): AppState) -> Result<Response> {
    let mut statements = vec![
        format!("DELETE FROM comment WHERE id > {INITIAL_COMMENTS}"),
        format!("DELETE FROM article WHERE id > {INITIAL_ARTICLES}"),
    ];
    if let Db::MySql(_) = app.db {
        statements.push(format!(
            "ALTER TABLE comment AUTO_INCREMENT = {}",
            INITIAL_COMMENTS + 1
        ));
        statements.push(format!(
            "ALTER TABLE article AUTO_INCREMENT = {}",
            INITIAL_ARTICLES + 1
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

/// A positive decimal id, digits only.
fn parse_id(s: &str) -> Option<i64> {
    if s.is_empty() || s.len() > 18 || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok().filter(|&id| id > 0)
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
