package runnerconfig

import (
	"fmt"
	"slices"
	"testing"

	"github.com/BurntSushi/toml"
)

func occStrings(occ []Occurrence) []string {
	var out []string
	for _, o := range occ {
		out = append(out, fmt.Sprintf("%d %s %s", o.Line, o.Path, o.Key))
	}
	return out
}

// A file whose runners are under [[runner]] (a typo) has no runner at all;
// every key of the typo table is undecoded, and Undecoded already says so.
func TestUndecodedRunnerTypo(t *testing.T) {
	data := []byte("concurrent = 1\n[[runner]]\nname = \"x\"\nexecutor = \"shell\"\n[runner.kubernetes]\nimage = \"a\"\n[[runner]]\nname = \"y\"\n")
	cfg, md, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Runners) != 0 {
		t.Fatalf("Runners = %v", cfg.Runners)
	}
	want := []string{
		"2 runner[0] runner",
		"3 runner[0].name runner.name",
		"4 runner[0].executor runner.executor",
		"5 runner[0].kubernetes runner.kubernetes",
		"6 runner[0].kubernetes.image runner.kubernetes.image",
		"7 runner[1] runner",
		"8 runner[1].name runner.name",
	}
	for name, got := range map[string][]Occurrence{"Undecoded": Undecoded(data, md), "Ignored": Ignored(data, md)} {
		if g := occStrings(got); !slices.Equal(g, want) {
			t.Errorf("%s:\n got %q\nwant %q", name, g, want)
		}
	}
}

const nfsDoc = `[[runners]]
  name = "k8s"
  [runners.kubernetes]
    [[runners.kubernetes.volumes.nfs]]
      name = "cache"
      mount_path = "/cache"
      server = "nfs.example"
      path = "/export"
      bogus = 1
      read_only = "yes"
      Sub_Path = "x"
      [runners.kubernetes.volumes.nfs.options]
        vers = "4"
    [[runners.kubernetes.volumes.nfs]]
      name = "b"
      mount_path = "/b"
      server = "nfs.example"
      path = "/b"
      read_only = true
    [[runners.kubernetes.volumes.host_path]]
      name = "h"
      mount_path = "/h"
      typo = true
    [[runners.kubernetes.volumes.csi]]
      name = "c"
      mount_path = "/c"
      driver = "d"
      [runners.kubernetes.volumes.csi.volume_attributes]
        anything = "kept"
      [runners.kubernetes.volumes.csi.options]
        x = 1
[[runners]]
  name = "inline"
  [runners.kubernetes.volumes]
    nfs = [{ name = "i", mount_path = "/i", server = "s", path = "/i", readonly = true }]
`

// The nfs volume decodes itself, so BurntSushi/toml marks everything in it as
// decoded: Undecoded misses its unknown keys; Ignored finds them. The other
// volume types are plain structs: Undecoded reports them already.
func TestIgnoredNFS(t *testing.T) {
	data := []byte(nfsDoc)
	cfg, md, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	nfs := cfg.Runners[0].Kubernetes.Volumes.NFSVolumes
	if len(nfs) != 2 || nfs[0].ReadOnly || nfs[0].SubPath != "" || !nfs[1].ReadOnly {
		t.Fatalf("nfs decoded as %+v", nfs)
	}
	undecoded := []string{
		"23 runners[0].kubernetes.volumes.host_path[0].typo runners.kubernetes.volumes.host_path.typo",
		"30 runners[0].kubernetes.volumes.csi[0].options runners.kubernetes.volumes.csi.options",
		"31 runners[0].kubernetes.volumes.csi[0].options.x runners.kubernetes.volumes.csi.options.x",
	}
	if got := occStrings(Undecoded(data, md)); !slices.Equal(got, undecoded) {
		t.Errorf("Undecoded:\n got %q\nwant %q", got, undecoded)
	}
	ignored := []string{
		"9 runners[0].kubernetes.volumes.nfs[0].bogus runners.kubernetes.volumes.nfs.bogus",
		// the wrong type: dropped, not an error
		"10 runners[0].kubernetes.volumes.nfs[0].read_only runners.kubernetes.volumes.nfs.read_only",
		// the nfs decoder's lookups are case-sensitive
		"11 runners[0].kubernetes.volumes.nfs[0].Sub_Path runners.kubernetes.volumes.nfs.Sub_Path",
		"12 runners[0].kubernetes.volumes.nfs[0].options runners.kubernetes.volumes.nfs.options",
		"13 runners[0].kubernetes.volumes.nfs[0].options.vers runners.kubernetes.volumes.nfs.options.vers",
		undecoded[0], undecoded[1], undecoded[2],
		"35 runners[1].kubernetes.volumes.nfs[0].readonly runners.kubernetes.volumes.nfs.readonly",
	}
	if got := occStrings(Ignored(data, md)); !slices.Equal(got, ignored) {
		t.Errorf("Ignored:\n got %q\nwant %q", got, ignored)
	}
}

// A required nfs key spelt in another case is dropped, and the runner then
// fails to decode the file; Ignored still points at the key. After a decode
// error md.Undecoded() is not meaningful (it lists what the decoder had not
// reached yet), so the zero MetaData is passed to see the nfs part alone.
func TestIgnoredNFSRequiredCase(t *testing.T) {
	data := []byte("[[runners]]\n[[runners.kubernetes.volumes.nfs]]\nName = \"n\"\nmount_path = \"/m\"\nServer = \"s\"\npath = \"/p\"\n")
	_, _, err := Decode(data)
	if err == nil || err.Error() != `toml: line 2 (last key "runners.kubernetes.volumes.nfs"): nfs volume: missing required fields: name, server` {
		t.Fatalf("err = %v", err)
	}
	want := []string{
		"3 runners[0].kubernetes.volumes.nfs[0].Name runners.kubernetes.volumes.nfs.Name",
		"5 runners[0].kubernetes.volumes.nfs[0].Server runners.kubernetes.volumes.nfs.Server",
	}
	if got := occStrings(Ignored(data, toml.MetaData{})); !slices.Equal(got, want) {
		t.Errorf("Ignored:\n got %q\nwant %q", got, want)
	}
}

func TestIgnoredNotTOML(t *testing.T) {
	data := []byte("[[runners]]\nname = \n")
	_, md, _ := Decode(data)
	if got := Ignored(data, md); len(got) != 0 {
		t.Errorf("Ignored = %v", got)
	}
}
