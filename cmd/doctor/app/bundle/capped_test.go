package bundle

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/socialwebcomputer/doctor/internal/hostio"
)

// lowerBounds shrinks the bounds Read enforces (and Write keeps to) for
// one test, so a tape past them is small.
func lowerBounds(t *testing.T, entries, meta, total int) {
	oldE, oldM, oldT := maxEntries, maxMeta, maxTotal
	maxEntries, maxMeta, maxTotal = entries, meta, total
	t.Cleanup(func() { maxEntries, maxMeta, maxTotal = oldE, oldM, oldT })
}

// bigTape has more of each kind of record than the lowered bounds hold:
// API answers and probes past tape.json's bound, more files than entries,
// more content than the total.
func bigTape() *hostio.Tape {
	t := hostio.NewTape()
	body := `{"items":[` + strings.TrimSuffix(strings.Repeat(`{"metadata":{"name":"pod-0123456789"}},`, 60), ",") + `]}`
	for i := range 200 {
		key := fmt.Sprintf("GET https://127.0.0.1:1/api/v1/namespaces/ns%d/pods", i)
		t.HTTP[key] = []*hostio.HTTPRecord{{Status: 200, Body: body}}
	}
	for i := range 100 {
		t.Probes[fmt.Sprintf("dns udp 127.0.0.1:53 host%d.invalid. A", i)] = &hostio.ProbeRecord{Value: []byte(`{"Answers":["127.0.0.1"]}`)}
	}
	for i := range 60 {
		p := fmt.Sprintf("/etc/doctor-test/file%02d", i)
		t.Files[p] = &hostio.FileRecord{Read: true, Content: []byte(strings.Repeat(fmt.Sprintf("line %d of a plain file\n", i), 400+i*40))}
	}
	return t
}

// Every bundle Write makes is one Read (doctor analyze) accepts: a tape past
// every bound is capped, the largest records first, and the manifest says
// what was left out. Read enforces the same bounds, lowered here, so a
// bundle over them would be refused.
func TestWriteKeepsEveryBundleReadable(t *testing.T) {
	lowerBounds(t, 40, 96<<10, 1<<20+512<<10)
	report := []byte(`{"findings":[` + strings.TrimSuffix(strings.Repeat(`{"check":"x"},`, 20000), ",") + `]}`)
	p := filepath.Join(t.TempDir(), "b.tar.gz")
	if err := Write(p, Manifest{Clock: time.Unix(0, 0).UTC()}, bigTape(), report); err != nil {
		t.Fatal(err)
	}
	m, rep, tape, err := Read(p)
	if err != nil {
		t.Fatalf("analyze cannot read the bundle run wrote: %v", err)
	}
	read := 0
	for _, r := range tape.Files {
		if r.Read {
			read++
		}
	}
	if read+fixedEntries > maxEntries || len(rep) > maxMeta {
		t.Errorf("%d files and a %d-byte report kept, over the bounds", read, len(rep))
	}
	if read == 0 || len(tape.HTTP) == 0 || len(tape.HTTP) == 200 {
		t.Errorf("kept %d files and %d of 200 API answers: the cap should keep what fits and leave out the rest", read, len(tape.HTTP))
	}
	said := strings.Join(m.LeftOut, "\n")
	for _, want := range []string{"API answers", "files, the largest, over the bound of 40 entries", "report.json", "in all"} {
		if !strings.Contains(said, want) {
			t.Errorf("the manifest does not say it left out %q:\n%s", want, said)
		}
	}
}

// Under the bounds nothing is left out, and the manifest says nothing.
func TestWriteLeavesOutNothingUnderTheBounds(t *testing.T) {
	tape := hostio.NewTape()
	tape.Files["/etc/hostname"] = &hostio.FileRecord{Read: true, Content: []byte("runner-1\n")}
	tape.HTTP["GET https://127.0.0.1:1/version"] = []*hostio.HTTPRecord{{Status: 200, Body: `{"major":"1"}`}}
	p := filepath.Join(t.TempDir(), "b.tar.gz")
	if err := Write(p, Manifest{}, tape, []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	m, _, got, err := Read(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.LeftOut) != 0 || len(got.HTTP) != 1 || string(got.Files["/etc/hostname"].Content) != "runner-1\n" {
		t.Errorf("left out %v; kept %d answers and %q", m.LeftOut, len(got.HTTP), got.Files["/etc/hostname"].Content)
	}
}
