package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/tunecon/tunecon/internal/portal"
	"github.com/tunecon/tunecon/problems/example"
)

// TestFormBounds: every number of a form is refused outside its bounds,
// before anything is computed from it (an extra time of
// 153722867280912931 minutes once wrapped to 52 s), and every text field
// past its length; the largest value allowed passes.
func TestFormBounds(t *testing.T) {
	st := newSite(t)
	teamA := "/admin/teams/" + strconv.FormatInt(st.jobA.TeamID, 10)
	long := func(n int) string { return strings.Repeat("x", n) }
	contest := func(field, value string) url.Values {
		return url.Values{"problem": {example.Name}, field: {value}}
	}
	cases := []struct {
		who, path string
		form      url.Values
		want      int
	}{
		{"admin", teamA, url.Values{"extra_minutes": {"153722867280912931"}}, http.StatusBadRequest},
		{"admin", teamA, url.Values{"extra_minutes": {"-1"}}, http.StatusBadRequest},
		{"admin", teamA, url.Values{"extra_minutes": {"1441"}}, http.StatusBadRequest},
		{"admin", teamA, url.Values{"extra_minutes": {"ten"}}, http.StatusBadRequest},
		{"admin", teamA, url.Values{"extra_minutes": {"1440"}}, http.StatusSeeOther},
		{"admin", "/admin/contest", contest("load_seconds", "-1"), http.StatusBadRequest},
		{"admin", "/admin/contest", contest("load_seconds", "3601"), http.StatusBadRequest},
		{"admin", "/admin/contest", contest("load_seconds", "99999999999999999999"), http.StatusBadRequest},
		{"admin", "/admin/contest", contest("load_seconds", "3600"), http.StatusSeeOther},
		{"admin", "/admin/contest", contest("team_size", "0"), http.StatusBadRequest},
		{"admin", "/admin/contest", contest("team_size", "101"), http.StatusBadRequest},
		{"admin", "/admin/contest", contest("team_size", "9223372036854775807"), http.StatusBadRequest},
		{"admin", "/admin/contest", contest("team_size", "100"), http.StatusSeeOther},
		{"admin", "/admin/contest", contest("brackets", long(portal.MaxBracket+1)), http.StatusBadRequest},
		{"admin", "/admin/validation/threshold", url.Values{"threshold": {"0"}}, http.StatusBadRequest},
		{"admin", "/admin/validation/threshold", url.Values{"threshold": {"101%"}}, http.StatusBadRequest},
		{"admin", "/admin/validation/threshold", url.Values{"threshold": {"100%"}}, http.StatusSeeOther},
		{"admin", "/admin/servers", url.Values{"team": {"1"}, "address": {"10.9.8.7"}, "port": {"0"}}, http.StatusBadRequest},
		{"admin", "/admin/servers", url.Values{"team": {"1"}, "address": {"10.9.8.7"}, "port": {"65536"}}, http.StatusBadRequest},
		{"admin", "/admin/servers", url.Values{"team": {"1"}, "address": {"10.9.8.7"}, "label": {long(portal.MaxServerLabel + 1)}}, http.StatusBadRequest},
		{"admin", "/admin/servers", url.Values{"team": {"1"}, "address": {long(portal.MaxTarget)}}, http.StatusBadRequest},
		{"admin", teamA + "/disqualify", url.Values{"reason": {long(portal.MaxDQReason + 1)}}, http.StatusBadRequest},
		{"admin", "/admin/announcements", url.Values{"text": {long(portal.MaxAnnouncement + 1)}}, http.StatusBadRequest},
		{"a", "/team/target", url.Values{"target": {"http://198.51.100.9/" + long(portal.MaxTarget)}}, http.StatusBadRequest},
		{"a", "/team/tokens", url.Values{"name": {long(portal.MaxAPITokenName + 1)}}, http.StatusBadRequest},
		{"a", "/clarifications", url.Values{"question": {long(portal.MaxQuestion + 1)}}, http.StatusBadRequest},
		{"anon", "/signup", url.Values{"login": {long(portal.MaxLogin + 1)}, "password": {"long-enough-1"}}, http.StatusBadRequest},
		{"anon", "/signup", url.Values{"login": {"newuser"}, "password": {long(portal.MaxPassword + 1)}}, http.StatusBadRequest},
	}
	for _, c := range cases {
		if resp := st.post(st.users[c.who], c.path, c.form, nil); resp.StatusCode != c.want {
			t.Errorf("%s %v: %d, want %d", c.path, c.form, resp.StatusCode, c.want)
		}
	}
	team, err := st.store.Team(context.Background(), st.jobA.TeamID)
	if err != nil || team.ExtraTime != portal.MaxExtraTime {
		t.Errorf("team A's extra time %s, %v: want the one allowed value, %s", team.ExtraTime, err, portal.MaxExtraTime)
	}
}
