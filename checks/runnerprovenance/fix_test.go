package runnerprovenance

import (
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/testkit/shellshape"
)

// A runner nobody installed gets commands that only read: ps and
// systemctl status of its pid, nothing that changes a file or acts for it.
func TestUninstalledFixOnlyReads(t *testing.T) {
	for _, pid := range []int{1, 4242, 2147483647} {
		fix := uninstalledFix(pid)
		blocks := fix.Blocks()
		if len(blocks) != 1 {
			t.Fatalf("%d: %s", pid, fix)
		}
		shape, err := shellshape.Parse(blocks[0].Text)
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range shape.Stmts {
			if !strings.HasPrefix(st, `call("ps", "-o", `) && !strings.HasPrefix(st, `call("systemctl", "status", "--no-pager", `) {
				t.Errorf("%d: a command that does more than read: %s", pid, st)
			}
		}
		if strings.Contains(blocks[0].Text, "sudo") {
			t.Errorf("%d: %s", pid, blocks[0].Text)
		}
	}
}
