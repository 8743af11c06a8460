package systemd

import (
	"fmt"
	"strings"
)

// setting applies one assignment as the matching config_parse_*() in
// src/core/load-fragment.c (v256) does. It returns false where that
// function returns -ENOEXEC, which makes config_parse() stop reading the
// file; fatal says whether that refuses the unit (fragment) or is ignored
// (drop-in). Keys systemd has but doctor does not need are skipped without
// a word: doctor does not carry systemd's table of ~400 keys, so it cannot
// tell an unknown key from an irrelevant one.
func (u *Unit) setting(section, key, value string, src Source, fatal bool) bool {
	d := &diag{u: u, src: src, fatal: fatal}
	switch section + "." + key {
	case "Service.ExecStart":
		return u.setExecStart(d, value)
	case "Service.Type":
		u.setType(d, value)
	case "Service.BusName":
		u.busName = value
	case "Service.ExecStop":
		// Only whether there is one matters (service_verify()); a bad
		// ExecStop= would be reported by systemd, not here.
		u.hasExecStop = value != ""
	case "Service.Restart":
		u.Restart = value
	case "Service.RemainAfterExit":
		u.remainAfterExit = parseBoolean(value)
	case "Unit.ConditionFileIsExecutable":
		u.setCondition(d, key, value)
	case "Unit.Description":
		u.Description = value
	case "Unit.SuccessAction":
		u.successAction = value != "" && value != "none"
	case "Service.User":
		return u.setUserGroup(d, value, &u.User, &u.UserSource)
	case "Service.Group":
		var ignored Source
		return u.setUserGroup(d, value, &u.Group, &ignored)
	case "Service.WorkingDirectory":
		return u.setWorkingDirectory(d, value)
	case "Service.RootDirectory":
		u.RootDirectory = value
	case "Service.Environment":
		u.setEnvironment(d, value)
	case "Service.EnvironmentFile":
		u.setEnvironmentFile(d, value)
	case "Service.UnsetEnvironment":
		u.setUnsetEnvironment(d, value)
	case "Install.WantedBy":
		if value == "" {
			u.WantedBy = nil
			break
		}
		words, _ := splitWords(value, exUnquote|exCUnescape)
		u.WantedBy = append(u.WantedBy, words...)
	}
	return true
}

// diag files Problems for one assignment.
type diag struct {
	u     *Unit
	src   Source
	fatal bool
}

func (d *diag) warn(format string, args ...any) {
	d.u.warn(d.src, fmt.Sprintf(format, args...))
}

// fail reports a setting error: with ignore (the "-" prefix of ExecStart=
// or WorkingDirectory=) systemd only warns and drops the setting;
// otherwise config_parse() stops and, in the fragment, the unit is refused.
func (d *diag) fail(ignore bool, format string, args ...any) bool {
	msg := fmt.Sprintf(format, args...)
	if ignore {
		d.u.warn(d.src, msg+", ignored")
		return true
	}
	if d.fatal {
		msg += "; systemd refuses to load the unit"
	} else {
		msg += "; systemd ignores it and stops reading this drop-in here"
	}
	d.u.Problems = append(d.u.Problems, Problem{Source: d.src, Message: msg, Fatal: d.fatal})
	return false
}

// specifiers resolves specifiers in a value and notes host-specific ones.
func (d *diag) specifiers(s string) (string, error) {
	out, host, err := d.u.specifiers(s)
	for _, h := range host {
		d.warn("specifier %s depends on the live host; doctor leaves it unexpanded", h)
	}
	return out, err
}

