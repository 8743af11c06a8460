package runnerconfig

import (
	"os"
	"path/filepath"
	"testing"
)

// The functions of this change must not panic on any text, valid or not.
func FuzzRefusalsAndDuplicates(f *testing.F) {
	files, _ := filepath.Glob("testdata/refusals/*.toml")
	for _, name := range files {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(nfsDoc))
	f.Add([]byte("[[runners]]\nExecutor = 1\nexecutor = \"x\"\n[runners.Docker]\n[runners.docker]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, md, _ := Decode(data)
		for _, r := range Refusals(cfg) {
			LocatePath(data, r.Path)
		}
		Ignored(data, md)
		for _, d := range CaseDuplicates(data) {
			if len(d.Lines) < 2 {
				t.Errorf("duplicate with %d lines: %+v", len(d.Lines), d)
			}
		}
	})
}
