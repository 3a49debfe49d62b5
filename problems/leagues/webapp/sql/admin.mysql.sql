-- The admin data of the leagues problem, for MariaDB (or MySQL). No index but the keys and the unique tenant name:
-- a bill reads the whole visit history. The binary collation compares names byte for byte, as SQLite does.
CREATE TABLE tenant (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  name VARCHAR(63) NOT NULL UNIQUE,
  display_name VARCHAR(255) NOT NULL,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin;
CREATE TABLE id_generator (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  stub CHAR(1) NOT NULL UNIQUE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin;
CREATE TABLE visit_history (
  player_id BIGINT NOT NULL,
  tenant_id BIGINT NOT NULL,
  competition_id BIGINT NOT NULL,
  created_at BIGINT NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin;
