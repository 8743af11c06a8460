// Command doctor diagnoses a GitLab Runner and the cluster its jobs run in.
package main

import (
	"os"
	"os/exec"
	"runtime/debug"

	"golang.org/x/term"

	"github.com/socialwebcomputer/doctor/cmd/doctor/cli"
)

// The collector's settings. A healthy run allocates a few MiB in 40 ms:
// at Go's default (GOGC 100, a first collection at a 4 MiB heap) it
// collects once, in the middle of its requests, and its stop-the-world
// phases wait for threads the apiserver on the same CPUs has preempted.
// gcPercent 200 starts at 8 MiB, so a healthy run does not collect. A
// 10,000-pod cluster's live data is about 50 MiB, where the memory limit
// paces the collector instead: 80 MiB keeps that run's peak RSS (the
// binary's own pages on top) at 92-94 MiB and its wall time where GOGC
// 100 had it, measured at both scales by bench/ (RESULTS.md). A limit
// much nearer the live data makes the collector run without pause (64 MiB
// made the 10k run 2.6 times slower). GOGC and GOMEMLIMIT, when set, win.
const (
	gcPercent   = 200
	memoryLimit = 80 << 20
)

func main() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(memoryLimit)
	}
	io := cli.IO{In: os.Stdin, Out: os.Stdout, Err: os.Stderr,
		TTY:     term.IsTerminal(int(os.Stdout.Fd())),
		ErrTTY:  term.IsTerminal(int(os.Stderr.Fd())),
		Program: cli.ProgramName(os.Args[0], exec.LookPath, os.Executable)}
	if io.TTY {
		// The table fits the terminal it is printed on.
		if w, _, err := term.GetSize(int(os.Stdout.Fd())); err == nil && w > 0 {
			io.Width = w
		}
	}
	code := cli.Main(os.Args[1:], io)
	if os.Getenv(statsEnv) != "" {
		writeStats(os.Stderr)
	}
	os.Exit(code)
}
