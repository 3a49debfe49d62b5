-- Schema of the tuned blog for SQLite: the reference schema plus one index.
-- comment_article_id lets "the comments of article N, in id order" read a few index entries instead of scanning
-- the whole table. (A SQLite index always ends with the rowid, so (article_id) alone would be the same index;
-- the id is spelled out for readers and for MariaDB.)
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
CREATE INDEX comment_article_id ON comment (article_id, id);
