-- A team's name as it is compared (portal.NameKey): two names that look
-- alike on the leaderboard share a key, and only one team may have it.
-- The store fills it for the teams made before (Migrate); NULL is left to
-- a team whose name looks like an older team's, until it is renamed.
ALTER TABLE teams ADD COLUMN name_key TEXT;
CREATE UNIQUE INDEX teams_name_lookalike ON teams (name_key);
