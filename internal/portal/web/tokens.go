package web

import (
	"net/http"

	"github.com/tunecon/tunecon/internal/portal"
)

// createToken makes a read-only API token for the viewer's team and shows
// it, once: the portal keeps only its hash. The page is not cached, and
// reloading it makes no second token (the browser asks before posting
// again; the name must be new anyway).
func (s *Server) createToken(w http.ResponseWriter, r *http.Request, v viewer) error {
	token, hash := portal.NewAPIToken()
	t, err := s.store.CreateAPIToken(r.Context(), v.TeamID, v.Login, r.PostFormValue("name"), hash)
	if err != nil {
		return err
	}
	s.render(w, r, http.StatusOK, "team_token", v, map[string]any{"Token": t, "Secret": token})
	return nil
}

// revokeToken deletes a token of the viewer's team; another team's is not
// found.
func (s *Server) revokeToken(w http.ResponseWriter, r *http.Request, v viewer) error {
	id, err := pathID(r, "token")
	if err != nil {
		return err
	}
	if err := s.store.RevokeAPIToken(r.Context(), v.TeamID, id); err != nil {
		return err
	}
	seeOther(w, r, "/team#tokens")
	return nil
}
