package web_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/tunecon/tunecon/internal/portal"
	"github.com/tunecon/tunecon/internal/portal/store"
	"github.com/tunecon/tunecon/internal/portal/store/storetest"
)

// ask adds a question of login's team, through the store.
func (st *site) ask(login, text string) portal.Clarification {
	st.t.Helper()
	ctx := context.Background()
	a, _, err := st.store.AccountByLogin(ctx, login)
	if err != nil {
		st.t.Fatal(err)
	}
	c, err := st.store.Ask(ctx, a, text)
	if err != nil {
		st.t.Fatal(err)
	}
	return c
}

// actions lists the audit log's actions in order.
func (st *site) actions() []string {
	st.t.Helper()
	entries, err := st.store.AuditLog(context.Background())
	if err != nil {
		st.t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Action)
	}
	return out
}

// count is the number a page shows in its first [data-count=NAME], and
// whether that badge or banner is shown.
func count(doc *goquery.Document, name string) (int, bool) {
	sel := doc.Find("[data-count=" + name + "]").First()
	n, _ := strconv.Atoi(strings.TrimSpace(sel.Text()))
	_, hidden := sel.Attr("hidden")
	return n, sel.Length() == 1 && !hidden
}

// TestClarificationsOverHTTP, on each database system: team A's question
// answered privately is seen by team A alone; team B's question, published
// with its text edited, is seen by every team as edited, and as asked only
// by staff. The unanswered count follows; each answer is audited once, and
// each refused form leaves no entry.
func TestClarificationsOverHTTP(t *testing.T) { systems.Run(t, testClarificationsOverHTTP) }

