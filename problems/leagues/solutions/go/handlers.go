package main

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/golang-jwt/jwt/v5"
)

const (
	tokenCookie   = "leagues_token"
	adminLabel    = "admin" // the host label, and the tokens' audience, of the service's admin
	rankingPage   = 100     // ranks in one ranking answer
	billingPage   = 10      // tenants in one page of the admin's billing
	maxNewPlayers = 100     // names in one POST /api/organizer/players
	maxName       = 64      // characters of a display name
	maxTitle      = 128     // characters of a competition's title
	maxScore      = 999999999
	maxBody       = 1 << 20  // bytes of a JSON body
	maxUpload     = 16 << 20 // bytes of a CSV upload
	yenPerScored  = 100
	yenPerViewer  = 10
	roleAdmin     = "admin"
	roleOrganizer = "organizer"
	rolePlayer    = "player"
)

// Who is asking.

// viewer is the one a request comes from, as its token and host say.
type viewer struct {
	role    string
	subject string
	st      *state
	tenant  *tenant // nil on the admin host
	player  *player // for a player
}

type tokenClaims struct {
	Role string `json:"role"`
	jwt.RegisteredClaims
}

// tokenCache remembers the tokens that passed every check of the signature and the claims, per host label, with
// their expiry: RS256 verification is the costliest part of most requests, and every user sends the same token
// again and again. A token is only ever remembered after it verified, and its expiry is checked on every use.
type tokenCache struct {
	mu sync.RWMutex
	m  map[string]verifiedToken
}

type verifiedToken struct {
	role, subject string
	exp           time.Time
}

// maxTokens bounds the cache; it is emptied when full.
const maxTokens = 100_000

func (c *tokenCache) get(key string) (verifiedToken, bool) {
	c.mu.RLock()
	v, ok := c.m[key]
	c.mu.RUnlock()
	return v, ok
}

func (c *tokenCache) put(key string, v verifiedToken) {
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxTokens {
		c.m = make(map[string]verifiedToken)
	}
	c.m[key] = v
	c.mu.Unlock()
}

func (c *tokenCache) reset() {
	c.mu.Lock()
	c.m = nil
	c.mu.Unlock()
}

// hostLabel returns the first label of the request's host name, in lower case.
func hostLabel(r *http.Request) string {
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	label, _, _ := strings.Cut(host, ".")
	return strings.ToLower(label)
}

// verify checks a token for the host label as the reference does (golang-jwt, RS256 only, exp required, aud the
// label), remembering the tokens that pass.
func (app *App) verify(token, label string) (verifiedToken, bool) {
	key := label + "\x00" + token
	if v, ok := app.tokens.get(key); ok {
		return v, time.Now().Before(v.exp)
	}
	var claims tokenClaims
	_, err := jwt.ParseWithClaims(token, &claims, func(*jwt.Token) (any, error) { return app.publicKey, nil },
		jwt.WithValidMethods([]string{"RS256"}), jwt.WithExpirationRequired(), jwt.WithAudience(label))
	if err != nil || claims.Subject == "" ||
		(claims.Role != roleAdmin && claims.Role != roleOrganizer && claims.Role != rolePlayer) || claims.ExpiresAt == nil {
		return verifiedToken{}, false
	}
	v := verifiedToken{role: claims.Role, subject: claims.Subject, exp: claims.ExpiresAt.Time}
	app.tokens.put(key, v)
	return v, true
}

