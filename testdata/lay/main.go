// Command lay lays a fixture out by hand, as the fixture tests do, so a
// reader can run doctor on it and get the answer its scenario.json records:
//
//	go run ./testdata/lay testdata/fixtures/healthy /tmp/healthy
//
// copies the fixture's root/ to /tmp/healthy/root and applies what git
// cannot carry (modes, owners, symlinks, sockets, mtimes, empty
// directories) and what no repository should hold (kubeconfigs with their
// certificates and SSH keys, minted now, valid around the scenario's
// clock). It then prints the doctor command that diagnoses it, with the
// scenario's --now (the certificates are valid relative to it) and
// arguments, the exit code the scenario expects and the findings it
// records, ranked.
//
// It runs nothing of doctor: the layout is testkit/fixture's Lay,
// the code every fixture test lays its root with. A fixture that sets
// owners needs root (build it, then sudo ./lay ...).
package main

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/socialwebcomputer/doctor/testkit/fixture"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: go run ./testdata/lay testdata/fixtures/NAME DEST")
		os.Exit(2)
	}
	if err := lay(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "lay:", err)
		os.Exit(1)
	}
}

func lay(dir, dest string) error {
	sc, err := fixture.Read(dir)
	if err != nil {
		return err
	}
	if len(sc.Setup.Owners) > 0 && os.Geteuid() != 0 {
		return fmt.Errorf("%s sets the owner of %d paths (%s): lay it out as root: go build -o lay ./testdata/lay && sudo ./lay %s %s",
			dir, len(sc.Setup.Owners), strings.Join(slices.Sorted(maps.Keys(sc.Setup.Owners)), ", "), dir, dest)
	}
	if entries, err := os.ReadDir(dest); err == nil && len(entries) > 0 {
		return fmt.Errorf("%s is not empty: give a new directory", dest)
	}
	root := filepath.Join(dest, "root")
	if err := fixture.Lay(dir, root, sc); err != nil {
		return err
	}
	for _, line := range strings.Split(strings.TrimSpace(sc.Description), "\n") {
		fmt.Println("# " + line)
	}
	fmt.Println("./doctor " + shellJoin(sc.RunArgs(dir, root)))
	fmt.Printf("echo $?    # %d\n", sc.Want.Exit)
	if len(sc.Want.Ranked) > 0 {
		fmt.Println("# its findings, root causes first: " + strings.Join(sc.Want.Ranked, "; "))
	}
	return nil
}

// shellJoin quotes each argument that a POSIX shell would split or
// expand, in single quotes.
func shellJoin(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if a != "" && strings.Trim(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=,@+") == "" {
			out[i] = a
			continue
		}
		out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(out, " ")
}
