//! The Rust reference app of the tunecon problem "leagues": a software-as-a-service for e-sports leagues after the
//! ISUCON12 qualifier. Each tenant, chosen by the first label of the host name, runs competitions among its players;
//! organizers upload score CSVs, players read rankings, and the service bills each tenant per finished competition.
//! It is slow on purpose, the way real apps are slow, and it is correct: keep it correct while you make it fast. The
//! contract it keeps is in ../../MANUAL.md; it behaves like the Go app in ../go.
//!
//! Build and run it from this directory (`tunecon serve leagues --lang rust` does both):
//!
//!     cargo build --release && target/release/tunecon-leagues

use std::collections::{HashMap, HashSet};
use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use axum::Router;
use axum::body::Body;
use axum::extract::{Path as UrlPath, Query, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::json;
use sqlx::mysql::{MySqlConnectOptions, MySqlPool, MySqlQueryResult};
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteConnection, SqliteJournalMode, SqlitePool, SqliteQueryResult,
    SqliteSynchronous,
};
use sqlx::{ColumnIndex, Connection, Decode, Row, Type};
use tokio::io::AsyncBufReadExt;
use tower_http::services::ServeFile;

// What POST /initialize restores: the initial tenants are ids 1 to INITIAL_TENANTS, every initial visit is before
// INITIAL_END (Unix seconds), and the id generator hands out INITIAL_NEXT_ID next. They must match the generated
// data (problems/leagues/data: a test there checks).
const INITIAL_TENANTS: i64 = 100;
const INITIAL_END: i64 = 1767225600;
const INITIAL_NEXT_ID: i64 = 14769;

const TOKEN_COOKIE: &str = "leagues_token";
const ADMIN_LABEL: &str = "admin"; // the host label, and the tokens' audience, of the service's admin
const RANKING_PAGE: usize = 100; // ranks in one ranking answer
const BILLING_PAGE: i64 = 10; // tenants in one page of the admin's billing
const MAX_NEW_PLAYERS: usize = 100; // names in one POST /api/organizer/players
const MAX_NAME: usize = 64; // characters of a display name
const MAX_TITLE: usize = 128; // characters of a competition's title
const MAX_BODY: usize = 1 << 20; // bytes of a JSON body
const MAX_UPLOAD: u64 = 16 << 20; // bytes of a CSV upload
const YEN_PER_SCORED: i64 = 100;
const YEN_PER_VIEWER: i64 = 10;
const ROLE_ADMIN: &str = "admin";
const ROLE_ORGANIZER: &str = "organizer";
const ROLE_PLAYER: &str = "player";
const SQLITE_BUSY_WAIT: Duration = Duration::from_secs(5); // how long a SQLite connection waits for a lock

// Rows of the admin data.

#[derive(Clone)]
struct Tenant {
    id: i64,
    name: String,
    display_name: String,
}

// The MariaDB schema's binary collation makes sqlx take the tenant's names for
// VARBINARY, which it refuses to decode as a String: they are UTF-8, read
// unchecked.
impl<'r, R: Row> sqlx::FromRow<'r, R> for Tenant
where
    &'r str: ColumnIndex<R>,
    i64: Decode<'r, R::Database> + Type<R::Database>,
    String: Decode<'r, R::Database>,
{
    fn from_row(row: &'r R) -> sqlx::Result<Self> {
        Ok(Tenant {
            id: row.try_get("id")?,
            name: row.try_get_unchecked("name")?,
            display_name: row.try_get_unchecked("display_name")?,
        })
    }
}

// Rows of a tenant's SQLite file.

#[derive(sqlx::FromRow, Clone)]
struct Player {
    id: i64,
    display_name: String,
    is_disqualified: bool,
}

#[derive(sqlx::FromRow)]
struct Competition {
    id: i64,
    title: String,
    finished_at: Option<i64>,
    last_upload: i64,
}

#[derive(sqlx::FromRow)]
struct PlayerScore {
    row_num: i64,
    player_id: i64,
    score: i64,
}

// What the API answers, with the keys in the manual's order.

#[derive(Serialize)]
struct PlayerJson {
    id: i64,
    display_name: String,
    is_disqualified: bool,
}

impl From<&Player> for PlayerJson {
    fn from(p: &Player) -> Self {
        PlayerJson {
            id: p.id,
            display_name: p.display_name.clone(),
            is_disqualified: p.is_disqualified,
        }
    }
}

#[derive(Serialize)]
struct CompetitionJson {
    id: i64,
    title: String,
    is_finished: bool,
}

impl From<&Competition> for CompetitionJson {
    fn from(c: &Competition) -> Self {
        CompetitionJson {
            id: c.id,
            title: c.title.clone(),
            is_finished: c.finished_at.is_some(),
        }
    }
}

#[derive(Serialize)]
struct TenantJson {
    id: i64,
    name: String,
    display_name: String,
}

#[derive(Serialize)]
struct TenantBillingJson {
    id: i64,
    name: String,
    display_name: String,
    billing: i64,
}

#[derive(Serialize)]
struct CompetitionBillingJson {
    competition_id: i64,
    title: String,
    is_finished: bool,
    scored: i64,
    viewed: i64,
    billing: i64,
}

#[derive(Serialize)]
struct RankJson {
    rank: i64,
    player_id: i64,
    display_name: String,
    score: i64,
}

#[derive(Serialize)]
struct ScoreJson {
    competition_id: i64,
    title: String,
    score: i64,
}

#[derive(Serialize)]
struct BillingJson {
    total: i64,
    competitions: Vec<CompetitionBillingJson>,
}

#[derive(Serialize)]
struct MeJson {
    role: String,
    subject: String,
    tenant: Option<TenantJson>,
    player: Option<PlayerJson>,
}

/// The admin data: sqlx's pools are typed by the database they talk to.
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

/// The id of the row an INSERT (or REPLACE) made, whichever database it is.
trait LastId {
    fn last_id(&self) -> i64;
}

impl LastId for SqliteQueryResult {
    fn last_id(&self) -> i64 {
        self.last_insert_rowid()
    }
}

impl LastId for MySqlQueryResult {
    fn last_id(&self) -> i64 {
        self.last_insert_id() as i64
    }
}

struct App {
    db: Db,
    root: PathBuf, // the webapp directory
    initial_dir: PathBuf,
    tenant_dir: PathBuf,
    public_key: DecodingKey,
}

type AppState = State<Arc<App>>;