// setExecStart is config_parse_exec(). systemd.service(5), ExecStart=:
// an empty assignment resets the list; the first word is the executable,
// after optional prefixes "-" (failure ignored), "@" (the second word is
// argv[0]), ":" (no environment variable substitution), "+", "!" and "!!"
// (privilege handling); words are split with systemd.syntax(7) quoting and
// C escapes; a lone ";" separates commands and "\;" is a literal ";";
// specifiers are resolved in every word after unquoting.
func (u *Unit) setExecStart(d *diag, value string) bool {
	if value == "" {
		u.Commands = nil
		return true
	}
	const flags = exUnquote | exCUnescape
	p := value
	for semicolon := true; semicolon; {
		semicolon = false
		first, rest, ok, warning, err := extractWordAndWarn(p, flags)
		if warning != "" {
			d.warn("%s", warning)
		}
		if err != nil {
			// An error in the first word returns 0: the line is dropped,
			// not fatal (config_parse_exec(): "if (r <= 0) return 0").
			d.warn("%v, ExecStart= ignored: %s", err, quoteForMessage(value))
			return true
		}
		if !ok {
			return true
		}
		p = rest
		if first == ";" {
			semicolon = true
			continue
		}
		prefix, path := execPrefix(first)
		ignore := strings.Contains(prefix, "-")

		raw := path
		path, err = d.specifiers(raw)
		if err != nil {
			return d.fail(ignore, "failed to resolve unit specifiers in %s", quoteForMessage(raw))
		}
		switch {
		case path == "":
			return d.fail(ignore, "empty path in command line %s", quoteForMessage(value))
		case !stringSafe(path):
			return d.fail(ignore, "executable path contains special characters: %s", quoteForMessage(path))
		case pathImpliesDirectory(path):
			return d.fail(ignore, "executable path specifies a directory: %s", quoteForMessage(path))
		case !(strings.HasPrefix(path, "/") && pathValid(path) || filenameValid(path)):
			return d.fail(ignore, "neither a valid executable name nor an absolute path: %s", quoteForMessage(path))
		}
		var args []string
		if !strings.Contains(prefix, "@") {
			args = append(args, path)
		}
		for p != "" {
			// An unquoted lone ";" ends this command; "\;" is a literal
			// ";" (checked before unquoting, which would blur the two).
			if p[0] == ';' && (len(p) == 1 || isSep(p[1])) {
				p = strings.TrimLeft(p[1:], whitespace)
				semicolon = true
				break
			}
			if len(p) >= 2 && p[0] == '\\' && p[1] == ';' && (len(p) == 2 || isSep(p[2])) {
				p = strings.TrimLeft(p[2:], whitespace)
				args = append(args, ";")
				continue
			}
			w, rest, ok, warning, err := extractWordAndWarn(p, flags)
			if warning != "" {
				d.warn("%s", warning)
			}
			if err != nil {
				return d.fail(ignore, "%v in %s", err, quoteForMessage(value))
			}
			if !ok {
				break
			}
			p = rest
			resolved, err := d.specifiers(w)
			if err != nil {
				return d.fail(ignore, "failed to resolve unit specifiers in %s", quoteForMessage(w))
			}
			args = append(args, resolved)
		}
		if len(args) == 0 {
			return d.fail(ignore, "empty executable name or zeroeth argument: %s", quoteForMessage(value))
		}
		u.Commands = append(u.Commands, Command{Path: pathSimplify(path), Argv: args, Prefix: prefix, Source: d.src})
	}
	return true
}

// execPrefix splits the prefix characters off the first word, accepting
// each at most once in the combinations config_parse_exec() allows.
func execPrefix(w string) (prefix, path string) {
	var ignore, argv0, noEnv, full, noSetuid, ambient bool
	i := 0
loop:
	for ; i < len(w); i++ {
		switch c := w[i]; {
		case c == '-' && !ignore:
			ignore = true
		case c == '@' && !argv0:
			argv0 = true
		case c == ':' && !noEnv:
			noEnv = true
		case c == '+' && !(full || noSetuid || ambient):
			full = true
		case c == '!' && !(full || noSetuid || ambient):
			noSetuid = true
		case c == '!' && !(full || ambient):
			noSetuid, ambient = false, true
		default:
			break loop
		}
	}
	return w[:i], w[i:]
}

// serviceTypes is service_type_table (src/core/service.c).
var serviceTypes = []string{"simple", "forking", "oneshot", "dbus", "notify", "notify-reload", "idle", "exec"}

func (u *Unit) setType(d *diag, value string) {
	if !contains(serviceTypes, value) {
		d.warn("failed to parse service type, ignoring: %s", quoteForMessage(value))
		return
	}
	u.typeSet = value
}

// setUserGroup is config_parse_user_group_compat(): an empty assignment
// resets; specifiers are resolved; a name that fails
// valid_user_group_name(VALID_USER_ALLOW_NUMERIC|VALID_USER_RELAX) refuses
// the unit.
func (u *Unit) setUserGroup(d *diag, value string, dst *string, dstSrc *Source) bool {
	if value == "" {
		*dst, *dstSrc = "", Source{}
		return true
	}
	k, err := d.specifiers(value)
	if err != nil {
		return d.fail(false, "failed to resolve unit specifiers in %s", quoteForMessage(value))
	}
	if !validUserGroupName(k) {
		return d.fail(false, "invalid user/group name or numeric ID: %s", quoteForMessage(k))
	}
	*dst, *dstSrc = k, d.src
	return true
}

