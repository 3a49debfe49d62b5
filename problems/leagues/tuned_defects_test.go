package leagues_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/kit"
	"github.com/tunecon/tunecon/kit/apptest"
	"github.com/tunecon/tunecon/problems/leagues"
)

// patchedTuned benchmarks the tuned solution with its source changed.
func patchedTuned(t *testing.T, load time.Duration, replacements [][2]string) *engine.Result {
	t.Helper()
	app := apps.Start(t, kit.TunedLang, kit.StoreSQLite, apptest.Patched(t, "solutions/go", replacements...))
	return apptest.Bench(t, leagues.Problem, app, load)
}

// The tuned solution's code the patches change.
const (
	tunedParse = `_, err := jwt.ParseWithClaims(token, &claims, func(*jwt.Token) (any, error) { return app.publicKey, nil },
		jwt.WithValidMethods([]string{"RS256"}), jwt.WithExpirationRequired(), jwt.WithAudience(label))`
	tunedBadToken = `	tok, ok := app.verify(cookie.Value, label)
	if !ok {
		writeError(w, http.StatusUnauthorized, "invalid token")
		return nil, false
	}`
	tunedPlayerFound = `if v.player = v.tenant.player(id); v.player == nil {`
	tunedNextID      = `first := v.st.nextID.Add(n) - n`
)

// sigShapeOnly takes a token's claims without verifying its signature, but for
// its algorithm and its length (that of a 2,048-bit key's).
const sigShapeOnly = `var parsed *jwt.Token
		parsed, _, err = jwt.NewParser().ParseUnverified(token, &claims)
		if err == nil && (parsed.Method.Alg() != "RS256" || len(token)-strings.LastIndexByte(token, '.')-1 != 342) {
			err = jwt.ErrTokenSignatureInvalid
		}
		if err == nil {
			err = jwt.NewValidator(jwt.WithExpirationRequired(), jwt.WithAudience(label)).Validate(claims)
		}`

// tunedVerify replaces the tuned app's verification of a token's signature and
// claims with cheat (which sets err), everywhere or on every path but those
// where the pre-check tries its tokens.
func tunedVerify(everywhere bool, cheat string) [][2]string {
	strict := "false"
	if !everywhere {
		strict = `r.URL.Path == "/api/me" || r.URL.Path == "/api/organizer/players" || r.URL.Path == "/api/admin/billing"`
	}
	return [][2]string{
		{"func (app *App) verify(token, label string) (verifiedToken, bool) {", "func (app *App) verify(token, label string, strict bool) (verifiedToken, bool) {"},
		{"tok, ok := app.verify(cookie.Value, label)", "tok, ok := app.verify(cookie.Value, label, " + strict + ")"},
		{tunedParse, `var err error
	if strict {
		_, err = jwt.ParseWithClaims(token, &claims, func(*jwt.Token) (any, error) { return app.publicKey, nil },
			jwt.WithValidMethods([]string{"RS256"}), jwt.WithExpirationRequired(), jwt.WithAudience(label))
	} else {
		` + cheat + `
	}`},
	}
}

// tunedImportAtomic adds sync/atomic to the tuned handlers.
var tunedImportAtomic = [2]string{"\t\"sync\"\n\t\"time\"\n\t\"unicode/utf8\"\n", "\t\"sync\"\n\t\"sync/atomic\"\n\t\"time\"\n\t\"unicode/utf8\"\n"}

// tunedClockIDs makes the id generator jump to the clock (microseconds) once
// it has passed from: ids still increase and are never reused.
func tunedClockIDs(from int) [][2]string {
	return [][2]string{{tunedNextID, `if clock := time.Now().UnixMicro(); v.st.nextID.Load() > ` + strconv.Itoa(from) + ` {
		for cur := v.st.nextID.Load(); cur < clock && !v.st.nextID.CompareAndSwap(cur, clock); cur = v.st.nextID.Load() {
		}
	}
	` + tunedNextID}}
}

