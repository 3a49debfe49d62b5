package cli

import (
	"context"
	"flag"
	"fmt"
	"time"
)

// cmdServe runs a reference app until the command is interrupted.
func cmdServe(ctx context.Context, args []string, env Env) (int, error) {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	var af appFlags
	af.register(fs)
	addr := fs.String("addr", "127.0.0.1:8080", "address to listen on")
	p, err := parse(fs, args, env)
	if err != nil {
		return 0, err
	}
	cfg, err := af.config(p, *addr, env)
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
