package runnerconfig

import (
	"slices"

	"github.com/BurntSushi/toml"
)

// Duplicate is one setting that config.toml defines more than once, under
// spellings that differ only in case (Executor and executor), which TOML
// allows but which the decoder stores into the same field.
type Duplicate struct {
	// Key is the setting with the runner's spelling, without indexes, for
	// example {"runners", "executor"}.
	Key toml.Key
	// Path is Key with indexes, as Occurrence.Path writes it:
	// runners[0].executor.
	Path string
	// Lines are the 1-based lines of the definitions, one per spelling,
	// ascending.
	Lines []int
	// Winner is the line whose value the decoder keeps, or 0 when that is
	// not fixed, which is always the case with BurntSushi/toml v1.6.0: see
	// CaseDuplicates.
	Winner int
}

// CaseDuplicates finds the settings that data defines under several
// spellings which differ only in case, such as
//
//	[[runners]]
//	Executor = "shell"
//	executor = "kubernetes"
//
// TOML treats Executor and executor as two keys, so the file parses, and
// BurntSushi/toml v1.6.0 (the runner's decoder) matches both to the field
// executor: unifyStruct takes the field whose name equals the key, else one
// whose name equals it case-insensitively. It then stores each in turn, in
// the order it ranges over the Go map holding the table's keys, so the last
// one visited wins. Go randomises map iteration, so the value the runner
// ends up with is not fixed: it can differ from one start of the runner (or
// one reload of config.toml) to the next. Winner is therefore 0. (For a
// table of up to eight keys Go 1.26 visits them in insertion order seven
// times in eight, so the later line wins about seven times in eight; in a
// larger table each map gets a random hash seed and either can win, in
// proportions that depend on the keys: 3 to 1 for the later line in
// TestCaseDuplicateWinnerIsNotFixed's twelve-key table.)
//
// Two spellings of a table ([runners.Docker] and [runners.docker]) are
// reported as one Duplicate with the lines of both; the decoder merges them
// into one struct, and a key that both define is reported again below it.
// Keys of maps (labels, feature_flags, pod_labels, ...) are case-sensitive
// and distinct keys there, not duplicates; keys that decode into no field at
// all are left to Undecoded; and keys inside the nfs volume, which decodes
// itself with exact-case lookups, are left to Ignored.
//
// The result is sorted by first line. It is nil when there are none or data
// is not valid TOML.
func CaseDuplicates(data []byte) []Duplicate {
	w := walkDocument(data)
	if w == nil {
		return nil
	}
	type group struct {
		def   *keyDef
		paths map[string]int // spelled path -> line
	}
	groups := map[string]*group{}
	var order []string
	for _, d := range w.defs {
		c := d.canonString()
		g := groups[c]
		if g == nil {
			g = &group{def: d, paths: map[string]int{}}
			groups[c] = g
			order = append(order, c)
		}
		p := d.pathString()
		if l, ok := g.paths[p]; !ok || (d.line > 0 && (l == 0 || d.line < l)) {
			g.paths[p] = d.line
		}
	}
	var out []Duplicate
	for _, c := range order {
		g := groups[c]
		if len(g.paths) < 2 {
			continue
		}
		var lines []int
		for _, l := range g.paths {
			lines = append(lines, l)
		}
		slices.Sort(lines)
		out = append(out, Duplicate{Key: g.def.canonKey(), Path: c, Lines: lines})
	}
	slices.SortStableFunc(out, func(a, b Duplicate) int {
		return a.Lines[0] - b.Lines[0]
	})
	return out
}
