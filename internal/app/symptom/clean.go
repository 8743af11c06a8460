package symptom

import (
	"strings"

	"github.com/socialwebcomputer/doctor/internal/redact"
	"github.com/socialwebcomputer/doctor/internal/text/lazyre"
)

// A job log downloaded from GitLab (or copied from the runner's trace)
// carries the runner's colours and GitLab's collapsible-section markers:
// `\x1b[0Ksection_start:1733040000:prepare_executor\r\x1b[0K` before a
// heading, `section_end:…` after it (helpers/build_section.go,
// gitlab-runner v19.3.0). Neither is part of what the
// runner said, and either would split a symptom in two.
var (
	sectionMarker = lazyre.MustCompile(`section_(?:start|end):[0-9]+:[A-Za-z0-9_.\-]*(?:\[[^\]\r\n]*\])?\r?`)
	// CSI (colour, erase line), OSC (titles, links) and two-byte escapes.
	ansiEscape = lazyre.MustCompile("\x1b(?:\\[[0-?]*[ -/]*[@-~]|\\][^\x07\x1b]*(?:\x07|\x1b\\\\)|[@-Z\\\\-_])")
	// A log pasted from a browser may keep the codes without their ESC byte:
	// "[0;m[31;1mERROR: …".
	bareSGR = lazyre.MustCompile(`\[[0-9]{1,3}(?:;[0-9]{0,3})*[mK]`)
)

// Clean is a log line as the reader of the log sees it: without colours,
// section markers or a trailing carriage return. Bytes that are not UTF-8
// are kept: matching is byte for byte.
func Clean(line string) string {
	if strings.Contains(line, "section_") {
		line = sectionMarker().ReplaceAllString(line, "")
	}
	if strings.IndexByte(line, 0x1b) >= 0 {
		line = ansiEscape().ReplaceAllString(line, "")
	}
	if strings.IndexByte(line, '[') >= 0 {
		line = bareSGR().ReplaceAllString(line, "")
	}
	line = strings.TrimRight(line, "\r")
	// A carriage return inside a line is a progress display overwriting
	// itself; matching across it as a space keeps words apart.
	return strings.ReplaceAll(line, "\r", " ")
}

// Redact is a matched line as doctor prints it: redact.Text's secrets
// and URL credentials (git prints `fatal: unable to access
// 'https://gitlab-ci-token:…@host/…'`) removed.
func Redact(line string) string {
	return redact.Text(line)
}