func testClarificationsOverHTTP(t *testing.T, db storetest.System) {
	st := newSiteAt(t, db.NewDSN(t))
	post := func(who, path string, form url.Values, want int) string {
		t.Helper()
		resp, body := st.do(st.users[who], http.MethodPost, path, form, nil)
		if resp.StatusCode != want {
			t.Errorf("POST %s as %s %v: %d, want %d", path, who, form, resp.StatusCode, want)
		}
		return body
	}
	const secretA = "Is our trick with /api/SECRET-A allowed?"
	const askedB = "May team B restart its database at 192.0.2.77?"
	const editedB = "May a team restart its database?"
	post("a", "/clarifications", url.Values{"question": {secretA}}, see)
	post("b", "/clarifications", url.Values{"question": {askedB}}, see)
	if body := post("a", "/clarifications", url.Values{"question": {strings.Repeat("x", portal.MaxQuestion+1)}}, bad); !strings.Contains(body, "at most 4096 bytes") {
		t.Error("a question too long is refused without saying why")
	}
	post("admin", "/clarifications", url.Values{"question": {"staff ask nothing"}}, denied)

	list, err := st.store.Clarifications(context.Background(), store.Seen{All: true})
	if err != nil || len(list) != 2 {
		t.Fatalf("%+v, %v", list, err)
	}
	qB, qA := list[0], list[1]
	_, doc := st.page("admin", "/admin")
	if n, shown := count(doc, "unanswered"); n != 2 || !shown {
		t.Errorf("the admin's nav shows %d unanswered (shown %t), want 2", n, shown)
	}
	if got := doc.Find("#clarification-count").Text(); !strings.Contains(got, "2 questions waiting") {
		t.Errorf("the admin page says %q", got)
	}
	if _, doc := st.page("a", "/"); doc.Find("[data-count=unanswered]").Length() != 0 {
		t.Error("a team's page shows the unanswered count")
	}

	// Refused: each leaves no entry.
	answerA := "/admin/clarifications/" + strconv.FormatInt(qA.ID, 10)
	answerB := "/admin/clarifications/" + strconv.FormatInt(qB.ID, 10)
	post("admin", answerA, url.Values{"answer": {""}}, bad)
	post("admin", answerA, url.Values{"canned": {"Maybe."}}, bad)
	post("admin", answerA, url.Values{"answer": {"No."}, "question": {"reworded"}}, bad) // edited, not published
	post("admin", "/admin/clarifications/nope", url.Values{"answer": {"No."}}, notFound)
	if got := st.actions(); len(got) != 0 {
		t.Fatalf("refused answers left %v", got)
	}

	// Team A's, answered privately with a canned answer.
	post("admin", answerA, url.Values{"answer": {""}, "canned": {"See the manual."}, "question": {secretA}}, see)
	post("admin", answerA, url.Values{"answer": {"See the manual."}, "question": {secretA}}, see) // nothing changes
	_, docA := st.page("a", "/clarifications")
	own := docA.Find("#c-" + strconv.FormatInt(qA.ID, 10))
	if own.Find(".status").Text() != "answered, to your team alone" || own.Find("blockquote.answer").Text() != "See the manual." {
		t.Errorf("team A's own question reads %q", own.Text())
	}
	for _, who := range []string{"b", "admin"} {
		_, body := st.do(st.users[who], http.MethodGet, "/clarifications", nil, nil)
		if contains := strings.Contains(body, "SECRET-A"); contains != (who == "admin") {
			t.Errorf("team A's private question on %s's page: %t", who, contains)
		}
	}

	// Team B's, published with its text edited.
	post("admin", answerB, url.Values{"answer": {"Yes, at any time."}, "question": {editedB}, "publish": {"on"}}, see)
	post("admin", answerB, url.Values{"answer": {"Yes, at any time."}, "question": {editedB}}, conflict) // unpublishing
	for _, who := range []string{"a", "b"} {
		_, body := st.do(st.users[who], http.MethodGet, "/clarifications", nil, nil)
		if !strings.Contains(body, editedB) || !strings.Contains(body, "Yes, at any time.") || strings.Contains(body, "192.0.2.77") {
			t.Errorf("%s's page: the published question not as edited, or the original shown", who)
		}
	}
	_, docA = st.page("a", "/clarifications")
	if docA.Find("#c-"+strconv.FormatInt(qB.ID, 10)).Length() != 1 || strings.Contains(docA.Find("article.published").Text(), "bob") {
		t.Error("team A's page: team B's published question missing, or shows who asked it")
	}
	_, docAdmin := st.page("admin", "/clarifications")
	staffView := docAdmin.Find("#c-" + strconv.FormatInt(qB.ID, 10))
	if staffView.Find("blockquote.original").Text() != askedB || staffView.Find("blockquote.question").Text() != editedB ||
		staffView.Find(".status").Text() != "published" {
		t.Errorf("the admin's view of team B's question: %q", staffView.Text())
	}
	if n, shown := count(docAdmin, "unanswered"); n != 0 || shown {
		t.Errorf("the admin's nav shows %d unanswered (shown %t), want none", n, shown)
	}
	if want := []string{portal.AuditAnswer, portal.AuditPublish}; !slices.Equal(st.actions(), want) {
		t.Errorf("the audit log %v, want %v", st.actions(), want)
	}
	// Someone signed in without a team sees the published ones only.
	carol := st.client()
	st.post(carol, "/signup", url.Values{"login": {"carol"}, "password": {"carol-password"}}, nil)
	resp, body := st.do(carol, http.MethodGet, "/clarifications", nil, nil)
	if resp.StatusCode != ok || !strings.Contains(body, editedB) || strings.Contains(body, "SECRET-A") ||
		strings.Contains(body, `action="/clarifications"`) {
		t.Errorf("carol's page (%d): the published question missing, a private one shown, or a form to ask", resp.StatusCode)
	}
}

