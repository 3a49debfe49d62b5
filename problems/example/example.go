package example

import (
	"net/http"
	"testing/fstest"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/kit"
)

// Name is the problem's name.
const Name = "example"

// manual is what the portal shows of the example: it has no MANUAL.md (its
// scenario's comments are its manual).
const manual = `# Notes (the engine's worked example)

A tiny notes app served inside the benchmarker's own process, for trying the
portal and the engine: its pages list notes, new notes must appear at once,
and its stylesheet must be served as it ships. The rules are the comments of
problems/example/scenario.go.
`

// Problem describes the worked example: its reference app runs inside the
// tunecon process, so it has no launcher, no dump and no database.
var Problem = kit.Problem{
	Name:        Name,
	Title:       "Notes (the engine's worked example)",
	Summary:     "a tiny in-process notes app: pages, posts, a freshness check, an asset",
	Langs:       []string{"go"},
	Stores:      []string{kit.StoreMemory},
	Manual:      "problems/example/scenario.go",
	Files:       fstest.MapFS{kit.ManualFile: {Data: []byte(manual)}},
	NewScenario: func(kit.Env) (engine.Scenario, error) { return NewScenario(), nil },
	Handler:     func() http.Handler { return (&App{}).Handler() },
}
