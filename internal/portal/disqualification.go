package portal

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Audited actions of disqualification.
const (
	// AuditDisqualify and AuditReinstate: a team disqualified, with a
	// reason, and a disqualification lifted.
	AuditDisqualify = "team.disqualify"
	AuditReinstate  = "team.reinstate"
)

// MaxDQReason bounds a disqualification's reason, in characters.
const MaxDQReason = 500

// CheckDQReason trims a disqualification's reason and refuses an empty or
// too long one, or one with control characters other than line breaks.
func CheckDQReason(reason string) (string, error) {
	reason = strings.TrimSpace(reason)
	if n := utf8.RuneCountInString(reason); n == 0 || n > MaxDQReason ||
		strings.ContainsFunc(reason, func(r rune) bool { return unicode.IsControl(r) && r != '\n' && r != '\r' }) {
		return "", Errorf(CodeInvalid, "a disqualification needs a reason of 1 to %d characters", MaxDQReason)
	}
	return reason, nil
}