/// A request that ends early: an answer the manual gives (an error's status and text), or an internal error, which
/// is logged and answered with a 500.
enum Reply {
    Answer(StatusCode, &'static str),
    Internal(Box<dyn std::error::Error + Send + Sync>),
}

impl<E: Into<Box<dyn std::error::Error + Send + Sync>>> From<E> for Reply {
    fn from(err: E) -> Self {
        Reply::Internal(err.into())
    }
}

impl IntoResponse for Reply {
    fn into_response(self) -> Response {
        match self {
            Reply::Answer(status, message) => write_json(status, &json!({ "error": message })),
            Reply::Internal(err) => {
                eprintln!("error: {err}");
                write_json(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    &json!({ "error": "internal error" }),
                )
            }
        }
    }
}

type Result<T, E = Reply> = std::result::Result<T, E>;

fn bad_request() -> Reply {
    Reply::Answer(StatusCode::BAD_REQUEST, "bad request")
}

fn not_found_reply() -> Reply {
    Reply::Answer(StatusCode::NOT_FOUND, "not found")
}

fn unauthorized() -> Reply {
    Reply::Answer(StatusCode::UNAUTHORIZED, "invalid token")
}

#[tokio::main]
async fn main() {
    if let Err(err) = run().await {
        eprintln!("{err}");
        std::process::exit(1);
    }
}

async fn run() -> Result<(), Box<dyn std::error::Error>> {
    let root = PathBuf::from(getenv("LEAGUES_ROOT", ".."));
    let addr = getenv("LEAGUES_ADDR", "127.0.0.1:8080");
    let initial_dir = PathBuf::from(getenv(
        "LEAGUES_INITIAL_DIR",
        &root.join("data").join("initial").to_string_lossy(),
    ));
    let public_key_path = PathBuf::from(getenv(
        "LEAGUES_PUBLIC_KEY",
        &root
            .join("..")
            .join("keys")
            .join("public.pem")
            .to_string_lossy(),
    ));
    let app = new_app(
        root,
        &std::env::var("LEAGUES_DB").unwrap_or_default(),
        initial_dir,
        std::env::var("LEAGUES_TENANT_DIR").unwrap_or_default(),
        &public_key_path,
    )
    .await?;

    let router = Router::new()
        .route("/api/admin/tenants", post(post_admin_tenants))
        .route("/api/admin/billing", get(get_admin_billing))
        .route(
            "/api/organizer/players",
            get(get_organizer_players).post(post_organizer_players),
        )
        .route(
            "/api/organizer/players/{id}/disqualify",
            post(post_disqualify),
        )
        .route(
            "/api/organizer/competitions",
            get(get_organizer_competitions).post(post_competitions),
        )
        .route("/api/organizer/competitions/{id}/finish", post(post_finish))
        .route("/api/organizer/competitions/{id}/scores", post(post_scores))
        .route("/api/organizer/billing", get(get_organizer_billing))
        .route("/api/player/competitions", get(get_player_competitions))
        .route("/api/player/players/{id}", get(get_player))
        .route("/api/player/competitions/{id}/ranking", get(get_ranking))
        .route("/api/me", get(get_me))
        .route("/initialize", post(post_initialize))
        .route("/", get(get_index))
        .route("/static/{*file}", get(get_static))
        .fallback(not_found)
        .method_not_allowed_fallback(not_found) // a path that exists with another method: 404 too, as in the Go app
        .with_state(Arc::new(app));

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

/// Opens the admin data named by dsn, makes the working data from the initial data if it is missing, and reads the
/// public key. An empty tenant_dir means the one beside the admin data.
async fn new_app(
    root: PathBuf,
    dsn: &str,
    initial_dir: PathBuf,
    tenant_dir: String,
    public_key_path: &Path,
) -> Result<App, Box<dyn std::error::Error>> {
    let pem = std::fs::read(public_key_path).map_err(|e| format!("reading the public key: {e}"))?;
    let public_key = DecodingKey::from_rsa_pem(&pem)
        .map_err(|e| format!("{}: {e}", public_key_path.display()))?;
    let mut tenant_dir = PathBuf::from(tenant_dir);
    let db = if dsn.starts_with("mysql://") {
        // sqlx talks utf8mb4, and uses port 3306 when the URL names none.
        let options = MySqlConnectOptions::from_str(dsn).map_err(|e| format!("LEAGUES_DB: {e}"))?;
        if tenant_dir.as_os_str().is_empty() {
            let name = dsn
                .rsplit_once('/')
                .map_or("", |(_, s)| s.split('?').next().unwrap_or(""));
            tenant_dir = root.join("data").join(format!("tenants-mysql-{name}"));
        }
        let pool = MySqlPool::connect_with(options)
            .await
            .map_err(|e| format!("connecting to the database: {e}"))?;
        load_mysql(&pool, &root, &initial_dir).await?;
        Db::MySql(pool)
    } else if dsn.is_empty() || dsn.starts_with("sqlite:") {
        let file = match dsn.trim_start_matches("sqlite:") {
            "" => root.join("data").join("leagues-rust.db"),
            f => PathBuf::from(f),
        };
        if tenant_dir.as_os_str().is_empty() {
            let f = file.to_string_lossy();
            tenant_dir = PathBuf::from(format!("{}-tenants", f.strip_suffix(".db").unwrap_or(&f)));
        }
        if !file.exists() {
            println!("copying the initial admin data to {}", file.display());
            for suffix in ["-wal", "-shm"] {
                let _ = std::fs::remove_file(format!("{}{suffix}", file.display()));
            }
            copy_file(&initial_dir.join("admin.db"), &file).map_err(initial_data_error)?;
        }
        // WAL lets readers run while someone writes; the busy timeout makes writers wait for each other.
        let options = SqliteConnectOptions::new()
            .filename(&file)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .busy_timeout(SQLITE_BUSY_WAIT);
        Db::Sqlite(SqlitePool::connect_with(options).await?)
    } else {
        return Err(format!(
            "LEAGUES_DB {dsn:?}: want empty, sqlite:PATH or mysql://user:pass@host:port/dbname"
        )
        .into());
    };
    if !tenant_dir.exists() {
        println!("copying the initial tenants to {}", tenant_dir.display());
        copy_tenants(&initial_dir.join("tenants"), &tenant_dir).map_err(initial_data_error)?;
    }
    Ok(App {
        db,
        root,
        initial_dir,
        tenant_dir,
        public_key,
    })
}

fn initial_data_error(err: std::io::Error) -> Box<dyn std::error::Error> {
    if err.kind() == std::io::ErrorKind::NotFound {
        return format!(
            "{err}: generate the initial data with `tunecon serve leagues`, which writes it and then starts this \
             app (or set LEAGUES_INITIAL_DIR to where it is)"
        )
        .into();
    }
    err.into()
}

/// Creates the admin tables and loads the initial admin data unless the tenant table exists.
async fn load_mysql(
    pool: &MySqlPool,
    root: &Path,
    initial_dir: &Path,
) -> Result<(), Box<dyn std::error::Error>> {
    let n: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = 'tenant'",
    )
    .fetch_one(pool)
    .await?;
    if n > 0 {
        return Ok(());
    }
    let dump_path = initial_dir.join("admin.mysql.sql");
    let dump = tokio::fs::File::open(&dump_path)
        .await
        .map_err(initial_data_error)?;
    let schema = tokio::fs::read(root.join("sql").join("admin.mysql.sql")).await?;
    println!(
        "loading the initial admin data from {}",
        dump_path.display()
    );
    let start = Instant::now();
    // MariaDB commits on CREATE TABLE: the tables are made first and dropped again if the load fails.
    let loaded: Result<(), Box<dyn std::error::Error>> = async {
        let mut conn = pool.acquire().await?;
        exec_statements(&mut conn, tokio::io::BufReader::new(&schema[..])).await?;
        let mut tx = pool.begin().await?;
        exec_statements(&mut tx, tokio::io::BufReader::with_capacity(1 << 20, dump)).await?;
        tx.commit().await?;
        let db = Db::MySql(pool.clone());
        if let Err(Reply::Internal(e)) = reset_admin(&db).await {
            return Err(e.to_string().into());
        }
        Ok(())
    }
    .await;
    if let Err(err) = loaded {
        let _ = sqlx::raw_sql("DROP TABLE IF EXISTS tenant, id_generator, visit_history")
            .execute(pool)
            .await;
        return Err(format!("loading the initial data: {err}").into());
    }
    println!("loaded the initial admin data in {:?}", start.elapsed());
    Ok(())
}

/// Runs the statements of an SQL file, each ending with ";" at the end of a line.
async fn exec_statements<R: tokio::io::AsyncBufRead + Unpin>(
    conn: &mut sqlx::MySqlConnection,
    r: R,
) -> Result<(), Box<dyn std::error::Error>> {
    let mut lines = r.lines();
    let mut statement = String::new();
    loop {
        let line = lines.next_line().await?;
        let end = line.is_none();
        if let Some(line) = &line {
            statement.push_str(line);
            statement.push('\n');
        }
        if end || line.as_deref().is_some_and(|l| l.trim_end().ends_with(';')) {
            if !is_blank_sql(&statement) {
                sqlx::raw_sql(&statement).execute(&mut *conn).await?;
            }
            statement.clear();
        }
        if end {
            return Ok(());
        }
    }
}

/// Reports whether s holds nothing but whitespace and "--" comments.
fn is_blank_sql(s: &str) -> bool {
    s.lines()
        .map(str::trim)
        .all(|l| l.is_empty() || l.starts_with("--"))
}

/// Copies src to dst through a temporary file beside dst, so that dst is always whole.
fn copy_file(src: &Path, dst: &Path) -> std::io::Result<()> {
    if let Some(dir) = dst.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let tmp = PathBuf::from(format!("{}.tmp", dst.display()));
    if let Err(err) = std::fs::copy(src, &tmp) {
        let _ = std::fs::remove_file(&tmp);
        return Err(err);
    }
    std::fs::rename(&tmp, dst)
}

/// Copies every file of the initial tenant directory src into a new directory dst.
fn copy_tenants(src: &Path, dst: &Path) -> std::io::Result<()> {
    let entries = std::fs::read_dir(src)?;
    let tmp = PathBuf::from(format!("{}.tmp", dst.display()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp)?;
    for entry in entries {
        let name = entry?.file_name();
        copy_file(&src.join(&name), &tmp.join(&name))?;
    }
    std::fs::rename(&tmp, dst)
}

// Answers.

/// Writes v as the answer, compact JSON. Every API answer is for the one who asked: Cache-Control: private.
fn write_json<T: Serialize>(status: StatusCode, v: &T) -> Response {
    let mut response = match serde_json::to_vec(v) {
        Ok(body) => (status, body).into_response(),
        Err(err) => return Reply::from(err).into_response(),
    };
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("private"));
    response
}

/// An object of one key: {"key": value}, value's own keys in its order.
fn keyed<T: Serialize>(key: &'static str, value: T) -> HashMap<&'static str, T> {
    HashMap::from([(key, value)])
}

fn ok<T: Serialize>(v: &T) -> Result<Response> {
    Ok(write_json(StatusCode::OK, v))
}

async fn not_found() -> Reply {
    not_found_reply()
}

// Who is asking.

/// The one a request comes from, as its token and host say.
struct Viewer {
    role: String,
    subject: String,
    tenant: Option<Tenant>, // None on the admin host
    player: Option<Player>, // for a player
}

impl Viewer {
    /// The viewer's tenant: authorize gives every role but the admin one.
    fn tenant(&self) -> &Tenant {
        self.tenant.as_ref().expect("a tenant's host")
    }
}

#[derive(Deserialize)]
struct Claims {
    #[serde(default)]
    sub: String,
    #[serde(default)]
    role: String,
    exp: i64,
}

/// Returns the first label of the request's host name, in lower case.
fn host_label(headers: &HeaderMap) -> String {
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("");
    let host = if let Some(rest) = host.strip_prefix('[') {
        rest.split(']').next().unwrap_or("")
    } else if host.matches(':').count() == 1 {
        host.split(':').next().unwrap_or("")
    } else {
        host
    };
    host.split('.').next().unwrap_or("").to_lowercase()
}

/// Returns the value of the request's cookie named name.
fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|h| h.to_str().ok())
        .flat_map(|h| h.split(';'))
        .filter_map(|c| c.trim().split_once('='))
        .find(|(n, _)| *n == name)
        .map(|(_, v)| v.trim_matches('"').to_string())
}

