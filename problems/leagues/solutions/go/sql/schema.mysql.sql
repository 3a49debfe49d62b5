-- The tuned app's own store (SPOILER), for MariaDB or MySQL: see schema.sqlite.sql.
CREATE TABLE IF NOT EXISTS meta (
  id BIGINT NOT NULL PRIMARY KEY,
  next_id BIGINT NOT NULL,
  source VARCHAR(255) NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin;
CREATE TABLE IF NOT EXISTS tenants (
  id BIGINT NOT NULL PRIMARY KEY,
  name VARCHAR(63) NOT NULL UNIQUE,
  display_name VARCHAR(255) NOT NULL,
  created_at BIGINT NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin;
CREATE TABLE IF NOT EXISTS players (
  id BIGINT NOT NULL PRIMARY KEY,
  tenant_id BIGINT NOT NULL,
  display_name VARCHAR(255) NOT NULL,
  is_disqualified TINYINT NOT NULL,
  created_at BIGINT NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin;
CREATE TABLE IF NOT EXISTS competitions (
  id BIGINT NOT NULL PRIMARY KEY,
  tenant_id BIGINT NOT NULL,
  title VARCHAR(512) NOT NULL,
  finished_at BIGINT NULL,
  created_at BIGINT NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin;
CREATE TABLE IF NOT EXISTS scores (
  competition_id BIGINT NOT NULL,
  player_id BIGINT NOT NULL,
  row_num BIGINT NOT NULL,
  score BIGINT NOT NULL,
  PRIMARY KEY (competition_id, player_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin;
CREATE TABLE IF NOT EXISTS visits (
  competition_id BIGINT NOT NULL,
  player_id BIGINT NOT NULL,
  created_at BIGINT NOT NULL,
  PRIMARY KEY (competition_id, player_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin;
