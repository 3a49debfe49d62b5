-- A host serves one team. Where targets may not be on the workers' own
-- machine, a team's target host is kept beside its target, and the index
-- refuses a second team's target on the same host, whatever the port or
-- path. NULL: none kept (a contest on one machine, a target set by the
-- organiser, or one set before this step).
ALTER TABLE teams ADD COLUMN target_host TEXT;
CREATE UNIQUE INDEX teams_target_host ON teams (target_host);
