package leagues

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"mime/multipart"
	"net/http"
	"strconv"
	"strings"

	"github.com/segmentio/encoding/json"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/problems/leagues/keys"
)

// Endpoints, as results and messages name them.
const (
	epIndex           = "GET /"
	epMe              = "GET /api/me"
	epAddTenant       = "POST /api/admin/tenants"
	epAdminBilling    = "GET /api/admin/billing"
	epPlayers         = "GET /api/organizer/players"
	epAddPlayers      = "POST /api/organizer/players"
	epDisqualify      = "POST /api/organizer/players/{id}/disqualify"
	epOrgCompetitions = "GET /api/organizer/competitions"
	epAddCompetition  = "POST /api/organizer/competitions"
	epFinish          = "POST /api/organizer/competitions/{id}/finish"
	epScores          = "POST /api/organizer/competitions/{id}/scores"
	epOrgBilling      = "GET /api/organizer/billing"
	epPlayerComps     = "GET /api/player/competitions"
	epProfile         = "GET /api/player/players/{id}"
	epRanking         = "GET /api/player/competitions/{id}/ranking"
	jsonType          = "application/json"
)

// The objects of the answers. Pointers tell a missing key from a zero value.

type playerJSON struct {
	ID             *int64  `json:"id"`
	DisplayName    *string `json:"display_name"`
	IsDisqualified *bool   `json:"is_disqualified"`
}

func (p playerJSON) complete() bool {
	return p.ID != nil && p.DisplayName != nil && p.IsDisqualified != nil
}

type competitionJSON struct {
	ID         *int64  `json:"id"`
	Title      *string `json:"title"`
	IsFinished *bool   `json:"is_finished"`
}

func (c competitionJSON) complete() bool { return c.ID != nil && c.Title != nil && c.IsFinished != nil }

type tenantJSON struct {
	ID          *int64  `json:"id"`
	Name        *string `json:"name"`
	DisplayName *string `json:"display_name"`
	Billing     *int64  `json:"billing"`
}

func (t tenantJSON) complete(billing bool) bool {
	return t.ID != nil && t.Name != nil && t.DisplayName != nil && (!billing || t.Billing != nil)
}

type rankJSON struct {
	Rank        *int64  `json:"rank"`
	PlayerID    *int64  `json:"player_id"`
	DisplayName *string `json:"display_name"`
	Score       *int64  `json:"score"`
}

type scoreJSON struct {
	CompetitionID *int64  `json:"competition_id"`
	Title         *string `json:"title"`
	Score         *int64  `json:"score"`
}

type compBillJSON struct {
	CompetitionID *int64  `json:"competition_id"`
	Title         *string `json:"title"`
	IsFinished    *bool   `json:"is_finished"`
	Scored        *int64  `json:"scored"`
	Viewed        *int64  `json:"viewed"`
	Billing       *int64  `json:"billing"`
}

func (b compBillJSON) complete() bool {
	return b.CompetitionID != nil && b.Title != nil && b.IsFinished != nil && b.Scored != nil && b.Viewed != nil && b.Billing != nil
}

// The answers.

type meAnswer struct {
	Role    *string     `json:"role"`
	Subject *string     `json:"subject"`
	Tenant  *tenantJSON `json:"tenant"`
	Player  *playerJSON `json:"player"`
}

type playersAnswer struct {
	Players *[]playerJSON `json:"players"`
}

type playerAnswer struct {
	Player *playerJSON `json:"player"`
}

type competitionsAnswer struct {
	Competitions *[]competitionJSON `json:"competitions"`
}

type competitionAnswer struct {
	Competition *competitionJSON `json:"competition"`
}

type rowsAnswer struct {
	Rows *int64 `json:"rows"`
}

type billingAnswer struct {
	Billing *struct {
		Total        *int64          `json:"total"`
		Competitions *[]compBillJSON `json:"competitions"`
	} `json:"billing"`
}

type profileAnswer struct {
	Player *playerJSON  `json:"player"`
	Scores *[]scoreJSON `json:"scores"`
}

type rankingAnswer struct {
	Competition *competitionJSON `json:"competition"`
	Ranks       *[]rankJSON      `json:"ranks"`
}

type tenantsAnswer struct {
	Tenants *[]tenantJSON `json:"tenants"`
}

type tenantAnswer struct {
	Tenant *tenantJSON `json:"tenant"`
}

// Requests.

// session sets up a's browser for one user: the host it names and the token in
// its cookie ("" for none).
func session(a *engine.Agent, host, token string) {
	a.ClearCookies()
	a.SetHost(host)
	if token != "" {
		a.SetCookie(&http.Cookie{Name: keys.CookieName, Value: token, Path: "/"})
	}
}

// apiAnswer checks what every API answer carries, errors included: JSON, and
// Cache-Control: private.
func apiAnswer(res *engine.Response) error {
	if err := engine.ContentType(jsonType)(res); err != nil {
		return err
	}
	return engine.Private()(res)
}

