package dashboard

import (
	"context"
	"net"
	"net/url"
	"testing"
)

// TestAddressToward: the services' host is this machine's address on the
// route to the app: loopback for an app on loopback, the machine's own
// address for an app served on it; a host that does not resolve is an
// error, not a guess.
func TestAddressToward(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cases := map[string]string{"http://127.0.0.1:8080/": "127.0.0.1", "http://127.0.0.1/": "127.0.0.1"}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
			cases["http://"+n.IP.String()+":80/"] = n.IP.String()
		}
	}
	for target, want := range cases {
		u, _ := url.Parse(target)
		got, err := addressToward(ctx, u)
		if err != nil || got.String() != want {
			t.Errorf("toward %s: %v %v, want %s", target, got, err, want)
		}
	}
	u, _ := url.Parse("http://no-such-host.invalid/")
	if got, err := addressToward(ctx, u); err == nil {
		t.Errorf("toward %s: %v, want an error", u, got)
	}
}
