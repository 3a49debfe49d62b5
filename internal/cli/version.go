package cli

import (
	"fmt"

	"github.com/tunecon/tunecon/engine"
)

func cmdVersion(args []string, env Env) (int, error) {
	if len(args) > 0 {
		return 0, badUsage("version takes no arguments")
	}
	fmt.Fprintf(env.Stdout, "tunecon %s\n", engine.Version)
	return ExitPass, nil
}
