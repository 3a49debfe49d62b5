-- A staff member claims a waiting question before answering it, so that
-- two do not answer one: claimer is the staff login ('' for none).
ALTER TABLE clarifications ADD COLUMN claimer TEXT NOT NULL DEFAULT '';
