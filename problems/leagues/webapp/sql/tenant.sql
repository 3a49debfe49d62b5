-- One tenant's data in the leagues problem: a SQLite file per tenant, made with this schema when the tenant is
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
