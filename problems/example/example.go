package example

import (
	"net/http"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/kit"
)

// Name is the problem's name.
const Name = "example"

// Problem describes the worked example: its reference app runs inside the
// tunecon process, so it has no launcher, no dump and no database.
var Problem = kit.Problem{
	Name:        Name,
	Title:       "Notes (the engine's worked example)",
	Summary:     "a tiny in-process notes app: pages, posts, a freshness check, an asset",
	Langs:       []string{"go"},
	Stores:      []string{kit.StoreMemory},
	Manual:      "problems/example/scenario.go",
	NewScenario: func() (engine.Scenario, error) { return NewScenario(), nil },
	Handler:     func() http.Handler { return (&App{}).Handler() },
}
