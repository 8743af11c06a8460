package fixcode

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/validation/path"
	"k8s.io/apimachinery/pkg/util/validation"
)

// NameError says that a value is not a valid name of its kind: the value
// becomes the finding, and no fix carries it.
type NameError struct {
	Kind    string // "namespace name"
	Reasons []string
}

func (e *NameError) Error() string {
	return "not a valid " + e.Kind + ": " + strings.Join(e.Reasons, "; ")
}

func nameError(kind string, reasons []string) error {
	if len(reasons) == 0 {
		return nil
	}
	return &NameError{Kind: kind, Reasons: reasons}
}

// NamespaceName checks a namespace's name as the apiserver does: a DNS-1123
// label (apimachinery's ValidateNamespaceName).
func NamespaceName(s string) error {
	return nameError("namespace name", validation.IsDNS1123Label(s))
}

// ObjectName checks the name of a namespaced or cluster object of the
// kinds a fix writes (Role, RoleBinding, ServiceAccount, PriorityClass,
// Secret): a DNS-1123 subdomain, which is also a valid path segment.
func ObjectName(s string) error {
	reasons := validation.IsDNS1123Subdomain(s)
	reasons = append(reasons, path.IsValidPathSegmentName(s)...)
	return nameError("object name", reasons)
}

// UnitName checks a systemd unit name as systemd's unit_name_is_valid does
// (src/basic/unit-name.c, v252): at most 255 bytes, a known suffix, a
// prefix of [a-zA-Z0-9:-_.\] characters, and for a template instance
// (name@instance.service) an instance of the same characters and @; and
// for doctor, which prints it as an argument, no leading -.
func UnitName(s string) error {
	var reasons []string
	if len(s) == 0 || len(s) > 255 {
		reasons = append(reasons, "a unit name has 1 to 255 characters")
	}
	if strings.HasPrefix(s, "-") {
		// systemd has -.mount and -.slice, but no runner's unit: and a
		// word that begins with - is an option to systemctl.
		reasons = append(reasons, "a unit name doctor prints does not begin with -")
	}
	dot := strings.LastIndexByte(s, '.')
	if dot <= 0 || !unitSuffixes[s[dot+1:]] {
		reasons = append(reasons, "a unit name ends in a unit type (.service, .socket, ...)")
	} else {
		prefix, instance, templated := strings.Cut(s[:dot], "@")
		if prefix == "" || !unitChars(prefix) || (templated && !unitChars(strings.ReplaceAll(instance, "@", ""))) {
			reasons = append(reasons, "a unit name holds only letters, digits and :-_.\\ (and one @ before an instance)")
		}
	}
	return nameError("systemd unit name", reasons)
}

var unitSuffixes = map[string]bool{
	"service": true, "socket": true, "target": true, "device": true, "mount": true, "automount": true,
	"swap": true, "timer": true, "path": true, "slice": true, "scope": true,
}

func unitChars(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte(":-_.\\", c) >= 0) {
			return false
		}
	}
	return true
}

// Printable checks a value shown in a fix's sentence or carried by a
// command as a name of its own (a kubeconfig context, a user): text with
// no control, format or bidi character, and UTF-8.
func Printable(kind, s string) error {
	if err := printable(s, ""); err != nil {
		return &NameError{Kind: kind, Reasons: []string{fmt.Sprint(err.(*Refusal).Why)}}
	}
	return nil
}
