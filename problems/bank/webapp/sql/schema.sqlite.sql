-- Schema of the bank problem for SQLite. Only primary keys and the unique login: no other index.
-- "INTEGER PRIMARY KEY" without AUTOINCREMENT hands out max(id)+1, so after POST /initialize deletes the rows
-- added during a run, new ids start again right after the initial data, as on MariaDB.
CREATE TABLE users (
  id INTEGER PRIMARY KEY,
  login TEXT NOT NULL UNIQUE,
  password_hash TEXT NOT NULL,
  salt TEXT NOT NULL
);
-- Every login attempt. user_id is NULL when the login names no user.
CREATE TABLE login_log (
  id INTEGER PRIMARY KEY,
  created_at DATETIME NOT NULL,
  user_id INTEGER,
  login TEXT NOT NULL,
  ip TEXT NOT NULL,
  succeeded INTEGER NOT NULL
);
-- Sessions, named by the random token in the bank_session cookie. user_id and login_log_id (the successful attempt
-- that logged the user in) are NULL until someone logs in; notice is the message the login page shows once.
CREATE TABLE sessions (
  id TEXT PRIMARY KEY,
  user_id INTEGER,
  login_log_id INTEGER,
  notice TEXT,
  created_at DATETIME NOT NULL
);
