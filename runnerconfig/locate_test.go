package runnerconfig

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"
)

func key(s string) toml.Key { return strings.Split(s, ".") }

// locateDoc exercises the scanner: two [[runners]], strings of every kind
// with '#', '=', '[' and quotes in them, dotted and quoted keys, inline
// tables and arrays over several lines.
const locateDoc = `# config.toml
concurrent = 2 # trailing comment with = and [x]

[[runners]]
  name = "first # not a comment"
  url = 'https://a.example/#frag=1'
  executor = "kubernetes"
  pre_build_script = """
[[runners]]
bogus_in_string = 1 # still the string \"""
"""
  post_build_script = '''
  x = 1
  [runners.kubernetes]
  '''
  run_untagged = false
  [runners.kubernetes]
    namespace = "a"

[[runners]]
  name = "second"
  executor = "kubernetes"
  tag_list = ["x", # a comment inside an array
    "y"]
  [runners.kubernetes]
    image_pull_policy = "if-not-present"
    "quoted.key" = 1
    node_selector = { "kubernetes.io/os" = "linux", zone = "a" }
    services = [
      { name = "postgres", alias = "db" },
      { name = "redis", bogus = true },
    ]
  [runners.kubernetes.volumes]
    [[runners.kubernetes.volumes.host_path]]
      name = "h0"
      mount_path = "/h0"
    [[runners.kubernetes.volumes.host_path]]
      name = "h1"
      mount_path = "/h1"
      weird = 1

[[runners]]
  name = "third"
  kubernetes.image_pull_policy = "always"
  kubernetes.namespace = "c"
`

func TestLocateDocDecodes(t *testing.T) {
	_, md, err := Decode([]byte(locateDoc))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"runners.run_untagged",
		"runners.tag_list",
		"runners.kubernetes.image_pull_policy",
		`runners.kubernetes."quoted.key"`, // one component
		"runners.kubernetes.services.bogus",
		"runners.kubernetes.volumes.host_path.weird",
		// once per array element that has it
		"runners.kubernetes.image_pull_policy",
	}
	if got := keyStrings(md.Undecoded()); !slices.Equal(got, want) {
		t.Errorf("Undecoded() = %q, want %q", got, want)
	}
	for _, k := range md.Undecoded() {
		if Locate([]byte(locateDoc), k) == 0 {
			t.Errorf("Locate(%q) = 0", k)
		}
	}
}

func TestLocate(t *testing.T) {
	doc := []byte(locateDoc)
	for _, tc := range []struct {
		key  toml.Key
		line int
	}{
		{key("concurrent"), 2},
		{key("runners"), 4},
		{key("runners.name"), 5},
		{key("runners.executor"), 7},
		{key("runners.pre_build_script"), 8},
		// after a multi-line basic string holding a header, a key, '#' and \"
		{key("runners.post_build_script"), 12},
		// after a multi-line literal string holding a key and a header
		{key("runners.run_untagged"), 16},
		{key("runners.kubernetes"), 17},
		{key("runners.kubernetes.namespace"), 18},
		// only in the second [[runners]] element
		{key("runners.tag_list"), 23},
		{key("runners.kubernetes.image_pull_policy"), 26},
		{toml.Key{"runners", "kubernetes", "quoted.key"}, 27},
		{key("runners.kubernetes.node_selector"), 28},
		{toml.Key{"runners", "kubernetes", "node_selector", "kubernetes.io/os"}, 28},
		{key("runners.kubernetes.services.alias"), 30},
		{key("runners.kubernetes.services.bogus"), 31},
		{key("runners.kubernetes.volumes.host_path"), 34},
		{key("runners.kubernetes.volumes.host_path.weird"), 40},
		// not there
		{key("runners.kubernetes.quoted"), 0},
		{key("runners.bogus_in_string"), 0},
		{key("runners.x"), 0},
		{key("runners.kubernetes.pull_policy"), 0},
		{key("nothing"), 0},
		{toml.Key{}, 0},
	} {
		if got := Locate(doc, tc.key); got != tc.line {
			t.Errorf("Locate(%q) = %d, want %d", tc.key, got, tc.line)
		}
	}
}

