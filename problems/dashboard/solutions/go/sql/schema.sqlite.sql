CREATE TABLE users (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    email      TEXT    NOT NULL UNIQUE,
    salt       TEXT    NOT NULL,
    passhash   TEXT    NOT NULL,
    grade      TEXT    NOT NULL,
    created_at TEXT    NOT NULL
);

-- arg is the user's subscriptions as one JSON object: service name -> its parameters.
CREATE TABLE subscriptions (
    user_id INTEGER PRIMARY KEY,
    arg     TEXT    NOT NULL
);

CREATE TABLE sessions (
    token      TEXT    PRIMARY KEY,
    user_id    INTEGER NOT NULL,
    created_at TEXT    NOT NULL
);

-- One row: where the external services are (POST /initialize).
CREATE TABLE endpoints (
    id    INTEGER PRIMARY KEY,
    http  TEXT    NOT NULL,
    https TEXT    NOT NULL
);
