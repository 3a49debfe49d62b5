-- Open data: each team's read-only API tokens, kept as the SHA-256 of the
-- token (hex); the token itself is shown to its team once and never stored.
-- Revoking a token deletes its row.

CREATE TABLE api_tokens (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    team_id      INTEGER   NOT NULL REFERENCES teams (id),
    name         TEXT      NOT NULL,
    token_hash   TEXT      NOT NULL UNIQUE,
    created_by   TEXT      NOT NULL,           -- the member's login at the time
    created_at   TIMESTAMP NOT NULL,
    last_used_at TIMESTAMP,
    UNIQUE (team_id, name)
);
