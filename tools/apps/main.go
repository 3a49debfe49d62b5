// Command apps builds every problem's apps, in every language and the tuned
// solutions, as `tunecon serve` would before starting one: Go and Rust
// binaries into build/, Python virtualenvs, the Node apps' packages and
// compiled TypeScript. `make test` runs it at a lower priority beside the
// kit's own tests, and before the problems' tests, so that none of theirs
// waits on a compiler (a Rust app's first build takes minutes) or shares the
// machine with one. An app whose toolchain is
// missing is reported and left: its tests skip, or fail under CI=true.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"time"

	"github.com/tunecon/tunecon/kit"
	"github.com/tunecon/tunecon/problems"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx); err != nil {
		stop()
		fmt.Fprintln(os.Stderr, "apps:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	root, err := kit.FindRoot(".")
	if err != nil {
		return err
	}
	for _, p := range problems.All() {
		for _, lang := range p.ServeLangs() {
			start := time.Now()
			err := p.Build(ctx, kit.ServeConfig{Lang: lang, Root: root, Log: os.Stdout})
			var missing *kit.MissingToolchain
			switch {
			case errors.As(err, &missing):
				fmt.Printf("%s %s: not built: %v\n", p.Name, lang, err)
			case err != nil:
				return fmt.Errorf("%s %s: %w", p.Name, lang, err)
			default:
				fmt.Printf("%s %s: built in %.1f s\n", p.Name, lang, time.Since(start).Seconds())
			}
		}
	}
	return nil
}