// validUserGroupName is valid_user_group_name() in relaxed mode with
// numeric IDs allowed (src/basic/user-util.c).
func validUserGroupName(s string) bool {
	if s == "" {
		return false
	}
	if allDigits(s) {
		// Numeric: valid exactly when it parses as a UID (not -1, not 65535).
		var n uint64
		for i := 0; i < len(s); i++ {
			n = n*10 + uint64(s[i]-'0')
			if n > 0xFFFFFFFF {
				return false
			}
		}
		return n != 0xFFFFFFFF && n != 0xFFFF
	}
	switch {
	case s[0] == ' ' || s[len(s)-1] == ' ':
		return false
	case !utf8Valid(s):
		return false
	case strings.IndexFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0:
		return false
	case strings.ContainsAny(s, ":/"):
		return false
	case s[0] == '-' && allDigits(s[1:]):
		return false
	case s == "." || s == "..":
		return false
	}
	return true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// setWorkingDirectory is config_parse_working_directory(): "-" makes a
// missing directory (and a bad value) non-fatal, "~" is the user's home,
// anything else must be an absolute, normalized path outside /proc, /sys
// and /dev.
func (u *Unit) setWorkingDirectory(d *diag, value string) bool {
	if value == "" {
		u.WorkingDirectory, u.WorkingDirectoryPath = "", ""
		u.WorkingDirectoryHome, u.WorkingDirectoryMissingOK = false, false
		return true
	}
	rest, missingOK := strings.CutPrefix(value, "-")
	if rest == "~" {
		u.WorkingDirectoryHome, u.WorkingDirectoryPath = true, ""
	} else {
		k, err := d.specifiers(rest)
		if err != nil {
			return d.fail(missingOK, "failed to resolve unit specifiers in working directory %s", quoteForMessage(rest))
		}
		p, why := checkPath(k)
		if why == "" && (underDir(p, "/proc") || underDir(p, "/sys") || underDir(p, "/dev")) {
			why = "is below an API file system"
		}
		if why != "" {
			return d.fail(missingOK, "WorkingDirectory= path %s %s", quoteForMessage(k), why)
		}
		u.WorkingDirectoryHome, u.WorkingDirectoryPath = false, p
	}
	u.WorkingDirectory, u.WorkingDirectoryMissingOK = value, missingOK
	return true
}

// setEnvironment is config_parse_environ(): an empty assignment resets;
// otherwise the value is a list of words (quotes and C escapes as in
// systemd.syntax(7)), each NAME=VALUE with specifiers resolved. A word
// that is not a valid assignment is ignored with a warning; a syntax error
// ignores the rest of the line.
func (u *Unit) setEnvironment(d *diag, value string) {
	if value == "" {
		u.Environment = nil
		u.EnvironmentResets = append(u.EnvironmentResets, d.src)
		return
	}
	d.eachResolvedWord(value, "rest of Environment=", func(w string) {
		name, val, hasEq := strings.Cut(w, "=")
		if !hasEq || !envNameValid(name) || !utf8Valid(val) {
			d.warn("invalid environment assignment, ignored: %s", quoteForMessage(w))
			return
		}
		u.Environment = append(u.Environment, Assignment{Name: name, Value: val, Source: d.src})
		u.everSet = append(u.everSet, Assignment{Name: name, Value: val, Source: d.src})
	})
}

// eachResolvedWord calls f with each word of value (quotes and C escapes
// as in systemd.syntax(7)) with its specifiers resolved, as both
// config_parse_environ() and config_parse_unset_environ() take them: a
// syntax error ignores the rest of the line (what names it in the
// warning), a word whose specifiers do not resolve is ignored.
func (d *diag) eachResolvedWord(value, what string, f func(w string)) {
	for p := value; ; {
		w, rest, ok, err := extractWord(p, exCUnescape|exUnquote)
		if err != nil {
			d.warn("invalid syntax (%v), %s ignored: %s", err, what, quoteForMessage(value))
			return
		}
		if !ok {
			return
		}
		p = rest
		resolved, err := d.specifiers(w)
		if err != nil {
			d.warn("failed to resolve specifiers in %s, ignored", quoteForMessage(w))
			continue
		}
		f(resolved)
	}
}

// setUnsetEnvironment is config_parse_unset_environ() (src/core/load-fragment.c,
// systemd 252): an empty assignment resets the list; otherwise each word
// (quotes and C escapes as in Environment=), its specifiers resolved, is a
// variable name or a NAME=VALUE assignment, anything else ignored with a
// warning; a word already in the list is not added again
// (strv_extend_strv(..., filter_duplicates=true)). systemd.exec(5):
// "Explicit list of environment variable names or assignments to remove
// from the environment passed to executed processes ... This option is
// applied last, i.e. after the environment for the unit has been put
// together ... the list of variables is reset if the empty string is
// assigned."
func (u *Unit) setUnsetEnvironment(d *diag, value string) {
	if value == "" {
		u.UnsetEnvironment = nil
		u.UnsetResets = append(u.UnsetResets, d.src)
		return
	}
	d.eachResolvedWord(value, "UnsetEnvironment=", func(resolved string) {
		name, val, hasEq := strings.Cut(resolved, "=")
		if !envNameValid(name) || (hasEq && !utf8Valid(val)) {
			d.warn("invalid environment name or assignment, ignored: %s", quoteForMessage(resolved))
			return
		}
		x := Unset{Name: name, Value: val, HasValue: hasEq, Source: d.src}
		u.everUnset = append(u.everUnset, x)
		dup := false
		for _, y := range u.UnsetEnvironment {
			dup = dup || y.Entry() == resolved
		}
		if !dup {
			u.UnsetEnvironment = append(u.UnsetEnvironment, x)
		}
	})
}

// setEnvironmentFile is config_parse_unit_env_file(): an empty assignment
// resets; "-" makes the file optional; the path must be absolute and
// normalized, else the setting is ignored with a warning.
func (u *Unit) setEnvironmentFile(d *diag, value string) {
	if value == "" {
		u.EnvironmentFiles = nil
		return
	}
	n, err := d.specifiers(value)
	if err != nil {
		d.warn("failed to resolve unit specifiers in %s, ignored", quoteForMessage(value))
		return
	}
	rest, optional := strings.CutPrefix(n, "-")
	p, why := checkPath(rest)
	if why != "" {
		d.warn("EnvironmentFile= path %s %s, ignored", quoteForMessage(rest), why)
		return
	}
	u.EnvironmentFiles = append(u.EnvironmentFiles, EnvFile{Path: p, Optional: optional, Source: d.src})
}

// checkPath is path_simplify_and_warn(PATH_CHECK_ABSOLUTE): it returns the
// simplified path, or why systemd rejects it.
func checkPath(p string) (string, string) {
	if !pathValid(p) {
		return "", "has invalid length"
	}
	if !strings.HasPrefix(p, "/") {
		return "", "is not absolute"
	}
	s := pathSimplify(p)
	for _, c := range strings.Split(s, "/") {
		if c == ".." {
			return "", "is not normalized"
		}
	}
	return s, ""
}

// pathSimplify is path_simplify(): duplicate slashes, "." components and
// a trailing slash go; ".." stays.
func pathSimplify(p string) string {
	if !strings.HasPrefix(p, "/") {
		return p
	}
	var parts []string
	for _, c := range strings.Split(p, "/") {
		if c != "" && c != "." {
			parts = append(parts, c)
		}
	}
	return "/" + strings.Join(parts, "/")
}

// pathValid is path_is_valid(): non-empty, shorter than PATH_MAX, each
// component at most NAME_MAX bytes.
func pathValid(p string) bool {
	if p == "" || len(p) >= 4096 {
		return false
	}
	for _, c := range strings.Split(p, "/") {
		if len(c) > 255 {
			return false
		}
	}
	return true
}

// filenameValid is filename_is_valid().
func filenameValid(s string) bool {
	return s != "" && s != "." && s != ".." && len(s) <= 255 && !strings.Contains(s, "/")
}

// pathImpliesDirectory is path_implies_directory().
func pathImpliesDirectory(p string) bool {
	return p == "." || p == ".." || strings.HasSuffix(p, "/") || strings.HasSuffix(p, "/.") || strings.HasSuffix(p, "/..")
}

// parseBoolean is parse_boolean() (src/basic/parse-util.c), true side.
func parseBoolean(v string) bool {
	switch strings.ToLower(v) {
	case "1", "yes", "y", "true", "t", "on":
		return true
	}
	return false
}
