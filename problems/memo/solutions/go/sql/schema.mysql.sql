-- Schema of the tuned memo app for MariaDB (or MySQL): the reference schema plus two indexes on memos (see
-- schema.sqlite.sql). They are declared with the table: on MariaDB a CREATE INDEX would commit the transaction that
-- loads the dump. The binary collation compares names byte for byte, as SQLite does.
CREATE TABLE users (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  username VARCHAR(64) NOT NULL UNIQUE,
  salt VARCHAR(64) NOT NULL,
  password_hash VARCHAR(64) NOT NULL,
  created_at DATETIME NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin;
CREATE TABLE memos (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  user_id BIGINT NOT NULL,
  content MEDIUMTEXT NOT NULL,
  is_private TINYINT NOT NULL,
  created_at DATETIME NOT NULL,
  INDEX memos_is_private_id (is_private, id),
  INDEX memos_user_id_id (user_id, id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin;
CREATE TABLE sessions (
  id VARCHAR(64) NOT NULL PRIMARY KEY,
  user_id BIGINT NOT NULL,
  csrf_token VARCHAR(64) NOT NULL,
  created_at DATETIME NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin;