func TestLocateAll(t *testing.T) {
	doc := []byte(locateDoc)
	for _, tc := range []struct {
		key  toml.Key
		want []Occurrence
	}{
		{key("runners.kubernetes.image_pull_policy"), []Occurrence{
			{Line: 26, Path: "runners[1].kubernetes.image_pull_policy"},
			{Line: 44, Path: "runners[2].kubernetes.image_pull_policy"},
		}},
		{key("runners.kubernetes.namespace"), []Occurrence{
			{Line: 18, Path: "runners[0].kubernetes.namespace"},
			{Line: 45, Path: "runners[2].kubernetes.namespace"},
		}},
		{key("runners"), []Occurrence{{Line: 4, Path: "runners[0]"}, {Line: 20, Path: "runners[1]"}, {Line: 42, Path: "runners[2]"}}},
		{key("runners.kubernetes.services.name"), []Occurrence{
			{Line: 30, Path: "runners[1].kubernetes.services[0].name"},
			{Line: 31, Path: "runners[1].kubernetes.services[1].name"},
		}},
		{key("runners.kubernetes.volumes.host_path.name"), []Occurrence{
			{Line: 35, Path: "runners[1].kubernetes.volumes.host_path[0].name"},
			{Line: 38, Path: "runners[1].kubernetes.volumes.host_path[1].name"},
		}},
		{toml.Key{"runners", "kubernetes", "quoted.key"}, []Occurrence{{Line: 27, Path: `runners[1].kubernetes."quoted.key"`}}},
		{key("nothing"), nil},
	} {
		for i := range tc.want {
			tc.want[i].Key = tc.key
		}
		if got := LocateAll(doc, tc.key); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("LocateAll(%q) = %v, want %v", tc.key, got, tc.want)
		}
	}
}

func TestUndecoded(t *testing.T) {
	doc := []byte(locateDoc)
	_, md, err := Decode(doc)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range Undecoded(doc, md) {
		got = append(got, fmt.Sprintf("%d %s %s", o.Line, o.Path, o.Key))
	}
	want := []string{
		"16 runners[0].run_untagged runners.run_untagged",
		"23 runners[1].tag_list runners.tag_list",
		"26 runners[1].kubernetes.image_pull_policy runners.kubernetes.image_pull_policy",
		`27 runners[1].kubernetes."quoted.key" runners.kubernetes."quoted.key"`,
		"31 runners[1].kubernetes.services[1].bogus runners.kubernetes.services.bogus",
		"40 runners[1].kubernetes.volumes.host_path[1].weird runners.kubernetes.volumes.host_path.weird",
		"44 runners[2].kubernetes.image_pull_policy runners.kubernetes.image_pull_policy",
	}
	if !slices.Equal(got, want) {
		t.Errorf("Undecoded:\n got %q\nwant %q", got, want)
	}
}

func TestLocateInlineArrays(t *testing.T) {
	doc := []byte("[[runners]]\nq = [[{a = 1}], [{b = 2}]]\nservices = [\n  {name = \"a\"},\n  {name = \"b\"},\n]\n")
	for _, tc := range []struct {
		key  string
		want []string
	}{
		// the array's key once, not once per element
		{"runners.q", []string{"2 runners[0].q"}},
		{"runners.services", []string{"3 runners[0].services"}},
		// keys inside the elements once per element
		{"runners.services.name", []string{"4 runners[0].services[0].name", "5 runners[0].services[1].name"}},
		// in an array of arrays only the outer index is kept
		{"runners.q.b", []string{"2 runners[0].q[1].b"}},
	} {
		var got []string
		for _, o := range LocateAll(doc, key(tc.key)) {
			got = append(got, fmt.Sprintf("%d %s", o.Line, o.Path))
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("LocateAll(%s) = %q, want %q", tc.key, got, tc.want)
		}
	}
}

