// Command doctor diagnoses a GitLab Runner and the cluster its jobs run in.
package main

import (
	"os"

	"golang.org/x/term"

	"github.com/socialwebcomputer/doctor/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], cli.IO{Out: os.Stdout, Err: os.Stderr, TTY: term.IsTerminal(int(os.Stdout.Fd()))}))
}
