-- Schema of the tuned memo app for SQLite: the reference schema plus two indexes on memos, created after the dump
-- is loaded. The tuned app reads the memos table once, in key order, at start and on POST /initialize, and then
-- one memo at a time by key; the indexes are what "the public memos, newest first" and "a user's memos in order"
-- need as soon as anything asks SQL for them (see ../../README.md). A SQLite index always ends with the rowid, so
-- the id is there anyway; it is spelled out for readers and for MariaDB.
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
CREATE INDEX memos_is_private_id ON memos (is_private, id);
CREATE INDEX memos_user_id_id ON memos (user_id, id);
