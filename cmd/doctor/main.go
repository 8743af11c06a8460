// Command doctor diagnoses a GitLab Runner and the cluster its jobs run in.
package main

import (
	"os"

	"golang.org/x/term"

	"github.com/socialwebcomputer/doctor/internal/cli"
)

func main() {
	io := cli.IO{In: os.Stdin, Out: os.Stdout, Err: os.Stderr,
		TTY:    term.IsTerminal(int(os.Stdout.Fd())),
		ErrTTY: term.IsTerminal(int(os.Stderr.Fd()))}
	if io.TTY {
		// The table fits the terminal it is printed on.
		if w, _, err := term.GetSize(int(os.Stdout.Fd())); err == nil && w > 0 {
			io.Width = w
		}
	}
	os.Exit(cli.Main(os.Args[1:], io))
}
