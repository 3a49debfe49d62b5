package web_test

import (
	"net/http"
	"net/url"
	"testing"
)

// TestChangePassword: a user changes its password with the current one;
// the new one signs in and the old one no longer does, its other sessions
// end and this one stays; a wrong current password changes nothing and
// counts as a failed sign-in.
func TestChangePassword(t *testing.T) {
	st := newSite(t)
	other := st.client()
	if resp := st.post(other, "/login", url.Values{"login": {"alice"}, "password": {"alice-password"}}, nil); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("alice's second session: %d", resp.StatusCode)
	}
	change := func(current, password, again string) int {
		form := url.Values{"current": {current}, "password": {password}, "again": {again}}
		return st.post(st.users["a"], "/account/password", form, nil).StatusCode
	}
	if code := change("wrong-password", "new-password-1", "new-password-1"); code != http.StatusUnauthorized {
		t.Errorf("a wrong current password: %d", code)
	}
	if code := change("alice-password", "new-password-1", "new-password-2"); code != http.StatusBadRequest {
		t.Errorf("two new passwords that differ: %d", code)
	}
	if code := change("alice-password", "short", "short"); code != http.StatusBadRequest {
		t.Errorf("a short new password: %d", code)
	}
	if code := change("alice-password", "new-password-1", "new-password-1"); code != http.StatusSeeOther {
		t.Fatalf("the change: %d", code)
	}
	if resp, _ := st.do(st.users["a"], http.MethodGet, "/account?changed", nil, nil); resp.StatusCode != http.StatusOK {
		t.Errorf("the session it was changed from: %d", resp.StatusCode)
	}
	if resp, _ := st.do(other, http.MethodGet, "/team", nil, nil); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("alice's other session after the change: %d, want sent to sign in", resp.StatusCode)
	}
	if resp := st.post(st.client(), "/login", url.Values{"login": {"alice"}, "password": {"alice-password"}}, nil); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("the old password: %d", resp.StatusCode)
	}
	if resp := st.post(st.client(), "/login", url.Values{"login": {"alice"}, "password": {"new-password-1"}}, nil); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("the new password: %d", resp.StatusCode)
	}
}
