-- Team servers, what the organiser knows of each member, and one-time
-- sign-in links: the team import.

-- A contest with assigned servers benchmarks a team's own servers only. A
-- host (portal.TargetHost) is one team's server at most, whatever its port.
CREATE TABLE servers (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    team_id    INTEGER   NOT NULL REFERENCES teams (id),
    url        TEXT      NOT NULL,             -- http://HOST[:PORT]/, what a job hits
    host       TEXT      NOT NULL UNIQUE,
    label      TEXT      NOT NULL DEFAULT '',
    created_at TIMESTAMP NOT NULL
);
CREATE INDEX servers_team ON servers (team_id);

-- Who an imported account's owner is, as the organiser listed them.
ALTER TABLE accounts ADD COLUMN display_name TEXT NOT NULL DEFAULT '';
ALTER TABLE accounts ADD COLUMN email TEXT NOT NULL DEFAULT '';

-- A sign-in link's token is kept as its SHA-256 (hex), shown once. A link
-- works once (used_at set), until it expires.
CREATE TABLE signin_links (
    token_hash TEXT      PRIMARY KEY,
    account_id INTEGER   NOT NULL REFERENCES accounts (id),
    created_at TIMESTAMP NOT NULL,
    expires_at TIMESTAMP NOT NULL,
    used_at    TIMESTAMP
);
CREATE INDEX signin_links_account ON signin_links (account_id);