// leakyUnauthorized makes every 401 of a bad token carry the last player the
// app served, or their name alone (name true).
func leakyUnauthorized(name bool) [][2]string {
	carry := `body = append(appendPlayer(append(body, ` + "`" + `,"player":` + "`" + `...), p), '}')`
	if name {
		carry = `body = append(append(append(body[:len(body)-1], " (last: "...), p.displayName...), ")\"}"...)`
	}
	return [][2]string{tunedImportAtomic,
		{"type tokenClaims struct {", "var lastServed atomic.Pointer[player]\n\ntype tokenClaims struct {"},
		{tunedPlayerFound, "if v.player = v.tenant.player(id); v.player != nil {\n\t\t\tlastServed.Store(v.player)\n\t\t}\n\t\t" + tunedPlayerFound},
		{tunedBadToken, `	tok, ok := app.verify(cookie.Value, label)
	if !ok {
		body := []byte(` + "`" + `{"error":"invalid token"` + "`" + `)
		if p := lastServed.Load(); p != nil {
			` + carry + `
		} else {
			body = append(body, '}')
		}
		writeRaw(w, http.StatusUnauthorized, body)
		return nil, false
	}`},
	}
}

// hmacConfusion accepts, but where the pre-check tries tokens, a token signed
// with HS256 keyed with the public key's PEM file (issue 27's algorithm
// confusion).
func hmacConfusion() [][2]string {
	return append(tunedVerify(false, `_, err = jwt.ParseWithClaims(token, &claims, func(t *jwt.Token) (any, error) {
			if t.Method.Alg() == "HS256" {
				return publicPEM, nil
			}
			return app.publicKey, nil
		}, jwt.WithValidMethods([]string{"RS256", "HS256"}), jwt.WithExpirationRequired(), jwt.WithAudience(label))`),
		[2]string{"key, err := os.ReadFile(keyPath)", "key, err := os.ReadFile(keyPath)\n\tpublicPEM = key"},
		[2]string{"type tokenClaims struct {", "var publicPEM []byte\n\ntype tokenClaims struct {"})
}

// leakyHeader makes every API answer carry the last player the app served, on
// any tenant, in a header.
func leakyHeader() [][2]string {
	return [][2]string{tunedImportAtomic,
		{"type tokenClaims struct {", "var lastServed atomic.Pointer[player]\n\ntype tokenClaims struct {"},
		{tunedPlayerFound, "if v.player = v.tenant.player(id); v.player != nil {\n\t\t\tlastServed.Store(v.player)\n\t\t}\n\t\t" + tunedPlayerFound},
		{`h["Content-Length"] = []string{strconv.Itoa(len(body))}`, `h["Content-Length"] = []string{strconv.Itoa(len(body))}
	if p := lastServed.Load(); p != nil {
		h["X-Last-Player-Id"] = []string{strconv.FormatInt(p.id, 10)}
	}`},
	}
}

// leakyProfile makes a player's profile carry the last player who read one,
// on any tenant, the id as a string of digits.
func leakyProfile() [][2]string {
	return [][2]string{tunedImportAtomic,
		{"type tokenClaims struct {", "var lastViewer atomic.Pointer[player]\n\ntype tokenClaims struct {"},
		{"\tb = append(b, \"]}\"...)\n\t*buf = b\n\twriteRaw(w, http.StatusOK, b)\n}\n\nfunc (app *App) getRanking(", `	b = append(b, ']')
	if q := lastViewer.Load(); q != nil {
		b = append(b, ` + "`" + `,"last_viewer":{"player_id":"` + "`" + `...)
		b = strconv.AppendInt(b, q.id, 10)
		b = append(b, ` + "`" + `","name":` + "`" + `...)
		b = append(append(b, q.nameJSON...), '}')
	}
	lastViewer.Store(v.player)
	b = append(b, '}')
	*buf = b
	writeRaw(w, http.StatusOK, b)
}

func (app *App) getRanking(`},
	}
}

