-- The admin data of the leagues problem, for SQLite. No index but the keys and the unique tenant name: a bill
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