// authorize finds the viewer of a request and checks that their role is one of roles, answering the request
// itself when not: 404 for a host that names no tenant, 401 for a missing or bad token, 403 for a role that may
// not ask, or for a disqualified player. The caller holds app.resetMu for reading.
func (app *App) authorize(w http.ResponseWriter, r *http.Request, roles ...string) (*viewer, bool) {
	label := hostLabel(r)
	v := &viewer{st: app.st.Load()}
	if label != adminLabel {
		if v.tenant = v.st.tenant(label); v.tenant == nil {
			writeError(w, http.StatusNotFound, "not found")
			return nil, false
		}
	}
	cookie, err := r.Cookie(tokenCookie)
	if err != nil {
		writeError(w, http.StatusUnauthorized, "invalid token")
		return nil, false
	}
	tok, ok := app.verify(cookie.Value, label)
	if !ok {
		writeError(w, http.StatusUnauthorized, "invalid token")
		return nil, false
	}
	v.role, v.subject = tok.role, tok.subject
	if v.role == rolePlayer {
		id, ok := parseID(v.subject)
		if v.tenant == nil || !ok {
			writeError(w, http.StatusUnauthorized, "invalid token")
			return nil, false
		}
		if v.player = v.tenant.player(id); v.player == nil {
			writeError(w, http.StatusUnauthorized, "invalid token")
			return nil, false
		}
	}
	// A role goes with its host: the admin on the admin host, the others on a tenant's.
	if !slices.Contains(roles, v.role) || (v.role == roleAdmin) != (v.tenant == nil) {
		writeError(w, http.StatusForbidden, "forbidden")
		return nil, false
	}
	if v.player != nil && v.player.disqualified.Load() {
		writeError(w, http.StatusForbidden, "disqualified")
		return nil, false
	}
	return v, true
}

// Parameters and bodies.

// parseID parses an id: a decimal number of 1 to 18 digits without leading zeros (^[1-9][0-9]{0,17}$).
func parseID(s string) (int64, bool) {
	if len(s) == 0 || len(s) > 18 || s[0] == '0' {
		return 0, false
	}
	return parseDigits(s)
}

// parseNumber parses ^[0-9]{1,18}$.
func parseNumber(s string) (int64, bool) {
	if len(s) == 0 || len(s) > 18 {
		return 0, false
	}
	return parseDigits(s)
}

func parseDigits(s string) (int64, bool) {
	var n int64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// parseScore parses a score: ^(0|[1-9][0-9]{0,8})$.
func parseScore(s string) (int64, bool) {
	if len(s) == 0 || len(s) > 9 || (s[0] == '0' && len(s) > 1) {
		return 0, false
	}
	return parseDigits(s)
}

// pathID returns the {id} of the path, or false for one that cannot name anything.
func pathID(r *http.Request) (int64, bool) { return parseID(r.PathValue("id")) }

// readJSON decodes the request's JSON body into v, answering 400 when it is not valid UTF-8 or not JSON of v's
// shape.
func readJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil || !utf8.Valid(body) || json.Unmarshal(body, v) != nil {
		writeError(w, http.StatusBadRequest, "bad request")
		return false
	}
	return true
}

// validText reports whether s is a name or title of 1 to max characters without control characters.
func validText(s string, max int) bool {
	n := utf8.RuneCountInString(s)
	return n >= 1 && n <= max && !strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f })
}

// validTenantName reports whether s matches ^[a-z][a-z0-9-]{0,61}[a-z0-9]$.
func validTenantName(s string) bool {
	if len(s) < 2 || len(s) > 63 || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' && i < len(s)-1) {
			return false
		}
	}
	return true
}

// csvRow is one data line of an uploaded CSV.
type csvRow struct {
	playerID int64
	score    int64
}

// parseScores reads a score CSV as the manual defines it, or returns false.
func parseScores(body []byte) ([]csvRow, bool) {
	if !utf8.Valid(body) {
		return nil, false
	}
	s := string(body)
	if strings.HasSuffix(s, "\n") {
		s = s[:len(s)-1] // the file's last "\n"
	}
	rows := make([]csvRow, 0, strings.Count(s, "\n"))
	for i := 0; ; i++ {
		line, rest, more := strings.Cut(s, "\n")
		line = strings.TrimSuffix(line, "\r")
		if i == 0 {
			if line != "player_id,score" {
				return nil, false
			}
		} else {
			id, score, ok := strings.Cut(line, ",")
			if !ok {
				return nil, false
			}
			var row csvRow
			if row.playerID, ok = parseID(id); !ok {
				return nil, false
			}
			if row.score, ok = parseScore(score); !ok {
				return nil, false
			}
			rows = append(rows, row)
		}
		if !more {
			return rows, true
		}
		s = rest
	}
}

// Admin.

