package store

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"

	"github.com/tunecon/tunecon/internal/portal"
)

// Announce posts an announcement by by (Markdown, at most
// portal.MaxAnnouncement bytes), and records it in the audit log.
func (s *Store) Announce(ctx context.Context, by portal.Actor, text string) (portal.Announcement, error) {
	text, err := portal.CheckText("an announcement", text, portal.MaxAnnouncement)
	if err != nil {
		return portal.Announcement{}, err
	}
	a := portal.Announcement{By: by.Login, Text: text}
	err = s.InTx(ctx, func(tx *Tx) error {
		a.At = tx.stamp()
		err := tx.queryRow(ctx, `INSERT INTO announcements (at, author_id, author, text) VALUES (?, ?, ?, ?) RETURNING id`,
			a.At, sql.NullInt64{Int64: by.ID, Valid: by.ID != 0}, by.Login, text).Scan(&a.ID)
		if err != nil {
			return fmt.Errorf("store: posting an announcement: %w", err)
		}
		return tx.Audit(ctx, by, portal.AuditAnnounce, "announcement "+strconv.FormatInt(a.ID, 10), map[string]string{"text": text})
	})
	return a, err
}

// Announcements lists the announcements, the newest first.
func (q *queries) Announcements(ctx context.Context) ([]portal.Announcement, error) {
	rows, err := q.query(ctx, `SELECT id, at, author, text FROM announcements ORDER BY id DESC`)
	if err != nil {
		return nil, fmt.Errorf("store: reading the announcements: %w", err)
	}
	defer rows.Close()
	out := []portal.Announcement{}
	for rows.Next() {
		var a portal.Announcement
		if err := rows.Scan(&a.ID, &a.At, &a.By, &a.Text); err != nil {
			return nil, fmt.Errorf("store: reading the announcements: %w", err)
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// ReadAnnouncements marks an account's announcements read up to upTo (an
// announcement's id): they are no longer counted as unread. The mark never
// moves back.
func (q *queries) ReadAnnouncements(ctx context.Context, accountID, upTo int64) error {
	_, err := q.exec(ctx, `INSERT INTO announcement_reads (account_id, last_read) VALUES (?, ?)
		ON CONFLICT (account_id) DO UPDATE SET last_read = excluded.last_read
		WHERE announcement_reads.last_read < excluded.last_read`, accountID, upTo)
	if err != nil {
		return fmt.Errorf("store: marking account %d's announcements read: %w", accountID, err)
	}
	return nil
}

// Notices are the counts a signed-in person's pages show.
type Notices struct {
	// Unread is how many announcements the account has not read.
	Unread int
	// Unanswered is how many clarifications wait for an answer (for
	// admins; 0 when not asked).
	Unanswered int
}

// NoticesFor counts an account's unread announcements, and with staff the
// unanswered clarifications too.
func (q *queries) NoticesFor(ctx context.Context, accountID int64, staff bool) (Notices, error) {
	var n Notices
	unanswered := `0`
	if staff {
		unanswered = `(SELECT COUNT(*) FROM clarifications WHERE answered_at IS NULL)`
	}
	err := q.queryRow(ctx, `SELECT
			(SELECT COUNT(*) FROM announcements
			 WHERE id > COALESCE((SELECT last_read FROM announcement_reads WHERE account_id = ?), 0)),
			`+unanswered, accountID).Scan(&n.Unread, &n.Unanswered)
	if err != nil {
		return n, fmt.Errorf("store: counting account %d's notices: %w", accountID, err)
	}
	return n, nil
}

// NoticeChanges is a cheap fingerprint of the announcements and the
// clarifications: it changes when one is posted, asked, answered, edited or
// published. The live pages poll it.
type NoticeChanges struct {
	// LastAnnouncement is the newest announcement's id (0: none yet).
	LastAnnouncement  int64
	LastClarification int64
	// Versions adds up the clarifications' versions, which each change
	// raises.
	Versions int64
}

// NoticeChanges reads the fingerprint of the announcements and the
// clarifications.
func (q *queries) NoticeChanges(ctx context.Context) (NoticeChanges, error) {
	var n NoticeChanges
	err := q.queryRow(ctx, `SELECT
			(SELECT COALESCE(MAX(id), 0) FROM announcements),
			(SELECT COALESCE(MAX(id), 0) FROM clarifications),
			(SELECT COALESCE(SUM(version), 0) FROM clarifications)`).Scan(&n.LastAnnouncement, &n.LastClarification, &n.Versions)
	if err != nil {
		return n, fmt.Errorf("store: reading the notices' changes: %w", err)
	}
	return n, nil
}

// Ask adds a question of by's team (by must be in one). A team has at most
// portal.MaxOpenQuestions questions waiting for an answer (CodeConflict
// past them); a question has at most portal.MaxQuestion bytes.
func (s *Store) Ask(ctx context.Context, by portal.Account, text string) (portal.Clarification, error) {
	if by.TeamID == 0 {
		return portal.Clarification{}, portal.Errorf(portal.CodeDenied, "join a team to ask a question")
	}
	text, err := portal.CheckText("a question", text, portal.MaxQuestion)
	if err != nil {
		return portal.Clarification{}, err
	}
	c := portal.Clarification{TeamID: by.TeamID, AskedBy: by.Login, Original: text, Question: text}
	err = s.InTx(ctx, func(tx *Tx) error {
		// The team's row, locked on PostgreSQL: its members' questions take
		// turns, so two at once never pass the limit together (SQLite's
		// immediate transactions take turns anyway).
		if err := tx.queryRow(ctx, `SELECT name FROM teams WHERE id = ?`+tx.dialect.forUpdate, by.TeamID).Scan(&c.TeamName); err != nil {
			return notFound(err, "team %d", by.TeamID)
		}
		var open int
		if err := tx.queryRow(ctx, `SELECT COUNT(*) FROM clarifications WHERE team_id = ? AND answered_at IS NULL`,
			by.TeamID).Scan(&open); err != nil {
			return fmt.Errorf("store: counting team %d's questions: %w", by.TeamID, err)
		}
		if open >= portal.MaxOpenQuestions {
			return portal.Errorf(portal.CodeConflict, "your team has %d questions waiting for an answer, the most it may have: ask again once one is answered",
				open)
		}
		c.AskedAt = tx.stamp()
		err := tx.queryRow(ctx, `INSERT INTO clarifications (team_id, asker, asked_at, original, question) VALUES (?, ?, ?, ?, ?) RETURNING id`,
			c.TeamID, c.AskedBy, c.AskedAt, c.Original, c.Question).Scan(&c.ID)
		if err != nil {
			return fmt.Errorf("store: adding team %d's question: %w", by.TeamID, err)
		}
		return nil
	})
	return c, err
}

const clarificationColumns = `c.id, c.team_id, t.name, c.asker, c.asked_at, c.original, c.question, c.answer, c.answered_at,
	c.answerer, c.published, c.claimer`

func scanClarification(r scanner) (portal.Clarification, error) {
	var c portal.Clarification
	var answered sql.NullTime
	err := r.Scan(&c.ID, &c.TeamID, &c.TeamName, &c.AskedBy, &c.AskedAt, &c.Original, &c.Question, &c.Answer, &answered,
		&c.AnsweredBy, &c.Published, &c.ClaimedBy)
	c.AnsweredAt = answered.Time
	return c, err
}

// Clarification reads one clarification, as staff see it.
func (q *queries) Clarification(ctx context.Context, id int64) (portal.Clarification, error) {
	c, err := scanClarification(q.queryRow(ctx, `SELECT `+clarificationColumns+`
		FROM clarifications c JOIN teams t ON t.id = c.team_id WHERE c.id = ?`, id))
	if err != nil {
		return c, notFound(err, "clarification %d", id)
	}
	return c, nil
}

// Seen is whose clarifications a list holds: every one (staff), or the
// published ones and those of a team (0: none).
type Seen struct {
	All    bool
	TeamID int64
}

func (s Seen) where() (string, []any) {
	if s.All {
		return ``, nil
	}
	return ` WHERE c.published OR c.team_id = ?`, []any{s.TeamID}
}

// Clarifications lists the clarifications seen, the newest first, as
// stored: the web layer shows a team portal.Clarification.ForTeam.
func (q *queries) Clarifications(ctx context.Context, seen Seen) ([]portal.Clarification, error) {
	where, args := seen.where()
	rows, err := q.query(ctx, `SELECT `+clarificationColumns+`
		FROM clarifications c JOIN teams t ON t.id = c.team_id`+where+` ORDER BY c.id DESC`, args...)
	if err != nil {
		return nil, fmt.Errorf("store: reading the clarifications: %w", err)
	}
	defer rows.Close()
	out := []portal.Clarification{}
	for rows.Next() {
		c, err := scanClarification(rows)
		if err != nil {
			return nil, fmt.Errorf("store: reading the clarifications: %w", err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// ClarificationsKey is a fingerprint of the clarifications seen: it
// changes when one of them is added or changes, and only then.
func (q *queries) ClarificationsKey(ctx context.Context, seen Seen) (string, error) {
	where, args := seen.where()
	var n, last, versions int64
	err := q.queryRow(ctx, `SELECT COUNT(*), COALESCE(MAX(c.id), 0), COALESCE(SUM(c.version), 0) FROM clarifications c`+where,
		args...).Scan(&n, &last, &versions)
	if err != nil {
		return "", fmt.Errorf("store: reading the clarifications' changes: %w", err)
	}
	return fmt.Sprintf("%d-%d-%d", n, last, versions), nil
}

// Answer is staff's answer to a clarification.
type Answer struct {
	// Question is the text to show (empty: as it is). It may differ from
	// the text asked only when the clarification is published.
	Question string
	Answer   string
	// Publish shows the question and the answer to every team. A
	// published clarification stays published.
	Publish bool
}

// AnswerClarification answers clarification id for by, or changes its
// answer, or publishes it (with its text edited or not), and records what
// changed in the audit log: one entry, "clarification.publish" when it is
// published, "clarification.answer" otherwise. A save that changes nothing
// records none.
func (s *Store) AnswerClarification(ctx context.Context, by portal.Actor, id int64, a Answer) (portal.Clarification, error) {
	answer, err := portal.CheckText("the answer", a.Answer, portal.MaxAnswer)
	if err != nil {
		return portal.Clarification{}, err
	}
	question := ""
	if a.Question != "" {
		if question, err = portal.CheckText("the question", a.Question, portal.MaxQuestion); err != nil {
			return portal.Clarification{}, err
		}
	}
	var c portal.Clarification
	err = s.InTx(ctx, func(tx *Tx) error {
		var err error
		c, err = scanClarification(tx.queryRow(ctx, `SELECT `+clarificationColumns+`
			FROM clarifications c JOIN teams t ON t.id = c.team_id WHERE c.id = ?`+tx.dialect.forUpdate, id))
		if err != nil {
			return notFound(err, "clarification %d", id)
		}
		if c.ClaimedBy != "" && c.ClaimedBy != by.Login && !c.Answered() {
			return portal.Errorf(portal.CodeConflict, "%s has claimed clarification %d and is answering it", c.ClaimedBy, id)
		}
		if question == "" {
			question = c.Question
		}
		if c.Published && !a.Publish {
			return portal.Errorf(portal.CodeConflict, "clarification %d is published: every team has seen it, and it stays published", id)
		}
		if !a.Publish && question != c.Original {
			return portal.Errorf(portal.CodeInvalid, "edit the question's text only to publish it: a private answer goes with the question as the team asked it")
		}
		changes := map[string]portal.Change{}
		if answer != c.Answer {
			changes["answer"] = portal.Change{Before: c.Answer, After: answer}
		}
		if question != c.Question {
			changes["question"] = portal.Change{Before: c.Question, After: question}
		}
		if a.Publish != c.Published {
			changes["published"] = portal.Change{Before: c.Published, After: a.Publish}
		}
		if len(changes) == 0 {
			return nil
		}
		if c.AnsweredAt.IsZero() {
			c.AnsweredAt = tx.stamp()
		}
		c.Answer, c.Question, c.Published, c.AnsweredBy = answer, question, a.Publish, by.Login
		if _, err := tx.exec(ctx, `UPDATE clarifications SET answer = ?, question = ?, published = ?, answered_at = ?,
				answerer = ?, version = version + 1 WHERE id = ?`,
			c.Answer, c.Question, c.Published, c.AnsweredAt, c.AnsweredBy, id); err != nil {
			return fmt.Errorf("store: answering clarification %d: %w", id, err)
		}
		action := portal.AuditAnswer
		if c.Published {
			action = portal.AuditPublish
		}
		return tx.Audit(ctx, by, action, fmt.Sprintf("clarification %d (team %d, %s)", id, c.TeamID, c.TeamName), changes)
	})
	return c, err
}

// ClaimClarification claims a waiting question for by, who then alone may
// answer it, or with claim false gives by's claim up. Of two claims at
// once one wins (a compare-and-set); a question claimed by another or
// answered already is refused (CodeConflict). A claim is no answer: the
// audit log does not record it.
func (q *queries) ClaimClarification(ctx context.Context, by portal.Actor, id int64, claim bool) error {
	query, args := `UPDATE clarifications SET claimer = ?, version = version + 1
		WHERE id = ? AND claimer = '' AND answered_at IS NULL`, []any{by.Login, id}
	if !claim {
		query, args = `UPDATE clarifications SET claimer = '', version = version + 1 WHERE id = ? AND claimer = ?`, []any{id, by.Login}
	}
	res, err := q.exec(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("store: claiming clarification %d: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 1 {
		return nil
	}
	c, err := q.Clarification(ctx, id)
	switch {
	case err != nil:
		return err
	case !claim:
		return portal.Errorf(portal.CodeConflict, "clarification %d is not yours to give up", id)
	case c.ClaimedBy == by.Login:
		return nil
	case c.Answered():
		return portal.Errorf(portal.CodeConflict, "clarification %d is answered already, by %s", id, c.AnsweredBy)
	}
	return portal.Errorf(portal.CodeConflict, "%s has claimed clarification %d and is answering it", c.ClaimedBy, id)
}
