// Command leagues-token prints a token for the leagues problem's apps,
// signed with the problem's private key, to use the app by hand:
//
//	go run ./problems/leagues/keys/leagues-token -aud swift-falcons-1 -role organizer -sub me
//
// Paste it into the single-page app, or send it as the cookie leagues_token.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/tunecon/tunecon/problems/leagues/keys"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], time.Now, os.Stdout, os.Stderr))
}

func run(_ context.Context, args []string, now func() time.Time, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("leagues-token", flag.ContinueOnError)
	fs.SetOutput(stderr)
	aud := fs.String("aud", "", "the tenant's name, or admin")
	role := fs.String("role", keys.RolePlayer, "admin, organizer or player")
	sub := fs.String("sub", "", "a player's id, or an organizer's or the admin's name")
	ttl := fs.Duration("ttl", 24*time.Hour, "how long the token is valid")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *aud == "" || *sub == "" || fs.NArg() != 0 {
		fmt.Fprintln(stderr, "usage: leagues-token -aud TENANT|admin -role admin|organizer|player -sub ID|NAME [-ttl 24h]")
		return 2
	}
	k, err := keys.Private()
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	tok, err := keys.Sign(k, keys.Claims{Sub: *sub, Aud: *aud, Role: *role, Exp: now().Add(*ttl).Unix()})
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	fmt.Fprintln(stdout, tok)
	return 0
}
