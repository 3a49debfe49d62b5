package data_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"github.com/tunecon/tunecon/problems/dashboard/data"
)

// TestDumpIsStable: the same Config writes the same bytes on every machine
// (a changed sum means a changed generator: bump Version and update it).
func TestDumpIsStable(t *testing.T) {
	var b bytes.Buffer
	if err := data.Default().WriteSQL(&b); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b.Bytes())
	const want = "8a835b0920b52b00c009c6c7f9f801b0d71b9cdc378dea33a3d840c47b20558a"
	if got := hex.EncodeToString(sum[:]); got != want {
		t.Errorf("dump sha256 %s, want %s (%d bytes)", got, want, b.Len())
	}
	if !strings.HasPrefix(b.String(), "-- tunecon dashboard initial data v1 seed=20151031 users=10000\n") {
		t.Errorf("header %q", strings.SplitN(b.String(), "\n", 2)[0])
	}
}

// TestUsers: grades in the manual's shares (within a few points), each user
// subscribed only to services its grade allows, about 70% of them, with
// parameters of the manual's forms.
func TestUsers(t *testing.T) {
	c := data.Default()
	grades := map[string]int{}
	allowed, subscribed := 0, 0
	for id := int64(1); id <= int64(c.Users); id++ {
		u := c.User(id)
		grades[u.Grade]++
		allowed += len(data.Allowed(u.Grade))
		for service, p := range u.Subs {
			subscribed++
			if !data.Allows(u.Grade, service) {
				t.Fatalf("user %d (%s) subscribes to %s", id, u.Grade, service)
			}
			if err := data.CheckParams(service, p); err != nil {
				t.Fatalf("user %d: %s %+v: %v", id, service, p, err)
			}
		}
		if u.Email != fmt.Sprintf("user%d@dashboard.test", id) || len(u.Password) != 12 || data.HashPassword(u.Salt, u.Password) != u.PasswordHash() {
			t.Fatalf("user %d: %+v", id, u)
		}
	}
	for grade, share := range map[string]float64{data.Micro: 0.4, data.Small: 0.3, data.Standard: 0.2, data.Premium: 0.1} {
		if got := float64(grades[grade]) / float64(c.Users); got < share-0.03 || got > share+0.03 {
			t.Errorf("%s: %.3f of the users, want about %.2f", grade, got, share)
		}
	}
	if got := float64(subscribed) / float64(allowed); got < 0.67 || got > 0.73 {
		t.Errorf("%.3f of the allowed services subscribed, want about 0.70", got)
	}
}

// TestCheckParams: the manual's forms of the parameters.
func TestCheckParams(t *testing.T) {
	good := map[string]data.Params{
		data.Postal: {Code: "1234567"}, data.Surname: {Q: "kamo"}, data.Weather: {Location: "L0042"},
		data.Security: {Req: "ab12", Token: strings.Repeat("a1", 16)}, data.Attacked: {Token: strings.Repeat("0f", 16)},
	}
	for service, p := range good {
		if err := data.CheckParams(service, p); err != nil {
			t.Errorf("%s %+v: %v", service, p, err)
		}
	}
	bad := map[string][]data.Params{
		data.Postal:   {{Code: "123456"}, {Code: "12345678"}, {Code: "12345a7"}, {}},
		data.Surname:  {{Q: ""}, {Q: "Kamo"}, {Q: "abcdefghi"}, {Q: "k1"}},
		data.Weather:  {{Location: "L042"}, {Location: "X0042"}, {Location: "L00421"}},
		data.Security: {{Req: "ab12"}, {Req: "", Token: strings.Repeat("a", 32)}, {Req: "AB", Token: strings.Repeat("a", 32)}, {Req: "a", Token: strings.Repeat("A", 32)}},
		data.Attacked: {{Token: strings.Repeat("a", 31)}, {Token: strings.Repeat("g", 32)}},
		"nosuch":      {{}},
	}
	for service, ps := range bad {
		for _, p := range ps {
			if err := data.CheckParams(service, p); err == nil {
				t.Errorf("%s %+v accepted", service, p)
			}
		}
	}
}
