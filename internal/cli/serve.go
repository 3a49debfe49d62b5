package cli

import (
	"context"
	"fmt"
	"time"
)

// cmdServe runs a reference app until the command is interrupted.
func cmdServe(ctx context.Context, args []string, env Env) (int, error) {
	af := appFlags{withAddr: true}
	p, err := parseCommand("serve", args, env, &af)
	if err != nil {
		return 0, err
	}
	cfg, err := af.config(p, env)
	if err != nil {
		return 0, err
	}
	app, err := p.Serve(ctx, cfg)
	if err != nil {
		return 0, err
	}
	fmt.Fprintf(env.Stdout, "%s (%s) is serving on %s; stop with Ctrl-C\n", p.Name, cfg.Lang, app.URL)
	<-ctx.Done()
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return ExitPass, app.Stop(sctx)
}
