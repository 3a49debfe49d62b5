-- Schema of the blog problem for SQLite. Only primary keys: no other index.
-- "INTEGER PRIMARY KEY" without AUTOINCREMENT hands out max(id)+1, so after POST /initialize deletes the rows
-- added during a run, new ids start again right after the initial data, as on MariaDB.
CREATE TABLE article (
  id INTEGER PRIMARY KEY,
  title TEXT NOT NULL,
  body TEXT NOT NULL,
  created_at DATETIME NOT NULL
);
CREATE TABLE comment (
  id INTEGER PRIMARY KEY,
  article_id INTEGER NOT NULL,
  name TEXT NOT NULL DEFAULT '',
  body TEXT NOT NULL,
  created_at DATETIME NOT NULL
);
