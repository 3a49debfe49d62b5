-- A team's name as it is compared (portal.NameKey):
-- migrations/sqlite/0011_team_name_key.sql in PostgreSQL's types.
ALTER TABLE teams ADD COLUMN name_key TEXT;
CREATE UNIQUE INDEX teams_name_lookalike ON teams (name_key);
