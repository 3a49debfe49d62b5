-- The contest, its teams, the benchmark jobs and their attempts, the workers.
-- Times are TIMESTAMP in UTC (written by the store from its injected clock).

CREATE TABLE contest (
    id               INTEGER PRIMARY KEY CHECK (id = 1),
    problem          TEXT    NOT NULL,
    load_duration_ms INTEGER NOT NULL DEFAULT 0,
    starts_at        TIMESTAMP,
    ends_at          TIMESTAMP,
    settings         TEXT    NOT NULL DEFAULT '{}'  -- JSON
);

CREATE TABLE teams (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    name       TEXT      NOT NULL UNIQUE,
    target     TEXT      NOT NULL DEFAULT '',
    created_at TIMESTAMP NOT NULL
);

CREATE TABLE jobs (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    team_id      INTEGER   NOT NULL REFERENCES teams (id),
    problem      TEXT      NOT NULL,
    target       TEXT      NOT NULL,
    state        TEXT      NOT NULL
        CHECK (state IN ('queued', 'running', 'finished', 'errored', 'cancelled')),
    verdict      TEXT      NOT NULL DEFAULT ''
        CHECK (verdict IN ('', 'passed', 'failed')),
    score        REAL,
    result       TEXT,                         -- engine.Result as JSON
    staff_log    TEXT      NOT NULL DEFAULT '',
    messages     TEXT      NOT NULL DEFAULT '[]', -- JSON array, for the contestant
    error_code   TEXT      NOT NULL DEFAULT '',
    error        TEXT      NOT NULL DEFAULT '',
    created_at   TIMESTAMP NOT NULL,
    started_at   TIMESTAMP,
    finished_at  TIMESTAMP,
    worker       TEXT      NOT NULL DEFAULT '',
    attempts     INTEGER   NOT NULL DEFAULT 0,
    max_attempts INTEGER   NOT NULL,
    river_job_id INTEGER   UNIQUE,             -- river_job.id (River deletes old rows; no foreign key)
    rerun_of     INTEGER   REFERENCES jobs (id),
    deadline_ms  INTEGER   NOT NULL,
    progress_phase    TEXT    NOT NULL DEFAULT '',
    progress_score    REAL    NOT NULL DEFAULT 0,
    progress_requests INTEGER NOT NULL DEFAULT 0,
    progress_errors   INTEGER NOT NULL DEFAULT 0,
    progress_users    INTEGER NOT NULL DEFAULT 0,
    progress_at       TIMESTAMP
);

CREATE INDEX jobs_team ON jobs (team_id, id);
-- River's unique job keeps one active job per team; this keeps our rows to
-- the same rule even while a row and its River job disagree for a moment.
CREATE UNIQUE INDEX jobs_one_active_per_team ON jobs (team_id) WHERE state IN ('queued', 'running');

CREATE TABLE job_attempts (
    job_id     INTEGER   NOT NULL REFERENCES jobs (id),
    n          INTEGER   NOT NULL,
    worker     TEXT      NOT NULL,
    started_at TIMESTAMP NOT NULL,
    ended_at   TIMESTAMP,
    outcome    TEXT      NOT NULL DEFAULT '',
    error      TEXT      NOT NULL DEFAULT '',
    PRIMARY KEY (job_id, n)
);

CREATE TABLE workers (
    name            TEXT      PRIMARY KEY,
    started_at      TIMESTAMP NOT NULL,
    heartbeat_at    TIMESTAMP NOT NULL,
    doing           TEXT      NOT NULL DEFAULT '',
    problems        TEXT      NOT NULL DEFAULT '[]', -- JSON array
    jobs_done       INTEGER   NOT NULL DEFAULT 0,
    internal_errors INTEGER   NOT NULL DEFAULT 0
);
