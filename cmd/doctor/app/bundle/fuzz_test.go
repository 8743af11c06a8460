package bundle

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/socialwebcomputer/doctor/internal/hostio"
)

// FuzzRead hands doctor analyze's reader arbitrary files: a tar stream the
// harness gzips (so the fuzzer works on the tar and JSON inside, past the
// gzip checksum), or the raw bytes as the file. Whatever the file: no
// panic; an error names the file and stays one bounded message; a bundle
// that is accepted is of this format, set to replay, with no nil file
// record and no content over doctor's own bounds.
func FuzzRead(f *testing.F) {
	f.Add(tarOf(f, sampleBundle(f)), true)
	f.Add(sampleBundle(f), false)
	f.Add(tarOf(f, nil, "doctor-bundle/manifest.json", `{"format":1}`, "doctor-bundle/tape.json", `{"files":{"/x":null,"/y":{"read":true}}}`, "doctor-bundle/root/y", "z"), true)
	f.Add(tarOf(f, nil, "doctor-bundle/manifest.json", `{"format":2}`, "doctor-bundle/tape.json", `{}`), true)
	f.Add(tarOf(f, nil, "doctor-bundle/manifest.json", `[`, "doctor-bundle/tape.json", `{"files":{"/a":{"stat":{"mode":"x"}}}}`), true)
	f.Add([]byte("\x1f\x8b\x08\x00garbage"), false)
	f.Add([]byte{}, false)
	f.Fuzz(func(t *testing.T, data []byte, gz bool) {
		p := filepath.Join(t.TempDir(), "b.tar.gz")
		b := data
		if gz {
			var buf bytes.Buffer
			w := gzip.NewWriter(&buf)
			_, _ = w.Write(data)
			_ = w.Close()
			b = buf.Bytes()
		}
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		m, rep, tape, err := Read(p)
		if err != nil {
			msg := err.Error()
			if !strings.HasPrefix(msg, p+":") {
				t.Fatalf("error does not name the file: %q", msg)
			}
			if len(msg) > len(p)+1024 || strings.ContainsAny(msg, "\n\r") {
				t.Fatalf("error is not one bounded line (%d bytes): %.300q", len(msg), msg)
			}
			if m != nil || rep != nil || tape != nil {
				t.Fatal("an error with a result")
			}
			return
		}
		if m == nil || tape == nil || m.Format != Format || !tape.Replay {
			t.Fatalf("accepted bundle: manifest %+v, tape %v", m, tape)
		}
		if len(rep) > maxMeta {
			t.Fatalf("report of %d bytes", len(rep))
		}
		total := 0
		for fp, r := range tape.Files {
			if r == nil {
				t.Fatalf("nil record for %q kept", fp)
			}
			if len(r.Content) > hostio.MaxFileSize {
				t.Fatalf("%s: %d bytes of content", fp, len(r.Content))
			}
			total += len(r.Content)
		}
		if total > maxTotal || total > len(data)*1100+1<<20 {
			t.Fatalf("%d bytes of content from a %d-byte file", total, len(data))
		}
	})
}

// sampleBundle is a bundle as doctor run --bundle writes it, gzipped.
func sampleBundle(tb testing.TB) []byte {
	tb.Helper()
	tape := hostio.NewTape()
	tape.Files["/etc/gitlab-runner/config.toml"] = &hostio.FileRecord{Read: true,
		Content: []byte("concurrent = 2\n[[runners]]\n  url = \"https://gitlab.example.invalid/\"\n  token = \"glrt-fuzzfuzzfuzzfuzz\"\n  executor = \"kubernetes\"\n")}
	tape.Files["/proc/4242/cmdline"] = &hostio.FileRecord{Read: true, Content: []byte("/usr/bin/gitlab-runner\x00run\x00")}
	tape.Files["/etc/missing"] = &hostio.FileRecord{ReadErr: hostio.RecordErr(os.ErrNotExist)}
	p := filepath.Join(tb.TempDir(), "b.tar.gz")
	m := Manifest{Doctor: "fuzz", Host: "fuzz.invalid", Root: "/", Clock: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}
	if err := Write(p, m, tape, []byte(`{"checks":[]}`)); err != nil {
		tb.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// tarOf is the tar stream inside gzipped, or else a tar of the given name
// and content pairs.
func tarOf(tb testing.TB, gzipped []byte, pairs ...string) []byte {
	tb.Helper()
	if gzipped != nil {
		r, err := gzip.NewReader(bytes.NewReader(gzipped))
		if err != nil {
			tb.Fatal(err)
		}
		b, err := io.ReadAll(r)
		if err != nil {
			tb.Fatal(err)
		}
		return b
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for i := 0; i+1 < len(pairs); i += 2 {
		_ = tw.WriteHeader(&tar.Header{Name: pairs[i], Mode: 0o600, Size: int64(len(pairs[i+1])), Typeflag: tar.TypeReg})
		_, _ = tw.Write([]byte(pairs[i+1]))
	}
	_ = tw.Close()
	return buf.Bytes()
}