fn unix_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// Finds the viewer of a request and checks that their role is one of roles, answering the request itself when
/// not: 404 for a host that names no tenant, 401 for a missing or bad token, 403 for a role that may not ask, or for
/// a disqualified player.
async fn authorize(app: &App, headers: &HeaderMap, roles: &[&str]) -> Result<Viewer> {
    let label = host_label(headers);
    let mut tenant = None;
    if label != ADMIN_LABEL {
        let t: Option<Tenant> = with_db!(&app.db, |pool| sqlx::query_as(
            "SELECT * FROM tenant WHERE name = ?"
        )
        .bind(&label)
        .fetch_optional(pool)
        .await?);
        tenant = Some(t.ok_or_else(not_found_reply)?);
    }

    let token = cookie(headers, TOKEN_COOKIE).ok_or_else(unauthorized)?;
    let mut validation = Validation::new(Algorithm::RS256);
    validation.leeway = 0;
    validation.validate_nbf = true;
    validation.set_required_spec_claims(&["exp"]);
    validation.set_audience(&[&label]);
    let claims = jsonwebtoken::decode::<Claims>(&token, &app.public_key, &validation)
        .map_err(|_| unauthorized())?
        .claims;
    // A token expires at the start of its exp second.
    if claims.exp <= unix_now()
        || claims.sub.is_empty()
        || ![ROLE_ADMIN, ROLE_ORGANIZER, ROLE_PLAYER].contains(&claims.role.as_str())
    {
        return Err(unauthorized());
    }
    let mut v = Viewer {
        role: claims.role,
        subject: claims.sub,
        tenant,
        player: None,
    };

    if v.role == ROLE_PLAYER {
        let Some(t) = &v.tenant else {
            return Err(unauthorized());
        };
        if !is_id(&v.subject) {
            return Err(unauthorized());
        }
        let id: i64 = v.subject.parse()?;
        let mut tdb = app.tenant_db(t.id).await?;
        let p: Option<Player> = sqlx::query_as("SELECT * FROM player WHERE id = ?")
            .bind(id)
            .fetch_optional(&mut tdb)
            .await?;
        v.player = Some(p.ok_or_else(unauthorized)?);
    }
    // A role goes with its host: the admin on the admin host, the others on a tenant's.
    if !roles.contains(&v.role.as_str()) || (v.role == ROLE_ADMIN) != v.tenant.is_none() {
        return Err(Reply::Answer(StatusCode::FORBIDDEN, "forbidden"));
    }
    if v.player.as_ref().is_some_and(|p| p.is_disqualified) {
        return Err(Reply::Answer(StatusCode::FORBIDDEN, "disqualified"));
    }
    Ok(v)
}

