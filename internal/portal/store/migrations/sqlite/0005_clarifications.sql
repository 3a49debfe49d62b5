-- Announcements from staff, each account's last one read, and the teams'
-- questions with staff's answers.

CREATE TABLE announcements (
    id        INTEGER PRIMARY KEY AUTOINCREMENT,
    at        TIMESTAMP NOT NULL,
    author_id INTEGER,                  -- accounts.id (no foreign key: kept as the audit log keeps it)
    author    TEXT      NOT NULL,       -- the login at the time
    text      TEXT      NOT NULL        -- Markdown
);

-- An account's unread announcements are those after last_read.
CREATE TABLE announcement_reads (
    account_id INTEGER PRIMARY KEY REFERENCES accounts (id),
    last_read  INTEGER NOT NULL
);

CREATE TABLE clarifications (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    team_id     INTEGER   NOT NULL REFERENCES teams (id),
    asker       TEXT      NOT NULL,                 -- the asker's login
    asked_at    TIMESTAMP NOT NULL,
    original    TEXT      NOT NULL,                 -- as asked, for staff
    question    TEXT      NOT NULL,                 -- as shown: staff may edit it when publishing
    answer      TEXT      NOT NULL DEFAULT '',
    answered_at TIMESTAMP,                          -- NULL: waiting for an answer
    answerer    TEXT      NOT NULL DEFAULT '',
    published   BOOLEAN   NOT NULL DEFAULT FALSE,
    version     INTEGER   NOT NULL DEFAULT 1        -- +1 at each change: the live pages' fingerprint
);
CREATE INDEX clarifications_team ON clarifications (team_id, answered_at);