// Locate and LocateAll stay linear on inputs built to make a naive scanner
// quadratic: a header of 200000 components followed by 100000 keys under it.
func TestLocateLinear(t *testing.T) {
	var b bytes.Buffer
	b.WriteString("[")
	for i := 0; i < 200000; i++ {
		b.WriteString("a.")
	}
	b.WriteString("z]\n")
	for i := 0; i < 100000; i++ {
		fmt.Fprintf(&b, "k%d = 1\n", i)
	}
	doc := b.Bytes()
	k := make(toml.Key, 200000, 200002)
	for i := range k {
		k[i] = "a"
	}
	k = append(k, "z", "k99999")
	start := time.Now()
	if l := Locate(doc, k); l != 100001 {
		t.Errorf("Locate = %d, want 100001", l)
	}
	if all := LocateAll(doc, k[:200001]); len(all) != 1 || all[0].Line != 1 {
		t.Errorf("LocateAll = %d occurrences", len(all))
	}
	// Not a speed target (bench/ has those): quadratic work on 200,000
	// components takes hours, linear work a second, so a bound far above
	// the linear time tells them apart even on a loaded machine.
	if d := time.Since(start); d > 60*time.Second {
		t.Errorf("took %v: not linear", d)
	}
}

func TestLocateGarbage(t *testing.T) {
	for _, doc := range []string{
		"", "[", "[[", "]]", "=", "a =", "a = \"", "a = '''", `a = """`, "a = {", "a = [", "a = {b = [1, {c = ",
		"\"unterminated\nx = 1", "[a.\"b\nc = 1", "a = \"\\", "a = \"\\u12", "\xef\xbb\xbfx = 1", "\x00\xff\xfe",
		strings.Repeat("[", 10000), strings.Repeat("a = {", 5000), strings.Repeat("a=[", 5000),
	} {
		for _, k := range []toml.Key{key("a"), key("a.b.c"), key("x"), key("c")} {
			if l := Locate([]byte(doc), k); l < 0 || l > bytes.Count([]byte(doc), []byte("\n"))+1 {
				t.Errorf("Locate(%q, %q) = %d out of range", doc, k, l)
			}
			LocateAll([]byte(doc), k)
		}
	}
	// A byte order mark does not hide the first key; a broken line does not
	// hide the next one.
	if l := Locate([]byte("\xef\xbb\xbfx = 1"), key("x")); l != 1 {
		t.Errorf("after BOM: %d", l)
	}
	if l := Locate([]byte("a = \"open\nc = 1\n"), key("c")); l != 2 {
		t.Errorf("after broken line: %d", l)
	}
}

// lineCount is the number of lines Locate can return.
func lineCount(data []byte) int { return bytes.Count(data, []byte("\n")) + 1 }

func FuzzDecodeAndLocate(f *testing.F) {
	f.Add([]byte(locateDoc))
	files, _ := filepath.Glob("testdata/*.toml")
	for _, name := range files {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("[[runners]]\n  output_limit = = 5\n"))
	f.Add([]byte("a = { b = { c = [ { d = 1 }, ] } }\n'x.y' = \"\"\"\n\"\"\"\"\n"))

	fixed := []toml.Key{key("runners.kubernetes.image_pull_policy"), key("runners"), key("a.b")}
	f.Fuzz(func(t *testing.T, data []byte) {
		n := lineCount(data)
		check := func(k toml.Key) int {
			l := Locate(data, k)
			if l < 0 || l > n {
				t.Fatalf("Locate(%q) = %d, outside 0..%d", k, l, n)
			}
			all := LocateAll(data, k)
			for _, o := range all {
				if o.Line < 1 || o.Line > n {
					t.Fatalf("LocateAll(%q) line %d outside 1..%d", k, o.Line, n)
				}
			}
			if (l == 0) != (len(all) == 0) || (l != 0 && all[0].Line != l) {
				t.Fatalf("Locate(%q) = %d but LocateAll = %v", k, l, all)
			}
			return l
		}
		for _, k := range fixed {
			check(k)
		}
		_, md, err := Decode(data)
		if err != nil {
			return
		}
		// Text the decoder accepted: every undecoded key is found, unless
		// the text may nest deeper than the scanner follows.
		strict := bytes.Count(data, []byte("{"))+bytes.Count(data, []byte("[")) <= maxDepth
		for _, k := range md.Undecoded() {
			if check(k) == 0 && strict {
				t.Fatalf("undecoded key %q not located", k)
			}
		}
		for _, o := range Undecoded(data, md) {
			if o.Line < 0 || o.Line > n || (o.Line == 0 && strict) {
				t.Fatalf("Undecoded: %+v", o)
			}
		}
	})
}
