-- The leaderboard finds each team's latest passed job, and counts its
-- finished ones, by seeks in this index rather than a scan of the team's
-- jobs: it is read again each time a job finishes, hundreds of teams at once.
CREATE INDEX jobs_team_results ON jobs (team_id, state, verdict, finished_at);
