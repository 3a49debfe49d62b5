package kit

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/tunecon/tunecon/engine"
)

// TestAnsweringWaitsForTheApp: after a restart command the run waits until
// the app answers, and a proxy's 502 in front of it is not its answer; one
// that never answers is the app's critical error once the restart's time is
// up.
func TestAnsweringWaitsForTheApp(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing answers there until the "restart" is over
	target, _ := url.Parse("http://" + addr + "/")

	ctx, cancel := context.WithTimeout(context.Background(), 600*time.Millisecond)
	defer cancel()
	err = answering(ctx, target)
	if e := engine.AsError(err); err == nil || e.Class != engine.ClassCritical {
		t.Fatalf("nothing listening: %v, want a critical error", err)
	}

	// A proxy's 502 while the app starts, then the app's 404.
	up := time.Now().Add(700 * time.Millisecond)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if time.Now().Before(up) {
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		http.NotFound(w, r)
	})}
	defer srv.Close()
	go func() {
		time.Sleep(300 * time.Millisecond)
		if ln, err := net.Listen("tcp", addr); err == nil {
			_ = srv.Serve(ln)
		}
	}()
	ctx, cancel = context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := answering(ctx, target); err != nil {
		t.Errorf("an app that answers (404) after 700 ms: %v", err)
	}
	if time.Now().Before(up) {
		t.Errorf("a 502 taken for the app's answer")
	}
}
