-- A question's claimer: migrations/sqlite/0012_clarification_claims.sql.
ALTER TABLE clarifications ADD COLUMN claimer TEXT NOT NULL DEFAULT '';