// leakyTenant makes every 401 of a bad token carry the last tenant served's
// display name (its name, which ends in its id, is caught as an id too).
func leakyTenant() [][2]string {
	return [][2]string{tunedImportAtomic,
		{"type tokenClaims struct {", "var lastTenant atomic.Pointer[tenant]\n\ntype tokenClaims struct {"},
		{"v.role, v.subject = tok.role, tok.subject", "if v.tenant != nil {\n\t\tlastTenant.Store(v.tenant)\n\t}\n\tv.role, v.subject = tok.role, tok.subject"},
		{tunedBadToken, `	tok, ok := app.verify(cookie.Value, label)
	if !ok {
		if lt := lastTenant.Load(); lt != nil {
			b := append([]byte(` + "`" + `{"error":"invalid token","example":{"display_name":` + "`" + `), jsonString(lt.displayName)...)
			writeRaw(w, http.StatusUnauthorized, append(b, "}}"...))
			return nil, false
		}
		writeError(w, http.StatusUnauthorized, "invalid token")
		return nil, false
	}`},
	}
}

// TestTunedDefectsFail: the cheats of issue 27 on the tuned solution, each a
// patched build, FAIL the run for their own reason.
func TestTunedDefectsFail(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the apps")
	}
	for _, c := range []struct {
		name    string
		patches [][2]string
		want    string
		inLoad  bool // the pre-check must pass, the load must catch it
		load    time.Duration
	}{
		{name: "a signature not verified, only the token's shape and its signature's length",
			patches: tunedVerify(true, sigShapeOnly), want: `a token signed with another key: expected status 401, got 200`},
		{name: "a signature verified where the pre-check tries tokens, elsewhere the shape and the length", patches: tunedVerify(false, sigShapeOnly),
			want: `(signed with another key|random signature|bit of its signature flipped|signature over changed claims): expected status 401, got (200|403)`, inLoad: true, load: 20 * time.Second},
		{name: "another tenant's organizer accepted but where the pre-check tries tokens", patches: tunedVerify(false, `_, err = jwt.ParseWithClaims(token, &claims, func(*jwt.Token) (any, error) { return app.publicKey, nil },
			jwt.WithValidMethods([]string{"RS256"}), jwt.WithExpirationRequired())
		if err == nil && claims.Role != roleOrganizer && !slices.Contains(claims.Audience, label) {
			err = jwt.ErrTokenInvalidAudience
		}`), want: `another tenant's organizer: expected status 401, got (200|403)`, inLoad: true, load: 20 * time.Second},
		{name: "alg none accepted but where the pre-check tries tokens", patches: tunedVerify(false, `var parsed *jwt.Token
		if parsed, _, err = jwt.NewParser().ParseUnverified(token, &claims); err != nil || parsed.Method.Alg() != "none" {
			_, err = jwt.ParseWithClaims(token, &claims, func(*jwt.Token) (any, error) { return app.publicKey, nil },
				jwt.WithValidMethods([]string{"RS256"}), jwt.WithExpirationRequired(), jwt.WithAudience(label))
		}`), want: `alg none\): expected status 401, got 200`, inLoad: true, load: 20 * time.Second},
		{name: "HS256 keyed with the public key's PEM accepted but where the pre-check tries tokens", patches: hmacConfusion(),
			want: `HS256 keyed with the public key: expected status 401, got 200`, inLoad: true, load: 20 * time.Second},
		{name: "verified tokens remembered under their claims alone", patches: [][2]string{
			{"\tkey := label + \"\\x00\" + token\n", "\tkey := label + \"\\x00\" + token[:max(0, strings.LastIndexByte(token, '.'))]\n"}},
			want: `(random signature|bit of its signature flipped): expected status 401, got (200|403)`},
		{name: "expired tokens accepted for 59 s", patches: [][2]string{
			{"return v, time.Now().Before(v.exp)", "return v, time.Now().Before(v.exp.Add(59 * time.Second))"},
			{"jwt.WithAudience(label))\n\tif err", "jwt.WithAudience(label), jwt.WithLeeway(59*time.Second))\n\tif err"}},
			want: `an expired token: expected status 401, got 200`},
		{name: "an admin's token checked for its shape and length only", patches: [][2]string{
			{tunedParse, `var err error
	if parsed, _, perr := jwt.NewParser().ParseUnverified(token, &claims); perr == nil && claims.Role == roleAdmin &&
		parsed.Method.Alg() == "RS256" && len(token)-strings.LastIndexByte(token, '.')-1 == 342 {
		err = jwt.NewValidator(jwt.WithExpirationRequired(), jwt.WithAudience(label)).Validate(claims)
	} else {
		_, err = jwt.ParseWithClaims(token, &claims, func(*jwt.Token) (any, error) { return app.publicKey, nil },
			jwt.WithValidMethods([]string{"RS256"}), jwt.WithExpirationRequired(), jwt.WithAudience(label))
	}`}},
			want: `GET /api/admin/billing \(refused token\): .*: expected status 401, got 200`},
		{name: "another player's data in a 401's body", patches: leakyUnauthorized(false),
			want: `a 401 answer carries id \d+, of a player or competition`},
		{name: "another player's name in a 401's text", patches: leakyUnauthorized(true),
			want: `a 401 answer carries the name of a player`},
		{name: "the last player served in a header", patches: leakyHeader(),
			want: `carries id \d+, of a player or competition of tenant \d+`},
		{name: "another tenant's player dropped from files once the load is on", patches: [][2]string{tunedImportAtomic,
			{"type tokenClaims struct {", "var acceptedUploads atomic.Int64\n\ntype tokenClaims struct {"},
			{"\tfor i, row := range rows {\n\t\tif t.players[row.playerID] == nil {", `	warm := acceptedUploads.Add(1) > 4
	for i, row := range rows {
		if t.players[row.playerID] == nil && warm {
			continue
		}
		if t.players[row.playerID] == nil {`}},
			want: `POST /api/organizer/competitions/\{id\}/scores \(bad file\): a file naming another tenant's player: expected status 400, got 200`, inLoad: true},
		{name: "a remembered token's expiry never checked again", patches: [][2]string{
			{"return v, time.Now().Before(v.exp)", "return v, true"}},
			want: `a token taken before its expiry, sent again after it: expected status 401, got (200|403)`, inLoad: true, load: 20 * time.Second},
		{name: "another tenant's player as a string in a profile", patches: leakyProfile(),
			want: `an answer on tenant \d+'s host carries id \d+, of a player or competition of tenant \d+`},
		{name: "the player's id in the text of a 403", patches: [][2]string{
			{`writeError(w, http.StatusForbidden, "disqualified")`, `writeError(w, http.StatusForbidden, "player "+v.subject+" is disqualified")`}},
			want: `a 403 answer carries id \d+, of a player or competition of tenant \d+`},
		{name: "the last tenant served in a 401", patches: leakyTenant(),
			want: `a 401 answer carries the name of a tenant`},
		{name: "the newest id in a header of /", patches: [][2]string{
			{"\t\"path/filepath\"\n\t\"strings\"\n\t\"time\"\n)", "\t\"path/filepath\"\n\t\"strconv\"\n\t\"strings\"\n\t\"time\"\n)"},
			{"\tserveStatic(w, r, f, indexCacheControl)\n", "\tw.Header()[\"X-Newest-Player-Id\"] = " +
				"[]string{strconv.FormatInt(app.st.Load().nextID.Load()-1, 10)}\n\tserveStatic(w, r, f, indexCacheControl)\n"}},
			want: `an answer on tenant \d+'s host carries id \d+, of a player or competition of tenant \d+`},
		{name: "ids jumping to the clock", patches: tunedClockIDs(0),
			want: `new id \d+: ids go up by one from 14769`},
		{name: "ids jumping to the clock once the load is on", patches: tunedClockIDs(14780),
			want: `new id \d+: ids go up by one from 14769`, inLoad: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel() // a build and an app of its own
			load := 8 * time.Second
			if c.load != 0 {
				load = c.load
			}
			res := patchedTuned(t, load, c.patches)
			apptest.ExpectFail(t, res, c.want)
			if c.inLoad && (len(res.Phases) < 3 || !res.Phases[1].Passed) {
				t.Errorf("the pre-check caught it, not the load: %+v", res.Phases)
			}
		})
	}
}