// send sends one API request: a bill, a report, within reportTimeout, any other
// within the agent's limits.
func send(ctx context.Context, a *engine.Agent, endpoint, method, path string, header http.Header, body []byte) (*engine.Response, error) {
	if endpoint == epAdminBilling || endpoint == epOrgBilling {
		return a.DoWithin(ctx, reportTimeout, endpoint, method, path, header, body)
	}
	return a.Do(ctx, endpoint, method, path, header, body)
}

// call sends one API request and checks the answer's status (a wrong one is an
// application error) and what every answer carries; out, if not nil, receives
// the JSON body of a 200.
func call(ctx context.Context, a *engine.Agent, endpoint, method, path string, header http.Header, body []byte, status int, out any) (*engine.Response, error) {
	res, err := send(ctx, a, endpoint, method, path, header, body)
	if err != nil {
		return nil, err
	}
	if err := res.Check(engine.Status(status), apiAnswer); err != nil {
		return res, err
	}
	if out != nil && status == http.StatusOK {
		if err := json.Unmarshal(res.Body, out); err != nil {
			return res, res.Applicationf("json", "the answer is not the JSON the manual describes: %v", err)
		}
	}
	return res, nil
}

// refused sends a request the app must refuse with status: an answer of any
// other status is a violation (a token or a role let through, a disqualified
// player served, an upload accepted after the finish).
func refused(ctx context.Context, a *engine.Agent, endpoint, method, path string, header http.Header, body []byte, status int, why string) (*engine.Response, error) {
	res, err := send(ctx, a, endpoint, method, path, header, body)
	if err != nil {
		return nil, err
	}
	if res.StatusCode != status {
		if res.StatusCode >= 200 && res.StatusCode < 300 {
			return res, res.Criticalf("refusal", "%s: expected status %d, got %d", why, status, res.StatusCode)
		}
		return res, res.Applicationf("status", "%s: expected status %d, got %d", why, status, res.StatusCode)
	}
	return res, res.Check(apiAnswer)
}

// get sends a GET.
func get(ctx context.Context, a *engine.Agent, endpoint, path string, out any) (*engine.Response, error) {
	return call(ctx, a, endpoint, http.MethodGet, path, nil, nil, http.StatusOK, out)
}

// postJSON sends a POST of v as JSON.
func postJSON(ctx context.Context, a *engine.Agent, endpoint, path string, v any, out any) (*engine.Response, error) {
	body, err := json.Marshal(v)
	if err != nil {
		return nil, engine.Internalf("json", "encoding a request: %v", err)
	}
	return call(ctx, a, endpoint, http.MethodPost, path, jsonHeader(), body, http.StatusOK, out)
}

func jsonHeader() http.Header { return http.Header{"Content-Type": {jsonType}} }

// csvBody returns the multipart body of a score upload of the CSV text csv,
// with its Content-Type.
func csvBody(csv string) (http.Header, []byte) {
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	part, _ := w.CreateFormFile("scores", "scores.csv")
	part.Write([]byte(csv))
	w.Close()
	return http.Header{"Content-Type": {w.FormDataContentType()}}, b.Bytes()
}

// csvOf writes rows (player id, score) as the manual's CSV.
func csvOf(rows [][2]int64) string {
	var b strings.Builder
	b.WriteString("player_id,score\n")
	for _, r := range rows {
		b.WriteString(strconv.FormatInt(r[0], 10))
		b.WriteByte(',')
		b.WriteString(strconv.FormatInt(r[1], 10))
		b.WriteByte('\n')
	}
	return b.String()
}

// Paths.

func disqualifyPath(id int64) string { return fmt.Sprintf("/api/organizer/players/%d/disqualify", id) }
func finishPath(id int64) string     { return fmt.Sprintf("/api/organizer/competitions/%d/finish", id) }
func scoresPath(id int64) string     { return fmt.Sprintf("/api/organizer/competitions/%d/scores", id) }
func profilePath(id int64) string    { return fmt.Sprintf("/api/player/players/%d", id) }

func rankingPath(id int64, after int) string {
	if after == 0 {
		return fmt.Sprintf("/api/player/competitions/%d/ranking", id)
	}
	return fmt.Sprintf("/api/player/competitions/%d/ranking?rank_after=%d", id, after)
}

func adminBillingPath(before int64) string {
	if before == 0 {
		return "/api/admin/billing"
	}
	return fmt.Sprintf("/api/admin/billing?before=%d", before)
}

// The single-page app.

// loadApp loads the single-page app, as a browser does at the start of a
// session: / must be index.html byte for byte, and its assets must be the
// problem's.
func (s *Scenario) loadApp(ctx context.Context, a *engine.Agent) error {
	res, err := a.Get(ctx, epIndex, "/")
	if err != nil {
		return err
	}
	if err := res.Check(engine.Status(http.StatusOK), engine.ContentType("text/html"), func(res *engine.Response) error {
		sum := sha256.Sum256(res.Body)
		if want := s.manifest[indexAsset]; hex.EncodeToString(sum[:]) != want {
			return res.Applicationf("index", "/ is not webapp/public/index.html as the problem ships it")
		}
		return nil
	}); err != nil {
		return err
	}
	return a.FetchAssets(ctx, res)
}
