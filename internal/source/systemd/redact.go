package systemd

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"unicode/utf8"
)

// A bundle keeps a unit's and an environment file's copy redacted by
// decoding it as this package does: each Environment= assignment and each
// environment file line is parsed, and written again with its name, and
// its value only where the caller's keep says a check reads it (the
// others become standIn(value): the same stand-in for the same value, so a
// unit's variable and the running process's still compare equal or not).
// Comments, which nothing reads, become dashes. Every line stays where it
// was, since problems cite file:line, and the rewrite must parse to the
// same problems and assignments, the values replaced as intended; where it
// would not, an error says so and the caller keeps no copy.

// RedactUnit rewrites the unit file or drop-in file's data. argv, when
// set, is what may be kept of a command line (the runner's allow-list,
// redact.Argv): each ExecStart= whose words it changes is written again
// from them (redactExecStart).
func RedactUnit(file string, data []byte, keep func(name string) bool, standIn func(string) string, argv func([]string) []string) ([]byte, error) {
	out, err := redactEnvironment(file, data, keep, standIn)
	if err != nil || argv == nil {
		return out, err
	}
	if out, err = redactExecStart(file, out, argv); err != nil {
		return nil, err
	}
	// Every word argv keeps of the original command line must still be
	// there: redactExecStart compares with the unit whose Environment= was
	// just redacted, so a kept word that expands a variable no check reads
	// (ExecStart=$T, --config ${CFG}) would run the variable's stand-in and
	// still pass.
	name := unitNameOf(file)
	orig, after := parseUnitBytes(name, file, data).ExecStart, parseUnitBytes(name, file, out).ExecStart
	for i, w := range argv(orig) {
		if i < len(orig) && w == orig[i] && (i >= len(after) || after[i] != w) {
			return nil, errors.New("redacted, its ExecStart= runs another command line")
		}
	}
	return out, nil
}

// redactEnvironment rewrites the Environment= assignments of a unit file.
func redactEnvironment(file string, data []byte, keep func(name string) bool, standIn func(string) string) ([]byte, error) {
	name, lines := unitNameOf(file), strings.Split(string(data), "\n")
	rewrites := serviceAssignments(file, data, "Environment")
	for _, r := range rewrites {
		if r.first < 1 || r.last > len(lines) || r.last < r.first {
			return nil, errors.New("the unit's lines do not split as systemd reads them")
		}
		words := redactEnvironmentWords(name, r.value, keep, standIn)
		if len(words) == 0 {
			return nil, errors.New("an Environment= line holds no assignment systemd takes")
		}
		lines[r.first-1] = "Environment=" + strings.Join(words, " ")
		for i := r.first; i < r.last; i++ {
			lines[i] = ""
		}
	}
	for i, l := range lines {
		if t := strings.TrimLeft(l, whitespace); t != "" && (t[0] == '#' || t[0] == ';') {
			lines[i] = dashes(l)
		}
	}
	out := []byte(strings.Join(lines, "\n"))
	before, after := parseUnitBytes(name, file, data), parseUnitBytes(name, file, out)
	if err := sameProblems(before.Problems, after.Problems); err != nil {
		return nil, err
	}
	if err := sameAssignments(before.Environment, after.Environment, keep, standIn); err != nil {
		return nil, err
	}
	return out, nil
}

