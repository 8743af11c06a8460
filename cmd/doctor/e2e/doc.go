// Package e2e holds doctor's end-to-end and guarantee tests: whole doctor
// run, analyze, why and job invocations on the fixtures, on bundles,
// on real loopback servers and processes, on hostile and spoiled inputs and
// planted secrets, the README's quick starts, and most of the tests
// docs/guarantees.md names. They run the command line in this process
// through its entry point (cli.Main), or the built binary. The tests of the
// command line's own concerns (flags, help, rendering, exit codes,
// completion, .doctor.yaml, progress) stay beside it in cmd/doctor/cli.
// The code is in test files only; what both share is testkit/cmdtest.
package e2e