func (app *App) postAdminTenants(w http.ResponseWriter, r *http.Request) {
	app.resetMu.RLock()
	defer app.resetMu.RUnlock()
	v, ok := app.authorize(w, r, roleAdmin)
	if !ok {
		return
	}
	var req struct {
		Name        *string `json:"name"`
		DisplayName *string `json:"display_name"`
	}
	if !readJSON(w, r, &req) {
		return
	}
	if req.Name == nil || req.DisplayName == nil || !validTenantName(*req.Name) || *req.Name == adminLabel ||
		!validText(*req.DisplayName, maxName) {
		writeError(w, http.StatusBadRequest, "bad request")
		return
	}
	st := v.st
	st.tmu.Lock()
	defer st.tmu.Unlock()
	if st.tenant(*req.Name) != nil {
		writeError(w, http.StatusConflict, "name taken")
		return
	}
	list := *st.tenants.Load()
	row := tenantRow{id: 1, name: *req.Name, displayName: *req.DisplayName, createdAt: time.Now().Unix()}
	if len(list) > 0 {
		row.id = list[len(list)-1].id + 1
	}
	if err := app.store.addTenant(row); err != nil {
		serverError(w, err)
		return
	}
	t := newTenant(row)
	list = append(list, t)
	st.tenants.Store(&list)
	st.byName.Store(t.name, t)
	b := append([]byte(`{"tenant":`), t.json...)
	writeRaw(w, http.StatusOK, append(b, `,"billing":0}}`...))
}