// TestOpenQuestionsLimitOverHTTP: past portal.MaxOpenQuestions waiting, a
// team's question is refused with a message that says why.
func TestOpenQuestionsLimitOverHTTP(t *testing.T) {
	st := newSite(t)
	for range portal.MaxOpenQuestions {
		st.ask("alice", "again?")
	}
	resp, body := st.do(st.users["a"], http.MethodPost, "/clarifications", url.Values{"question": {"one more?"}}, nil)
	if resp.StatusCode != conflict || !strings.Contains(body, "20 questions waiting for an answer") {
		t.Errorf("the 21st question: %d", resp.StatusCode)
	}
	if resp := st.post(st.users["b"], "/clarifications", url.Values{"question": {"ours?"}}, nil); resp.StatusCode != see {
		t.Errorf("team B's first question: %d", resp.StatusCode)
	}
}

// TestAnnouncementsOverHTTP: an announcement's Markdown is rendered without
// its HTML or dangerous links, on the contest page for everyone; each
// signed-in viewer has an unread count, in the nav and a banner, until they
// open the announcements. Posting is audited once; refused posts are not.
func TestAnnouncementsOverHTTP(t *testing.T) {
	st := newSite(t)
	admin := st.users["admin"]
	for _, bad := range []string{" ", strings.Repeat("x", portal.MaxAnnouncement+1)} {
		if resp := st.post(admin, "/admin/announcements", url.Values{"text": {bad}}, nil); resp.StatusCode != http.StatusBadRequest {
			t.Errorf("an announcement of %d bytes: %d", len(bad), resp.StatusCode)
		}
	}
	md := "The **load** now lasts 60 s.\n\n<script>alert(1)</script> [manual](javascript:alert(2)) <img src=x onerror=alert(3)>"
	if resp := st.post(admin, "/admin/announcements", url.Values{"text": {md}}, nil); resp.StatusCode != see || resp.Header.Get("Location") != "/announcements" {
		t.Fatalf("posting: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	if got := st.actions(); !slices.Equal(got, []string{portal.AuditAnnounce}) {
		t.Errorf("the audit log %v", got)
	}
	for _, who := range []string{"anon", "a", "b", "admin"} {
		_, body := st.do(st.users[who], http.MethodGet, "/", nil, nil)
		if !strings.Contains(body, "<strong>load</strong>") {
			t.Errorf("%s's contest page has no rendered announcement", who)
		}
		if strings.Contains(body, "<script>alert") || strings.Contains(body, "javascript:") || strings.Contains(body, "<img src=x") {
			t.Errorf("%s's contest page has the announcement's HTML or a dangerous link", who)
		}
	}
	unread := func(who, path string) (int, bool, bool) {
		t.Helper()
		_, doc := st.page(who, path)
		n, shown := count(doc, "unread")
		_, hidden := doc.Find("#notice-banner").Attr("hidden")
		return n, shown, doc.Find("#notice-banner").Length() == 1 && !hidden
	}
	if n, badge, banner := unread("a", "/"); n != 1 || !badge || !banner {
		t.Errorf("alice's contest page: %d unread (badge %t, banner %t), want 1 shown", n, badge, banner)
	}
	if n, badge, banner := unread("a", "/announcements"); n != 0 || badge || banner {
		t.Errorf("alice's announcements page: %d unread (badge %t, banner %t), want none", n, badge, banner)
	}
	if n, _, _ := unread("a", "/leaderboard"); n != 0 {
		t.Errorf("alice has %d unread after reading", n)
	}
	if n, _, _ := unread("b", "/leaderboard"); n != 1 {
		t.Errorf("bob has %d unread, want 1: alice's reading is hers", n)
	}
	if _, doc := st.page("anon", "/"); doc.Find("#notice-banner, [data-count=unread]").Length() != 0 {
		t.Error("nobody signed in has an unread count")
	}
}

// stream reads a server-sent event stream in the background, until the test
// ends.
func (st *site) stream(who, path string) <-chan event {
	st.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	st.t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, st.url+path, nil)
	c := *st.users[who]
	c.Timeout = 0
	resp, err := c.Do(req)
	if err != nil {
		st.t.Fatal(err)
	}
	out := make(chan event, 16)
	go func() {
		defer resp.Body.Close()
		defer close(out)
		var cur event
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				cur.name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				cur.data = strings.TrimPrefix(line, "data: ")
			case line == "" && cur.name != "":
				out <- cur
				cur = event{}
			}
		}
	}()
	return out
}

