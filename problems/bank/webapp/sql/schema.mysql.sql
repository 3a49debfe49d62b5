-- Schema of the bank problem for MariaDB (and MySQL). Only primary keys and the unique login: no other index.
-- The binary NO PAD collation compares text byte for byte, trailing spaces included, as SQLite does: logins are
-- case-sensitive and `u0000002 ` is not `u0000002`.
CREATE TABLE users (
  id INT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  login VARCHAR(64) NOT NULL,
  password_hash CHAR(64) NOT NULL,
  salt VARCHAR(32) NOT NULL,
  UNIQUE KEY login (login)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin;
-- Every login attempt. user_id is NULL when the login names no user.
CREATE TABLE login_log (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  created_at DATETIME NOT NULL,
  user_id INT NULL,
  login VARCHAR(255) NOT NULL,
  ip VARCHAR(255) NOT NULL,
  succeeded TINYINT NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin;
-- Sessions, named by the random token in the bank_session cookie. user_id and login_log_id (the successful attempt
-- that logged the user in) are NULL until someone logs in; notice is the message the login page shows once.
CREATE TABLE sessions (
  id CHAR(64) NOT NULL PRIMARY KEY,
  user_id INT NULL,
  login_log_id BIGINT NULL,
  notice VARCHAR(32) NULL,
  created_at DATETIME NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin;
