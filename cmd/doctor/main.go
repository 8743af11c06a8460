// Command doctor diagnoses a GitLab Runner and the cluster its jobs run in.
package main

import (
	"os"
	"runtime/debug"

	"golang.org/x/term"

	"github.com/socialwebcomputer/doctor/internal/cli"
)

// memoryLimit is the heap size at which the collector works hardest. What
// a hostile server sends is cut at the bounds of checks/facts/bounded.go,
// but garbage from those cut reads would otherwise be left to grow to twice
// the live heap. A healthy run's live data is a few MiB, a 10,000-pod
// cluster's about 50: a limit below that makes the collector run without
// pause (64 MiB made the 10k run 2.6 times slower), one well above it costs
// nothing, and this one keeps a run under the 150 MiB its tests allow.
// GOMEMLIMIT, when set, wins.
const memoryLimit = 112 << 20

func main() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(memoryLimit)
	}
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
