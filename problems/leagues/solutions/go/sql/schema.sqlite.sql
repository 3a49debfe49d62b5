-- The tuned app's own store (SPOILER): every tenant in one database, only the rows a bill or an answer needs.
-- The tables have other names than the reference's (tenant, id_generator, visit_history), so that both apps can
-- share a database without touching each other's rows.
CREATE TABLE IF NOT EXISTS meta (
  id INTEGER PRIMARY KEY,
  next_id INTEGER NOT NULL,  -- the id generator: the next id of a player or a competition
  source TEXT NOT NULL       -- the VERSION of the initial data it was made from
);
CREATE TABLE IF NOT EXISTS tenants (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  display_name TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS players (
  id INTEGER PRIMARY KEY,
  tenant_id INTEGER NOT NULL,
  display_name TEXT NOT NULL,
  is_disqualified INTEGER NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS competitions (
  id INTEGER PRIMARY KEY,
  tenant_id INTEGER NOT NULL,
  title TEXT NOT NULL,
  finished_at INTEGER,       -- NULL while it runs
  created_at INTEGER NOT NULL
);
-- The score that counts, one row per player and competition: the player's last row in the last upload.
CREATE TABLE IF NOT EXISTS scores (
  competition_id INTEGER NOT NULL,
  player_id INTEGER NOT NULL,
  row_num INTEGER NOT NULL,  -- the row's line in the CSV, from 1 after the header: the tie-break
  score INTEGER NOT NULL,
  PRIMARY KEY (competition_id, player_id)
) WITHOUT ROWID;
-- A player's first read of a competition's ranking, kept only while it can count: before the finish.
CREATE TABLE IF NOT EXISTS visits (
  competition_id INTEGER NOT NULL,
  player_id INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (competition_id, player_id)
) WITHOUT ROWID;
