package cli

import (
	"context"
	"flag"
	"net/url"

	"github.com/tunecon/tunecon/kit"
)

// cmdTry starts a reference app, benchmarks it and stops it.
func cmdTry(ctx context.Context, args []string, env Env) (int, error) {
	fs := flag.NewFlagSet("try", flag.ContinueOnError)
	var bf benchFlags
	bf.register(fs)
	var af appFlags
	af.register(fs)
	p, err := parse(fs, args, env)
	if err != nil {
		return 0, err
	}
	if err := bf.validate(); err != nil {
		return 0, err
	}
	cfg, err := af.config(p, "127.0.0.1:0", env)
	if err != nil {
		return 0, err
	}
	var code int
	err = kit.Serving(ctx, p, cfg, func(target *url.URL) error {
		var err error
		code, err = runBench(ctx, p, target, bf, env)
		return err
	})
	return code, err
}
