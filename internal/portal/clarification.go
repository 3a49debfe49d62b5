package portal

import (
	"strings"
	"time"
)

// Announcements and clarifications: what staff tell every team, and the
// questions teams ask with staff's answers.
//
// A clarification is asked by a team and answered by staff, privately (only
// that team sees the question and the answer) or published (every signed-in
// person sees it). Before publishing staff may edit the question's text, to
// make it stand alone or leave out what is the team's own: the text as asked
// (Original) stays stored, for staff only.
const (
	// MaxAnnouncement, MaxQuestion and MaxAnswer bound the texts, in bytes.
	MaxAnnouncement = 4 << 10
	MaxQuestion     = 4 << 10
	MaxAnswer       = 4 << 10
	// MaxOpenQuestions is how many of a team's questions may wait for an
	// answer at once.
	MaxOpenQuestions = 20
)

// Audited actions of announcements and clarifications.
const (
	// AuditAnnounce: an announcement posted.
	AuditAnnounce = "announcement.post"
	// AuditAnswer: a clarification answered (or its answer changed) and
	// kept private.
	AuditAnswer = "clarification.answer"
	// AuditPublish: a clarification published with its answer, or a
	// published one's text or answer changed.
	AuditPublish = "clarification.publish"
)

// CannedAnswers are the answers staff pick from instead of writing one.
var CannedAnswers = []string{
	"See the manual.",
	"No comment.",
	"Yes.",
	"No.",
	"This is answered in an announcement.",
}

// Announcement is a message from staff to everyone. Text is Markdown.
type Announcement struct {
	ID   int64
	At   time.Time
	By   string // the author's login
	Text string
}

// Clarification is a team's question and staff's answer.
type Clarification struct {
	ID       int64
	TeamID   int64
	TeamName string
	AskedBy  string // the asker's login
	AskedAt  time.Time
	// Original is the question as asked; Question is its text as shown to
	// the teams, the same unless staff edited it.
	Original string
	Question string
	// Answer is empty until staff answer.
	Answer     string
	AnsweredAt time.Time
	AnsweredBy string
	Published  bool
	// ClaimedBy is the staff login answering it ("" for nobody): while it
	// waits, only they may answer.
	ClaimedBy string
}

// Answered reports whether staff answered c.
func (c Clarification) Answered() bool { return !c.AnsweredAt.IsZero() }

// Edited reports whether the question shown differs from the one asked.
func (c Clarification) Edited() bool { return c.Question != c.Original }

// ForTeam is c as a team sees it: its own question with its status (the
// text as shown, which is the text asked unless staff edited it on
// publishing), or a published one without who asked it. The text as asked
// is staff's alone.
func (c Clarification) ForTeam(teamID int64) Clarification {
	out := Clarification{ID: c.ID, AskedAt: c.AskedAt, Question: c.Question, Answer: c.Answer,
		AnsweredAt: c.AnsweredAt, Published: c.Published}
	if c.TeamID == teamID && teamID != 0 {
		out.TeamID, out.TeamName, out.AskedBy = c.TeamID, c.TeamName, c.AskedBy
	}
	return out
}

// CheckText cleans a text typed into a form (what names it in messages):
// trimmed, invalid UTF-8 replaced, not empty, at most limit bytes.
func CheckText(what, text string, limit int) (string, error) {
	text = strings.TrimSpace(strings.ToValidUTF8(strings.ReplaceAll(text, "\r\n", "\n"), "\uFFFD"))
	if text == "" {
		return "", Errorf(CodeInvalid, "%s is empty", what)
	}
	if len(text) > limit {
		return "", Errorf(CodeInvalid, "%s is at most %d bytes (%d KiB); this one has %d", what, limit, limit>>10, len(text))
	}
	return text, nil
}
