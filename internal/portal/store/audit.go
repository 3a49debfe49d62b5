package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/tunecon/tunecon/internal/portal"
)

// Audit records an admin action in the transaction that makes it: if the
// transaction rolls back, so does the entry. detail is marshalled to JSON.
func (t *Tx) Audit(ctx context.Context, by portal.Actor, action, subject string, detail any) error {
	raw, err := json.Marshal(detail)
	if err != nil {
		return fmt.Errorf("store: the audit entry of %s: %w", action, err)
	}
	_, err = t.exec(ctx, `INSERT INTO audit_log (at, actor_id, actor, action, subject, detail) VALUES (?, ?, ?, ?, ?, ?)`,
		t.stamp(), sql.NullInt64{Int64: by.ID, Valid: by.ID != 0}, by.Login, action, subject, string(raw))
	if err != nil {
		return fmt.Errorf("store: recording %s: %w", action, err)
	}
	return nil
}

// AuditLog lists the audit log, oldest first.
func (q *queries) AuditLog(ctx context.Context) ([]portal.AuditEntry, error) {
	rows, err := q.query(ctx, `SELECT id, at, COALESCE(actor_id, 0), actor, action, subject, detail FROM audit_log ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("store: reading the audit log: %w", err)
	}
	defer rows.Close()
	out := []portal.AuditEntry{}
	for rows.Next() {
		var e portal.AuditEntry
		var detail string
		if err := rows.Scan(&e.ID, &e.At, &e.By.ID, &e.By.Login, &e.Action, &e.Subject, &detail); err != nil {
			return nil, fmt.Errorf("store: reading the audit log: %w", err)
		}
		e.Detail = json.RawMessage(detail)
		out = append(out, e)
	}
	return out, rows.Err()
}