func (app *App) getAdminBilling(w http.ResponseWriter, r *http.Request) {
	app.resetMu.RLock()
	defer app.resetMu.RUnlock()
	v, ok := app.authorize(w, r, roleAdmin)
	if !ok {
		return
	}
	list := *v.st.tenants.Load()
	end := len(list) // tenants below end
	if before := r.URL.Query().Get("before"); before != "" {
		b, ok := parseNumber(before)
		if !ok {
			writeError(w, http.StatusBadRequest, "bad request")
			return
		}
		end, _ = slices.BinarySearchFunc(list, b, func(t *tenant, id int64) int { return cmpInt(t.id, id) })
	}
	buf := getBuf()
	defer putBuf(buf)
	out := append(*buf, `{"tenants":[`...)
	for i := end - 1; i >= max(0, end-billingPage); i-- {
		if i != end-1 {
			out = append(out, ',')
		}
		t := list[i]
		out = append(out, t.json...)
		out = append(out, `,"billing":`...)
		out = strconv.AppendInt(out, t.billing(), 10)
		out = append(out, '}')
	}
	out = append(out, "]}"...)
	*buf = out
	writeRaw(w, http.StatusOK, out)
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Organizer.

func (app *App) getOrganizerPlayers(w http.ResponseWriter, r *http.Request) {
	app.resetMu.RLock()
	defer app.resetMu.RUnlock()
	v, ok := app.authorize(w, r, roleOrganizer)
	if !ok {
		return
	}
	t := v.tenant
	if b := t.playersJSON.Load(); b != nil {
		writeRaw(w, http.StatusOK, *b)
		return
	}
	t.mu.RLock()
	b := []byte(`{"players":[`)
	for i, p := range t.playerList {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendPlayer(b, p)
	}
	b = append(b, "]}"...)
	t.playersJSON.Store(&b)
	t.mu.RUnlock()
	writeRaw(w, http.StatusOK, b)
}

func (app *App) postOrganizerPlayers(w http.ResponseWriter, r *http.Request) {
	app.resetMu.RLock()
	defer app.resetMu.RUnlock()
	v, ok := app.authorize(w, r, roleOrganizer)
	if !ok {
		return
	}
	var req struct {
		DisplayNames []string `json:"display_names"`
	}
	if !readJSON(w, r, &req) {
		return
	}
	if len(req.DisplayNames) < 1 || len(req.DisplayNames) > maxNewPlayers {
		writeError(w, http.StatusBadRequest, "bad request")
		return
	}
	for _, name := range req.DisplayNames {
		if !validText(name, maxName) {
			writeError(w, http.StatusBadRequest, "bad request")
			return
		}
	}
	t := v.tenant
	t.wmu.Lock()
	defer t.wmu.Unlock()
	n := int64(len(req.DisplayNames))
	first := v.st.nextID.Add(n) - n
	now := time.Now().Unix()
	rows := make([]playerRow, n)
	for i, name := range req.DisplayNames {
		rows[i] = playerRow{id: first + int64(i), tenantID: t.id, displayName: name, createdAt: now}
	}
	if err := app.store.addPlayers(rows, first+n); err != nil {
		serverError(w, err)
		return
	}
	players := make([]*player, n)
	for i, row := range rows {
		players[i] = newPlayer(row)
	}
	t.mu.Lock()
	for _, p := range players {
		t.players[p.id] = p
	}
	t.playerList = append(t.playerList, players...)
	t.playersJSON.Store(nil)
	t.mu.Unlock()
	b := []byte(`{"players":[`)
	for i, p := range players {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendPlayer(b, p)
	}
	writeRaw(w, http.StatusOK, append(b, "]}"...))
}

func (app *App) postDisqualify(w http.ResponseWriter, r *http.Request) {
	app.resetMu.RLock()
	defer app.resetMu.RUnlock()
	v, ok := app.authorize(w, r, roleOrganizer)
	if !ok {
		return
	}
	id, ok := pathID(r)
	if !ok {
		writeError(w, http.StatusNotFound, "not found")
		return
	}
	t := v.tenant
	t.wmu.Lock()
	defer t.wmu.Unlock()
	p := t.player(id)
	if p == nil {
		writeError(w, http.StatusNotFound, "not found")
		return
	}
	if !p.disqualified.Load() {
		if err := app.store.disqualify(id); err != nil {
			serverError(w, err)
			return
		}
		t.mu.Lock()
		p.disqualified.Store(true)
		t.playersJSON.Store(nil)
		t.mu.Unlock()
	}
	writeRaw(w, http.StatusOK, append(appendPlayer([]byte(`{"player":`), p), '}'))
}

func (app *App) getOrganizerCompetitions(w http.ResponseWriter, r *http.Request) {
	app.listCompetitions(w, r, roleOrganizer)
}

func (app *App) getPlayerCompetitions(w http.ResponseWriter, r *http.Request) {
	app.listCompetitions(w, r, rolePlayer)
}

// listCompetitions answers a list of the tenant's competitions, the highest id first, to role.
func (app *App) listCompetitions(w http.ResponseWriter, r *http.Request, role string) {
	app.resetMu.RLock()
	defer app.resetMu.RUnlock()
	v, ok := app.authorize(w, r, role)
	if !ok {
		return
	}
	buf := getBuf()
	defer putBuf(buf)
	*buf = appendCompetitions(*buf, v.tenant.competitionsSnapshot())
	writeRaw(w, http.StatusOK, *buf)
}

func (app *App) postCompetitions(w http.ResponseWriter, r *http.Request) {
	app.resetMu.RLock()
	defer app.resetMu.RUnlock()
	v, ok := app.authorize(w, r, roleOrganizer)
	if !ok {
		return
	}
	var req struct {
		Title *string `json:"title"`
	}
	if !readJSON(w, r, &req) {
		return
	}
	if req.Title == nil || !validText(*req.Title, maxTitle) {
		writeError(w, http.StatusBadRequest, "bad request")
		return
	}
	t := v.tenant
	t.wmu.Lock()
	defer t.wmu.Unlock()
	row := competitionRow{id: v.st.nextID.Add(1) - 1, tenantID: t.id, title: *req.Title, createdAt: time.Now().Unix()}
	if err := app.store.addCompetition(row, row.id+1); err != nil {
		serverError(w, err)
		return
	}
	c := newCompetition(row)
	t.mu.Lock()
	t.competitions[c.id] = c
	t.compList = append(t.compList, c)
	t.mu.Unlock()
	writeRaw(w, http.StatusOK, append(appendCompetition([]byte(`{"competition":`), c), '}'))
}

func (app *App) postFinish(w http.ResponseWriter, r *http.Request) {
	app.resetMu.RLock()
	defer app.resetMu.RUnlock()
	v, ok := app.authorize(w, r, roleOrganizer)
	if !ok {
		return
	}
	id, ok := pathID(r)
	if !ok {
		writeError(w, http.StatusNotFound, "not found")
		return
	}
	t := v.tenant
	t.wmu.Lock()
	defer t.wmu.Unlock()
	c := t.competition(id)
	if c == nil {
		writeError(w, http.StatusNotFound, "not found")
		return
	}
	if c.fin.Load() != nil {
		writeError(w, http.StatusConflict, "competition finished")
		return
	}
	// The visits wait while the finish is written and its bill made: the bill counts exactly the visits recorded
	// before it, and none is recorded after it.
	c.vmu.Lock()
	defer c.vmu.Unlock()
	now := time.Now().Unix()
	if err := app.store.finish(id, now); err != nil {
		serverError(w, err)
		return
	}
	c.fin.Store(c.bill(now))
	c.visits = nil
	writeRaw(w, http.StatusOK, append(appendCompetition([]byte(`{"competition":`), c), '}'))
}

func (app *App) postScores(w http.ResponseWriter, r *http.Request) {
	app.resetMu.RLock()
	defer app.resetMu.RUnlock()
	v, ok := app.authorize(w, r, roleOrganizer)
	if !ok {
		return
	}
	id, ok := pathID(r)
	if !ok {
		writeError(w, http.StatusNotFound, "not found")
		return
	}
	t := v.tenant
	// Quick answers for a competition that is not there or finished, before reading the file; checked again
	// under the tenant's lock.
	if c := t.competition(id); c == nil {
		writeError(w, http.StatusNotFound, "not found")
		return
	} else if c.fin.Load() != nil {
		writeError(w, http.StatusConflict, "competition finished")
		return
	}
	// The file is read and parsed before the tenant's lock is taken; its verdict waits for the checks that come
	// first (404, then 409).
	var rows []csvRow
	parsed := false
	r.Body = http.MaxBytesReader(w, r.Body, maxUpload)
	if file, _, err := r.FormFile("scores"); err == nil {
		body, err := io.ReadAll(file)
		file.Close()
		if err == nil {
			rows, parsed = parseScores(body)
		}
	}

	t.wmu.Lock()
	defer t.wmu.Unlock()
	c := t.competition(id)
	if c == nil {
		writeError(w, http.StatusNotFound, "not found")
		return
	}
	if c.fin.Load() != nil {
		writeError(w, http.StatusConflict, "competition finished")
		return
	}
	if !parsed {
		writeError(w, http.StatusBadRequest, "bad request")
		return
	}
	// The last row of each player wins. Every player named must be the tenant's.
	last := make(map[int64]int, len(rows))
	t.mu.RLock()
	for i, row := range rows {
		if t.players[row.playerID] == nil {
			t.mu.RUnlock()
			writeError(w, http.StatusBadRequest, "bad request")
			return
		}
		last[row.playerID] = i
	}
	entries := make([]rankEntry, 0, len(last))
	scores := make([]scoreRow, 0, len(last))
	for pid, i := range last {
		entries = append(entries, rankEntry{player: t.players[pid], score: rows[i].score, row: int64(i + 1)})
	}
	t.mu.RUnlock()
	ranking := newRanking(entries)
	for _, e := range ranking.entries {
		scores = append(scores, scoreRow{competitionID: c.id, playerID: e.player.id, row: e.row, score: e.score})
	}
	if err := app.store.setScores(c.id, scores); err != nil {
		serverError(w, err)
		return
	}
	c.ranking.Store(ranking)
	b := strconv.AppendInt([]byte(`{"rows":`), int64(len(rows)), 10)
	writeRaw(w, http.StatusOK, append(b, '}'))
}

func (app *App) getOrganizerBilling(w http.ResponseWriter, r *http.Request) {
	app.resetMu.RLock()
	defer app.resetMu.RUnlock()
	v, ok := app.authorize(w, r, roleOrganizer)
	if !ok {
		return
	}
	list := v.tenant.competitionsSnapshot()
	var total int64
	fins := make([]*finish, len(list))
	for i, c := range list {
		if fins[i] = c.fin.Load(); fins[i] != nil {
			total += fins[i].yen
		}
	}
	buf := getBuf()
	defer putBuf(buf)
	b := append(*buf, `{"billing":{"total":`...)
	b = strconv.AppendInt(b, total, 10)
	b = append(b, `,"competitions":[`...)
	for i := len(list) - 1; i >= 0; i-- {
		c, f := list[i], fins[i]
		if i != len(list)-1 {
			b = append(b, ',')
		}
		b = append(b, `{"competition_id":`...)
		b = strconv.AppendInt(b, c.id, 10)
		b = append(b, `,"title":`...)
		b = append(b, c.titleJSON...)
		if f == nil {
			b = append(b, `,"is_finished":false,"scored":0,"viewed":0,"billing":0}`...)
			continue
		}
		b = append(b, `,"is_finished":true,"scored":`...)
		b = strconv.AppendInt(b, f.scored, 10)
		b = append(b, `,"viewed":`...)
		b = strconv.AppendInt(b, f.viewed, 10)
		b = append(b, `,"billing":`...)
		b = strconv.AppendInt(b, f.yen, 10)
		b = append(b, '}')
	}
	b = append(b, "]}}"...)
	*buf = b
	writeRaw(w, http.StatusOK, b)
}

// Player.

func (app *App) getPlayer(w http.ResponseWriter, r *http.Request) {
	app.resetMu.RLock()
	defer app.resetMu.RUnlock()
	v, ok := app.authorize(w, r, rolePlayer)
	if !ok {
		return
	}
	id, ok := pathID(r)
	if !ok {
		writeError(w, http.StatusNotFound, "not found")
		return
	}
	p := v.tenant.player(id)
	if p == nil {
		writeError(w, http.StatusNotFound, "not found")
		return
	}
	buf := getBuf()
	defer putBuf(buf)
	b := appendPlayer(append(*buf, `{"player":`...), p)
	b = append(b, `,"scores":[`...)
	first := true
	for _, c := range v.tenant.competitionsSnapshot() {
		rk := c.ranking.Load()
		i, ok := rk.index[p.id]
		if !ok {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, `{"competition_id":`...)
		b = strconv.AppendInt(b, c.id, 10)
		b = append(b, `,"title":`...)
		b = append(b, c.titleJSON...)
		b = append(b, `,"score":`...)
		b = strconv.AppendInt(b, rk.entries[i].score, 10)
		b = append(b, '}')
	}
	b = append(b, "]}"...)
	*buf = b
	writeRaw(w, http.StatusOK, b)
}

func (app *App) getRanking(w http.ResponseWriter, r *http.Request) {
	app.resetMu.RLock()
	defer app.resetMu.RUnlock()
	v, ok := app.authorize(w, r, rolePlayer)
	if !ok {
		return
	}
	id, ok := pathID(r)
	if !ok {
		writeError(w, http.StatusNotFound, "not found")
		return
	}
	var rankAfter int64
	if s := r.URL.Query().Get("rank_after"); s != "" {
		if rankAfter, ok = parseNumber(s); !ok {
			writeError(w, http.StatusBadRequest, "bad request")
			return
		}
	}
	c := v.tenant.competition(id)
	if c == nil {
		writeError(w, http.StatusNotFound, "not found")
		return
	}
	if err := app.recordVisit(c, v.player); err != nil {
		serverError(w, err)
		return
	}
	buf := getBuf()
	defer putBuf(buf)
	b := appendCompetition(append(*buf, `{"competition":`...), c)
	b = append(appendRanks(append(b, ','), c.ranking.Load(), rankAfter), '}')
	*buf = b
	writeRaw(w, http.StatusOK, b)
}

// recordVisit records a ranking read for the bill: only the player's first read of a competition that has not
// finished counts, so only that one is written.
func (app *App) recordVisit(c *competition, p *player) error {
	if c.fin.Load() != nil {
		return nil
	}
	now := time.Now().Unix()
	c.vmu.Lock()
	defer c.vmu.Unlock()
	if c.visits == nil { // finished meanwhile
		return nil
	}
	first, seen := c.visits[p.id]
	if seen && first <= now {
		return nil
	}
	if err := app.store.visit(visitRow{competitionID: c.id, playerID: p.id, at: now}, seen); err != nil {
		return err
	}
	c.visits[p.id] = now
	return nil
}

// Common.

func (app *App) getMe(w http.ResponseWriter, r *http.Request) {
	app.resetMu.RLock()
	defer app.resetMu.RUnlock()
	v, ok := app.authorize(w, r, roleAdmin, roleOrganizer, rolePlayer)
	if !ok {
		return
	}
	b := append([]byte(`{"role":`), jsonString(v.role)...)
	b = append(append(b, `,"subject":`...), jsonString(v.subject)...)
	b = append(b, `,"tenant":`...)
	if v.tenant != nil {
		b = append(append(b, v.tenant.json...), '}')
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"player":`...)
	if v.player != nil {
		b = appendPlayer(b, v.player)
	} else {
		b = append(b, "null"...)
	}
	writeRaw(w, http.StatusOK, append(b, '}'))
}
