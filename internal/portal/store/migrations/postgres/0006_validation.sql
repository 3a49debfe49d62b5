-- Post-contest validation, disqualification and worker quarantine:
-- migrations/sqlite/0006_validation.sql in PostgreSQL's types.

ALTER TABLE jobs ADD COLUMN kind TEXT NOT NULL DEFAULT 'normal' CHECK (kind IN ('normal', 'validation'));
DROP INDEX jobs_one_active_per_team;
CREATE UNIQUE INDEX jobs_one_active_per_team ON jobs (team_id, kind) WHERE state IN ('queued', 'running');

ALTER TABLE teams ADD COLUMN disqualified BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE teams ADD COLUMN dq_reason    TEXT    NOT NULL DEFAULT '';

ALTER TABLE workers ADD COLUMN quarantined_at    TIMESTAMPTZ;
ALTER TABLE workers ADD COLUMN quarantine_reason TEXT NOT NULL DEFAULT '';
ALTER TABLE workers ADD COLUMN cleared_at        TIMESTAMPTZ;
