package leagues

import (
	"context"
	"slices"
	"strconv"

	"github.com/tunecon/tunecon/engine"
)

// FinalCheck waits until every finish is billDelay old, then reads, as players,
// the rankings of the last finalRankings competitions added during the run; the
// first page of the admin's bills; and, as long as finalBudget has not passed
// since it began, the bills of the tenants organizers worked on (the last added
// first), as their organizers, and the pages of the admin's bills that hold
// them (finalAdminPages in all). Every answer must be exact. Any error fails
// the run.
func (s *Scenario) FinalCheck(ctx context.Context, r *engine.Run) error {
	start := r.Now()
	r.Logf("the pre-check's and the load's %s", s.forge.negStats())
	a := r.NewAgent()
	defer a.Close()
	s.m.mu.Lock()
	last := s.m.lastFinish
	var touched []*tenant
	var added []*competition
	for _, t := range s.m.tenants {
		if t.touched {
			touched = append(touched, t)
		}
		for _, c := range t.comps {
			if !c.initial && !c.abandoned {
				added = append(added, c)
			}
		}
	}
	s.m.mu.Unlock()
	if !last.IsZero() && !r.SleepUntil(ctx, last.Add(billDelay)) {
		return ctx.Err()
	}
	now := r.Now()
	slices.SortFunc(added, func(x, y *competition) int { return int(y.id - x.id) })
	rnd := r.Rand(3)
	for _, c := range added[:min(len(added), finalRankings)] {
		p := s.m.borrowPlayer(c.t, rnd)
		if p == nil {
			continue
		}
		err := s.signIn(a, c.t.name, rolePlayer, strconv.FormatInt(p.id, 10), now)
		if err == nil {
			_, _, err = s.readRanking(ctx, r, a, c.t, p, c, 0, engine.NoScore)
		}
		s.m.giveBack(p)
		if err != nil {
			return err
		}
	}
	if err := s.signIn(a, adminLabel, roleAdmin, adminSub, now); err != nil {
		return err
	}
	n, low, err := s.readAdminPage(ctx, a, 0, engine.NoScore)
	if err != nil {
		return err
	}
	pages := 1
	slices.SortFunc(touched, func(x, y *tenant) int { return int(y.id - x.id) })
	for _, t := range touched {
		if r.Now().Sub(start) > finalBudget {
			break
		}
		if err := s.signIn(a, t.name, roleOrganizer, organizerSub, now); err != nil {
			return err
		}
		if err := s.readBilling(ctx, a, t, engine.NoScore); err != nil {
			return err
		}
		if pages >= finalAdminPages || (n == billingPage && t.id >= low) || r.Now().Sub(start) > finalBudget {
			continue
		}
		// The page that starts with t.
		if err := s.signIn(a, adminLabel, roleAdmin, adminSub, now); err != nil {
			return err
		}
		if n, low, err = s.readAdminPage(ctx, a, t.id+1, engine.NoScore); err != nil {
			return err
		}
		pages++
	}
	return nil
}