// Tenants' files.

impl App {
    fn tenant_path(&self, id: i64) -> PathBuf {
        self.tenant_dir.join(format!("{id}.db"))
    }

    /// Opens a tenant's SQLite file; dropping the connection closes it.
    async fn tenant_db(&self, id: i64) -> Result<SqliteConnection> {
        let p = self.tenant_path(id);
        tokio::fs::metadata(&p)
            .await
            .map_err(|e| format!("the file of tenant {id}: {e}"))?;
        let options = SqliteConnectOptions::new()
            .filename(&p)
            .busy_timeout(SQLITE_BUSY_WAIT);
        Ok(SqliteConnection::connect_with(&options).await?)
    }

    /// Takes the tenant's exclusive file lock, which every write to the tenant holds, and every read of its
    /// scores; dropping the file releases it. The wait blocks a thread of tokio's blocking pool, not the server.
    async fn lock_tenant(&self, id: i64) -> Result<File> {
        let path = self.tenant_dir.join(format!("{id}.lock"));
        let file = tokio::task::spawn_blocking(move || -> std::io::Result<File> {
            let f = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(path)?;
            loop {
                // A signal interrupts the wait: wait again.
                match f.lock() {
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    result => return result.map(|()| f),
                }
            }
        })
        .await??;
        Ok(file)
    }

    /// Hands out the next id for a player or a competition.
    async fn new_id(&self) -> Result<i64> {
        let id = with_db!(&self.db, |pool| sqlx::query(
            "REPLACE INTO id_generator (stub) VALUES ('a')"
        )
        .execute(pool)
        .await?
        .last_id());
        Ok(id)
    }
}

// Request bodies and parameters.

/// Decodes the request's JSON body, answering 400 when it is not valid UTF-8 or not JSON of T's shape.
async fn read_json<T: DeserializeOwned>(body: Body) -> Result<T> {
    let body = axum::body::to_bytes(body, MAX_BODY)
        .await
        .map_err(|_| bad_request())?;
    std::str::from_utf8(&body).map_err(|_| bad_request())?;
    serde_json::from_slice(&body).map_err(|_| bad_request())
}

/// Reports whether s is a name or title of 1 to max characters without control characters.
fn valid_text(s: &str, max: usize) -> bool {
    let n = s.chars().count();
    (1..=max).contains(&n) && !s.chars().any(|c| c < '\u{20}' || c == '\u{7f}')
}

/// `^[a-z][a-z0-9-]{0,61}[a-z0-9]$`
fn is_tenant_name(s: &str) -> bool {
    let b = s.as_bytes();
    (2..=63).contains(&b.len())
        && b[0].is_ascii_lowercase()
        && b.iter()
            .all(|&c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-')
        && b[b.len() - 1] != b'-'
}

/// `^[1-9][0-9]{0,17}$`
fn is_id(s: &str) -> bool {
    is_number(s) && !s.starts_with('0')
}

/// `^[0-9]{1,18}$`
fn is_number(s: &str) -> bool {
    (1..=18).contains(&s.len()) && s.bytes().all(|c| c.is_ascii_digit())
}

/// `^(0|[1-9][0-9]{0,8})$`
fn is_score(s: &str) -> bool {
    s == "0" || (is_id(s) && s.len() <= 9)
}

/// Returns the {id} of the path, or a 404 for one that cannot name anything.
fn path_id(s: &str) -> Result<i64> {
    if !is_id(s) {
        return Err(not_found_reply());
    }
    s.parse().map_err(|_| not_found_reply())
}

/// Returns the first value of the query's parameter name, "" when absent.
fn query_value(query: &[(String, String)], name: &str) -> String {
    query
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.clone())
        .unwrap_or_default()
}

// Admin.

#[derive(Deserialize)]
struct NewTenant {
    name: Option<String>,
    display_name: Option<String>,
}