type noticesEvent struct {
	Latest         int64  `json:"latest"`
	Unread         int    `json:"unread"`
	Unanswered     int    `json:"unanswered"`
	Clarifications string `json:"clarifications"`
}

// nextNotices waits for a stream's next "notices" event.
func nextNotices(t *testing.T, events <-chan event) noticesEvent {
	t.Helper()
	select {
	case e, open := <-events:
		if !open || e.name != "notices" {
			t.Fatalf("the stream sent %+v (open %t)", e, open)
		}
		var n noticesEvent
		if err := json.Unmarshal([]byte(e.data), &n); err != nil {
			t.Fatal(err)
		}
		return n
	case <-time.After(5 * time.Second):
		t.Fatal("no notices event in 5 s")
	}
	return noticesEvent{}
}

// TestNoticesLive: an open page's stream tells its viewer of each new
// announcement (and their unread count), staff of the questions waiting,
// and a team of what changes in the clarifications it sees: not another
// team's private answer, which sends it nothing.
func TestNoticesLive(t *testing.T) {
	st := liveSite(t, systems.MigratedSQLite(t))
	bob, staff, anon := st.stream("b", "/notices/events"), st.stream("admin", "/notices/events"), st.stream("anon", "/notices/events")
	first := nextNotices(t, bob)
	if first.Latest != 0 || first.Unread != 0 || first.Clarifications == "" {
		t.Errorf("bob's first event %+v", first)
	}
	if n := nextNotices(t, staff); n.Unanswered != 0 {
		t.Errorf("staff's first event %+v", n)
	}
	if n := nextNotices(t, anon); n.Clarifications != "" {
		t.Errorf("nobody's first event %+v", n)
	}

	q := st.ask("alice", "private?")
	if n := nextNotices(t, staff); n.Unanswered != 1 {
		t.Errorf("staff's event after a question %+v, want 1 unanswered", n)
	}
	st.post(st.users["admin"], "/admin/clarifications/"+strconv.FormatInt(q.ID, 10), url.Values{"answer": {"No."}}, nil)
	if n := nextNotices(t, staff); n.Unanswered != 0 {
		t.Errorf("staff's event after the answer %+v, want none unanswered", n)
	}
	st.post(st.users["admin"], "/admin/announcements", url.Values{"text": {"Lunch at noon."}}, nil)
	n := nextNotices(t, bob)
	if n.Latest == 0 || n.Unread != 1 || n.Clarifications != first.Clarifications {
		t.Errorf("bob's event after team A's private answer and an announcement %+v (first %+v)", n, first)
	}
	if a := nextNotices(t, anon); a.Latest != n.Latest {
		t.Errorf("nobody's event %+v, want the announcement %d", a, n.Latest)
	}
	st.post(st.users["admin"], "/admin/clarifications/"+strconv.FormatInt(q.ID, 10), url.Values{"answer": {"No."}, "publish": {"on"}}, nil)
	if p := nextNotices(t, bob); p.Clarifications == first.Clarifications || p.Unread != 1 {
		t.Errorf("bob's event after a publication %+v", p)
	}
	// Reading the announcements sets bob's count on the next change.
	st.do(st.users["b"], http.MethodGet, "/announcements", nil, nil)
	st.post(st.users["admin"], "/admin/announcements", url.Values{"text": {"Dinner at six."}}, nil)
	if p := nextNotices(t, bob); p.Unread != 1 || p.Latest <= n.Latest {
		t.Errorf("bob's event after reading and one more %+v", p)
	}
}
