package store

import (
	"context"
	"fmt"
)

// AnsweredFor counts a team's own questions that staff have answered: the
// team's pages show a badge when it grows.
func (q *queries) AnsweredFor(ctx context.Context, teamID int64) (int, error) {
	var n int
	err := q.queryRow(ctx, `SELECT COUNT(*) FROM clarifications WHERE team_id = ? AND answered_at IS NOT NULL`,
		teamID).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("store: counting team %d's answered questions: %w", teamID, err)
	}
	return n, nil
}