async fn post_admin_tenants(
    State(app): AppState,
    headers: HeaderMap,
    body: Body,
) -> Result<Response> {
    authorize(&app, &headers, &[ROLE_ADMIN]).await?;
    let req: NewTenant = read_json(body).await?;
    let (Some(name), Some(display_name)) = (req.name, req.display_name) else {
        return Err(bad_request());
    };
    if !is_tenant_name(&name) || name == ADMIN_LABEL || !valid_text(&display_name, MAX_NAME) {
        return Err(bad_request());
    }
    let n: i64 = with_db!(&app.db, |pool| sqlx::query_scalar(
        "SELECT COUNT(*) FROM tenant WHERE name = ?"
    )
    .bind(&name)
    .fetch_one(pool)
    .await?);
    if n > 0 {
        return Err(Reply::Answer(StatusCode::CONFLICT, "name taken"));
    }
    let now = unix_now();
    let id = with_db!(&app.db, |pool| {
        let mut tx = pool.begin().await?;
        let inserted = sqlx::query(
            "INSERT INTO tenant (name, display_name, created_at, updated_at) VALUES (?, ?, ?, ?)",
        )
        .bind(&name)
        .bind(&display_name)
        .bind(now)
        .bind(now)
        .execute(&mut *tx)
        .await;
        let id = match inserted {
            Ok(res) => res.last_id(),
            Err(sqlx::Error::Database(e)) if e.is_unique_violation() => {
                return Err(Reply::Answer(StatusCode::CONFLICT, "name taken"));
            }
            Err(e) => return Err(e.into()),
        };
        // The tenant's file exists before its row is committed: its host works as soon as it is found.
        app.create_tenant_db(id).await?;
        if let Err(e) = tx.commit().await {
            let _ = tokio::fs::remove_file(app.tenant_path(id)).await;
            return Err(e.into());
        }
        id
    });
    ok(&keyed(
        "tenant",
        TenantBillingJson {
            id,
            name,
            display_name,
            billing: 0,
        },
    ))
}

impl App {
    /// Makes a new tenant's file with the tenant schema.
    async fn create_tenant_db(&self, id: i64) -> Result<()> {
        let schema = tokio::fs::read_to_string(self.root.join("sql").join("tenant.sql")).await?;
        let p = self.tenant_path(id);
        let _ = tokio::fs::remove_file(&p).await;
        let _ = tokio::fs::remove_file(format!("{}-journal", p.display())).await;
        let options = SqliteConnectOptions::new()
            .filename(&p)
            .create_if_missing(true);
        let mut db = SqliteConnection::connect_with(&options).await?;
        // The schema's statements, without its comments (which may hold a ";").
        let schema: Vec<&str> = schema
            .lines()
            .filter(|l| !l.trim_start().starts_with("--"))
            .collect();
        for statement in schema.join("\n").split(';').filter(|s| !is_blank_sql(s)) {
            sqlx::query(statement).execute(&mut db).await?;
        }
        db.close().await?;
        Ok(())
    }
}

async fn get_admin_billing(
    State(app): AppState,
    headers: HeaderMap,
    Query(query): Query<Vec<(String, String)>>,
) -> Result<Response> {
    authorize(&app, &headers, &[ROLE_ADMIN]).await?;
    let before = query_value(&query, "before");
    let tenants: Vec<Tenant> = if before.is_empty() {
        with_db!(&app.db, |pool| sqlx::query_as(
            "SELECT * FROM tenant ORDER BY id DESC LIMIT ?"
        )
        .bind(BILLING_PAGE)
        .fetch_all(pool)
        .await?)
    } else if !is_number(&before) {
        return Err(bad_request());
    } else {
        let b: i64 = before.parse()?;
        with_db!(&app.db, |pool| sqlx::query_as(
            "SELECT * FROM tenant WHERE id < ? ORDER BY id DESC LIMIT ?"
        )
        .bind(b)
        .bind(BILLING_PAGE)
        .fetch_all(pool)
        .await?)
    };
    let mut list = Vec::new();
    for t in tenants {
        let bills = app.tenant_billing(t.id).await?;
        let billing = bills.iter().map(|b| b.billing).sum();
        list.push(TenantBillingJson {
            id: t.id,
            name: t.name,
            display_name: t.display_name,
            billing,
        });
    }
    ok(&keyed("tenants", list))
}

// Billing.

impl App {
    /// Computes the bill of every competition of a tenant, the highest id first.
    async fn tenant_billing(&self, tenant_id: i64) -> Result<Vec<CompetitionBillingJson>> {
        let mut tdb = self.tenant_db(tenant_id).await?;
        let competitions: Vec<Competition> =
            sqlx::query_as("SELECT * FROM competition ORDER BY id DESC")
                .fetch_all(&mut tdb)
                .await?;
        let mut bills = Vec::new();
        for c in &competitions {
            bills.push(self.competition_billing(&mut tdb, tenant_id, c).await?);
        }
        Ok(bills)
    }

    /// Computes a competition's bill from its score rows and the whole visit history: 100 for each player with a
    /// score, 10 for each other player who read the ranking by the second it finished. A competition still running
    /// is billed nothing.
    async fn competition_billing(
        &self,
        tdb: &mut SqliteConnection,
        tenant_id: i64,
        c: &Competition,
    ) -> Result<CompetitionBillingJson> {
        let mut b = CompetitionBillingJson {
            competition_id: c.id,
            title: c.title.clone(),
            is_finished: c.finished_at.is_some(),
            scored: 0,
            viewed: 0,
            billing: 0,
        };
        let Some(finished_at) = c.finished_at else {
            return Ok(b);
        };
        let visits: Vec<(i64, i64)> = with_db!(&self.db, |pool| sqlx::query_as(
            "SELECT player_id, MIN(created_at) AS first_at FROM visit_history \
             WHERE tenant_id = ? AND competition_id = ? GROUP BY player_id"
        )
        .bind(tenant_id)
        .bind(c.id)
        .fetch_all(pool)
        .await?);
        // The scores are read under the tenant's lock, lest an upload change them half way.
        let _lock = self.lock_tenant(tenant_id).await?;
        let scores: Vec<PlayerScore> =
            sqlx::query_as("SELECT * FROM player_score WHERE competition_id = ? AND upload = ?")
                .bind(c.id)
                .bind(c.last_upload)
                .fetch_all(&mut *tdb)
                .await?;
        let scored: HashSet<i64> = scores.iter().map(|s| s.player_id).collect();
        for (player_id, first_at) in visits {
            if first_at <= finished_at && !scored.contains(&player_id) {
                b.viewed += 1;
            }
        }
        b.scored = scored.len() as i64;
        b.billing = YEN_PER_SCORED * b.scored + YEN_PER_VIEWER * b.viewed;
        Ok(b)
    }
}

