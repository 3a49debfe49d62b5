package data

// The schemas of the SQLite files Write makes: copies of
// webapp/sql/admin.sqlite.sql and webapp/sql/tenant.sql, which the reference
// apps run (a test checks that they are the same).
const (
	adminSQLiteSchema = `-- The admin data of the leagues problem, for SQLite. No index but the keys and the unique tenant name: a bill
-- reads the whole visit history.
-- "INTEGER PRIMARY KEY" without AUTOINCREMENT hands out max(id)+1, so after POST /initialize deletes the tenants
-- added during a run, new tenants get ids right after the initial ones. The id generator's AUTOINCREMENT keeps its
-- counter in sqlite_sequence, which /initialize sets back.
CREATE TABLE tenant (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  display_name TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE TABLE id_generator (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  stub TEXT NOT NULL UNIQUE
);
CREATE TABLE visit_history (
  player_id INTEGER NOT NULL,
  tenant_id INTEGER NOT NULL,
  competition_id INTEGER NOT NULL,
  created_at INTEGER NOT NULL
);
`
	tenantSchema = `-- One tenant's data in the leagues problem: a SQLite file per tenant, made with this schema when the tenant is
-- added. No index but the keys: a ranking reads every score row of the tenant. player_score keeps every row of
-- every upload; only the competition's last upload counts (last_upload, 0 before the first), and in it the last
-- row of each player.
CREATE TABLE player (
  id INTEGER PRIMARY KEY,
  display_name TEXT NOT NULL,
  is_disqualified INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE TABLE competition (
  id INTEGER PRIMARY KEY,
  title TEXT NOT NULL,
  finished_at INTEGER,
  last_upload INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE TABLE player_score (
  id INTEGER PRIMARY KEY,
  competition_id INTEGER NOT NULL,
  upload INTEGER NOT NULL,
  row_num INTEGER NOT NULL,
  player_id INTEGER NOT NULL,
  score INTEGER NOT NULL,
  created_at INTEGER NOT NULL
);
`
)
