package dashboard

import (
	"context"
	"crypto/tls"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/tunecon/tunecon/problems/dashboard/data"
	"github.com/tunecon/tunecon/problems/dashboard/services"
)

// TestAnswersFromTheFuture: an answer dated after the benchmarker received it
// is refused, for each timed service. No app can relay one (the services answer
// in real time); the services run an hour ahead here to make them.
func TestAnswersFromTheFuture(t *testing.T) {
	t.Parallel()
	ahead := func() time.Time { return time.Now().Add(time.Hour) }
	svc, err := services.Start(context.Background(), services.Config{Seed: 1, Now: ahead, Latency: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	tr := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, ForceAttemptHTTP2: true}
	t.Cleanup(tr.CloseIdleConnections)
	get := func(url, token string) []byte {
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		if token != "" {
			req.Header.Set("X-Security-Token", token)
		}
		res, err := (&http.Client{Transport: tr, Timeout: 10 * time.Second}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, err := io.ReadAll(res.Body)
		if err != nil || res.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %q %v", url, res.StatusCode, body, err)
		}
		return body
	}
	p := data.Params{Location: "L0001", Req: "r1", Token: strings.Repeat("0a", 16)}
	for _, c := range []struct {
		service, url, token, want string
	}{
		{data.Weather, svc.HTTP() + "/weather?location=" + p.Location, "", "after the answer came"},
		{data.Security, svc.HTTPS() + "/tokens?req=" + url.QueryEscape(p.Req), p.Token, "a one-time token issued after the answer came"},
		{data.Attacked, svc.HTTPS() + "/attacked", p.Token, "a list that began after the answer came"},
	} {
		now := time.Now()
		err := checkAnswer(svc, item{Service: c.service, Data: get(c.url, c.token)}, p, now, now)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s from an hour ahead: %v, want %q", c.service, err, c.want)
		}
	}
}

// TestBorrowByGrade: a session gets a free user of the grade it asks for, each
// user once, until none is left.
func TestBorrowByGrade(t *testing.T) {
	t.Parallel()
	m := newModel(data.Default())
	rnd := rand.New(rand.NewPCG(1, 2))
	seen := map[*user]bool{}
	premium := 0
	for u := m.borrow(rnd, data.Premium); u != nil; u = m.borrow(rnd, data.Premium) {
		if u.grade != data.Premium || seen[u] {
			t.Fatalf("borrowed %s user %s (seen before: %v)", u.grade, u.email, seen[u])
		}
		seen[u] = true
		premium++
	}
	want := 0
	for id := int64(1); id <= int64(data.Default().Users); id++ {
		if data.Default().User(id).Grade == data.Premium {
			want++
		}
	}
	if premium != want {
		t.Errorf("%d premium users borrowed, want the data's %d", premium, want)
	}
	if u := m.borrow(rnd, ""); u == nil || u.grade == data.Premium {
		t.Errorf("any grade once the premium users are taken: %+v", u)
	}
}
