package bundle

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/socialwebcomputer/doctor/internal/hostio"
)

// eventList is an EventList answer of n events, each with message.
func eventList(n int, message string) string {
	var b strings.Builder
	b.WriteString(`{"kind":"EventList","apiVersion":"v1","metadata":{},"items":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"metadata":{"name":"e%d"},"reason":"Evicted","message":%q}`, i, message)
	}
	b.WriteString("]}")
	return b.String()
}

// overTapes are tapes whose API answers hold more than a run reads.
func overTapes() map[string]*hostio.Tape {
	tape := func(bodies ...string) *hostio.Tape {
		t := hostio.NewTape()
		for i, b := range bodies {
			key := fmt.Sprintf("anonymous GET https://127.0.0.1:6443/api/v1/namespaces/ci/events?continue=%d&limit=1000 e3b0c44298fc", i)
			t.HTTP[key] = []*hostio.HTTPRecord{{Status: 200, Header: map[string][]string{"Content-Type": {"application/json"}}, Body: b}}
		}
		return t
	}
	var pages []string
	for range 51 {
		pages = append(pages, eventList(1000, "m"))
	}
	return map[string]*hostio.Tape{
		"a string of more than 65536 bytes": tape(eventList(1, strings.Repeat("x", 70_000))),
		"more than 50000 events":            tape(pages...),
	}
}

// TestReadRefusesWhatARunDoesNotRead: a tape written by hand with more
// than a run reads (a string past keep.MaxString, events past
// keep.MaxEvents) is refused by Read, saying which bound, before any
// answer is decoded.
func TestReadRefusesWhatARunDoesNotRead(t *testing.T) {
	for want, tape := range overTapes() {
		p := rawBundle(t, tape)
		if _, _, _, err := Read(p); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Read: %v, want a refusal saying %q", err, want)
		}
	}
}

// TestWriteLeavesOutWhatAnalyzeRefuses: the same tapes given to Write
// make bundles Read accepts, the answers over the bounds left out and
// named in the manifest.
func TestWriteLeavesOutWhatAnalyzeRefuses(t *testing.T) {
	for want, tape := range overTapes() {
		p := filepath.Join(t.TempDir(), "b.tar.gz")
		if err := Write(p, Manifest{Clock: time.Unix(0, 0).UTC()}, tape, []byte(`{}`)); err != nil {
			t.Fatal(err)
		}
		m, _, _, err := Read(p)
		if err != nil {
			t.Fatalf("%s: analyze cannot read the bundle Write wrote: %v", want, err)
		}
		if said := strings.Join(m.LeftOut, "\n"); !strings.Contains(said, want) {
			t.Errorf("the manifest does not say what it left out (%s):\n%s", want, said)
		}
	}
}

// rawBundle writes a bundle of tape as anyone can, without Write.
func rawBundle(t *testing.T, tape *hostio.Tape) string {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	manifest, _ := json.Marshal(Manifest{Format: Format})
	tj, err := json.Marshal(tapeParts{Files: tape.Files, Probes: tape.Probes, HTTP: tape.HTTP})
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"manifest.json": manifest, "tape.json": tj} {
		if err := tw.WriteHeader(&tar.Header{Name: dir + name, Mode: 0o600, Size: int64(len(b)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "raw.tar.gz")
	if err := os.WriteFile(p, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
