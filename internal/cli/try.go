package cli

import (
	"context"
	"fmt"
	"net/url"

	"github.com/tunecon/tunecon/engine"
	"github.com/tunecon/tunecon/kit"
)

// cmdTry starts a reference app, benchmarks it and stops it.
func cmdTry(ctx context.Context, args []string, env Env) (int, error) {
	var bf benchFlags
	af := appFlags{withPin: true, withRestart: true}
	p, err := parseCommand("try", args, env, &bf, &af)
	if err != nil {
		return 0, err
	}
	cfg, err := af.config(p, env)
	if err != nil {
		return 0, err
	}
	split, err := af.split(p)
	if err != nil {
		return 0, err
	}
	fmt.Fprintln(env.Stderr, split)
	cfg.CPUs = split.Apps
	var code int
	err = kit.Serving(ctx, p, cfg, func(target *url.URL, app *kit.App) error {
		var more []engine.Option
		switch {
		case af.restart && app.CanRestart():
			more = append(more, kit.RestartBetween(app))
		case af.restart:
			fmt.Fprintf(env.Stderr, "%s's app runs inside this process: it is not restarted before the final check\n", p.Name)
		}
		var err error
		code, err = runBench(ctx, p, target, bf, env, more...)
		return err
	})
	return code, err
}
