package portal

import (
	"encoding/json"
	"time"
)

// Actor is who did an admin action: an account, by its id and login (the
// login is kept with the entry, so the log reads the same whatever happens
// to the account later). The zero Actor is tunecon itself: a tool or a
// test, not a person.
type Actor struct {
	ID    int64  `json:"id,omitempty"`
	Login string `json:"login"`
}

// ActorOf is the account as an actor.
func ActorOf(a Account) Actor { return Actor{ID: a.ID, Login: a.Login} }

// Audited actions: what each entry of the audit log records. The store
// writes an entry in the transaction that makes the change, so a change
// that failed leaves none and one that was made leaves exactly one.
const (
	// AuditSettings: the contest's problem and settings changed.
	AuditSettings = "contest.settings"
	// AuditTimeline: times of the timeline set from the admin's form.
	AuditTimeline = "contest.timeline"
	// AuditNow: one time of the timeline set to now by its button
	// ("contest.now.freeze", "contest.now.reveal", ...).
	AuditNow = "contest.now."
	// AuditTeam: a team's bracket, hidden flag or extra time changed.
	AuditTeam = "team.update"
	// AuditRerun: an errored job run again.
	AuditRerun = "job.rerun"
	// AuditCancel: a job cancelled.
	AuditCancel = "job.cancel"
	// AuditTeamRename: a team's name changed.
	AuditTeamRename = "team.rename"
	// AuditTeamRemove: a team without members or jobs removed.
	AuditTeamRemove = "team.remove"
	// AuditPassword: an account's owner changed its password (the entry's
	// actor is the owner).
	AuditPassword = "account.password"
)

// AuditEntry is one admin action.
type AuditEntry struct {
	ID int64     `json:"id"`
	At time.Time `json:"at"`
	By Actor     `json:"by"`
	// Action is one of the Audit constants.
	Action string `json:"action"`
	// Subject is what it acted on ("contest", "job 12", "team 3").
	Subject string `json:"subject"`
	// Detail says what changed, as JSON: before and after, or the jobs
	// concerned.
	Detail json.RawMessage `json:"detail"`
}

// Change is one field of an audited change, before and after.
type Change struct {
	Before any `json:"before"`
	After  any `json:"after"`
}
