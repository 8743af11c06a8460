// Command peakrss runs a command and writes its peak resident set size, in
// KiB, to the file $PEAKRSS_OUT; it exits with the command's code.
//
// Why a process of its own: Linux carries ru_maxrss across execve, and Go
// starts a child with vfork, so a child's ru_maxrss is at least the RSS its
// parent had when it started it. A benchmark that first loads 22,000
// objects, or profiles doctor in its own process, then reads its child's
// getrusage, reports its own size, not doctor's (the 10k figure read
// 105.7 MiB where doctor's own peak was about 90). Started from this
// small process instead, the child's figure is its own.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

func main() {
	if len(os.Args) < 2 || os.Getenv("PEAKRSS_OUT") == "" {
		fmt.Fprintln(os.Stderr, "usage: PEAKRSS_OUT=file peakrss command [args...]")
		os.Exit(2)
	}
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		fmt.Fprintln(os.Stderr, "peakrss:", err)
		os.Exit(127)
	}
	rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss
	if err := os.WriteFile(os.Getenv("PEAKRSS_OUT"), fmt.Appendf(nil, "%d\n", rss), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "peakrss:", err)
		os.Exit(127)
	}
	os.Exit(code)
}