// redactExecStart writes each ExecStart= line again from its commands'
// words as argv keeps them, where argv changes any: the prefix, the path
// and each word quoted (quoteExecWord), a variable reference left for
// systemd to expand from the (redacted) environment, every line the value
// continued over left empty. The rewrite must parse to the same problems
// and to the command line argv makes of the original's, expanded.
func redactExecStart(file string, data []byte, argv func([]string) []string) ([]byte, error) {
	name, lines := unitNameOf(file), strings.Split(string(data), "\n")
	rewrites := serviceAssignments(file, data, "ExecStart")
	changed := false
	for _, r := range rewrites {
		if r.first < 1 || r.last > len(lines) || r.last < r.first {
			return nil, errors.New("the unit's lines do not split as systemd reads them")
		}
		one := parseUnitBytes(name, file, []byte("[Service]\nExecStart="+r.value+"\n"))
		var cmds []string
		same := true
		for _, c := range one.Commands {
			words := c.Argv
			if strings.Contains(c.Prefix, "@") {
				words = append([]string{c.Path}, c.Argv...)
			}
			kept := argv(words)
			if strings.Contains(c.Prefix, "@") {
				kept = append([]string{words[0]}, argv(words[1:])...)
			}
			quoted := make([]string, len(kept))
			for i, w := range kept {
				same = same && w == words[i]
				quoted[i] = quoteExecWord(w)
			}
			cmds = append(cmds, c.Prefix+strings.Join(quoted, " "))
		}
		if same || len(one.Commands) == 0 {
			continue
		}
		changed = true
		lines[r.first-1] = "ExecStart=" + strings.Join(cmds, " ; ")
		for i := r.first; i < r.last; i++ {
			lines[i] = ""
		}
	}
	if !changed {
		return data, nil
	}
	out := []byte(strings.Join(lines, "\n"))
	before, after := parseUnitBytes(name, file, data), parseUnitBytes(name, file, out)
	if err := sameProblems(before.Problems, after.Problems); err != nil {
		return nil, err
	}
	if b, a := argv(before.ExecStart), after.ExecStart; !slices.Equal(b, a) && !slices.Equal(b, argv(a)) {
		return nil, errors.New("redacted, its ExecStart= runs another command line")
	}
	return out, nil
}

// quoteExecWord quotes an ExecStart= word that unquoting and specifier
// resolution made: quoteUnitWord's double quotes, escapes and doubled %,
// with each $ left as it is (the word's own $$ is still two, a variable
// reference still one), since systemd expands them after.
func quoteExecWord(w string) string { return quoteUnitWord(w, true) }

// redactEnvironmentWords rewrites one Environment= value word by word as
// setEnvironment reads it: a word that is no valid assignment once its
// specifiers are resolved goes (systemd ignores it); a kept variable keeps
// its word as written, specifiers unresolved (a template's %i stays %i, for
// the instance doctor analyze loads it as); any other value becomes the
// stand-in of its resolved value.
func redactEnvironmentWords(unit, value string, keep func(string) bool, standIn func(string) string) []string {
	u := &Unit{Name: unit}
	var words []string
	for p := value; ; {
		w, rest, ok, err := extractWord(p, exCUnescape|exUnquote)
		if err != nil || !ok {
			return words
		}
		p = rest
		resolved, _, err := u.specifiers(w)
		if err != nil {
			continue
		}
		name, val, hasEq := strings.Cut(resolved, "=")
		if !hasEq || !envNameValid(name) || !utf8Valid(val) {
			continue
		}
		if rawName, _, _ := strings.Cut(w, "="); keep(name) && rawName == name {
			words = append(words, quoteUnitWord(w, false))
			continue
		}
		words = append(words, quoteUnitWord(name+"="+standIn(val), true))
	}
}

// RedactEnvFile rewrites an EnvironmentFile='s data: each assignment on
// the line it started on, in double quotes; comments and what continued a
// value over lines become empty lines.
func RedactEnvFile(file string, data []byte, keep func(name string) bool, standIn func(string) string) ([]byte, error) {
	vars, probs, err := ParseEnvFile(file, data)
	if err != nil {
		return nil, err
	}
	lines := make([]string, strings.Count(string(data), "\n")+1)
	at := 0
	for _, a := range vars {
		v := a.Value
		if !keep(a.Name) {
			v = standIn(v)
		}
		l := a.Source.Line - 1
		if l < at || l >= len(lines) {
			return nil, errors.New("the environment file's assignments do not fall on their lines")
		}
		text := a.Name + "=" + quoteEnvFileValue(v)
		n := strings.Count(text, "\n")
		if l+n >= len(lines) || n > 0 && a.Source.Line+n > nextLine(vars, a) {
			return nil, errors.New("a value runs over the next assignment's line")
		}
		for i, part := range strings.Split(text, "\n") {
			lines[l+i] = part
		}
		at = l + n + 1
	}
	out := []byte(strings.Join(lines, "\n"))
	vars2, probs2, err := ParseEnvFile(file, out)
	if err != nil {
		return nil, err
	}
	if err := sameProblems(probs, probs2); err != nil {
		return nil, err
	}
	if err := sameAssignments(vars, vars2, keep, standIn); err != nil {
		return nil, err
	}
	return out, nil
}

