-- Schema of the memo problem for SQLite. No index but the keys and the unique user name: / counts and sorts the
-- whole memos table on every request.
-- "INTEGER PRIMARY KEY" without AUTOINCREMENT hands out max(id)+1, so after POST /initialize deletes the rows added
-- during a run, new ids start again right after the initial data.
CREATE TABLE users (
  id INTEGER PRIMARY KEY,
  username TEXT NOT NULL UNIQUE,
  salt TEXT NOT NULL,
  password_hash TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE TABLE memos (
  id INTEGER PRIMARY KEY,
  user_id INTEGER NOT NULL,
  content TEXT NOT NULL,
  is_private INTEGER NOT NULL,
  created_at TEXT NOT NULL
);
CREATE TABLE sessions (
  id TEXT PRIMARY KEY,
  user_id INTEGER NOT NULL,
  csrf_token TEXT NOT NULL,
  created_at TEXT NOT NULL
);