// Organizer.

async fn get_organizer_players(State(app): AppState, headers: HeaderMap) -> Result<Response> {
    let v = authorize(&app, &headers, &[ROLE_ORGANIZER]).await?;
    let mut tdb = app.tenant_db(v.tenant().id).await?;
    let players: Vec<Player> = sqlx::query_as("SELECT * FROM player ORDER BY id")
        .fetch_all(&mut tdb)
        .await?;
    let list: Vec<PlayerJson> = players.iter().map(PlayerJson::from).collect();
    ok(&keyed("players", list))
}

#[derive(Deserialize)]
struct NewPlayers {
    display_names: Option<Vec<String>>,
}

async fn post_organizer_players(
    State(app): AppState,
    headers: HeaderMap,
    body: Body,
) -> Result<Response> {
    let v = authorize(&app, &headers, &[ROLE_ORGANIZER]).await?;
    let req: NewPlayers = read_json(body).await?;
    let names = req.display_names.unwrap_or_default();
    if names.is_empty()
        || names.len() > MAX_NEW_PLAYERS
        || !names.iter().all(|n| valid_text(n, MAX_NAME))
    {
        return Err(bad_request());
    }
    let _lock = app.lock_tenant(v.tenant().id).await?;
    let mut tdb = app.tenant_db(v.tenant().id).await?;
    let mut list = Vec::new();
    for name in &names {
        let id = app.new_id().await?;
        let now = unix_now();
        sqlx::query(
            "INSERT INTO player (id, display_name, is_disqualified, created_at, updated_at) VALUES (?, ?, 0, ?, ?)",
        )
        .bind(id)
        .bind(name)
        .bind(now)
        .bind(now)
        .execute(&mut tdb)
        .await?;
        let p: Player = sqlx::query_as("SELECT * FROM player WHERE id = ?")
            .bind(id)
            .fetch_one(&mut tdb)
            .await?;
        list.push(PlayerJson::from(&p));
    }
    ok(&keyed("players", list))
}

async fn post_disqualify(
    State(app): AppState,
    headers: HeaderMap,
    UrlPath(id): UrlPath<String>,
) -> Result<Response> {
    let v = authorize(&app, &headers, &[ROLE_ORGANIZER]).await?;
    let id = path_id(&id)?;
    let _lock = app.lock_tenant(v.tenant().id).await?;
    let mut tdb = app.tenant_db(v.tenant().id).await?;
    let res = sqlx::query("UPDATE player SET is_disqualified = 1, updated_at = ? WHERE id = ?")
        .bind(unix_now())
        .bind(id)
        .execute(&mut tdb)
        .await?;
    if res.rows_affected() == 0 {
        return Err(not_found_reply());
    }
    let p: Player = sqlx::query_as("SELECT * FROM player WHERE id = ?")
        .bind(id)
        .fetch_one(&mut tdb)
        .await?;
    ok(&keyed("player", PlayerJson::from(&p)))
}

async fn get_organizer_competitions(State(app): AppState, headers: HeaderMap) -> Result<Response> {
    list_competitions(&app, &headers, ROLE_ORGANIZER).await
}

async fn get_player_competitions(State(app): AppState, headers: HeaderMap) -> Result<Response> {
    list_competitions(&app, &headers, ROLE_PLAYER).await
}

/// Answers a list of the tenant's competitions, the highest id first, to role.
async fn list_competitions(app: &App, headers: &HeaderMap, role: &str) -> Result<Response> {
    let v = authorize(app, headers, &[role]).await?;
    let mut tdb = app.tenant_db(v.tenant().id).await?;
    let competitions: Vec<Competition> =
        sqlx::query_as("SELECT * FROM competition ORDER BY id DESC")
            .fetch_all(&mut tdb)
            .await?;
    let list: Vec<CompetitionJson> = competitions.iter().map(CompetitionJson::from).collect();
    ok(&keyed("competitions", list))
}

#[derive(Deserialize)]
struct NewCompetition {
    title: Option<String>,
}

async fn post_competitions(
    State(app): AppState,
    headers: HeaderMap,
    body: Body,
) -> Result<Response> {
    let v = authorize(&app, &headers, &[ROLE_ORGANIZER]).await?;
    let req: NewCompetition = read_json(body).await?;
    let Some(title) = req.title.filter(|t| valid_text(t, MAX_TITLE)) else {
        return Err(bad_request());
    };
    let _lock = app.lock_tenant(v.tenant().id).await?;
    let mut tdb = app.tenant_db(v.tenant().id).await?;
    let id = app.new_id().await?;
    let now = unix_now();
    sqlx::query(
        "INSERT INTO competition (id, title, finished_at, last_upload, created_at, updated_at) \
         VALUES (?, ?, NULL, 0, ?, ?)",
    )
    .bind(id)
    .bind(&title)
    .bind(now)
    .bind(now)
    .execute(&mut tdb)
    .await?;
    let c: Competition = sqlx::query_as("SELECT * FROM competition WHERE id = ?")
        .bind(id)
        .fetch_one(&mut tdb)
        .await?;
    ok(&keyed("competition", CompetitionJson::from(&c)))
}

async fn post_finish(
    State(app): AppState,
    headers: HeaderMap,
    UrlPath(id): UrlPath<String>,
) -> Result<Response> {
    let v = authorize(&app, &headers, &[ROLE_ORGANIZER]).await?;
    let id = path_id(&id)?;
    let _lock = app.lock_tenant(v.tenant().id).await?;
    let mut tdb = app.tenant_db(v.tenant().id).await?;
    let c: Option<Competition> = sqlx::query_as("SELECT * FROM competition WHERE id = ?")
        .bind(id)
        .fetch_optional(&mut tdb)
        .await?;
    let c = c.ok_or_else(not_found_reply)?;
    if c.finished_at.is_some() {
        return Err(Reply::Answer(StatusCode::CONFLICT, "competition finished"));
    }
    let now = unix_now();
    sqlx::query("UPDATE competition SET finished_at = ?, updated_at = ? WHERE id = ?")
        .bind(now)
        .bind(now)
        .bind(id)
        .execute(&mut tdb)
        .await?;
    let c: Competition = sqlx::query_as("SELECT * FROM competition WHERE id = ?")
        .bind(id)
        .fetch_one(&mut tdb)
        .await?;
    ok(&keyed("competition", CompetitionJson::from(&c)))
}

