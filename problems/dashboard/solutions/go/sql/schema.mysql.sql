CREATE TABLE users (
    id         BIGINT       NOT NULL AUTO_INCREMENT PRIMARY KEY,
    email      VARCHAR(64)  NOT NULL UNIQUE,
    salt       VARCHAR(32)  NOT NULL,
    passhash   VARCHAR(128) NOT NULL,
    grade      VARCHAR(16)  NOT NULL,
    created_at DATETIME     NOT NULL
) DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin;

-- arg is the user's subscriptions as one JSON object: service name -> its parameters.
CREATE TABLE subscriptions (
    user_id BIGINT NOT NULL PRIMARY KEY,
    arg     TEXT   NOT NULL
) DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin;

CREATE TABLE sessions (
    token      VARCHAR(64) NOT NULL PRIMARY KEY,
    user_id    BIGINT      NOT NULL,
    created_at DATETIME    NOT NULL
) DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin;

-- One row: where the external services are (POST /initialize).
CREATE TABLE endpoints (
    id    INT          NOT NULL PRIMARY KEY,
    http  VARCHAR(255) NOT NULL,
    https VARCHAR(255) NOT NULL
) DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin;
