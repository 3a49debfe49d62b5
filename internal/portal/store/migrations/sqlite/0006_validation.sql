-- Post-contest validation, disqualification and worker quarantine.
--
-- A job has a kind: a team's own benchmark ('normal') or a validation run
-- staff queue after the end ('validation'), which never counts on a board
-- and which teams never see. A team has at most one active job of each
-- kind, so a validation run neither blocks nor is blocked by the team's own
-- (the queue runs them one after the other: see queue's Validate).
-- Existing jobs are the teams' own.

ALTER TABLE jobs ADD COLUMN kind TEXT NOT NULL DEFAULT 'normal' CHECK (kind IN ('normal', 'validation'));
DROP INDEX jobs_one_active_per_team;
CREATE UNIQUE INDEX jobs_one_active_per_team ON jobs (team_id, kind) WHERE state IN ('queued', 'running');

-- A disqualified team stays on the boards, struck, without a rank, and
-- cannot enqueue; the reason is for staff and the team.
ALTER TABLE teams ADD COLUMN disqualified BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE teams ADD COLUMN dq_reason    TEXT    NOT NULL DEFAULT '';

-- A quarantined worker takes no job until staff clear it; its health is
-- judged on the jobs it ended after cleared_at.
ALTER TABLE workers ADD COLUMN quarantined_at    TIMESTAMP;
ALTER TABLE workers ADD COLUMN quarantine_reason TEXT NOT NULL DEFAULT '';
ALTER TABLE workers ADD COLUMN cleared_at        TIMESTAMP;
