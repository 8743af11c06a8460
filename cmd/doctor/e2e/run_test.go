package e2e

import (
	"bytes"

	"github.com/socialwebcomputer/doctor/cmd/doctor/cli"
)

// runDoctor runs doctor in this process, through the binary's own entry
// point (cli.Main), with args and no environment, and returns the exit
// code, stdout and stderr.
func runDoctor(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := cli.Main(args, cli.IO{Out: &out, Err: &errb, Getenv: func(string) string { return "" }})
	return code, out.String(), errb.String()
}
