// Command tunecon benchmarks web apps for performance-tuning contests.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/term"

	"github.com/tunecon/tunecon/internal/cli"
	"github.com/tunecon/tunecon/kit"
)

func main() {
	kit.TuneRuntime()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	env := cli.Env{
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv,
		IsTerminal: term.IsTerminal(int(os.Stderr.Fd())),
	}
	if fd := int(os.Stdin.Fd()); term.IsTerminal(fd) {
		env.ReadSecret = func(prompt string) (string, error) {
			fmt.Fprint(os.Stderr, prompt)
			b, err := term.ReadPassword(fd)
			fmt.Fprintln(os.Stderr)
			return string(b), err
		}
	}
	code := cli.Run(ctx, os.Args[1:], env)
	stop()
	os.Exit(code)
}
