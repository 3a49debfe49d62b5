-- Accounts, their sessions, and teams joined by an invite code.

-- NULL for teams made before accounts (by tests and tools): nobody joins them.
ALTER TABLE teams ADD COLUMN invite_code TEXT;
CREATE UNIQUE INDEX teams_invite_code ON teams (invite_code);

CREATE TABLE accounts (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    login         TEXT      NOT NULL UNIQUE,   -- lower case (portal.CheckLogin)
    password_hash TEXT      NOT NULL,          -- bcrypt
    role          TEXT      NOT NULL CHECK (role IN ('admin', 'contestant')),
    team_id       INTEGER   REFERENCES teams (id),
    created_at    TIMESTAMP NOT NULL
);
CREATE INDEX accounts_team ON accounts (team_id);

CREATE TABLE sessions (
    token_hash TEXT      PRIMARY KEY,          -- SHA-256 of the cookie's token, hex
    account_id INTEGER   NOT NULL REFERENCES accounts (id),
    created_at TIMESTAMP NOT NULL,
    expires_at TIMESTAMP NOT NULL
);
CREATE INDEX sessions_account ON sessions (account_id);
CREATE INDEX sessions_expiry ON sessions (expires_at);

-- The leaderboard reads each team's finished jobs.
CREATE INDEX jobs_finished ON jobs (state, finished_at);