/// Reads a score CSV as the manual defines it: (player id, score) for each data line, or None.
fn parse_scores(body: &[u8]) -> Option<Vec<(i64, i64)>> {
    let body = std::str::from_utf8(body).ok()?;
    let mut lines: Vec<&str> = body.split('\n').collect();
    if lines.last() == Some(&"") {
        lines.pop(); // the file's last "\n"
    }
    let lines: Vec<&str> = lines
        .iter()
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    if lines.first() != Some(&"player_id,score") {
        return None;
    }
    let mut rows = Vec::new();
    for line in &lines[1..] {
        let (id, score) = line.split_once(',')?;
        if !is_id(id) || !is_score(score) {
            return None;
        }
        rows.push((id.parse().ok()?, score.parse().ok()?));
    }
    Some(rows)
}

/// Reads the file in the part "scores" of a multipart/form-data body, or None.
async fn read_scores_file(headers: &HeaderMap, body: Body) -> Option<Vec<u8>> {
    let content_type = headers.get(header::CONTENT_TYPE)?.to_str().ok()?;
    let boundary = multer::parse_boundary(content_type).ok()?;
    let limits =
        multer::Constraints::new().size_limit(multer::SizeLimit::new().whole_stream(MAX_UPLOAD));
    let mut form = multer::Multipart::with_constraints(body.into_data_stream(), boundary, limits);
    while let Some(field) = form.next_field().await.ok()? {
        if field.name() == Some("scores") && field.file_name().is_some() {
            return field.bytes().await.ok().map(|b| b.to_vec());
        }
    }
    None
}

async fn post_scores(
    State(app): AppState,
    headers: HeaderMap,
    UrlPath(id): UrlPath<String>,
    body: Body,
) -> Result<Response> {
    let v = authorize(&app, &headers, &[ROLE_ORGANIZER]).await?;
    let id = path_id(&id)?;
    let _lock = app.lock_tenant(v.tenant().id).await?;
    let mut tdb = app.tenant_db(v.tenant().id).await?;
    let c: Option<Competition> = sqlx::query_as("SELECT * FROM competition WHERE id = ?")
        .bind(id)
        .fetch_optional(&mut tdb)
        .await?;
    let c = c.ok_or_else(not_found_reply)?;
    if c.finished_at.is_some() {
        return Err(Reply::Answer(StatusCode::CONFLICT, "competition finished"));
    }
    let file = read_scores_file(&headers, body)
        .await
        .ok_or_else(bad_request)?;
    let rows = parse_scores(&file).ok_or_else(bad_request)?;
    // Every player named must be the tenant's.
    for (player_id, _) in &rows {
        let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM player WHERE id = ?")
            .bind(player_id)
            .fetch_one(&mut tdb)
            .await?;
        if n == 0 {
            return Err(bad_request());
        }
    }
    let upload = c.last_upload + 1;
    let now = unix_now();
    let mut tx = tdb.begin().await?;
    for (i, (player_id, score)) in rows.iter().enumerate() {
        sqlx::query(
            "INSERT INTO player_score (competition_id, upload, row_num, player_id, score, created_at) \
             VALUES (?, ?, ?, ?, ?, ?)",
        )
        .bind(id)
        .bind(upload)
        .bind(i as i64 + 1)
        .bind(player_id)
        .bind(score)
        .bind(now)
        .execute(&mut *tx)
        .await?;
    }
    sqlx::query("UPDATE competition SET last_upload = ?, updated_at = ? WHERE id = ?")
        .bind(upload)
        .bind(now)
        .bind(id)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    ok(&keyed("rows", rows.len()))
}

async fn get_organizer_billing(State(app): AppState, headers: HeaderMap) -> Result<Response> {
    let v = authorize(&app, &headers, &[ROLE_ORGANIZER]).await?;
    let bills = app.tenant_billing(v.tenant().id).await?;
    let total: i64 = bills.iter().map(|b| b.billing).sum();
    ok(&keyed(
        "billing",
        BillingJson {
            total,
            competitions: bills,
        },
    ))
}

// Player.

#[derive(Serialize)]
struct ProfileJson {
    player: PlayerJson,
    scores: Vec<ScoreJson>,
}

async fn get_player(
    State(app): AppState,
    headers: HeaderMap,
    UrlPath(id): UrlPath<String>,
) -> Result<Response> {
    let v = authorize(&app, &headers, &[ROLE_PLAYER]).await?;
    let id = path_id(&id)?;
    let mut tdb = app.tenant_db(v.tenant().id).await?;
    let p: Option<Player> = sqlx::query_as("SELECT * FROM player WHERE id = ?")
        .bind(id)
        .fetch_optional(&mut tdb)
        .await?;
    let p = p.ok_or_else(not_found_reply)?;
    // The scores are read under the tenant's lock, lest an upload change them half way.
    let _lock = app.lock_tenant(v.tenant().id).await?;
    let competitions: Vec<Competition> = sqlx::query_as("SELECT * FROM competition ORDER BY id")
        .fetch_all(&mut tdb)
        .await?;
    let mut scores = Vec::new();
    for c in &competitions {
        // The player's last row in the competition's last upload.
        let s: Option<PlayerScore> = sqlx::query_as(
            "SELECT * FROM player_score WHERE competition_id = ? AND upload = ? AND player_id = ? \
             ORDER BY row_num DESC LIMIT 1",
        )
        .bind(c.id)
        .bind(c.last_upload)
        .bind(p.id)
        .fetch_optional(&mut tdb)
        .await?;
        if let Some(s) = s {
            scores.push(ScoreJson {
                competition_id: c.id,
                title: c.title.clone(),
                score: s.score,
            });
        }
    }
    ok(&ProfileJson {
        player: PlayerJson::from(&p),
        scores,
    })
}

#[derive(Serialize)]
struct RankingJson {
    competition: CompetitionJson,
    ranks: Vec<RankJson>,
}

