// Package hostio is doctor's one door to the outside: every file read
// goes through Env under --root (its symlinks resolved inside it), every
// clock read through Env.Now, every dial through Env.Dial with a deadline
// and the loopback guard. A Tape records what a run looked at (doctor run
// --bundle) or answers from it instead of the host (doctor analyze), so a
// fixture, a bundle and a live host are the same input to the same checks.
// Its subpackages are doctor's own files: atomicfile reads and writes what
// doctor keeps and leaves, trust decides which files and directories it
// may take settings from or write into.
package hostio