// nextLine is the line of the assignment after a, or a line past any.
func nextLine(vars []Assignment, a Assignment) int {
	for _, b := range vars {
		if b.Source.Line > a.Source.Line {
			return b.Source.Line
		}
	}
	return 1 << 30
}

// unitNameOf is the unit a file configures: a drop-in's directory names
// it (gitlab-runner.service.d/env.conf), else the file's own name.
func unitNameOf(file string) string {
	if dir := path.Base(path.Dir(file)); strings.HasSuffix(dir, ".d") {
		return strings.TrimSuffix(dir, ".d")
	}
	return path.Base(file)
}

// quoteUnitWord quotes w for Environment= (extract_first_word with
// EXTRACT_UNQUOTE|EXTRACT_CUNESCAPE, then specifier expansion): in double
// quotes, backslash and quote escaped, control characters as \xNN, and %
// doubled when literal (w is a value; otherwise w is a word as written,
// whose specifiers stay specifiers).
func quoteUnitWord(w string, literal bool) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range w {
		switch {
		case r == '\\' || r == '"':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '%' && literal:
			b.WriteString("%%")
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// quoteEnvFileValue quotes v for an environment file: in double quotes a
// backslash before " \ ` $ is removed, so those four are escaped.
func quoteEnvFileValue(v string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range v {
		if strings.ContainsRune("\"\\`$", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	b.WriteByte('"')
	return b.String()
}

// dashes is a comment line with its text replaced: '#' and dashes, of its
// length in characters.
func dashes(l string) string {
	t := strings.TrimLeft(l, whitespace)
	return l[:len(l)-len(t)] + t[:1] + strings.Repeat("-", utf8.RuneCountInString(t)-1)
}

func sameProblems(a, b []Problem) error {
	if len(a) != len(b) {
		return fmt.Errorf("redacted, it parses to %d problems, not %d", len(b), len(a))
	}
	for i := range a {
		if a[i].Source.Line != b[i].Source.Line || a[i].Fatal != b[i].Fatal || a[i].Message != b[i].Message {
			return fmt.Errorf("redacted, line %d reads differently", a[i].Source.Line)
		}
	}
	return nil
}

func sameAssignments(a, b []Assignment, keep func(string) bool, standIn func(string) string) error {
	if len(a) != len(b) {
		return fmt.Errorf("redacted, it sets %d variables, not %d", len(b), len(a))
	}
	for i := range a {
		want := a[i].Value
		if !keep(a[i].Name) {
			want = standIn(want)
		}
		if a[i].Name != b[i].Name || a[i].Source.Line != b[i].Source.Line || b[i].Value != want {
			return fmt.Errorf("redacted, %s on line %d reads differently", a[i].Name, a[i].Source.Line)
		}
	}
	return nil
}

// assignment is one non-empty assignment of a [Service] key: the lines it
// spans (a value continued with a backslash spans several) and its value
// as systemd reads it.
type assignment struct {
	first, last int
	value       string
}

// serviceAssignments lists the non-empty assignments of key in the unit's
// [Service] section, parsed as systemd parses the file.
func serviceAssignments(file string, data []byte, key string) []assignment {
	sections := []string{"Unit", "Install"}
	if s := privateSection[unitType(unitNameOf(file))]; s != "" {
		sections = append(sections, s)
	}
	var out []assignment
	parseConfigLines(file, data, sections, func(section, k, value string, src Source, last int) bool {
		if section == "Service" && k == key && value != "" {
			out = append(out, assignment{src.Line, last, value})
		}
		return true
	}, func(Problem) {})
	return out
}
