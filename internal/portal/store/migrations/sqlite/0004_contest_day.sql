-- The contest day: the timeline's other times, the revision the live pages
-- watch, each team's bracket, hidden flag and extra time, and the audit log
-- of admin actions. Existing rows take the defaults: no times set, no
-- bracket, shown, no extra time.

ALTER TABLE contest ADD COLUMN registration_at TIMESTAMP;
ALTER TABLE contest ADD COLUMN freezes_at      TIMESTAMP;
ALTER TABLE contest ADD COLUMN reveals_at      TIMESTAMP;
ALTER TABLE contest ADD COLUMN revision        INTEGER NOT NULL DEFAULT 0;

ALTER TABLE teams ADD COLUMN bracket       TEXT    NOT NULL DEFAULT '';
ALTER TABLE teams ADD COLUMN hidden        BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE teams ADD COLUMN extra_time_ms INTEGER NOT NULL DEFAULT 0;

CREATE TABLE audit_log (
    id       INTEGER PRIMARY KEY AUTOINCREMENT,
    at       TIMESTAMP NOT NULL,
    actor_id INTEGER,                          -- accounts.id; NULL for tunecon itself (no foreign key: the log outlives accounts)
    actor    TEXT      NOT NULL,               -- the login at the time
    action   TEXT      NOT NULL,               -- portal.Audit*
    subject  TEXT      NOT NULL,
    detail   TEXT      NOT NULL DEFAULT '{}'   -- JSON
);