async fn get_ranking(
    State(app): AppState,
    headers: HeaderMap,
    UrlPath(id): UrlPath<String>,
    Query(query): Query<Vec<(String, String)>>,
) -> Result<Response> {
    let v = authorize(&app, &headers, &[ROLE_PLAYER]).await?;
    let id = path_id(&id)?;
    let mut rank_after = 0;
    let s = query_value(&query, "rank_after");
    if !s.is_empty() {
        if !is_number(&s) {
            return Err(bad_request());
        }
        rank_after = s.parse()?;
    }
    let tenant_id = v.tenant().id;
    let mut tdb = app.tenant_db(tenant_id).await?;
    let c: Option<Competition> = sqlx::query_as("SELECT * FROM competition WHERE id = ?")
        .bind(id)
        .fetch_optional(&mut tdb)
        .await?;
    let c = c.ok_or_else(not_found_reply)?;
    let player_id = v.player.as_ref().map_or(0, |p| p.id);
    with_db!(&app.db, |pool| {
        sqlx::query(
        "INSERT INTO visit_history (player_id, tenant_id, competition_id, created_at) VALUES (?, ?, ?, ?)"
    )
    .bind(player_id)
    .bind(tenant_id)
    .bind(c.id)
    .bind(unix_now())
    .execute(pool)
    .await
    .map(|_| ())?
    });
    // The scores are read under the tenant's lock, lest an upload change them half way.
    let _lock = app.lock_tenant(tenant_id).await?;
    // Every row of the last upload, the last first: a player's last row is the one that counts.
    let rows: Vec<PlayerScore> = sqlx::query_as(
        "SELECT * FROM player_score WHERE competition_id = ? AND upload = ? ORDER BY row_num DESC",
    )
    .bind(c.id)
    .bind(c.last_upload)
    .fetch_all(&mut tdb)
    .await?;
    let mut entries: Vec<(PlayerScore, Player)> = Vec::new();
    let mut seen = HashSet::new();
    for s in rows {
        if !seen.insert(s.player_id) {
            continue;
        }
        let p: Player = sqlx::query_as("SELECT * FROM player WHERE id = ?")
            .bind(s.player_id)
            .fetch_one(&mut tdb)
            .await?;
        entries.push((s, p));
    }
    entries.sort_by(|(a, _), (b, _)| b.score.cmp(&a.score).then(a.row_num.cmp(&b.row_num)));
    let ranks: Vec<RankJson> = entries
        .into_iter()
        .enumerate()
        .map(|(i, (s, p))| RankJson {
            rank: i as i64 + 1,
            player_id: p.id,
            display_name: p.display_name,
            score: s.score,
        })
        .filter(|r| r.rank > rank_after)
        .take(RANKING_PAGE)
        .collect();
    ok(&RankingJson {
        competition: CompetitionJson::from(&c),
        ranks,
    })
}

// Common.

async fn get_me(State(app): AppState, headers: HeaderMap) -> Result<Response> {
    let v = authorize(&app, &headers, &[ROLE_ADMIN, ROLE_ORGANIZER, ROLE_PLAYER]).await?;
    ok(&MeJson {
        tenant: v.tenant.as_ref().map(|t| TenantJson {
            id: t.id,
            name: t.name.clone(),
            display_name: t.display_name.clone(),
        }),
        player: v.player.as_ref().map(PlayerJson::from),
        role: v.role,
        subject: v.subject,
    })
}

/// Restores the initial data: deletes what was added to the admin data, sets the id generator back, and puts the
/// initial tenant files back in place.
async fn post_initialize(State(app): AppState) -> Result<Response> {
    reset_admin(&app.db).await?;
    app.reset_tenants().await?;
    ok(&keyed("lang", "rust"))
}

async fn reset_admin(db: &Db) -> Result<()> {
    let mut statements = vec![
        format!("DELETE FROM tenant WHERE id > {INITIAL_TENANTS}"),
        format!("DELETE FROM visit_history WHERE created_at >= {INITIAL_END}"),
        "DELETE FROM id_generator".to_string(),
    ];
    match db {
        Db::MySql(_) => statements.extend([
            format!("ALTER TABLE id_generator AUTO_INCREMENT = {INITIAL_NEXT_ID}"),
            format!(
                "ALTER TABLE tenant AUTO_INCREMENT = {}",
                INITIAL_TENANTS + 1
            ),
        ]),
        Db::Sqlite(_) => statements.extend([
            "DELETE FROM sqlite_sequence WHERE name = 'id_generator'".to_string(),
            format!(
                "INSERT INTO sqlite_sequence (name, seq) VALUES ('id_generator', {})",
                INITIAL_NEXT_ID - 1
            ),
        ]),
    }
    for s in &statements {
        with_db!(db, |pool| sqlx::raw_sql(s)
            .execute(pool)
            .await
            .map(|_| ())?);
    }
    Ok(())
}

impl App {
    /// Removes the files of the tenants added since and copies every initial tenant's file back, each under its
    /// tenant's lock.
    async fn reset_tenants(&self) -> Result<()> {
        for entry in std::fs::read_dir(&self.tenant_dir)? {
            let name = entry?.file_name();
            let name = name.to_string_lossy();
            let stem = name.split('.').next().unwrap_or("");
            if stem.parse::<i64>().is_ok_and(|id| id > INITIAL_TENANTS) {
                let _ = std::fs::remove_file(self.tenant_dir.join(&*name));
            }
        }
        for id in 1..=INITIAL_TENANTS {
            let lock = self.lock_tenant(id).await?;
            let src = self.initial_dir.join("tenants").join(format!("{id}.db"));
            let _ = std::fs::remove_file(format!("{}-journal", self.tenant_path(id).display()));
            let copied = copy_file(&src, &self.tenant_path(id));
            drop(lock);
            copied?;
        }
        Ok(())
    }
}

// The single-page app.

async fn get_index(State(app): AppState, req: Request) -> Result<Response> {
    serve_file(app.root.join("public").join("index.html"), req).await
}

/// Serves the files under public/; anything else there (a directory, a missing file) is not found.
async fn get_static(
    State(app): AppState,
    UrlPath(file): UrlPath<String>,
    req: Request,
) -> Result<Response> {
    // The path, cleaned as if rooted: ".." goes no higher than public/.
    let mut clean: Vec<&str> = Vec::new();
    for part in file.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                clean.pop();
            }
            p => clean.push(p),
        }
    }
    let name = clean
        .iter()
        .fold(app.root.join("public"), |p, part| p.join(part));
    match tokio::fs::metadata(&name).await {
        Ok(m) if m.is_file() => serve_file(name, req).await,
        _ => Err(not_found_reply()),
    }
}

async fn serve_file(path: PathBuf, req: Request) -> Result<Response> {
    let response = ServeFile::new(path).try_call(req).await?;
    Ok(response.map(Body::new))
}
