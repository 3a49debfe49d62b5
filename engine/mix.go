package engine

import "sync/atomic"

// Share is one role of a Mix and its weight.
type Share struct {
	Role   string
	Weight int
}

// Mix hands out the roles of a scenario's sessions in fixed shares, evenly
// interleaved over all the sessions of a run: with a writer's share 1 of 10,
// every tenth session started is a writer's, whichever users happen to be
// playing. A role drawn at random per session, or fixed per user, would make
// the share of rare, valuable sessions vary from run to run, and the score
// with it. It is safe for concurrent use.
type Mix struct {
	seq []string
	n   atomic.Uint64
}

// NewMix returns a Mix of the shares. It panics without a positive weight:
// the mix is the scenario's own constant.
func NewMix(shares ...Share) *Mix {
	total := 0
	for _, s := range shares {
		if s.Weight < 0 {
			panic("engine.NewMix: negative weight for " + s.Role)
		}
		total += s.Weight
	}
	if total == 0 {
		panic("engine.NewMix: no role has a weight")
	}
	// Smooth weighted round-robin: each turn every role gains its weight,
	// the one with the most credit is chosen and pays the total back.
	credit := make([]int, len(shares))
	m := &Mix{seq: make([]string, 0, total)}
	for range total {
		best := 0
		for i, s := range shares {
			credit[i] += s.Weight
			if credit[i] > credit[best] {
				best = i
			}
		}
		credit[best] -= total
		m.seq = append(m.seq, shares[best].Role)
	}
	return m
}

// Next returns the role of the next session.
func (m *Mix) Next() string { return m.seq[(m.n.Add(1)-1)%uint64(len(m.seq))] }
