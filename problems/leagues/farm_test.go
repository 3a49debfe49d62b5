package leagues

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/problems/leagues/keys"
)

// players only plays player sessions, and checks nothing before or after the
// load.
type players struct{ *Scenario }

func (p players) PreCheck(context.Context, *engine.Run) error   { return nil }
func (p players) FinalCheck(context.Context, *engine.Run) error { return nil }
func (p players) User(ctx context.Context, r *engine.Run, u *engine.User) error {
	return p.playerSession(ctx, r, u)
}

// TestEmptyRankingsPayNothing: an app whose rankings are all empty, and
// answered at once, gets no point for them, and its players think between two:
// they read each ranking at most once per emptyThinkMin, and score only the
// competitions' lists they read at the start of each session. The empty-ranking
// farm of the original is closed.
func TestEmptyRankingsPayNothing(t *testing.T) {
	m, tn, _ := tinyModel(t)
	other, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	s := &Scenario{m: m, manifest: Manifest(), other: other, forge: newForger(m.key, other)}
	tokens := map[string]bool{}
	for _, p := range tn.players {
		tok, err := m.token(tn.name, rolePlayer, strconv.FormatInt(p.id, 10), time.Now())
		if err != nil {
			t.Fatal(err)
		}
		tokens[tok] = true
	}
	public := "webapp/public"
	var rankings, lists atomic.Int64
	app := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/" || strings.HasPrefix(r.URL.Path, "/static/") {
			name := strings.TrimPrefix(r.URL.Path, "/static/")
			if r.URL.Path == "/" {
				name = "index.html"
			}
			http.ServeFile(w, r, filepath.Join(public, name))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "private")
		if r.URL.Path == "/initialize" {
			w.Write([]byte(`{"lang":"fake"}`))
			return
		}
		cookie, err := r.Cookie(keys.CookieName)
		if err != nil || !tokens[cookie.Value] {
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"error":"invalid token"}`))
			return
		}
		competition := `{"id":10,"title":"Cup","is_finished":false}`
		switch r.URL.Path {
		case "/api/player/competitions":
			lists.Add(1)
			w.Write([]byte(`{"competitions":[` + competition + `]}`))
		case "/api/player/competitions/10/ranking":
			rankings.Add(1)
			w.Write([]byte(`{"competition":` + competition + `,"ranks":[]}`))
		default:
			w.WriteHeader(http.StatusForbidden)
			w.Write([]byte(`{"error":"forbidden"}`))
		}
	})
	if _, err := os.Stat(public); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(app)
	defer srv.Close()
	target, _ := url.Parse(srv.URL + "/")
	const users, load = 4, 3 * time.Second
	res := engine.New(players{s}, target, engine.WithLoadDuration(load), engine.WithWorkload(users),
		engine.WithSeed(1), engine.WithInitializeTimeout(time.Second)).Run(context.Background())
	if res.Errors.Charged() != 0 {
		t.Fatalf("errors %+v: %q", res.Errors, res.Messages)
	}
	if res.Breakdown[tagRanking] != 0 || res.RawScore != float64(res.Breakdown[tagCompetitions]) {
		t.Errorf("empty rankings scored: breakdown %v, raw %v", res.Breakdown, res.RawScore)
	}
	if most := int64(users) * int64(load/emptyThinkMin+1); rankings.Load() == 0 || rankings.Load() > most {
		t.Errorf("%d ranking reads by %d users in %s; want some, and at most %d (one per %s each)", rankings.Load(), users, load, most, emptyThinkMin)
	}
	t.Logf("%d users, %s: %d ranking reads, %d lists, raw score %v", users, load, rankings.Load(), lists.Load(), res.RawScore)
	if lists.Load() == 0 || res.RawScore > float64(lists.Load()) {
		t.Errorf("%d lists read, raw score %v", lists.Load(), res.RawScore)
	}
}
