package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/tunecon/tunecon/internal/portal"
	"github.com/tunecon/tunecon/problems"
	"github.com/tunecon/tunecon/problems/example"
)

// TestAdminTeamPage: the organiser's page of a team shows its members,
// each with a password-reset link, its jobs and its forms; a rename to a
// look-alike of another team's name is refused; a team with a member is
// not removed, an empty one is; the forms posted from the page come back
// to it; each change is audited.
func TestAdminTeamPage(t *testing.T) {
	st := newSite(t)
	admin := st.users["admin"]
	teamA := "/admin/teams/" + strconv.FormatInt(st.jobA.TeamID, 10)
	code, doc := st.page("admin", teamA)
	if code != http.StatusOK {
		t.Fatalf("team A's page: %d", code)
	}
	if got := doc.Find(`#members li.member strong`).Text(); got != "alice" {
		t.Errorf("team A's members: %q", got)
	}
	if doc.Find(`#members form[action$="/signin-link"]`).Length() != 1 {
		t.Error("no password-reset link beside alice")
	}
	if n := doc.Find(`#jobs li a[href^="/admin/jobs/"]`).Length(); n != 2 {
		t.Errorf("%d jobs listed, want 2", n)
	}
	if doc.Find(`#remove-team`).Length() != 0 {
		t.Error("a team with a member offers its removal")
	}
	if resp := st.post(admin, teamA+"/rename", url.Values{"name": {"BEES"}}, nil); resp.StatusCode != http.StatusConflict {
		t.Errorf("a rename to a look-alike of team B's name: %d", resp.StatusCode)
	}
	resp := st.post(admin, teamA+"/rename", url.Values{"name": {"Ants"}}, nil)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != teamA {
		t.Errorf("a rename: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	resp = st.post(admin, teamA, url.Values{"extra_minutes": {"5"}, "next": {teamA}}, nil)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != teamA {
		t.Errorf("the place form from the team's page: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	if _, doc := st.page("admin", teamA); doc.Find(`h1#team-name`).Text() != "Ants" ||
		!strings.Contains(doc.Find(`main p.note`).First().Text(), "5m0s extra") {
		t.Errorf("the page after the changes: %q, %q", doc.Find(`h1#team-name`).Text(), doc.Find(`main p.note`).First().Text())
	}
	if resp := st.post(admin, teamA+"/remove", nil, nil); resp.StatusCode != http.StatusConflict {
		t.Errorf("removing a team with a member: %d", resp.StatusCode)
	}
	empty, err := st.store.CreateTeam(context.Background(), "Nobody", "")
	if err != nil {
		t.Fatal(err)
	}
	emptyPath := "/admin/teams/" + strconv.FormatInt(empty.ID, 10)
	if _, doc := st.page("admin", emptyPath); doc.Find(`#remove-team`).Length() != 1 {
		t.Error("an empty team does not offer its removal")
	}
	if resp := st.post(admin, emptyPath+"/remove", nil, nil); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("removing an empty team: %d", resp.StatusCode)
	}
	if code, _ := st.page("admin", emptyPath); code != http.StatusNotFound {
		t.Errorf("the removed team's page: %d", code)
	}
	actions := st.auditActions()
	for _, want := range []string{portal.AuditTeamRename, portal.AuditTeam, portal.AuditTeamRemove} {
		if !strings.Contains(strings.Join(actions, " "), want) {
			t.Errorf("the audit log %v has no %s", actions, want)
		}
	}
}

// TestProblemChangeAfterTheStart: once the contest has started the problem
// changes only when the form says the change was confirmed.
func TestProblemChangeAfterTheStart(t *testing.T) {
	st := newSite(t)
	other := ""
	for _, p := range problems.Names() {
		if p != example.Name {
			other = p
		}
	}
	form := url.Values{"problem": {other}}
	if resp := st.post(st.users["admin"], "/admin/contest", form, nil); resp.StatusCode != http.StatusConflict {
		t.Errorf("an unconfirmed change of problem: %d", resp.StatusCode)
	}
	form.Set("problem_change", "yes")
	if resp := st.post(st.users["admin"], "/admin/contest", form, nil); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("a confirmed change of problem: %d", resp.StatusCode)
	}
	if c, err := st.store.Contest(context.Background()); err != nil || c.Problem != other {
		t.Errorf("the problem: %q, %v", c.Problem, err)
	}
}
