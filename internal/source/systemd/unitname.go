package systemd

import "strings"

// Unit name rules from src/basic/unit-name.c and unit-def.c (v256).

// unitTypes are the unit type suffixes systemd knows.
var unitTypes = []string{"service", "mount", "swap", "socket", "target", "device", "automount", "timer", "path", "slice", "scope"}

// unitNameMax is UNIT_NAME_MAX (256) without the trailing NUL.
const unitNameMax = 255

// validUnitChar is VALID_CHARS of src/basic/unit-name.c ('@' is handled apart).
func validUnitChar(c byte) bool {
	return isAlnum(c) || strings.IndexByte(":-_.\\", c) >= 0
}

// unitType returns the type suffix of name ("service"), or "".
func unitType(name string) string {
	i := strings.LastIndexByte(name, '.')
	if i < 0 {
		return ""
	}
	t := name[i+1:]
	for _, k := range unitTypes {
		if t == k {
			return t
		}
	}
	return ""
}

// unitNameValid is unit_name_is_valid(name, UNIT_NAME_ANY): a known type
// suffix, a non-empty prefix of valid characters, and at most one '@'
// which, if present, is not first.
func unitNameValid(name string) bool {
	if name == "" || len(name) > unitNameMax {
		return false
	}
	t := unitType(name)
	if t == "" {
		return false
	}
	base := name[:len(name)-len(t)-1]
	if base == "" {
		return false
	}
	at := strings.IndexByte(base, '@')
	if at == 0 || (at >= 0 && strings.IndexByte(base[at+1:], '@') >= 0) {
		return false
	}
	for i := 0; i < len(base); i++ {
		if base[i] != '@' && !validUnitChar(base[i]) {
			return false
		}
	}
	return true
}

// isInstance reports "foo@bar.service"; isTemplate "foo@.service".
func isInstance(name string) bool {
	i := strings.IndexByte(name, '@')
	return i > 0 && i+1 < len(name) && name[i+1] != '.'
}

func isTemplate(name string) bool {
	i := strings.IndexByte(name, '@')
	return i > 0 && i+1 < len(name) && name[i+1] == '.'
}

// unitPrefix is unit_name_to_prefix(): the part before '@' or the suffix.
func unitPrefix(name string) string {
	if i := strings.IndexByte(name, '@'); i >= 0 {
		return name[:i]
	}
	if t := unitType(name); t != "" {
		return strings.TrimSuffix(name, "."+t)
	}
	return name
}

// unitInstance is the instance of "foo@bar.service" ("bar"), or "".
func unitInstance(name string) string {
	i := strings.IndexByte(name, '@')
	if i < 0 {
		return ""
	}
	rest := name[i+1:]
	if t := unitType(name); t != "" {
		rest = strings.TrimSuffix(rest, "."+t)
	}
	return rest
}

// unitTemplate is unit_name_template(): "foo@bar.service" → "foo@.service".
func unitTemplate(name string) string {
	i := strings.IndexByte(name, '@')
	if i < 0 {
		return ""
	}
	return name[:i+1] + "." + unitType(name)
}

// unitPrefixValid is unit_prefix_is_valid().
func unitPrefixValid(p string) bool {
	if p == "" || len(p) >= unitNameMax {
		return false
	}
	for i := 0; i < len(p); i++ {
		if !validUnitChar(p[i]) {
			return false
		}
	}
	return true
}

// dropInDirNames lists the "<name>.d" directory names searched in one
// lookup directory for name, in the order unit_file_find_dirs()
// (src/shared/dropin.c) adds them: the name itself, for an instance the
// template, then the dash-truncated prefixes: "foo-bar-baz.service" also
// searches "foo-bar-.service.d" and "foo-.service.d" (systemd.unit(5),
// "Description"; equally named files further down the prefix hierarchy
// override those further up, which falls out of this order).
func dropInDirNames(name string) []string {
	out := []string{name + ".d"}
	if isInstance(name) {
		out = append(out, dropInDirNames(unitTemplate(name))...)
	}
	if unitType(name) == "" {
		return out // a top-level "service.d" (name is a bare type): no prefixes
	}
	prefix := unitPrefix(name)
	chopped := false
	for {
		dash := strings.LastIndexByte(prefix, '-')
		if dash <= 0 { // no dash, or a leading one: done
			return out
		}
		if dash+1 < len(prefix) || chopped {
			prefix = prefix[:dash+1]
			break
		}
		// A trailing dash: chop it off and try again, but only once.
		prefix = prefix[:dash]
		chopped = true
	}
	if !unitPrefixValid(prefix) {
		return out
	}
	built := prefix + "." + unitType(name)
	if isInstance(name) {
		built = prefix + "@" + unitInstance(name) + "." + unitType(name)
	}
	return append(out, dropInDirNames(built)...)
}

// withInstance fills inst into a template name: "foo@.service" → "foo@inst.service".
func withInstance(template, inst string) string {
	t := unitType(template)
	return strings.TrimSuffix(template, "."+t) + inst + "." + t
}
