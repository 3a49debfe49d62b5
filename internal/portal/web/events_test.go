package web_test

import (
	"strings"
	"testing"
	"time"

	"github.com/tunecon/tunecon/internal/portal"
	"github.com/tunecon/tunecon/internal/portal/store/storetest"
)

// TestBoardStreamKeepsTheFreeze: the leaderboard page's stream sends the
// frozen board once; jobs that end during the freeze change the live
// boards but send the public no repeat of it (which would tell that some
// team's job had just ended); the next board it sends is the revealed one.
// On each database system.
func TestBoardStreamKeepsTheFreeze(t *testing.T) { systems.Run(t, testBoardStreamKeepsTheFreeze) }

func testBoardStreamKeepsTheFreeze(t *testing.T, db storetest.System) {
	st := liveSite(t, db.NewDSN(t))
	st.clock.add(time.Second)
	st.now(portal.EventFreeze)
	stream, stop := st.apiStream("", "/leaderboard/events")
	defer stop()
	// (The stream may start with the board as the live loop read it a
	// moment before the freeze.)
	for {
		e, ok := nextEvent(stream)
		if !ok {
			t.Fatal("the stream sent no frozen board")
		}
		if e.name == "board" && strings.Contains(e.data, `"frozen":true`) {
			break
		}
	}
	st.clock.add(time.Minute)
	st.endedJob(st.teamB.ID, 9201, portal.Ending{State: portal.JobFinished, Verdict: portal.VerdictPassed, Score: 5000})
	st.clock.add(time.Minute)
	st.endedJob(st.jobA.TeamID, 9202, portal.Ending{State: portal.JobFinished, Verdict: portal.VerdictPassed, Score: 6000})
	st.boardIs("admin", "/leaderboard", "1|"+evilName+"|6000|2", "2|bees|5000|1") // the live loop has read them
	st.clock.add(time.Minute)
	st.now(portal.EventReveal)
	e, ok := nextEvent(stream)
	if !ok || e.name != "board" || !strings.Contains(e.data, `"frozen":false`) || !strings.Contains(e.data, "6000") {
		t.Errorf("after jobs ended during the freeze, the stream's next event is %+v, not the revealed board", e)
	}
}
