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

// escapedSGR is a CSI code whose ESC byte is written as the places a
// runner line passes through write it: rsyslog's control-character escape
// in /var/log/syslog (`#033[31;1m`, $EscapeControlCharactersOnReceive),
// JSON's (`\u001b[`, as journalctl -o json and ansible's output quote
// it), C's and Go's (`\033[`, `\x1b[`) and a terminal's caret notation
// (`^[[`, less and cat -v). The whole code goes, not only the bracket
// part bareSGR would take, which would leave `#033` in front of the text.
var escapedSGR = lazyre.MustCompile(`(?:#033|\\u001[bB]|\\x1[bB]|\\033|\^\[)\[[0-?]*[ -/]*[@-~]`)

// Clean is a log line as the reader of the log sees it, in the runner's
// own format whatever wrote it down: without colours (raw, or escaped as
// syslog, JSON or a terminal write them), section markers or a trailing
// carriage return; a line of the runner's json or text log_format
// rewritten as its default format prints it (LEVEL: msg key=value, see
// logLine). Bytes that are not UTF-8 are kept: matching is byte for byte.
// A prefix (a journald or syslog time, host and gitlab-runner[PID]:, a
// docker-compose service name) stays: patterns are found anywhere in a
// line.
func Clean(line string) string {
	if strings.Contains(line, "section_") {
		line = sectionMarker().ReplaceAllString(line, "")
	}
	// First the record, so a colour code JSON escaped inside a value is
	// decoded to the byte the next steps remove.
	line = logLine(line)
	if strings.ContainsAny(line, `#\^`) {
		line = escapedSGR().ReplaceAllString(line, "")
	}
	if strings.IndexByte(line, 0x1b) >= 0 {
		line = ansiEscape().ReplaceAllString(line, "")
	}
	if strings.IndexByte(line, '[') >= 0 {
		line = bareSGR().ReplaceAllString(line, "")
	}
	line = strings.ReplaceAll(line, "\n", " ") // a decoded value's
	if !isASCII(line) {
		line = typography.Replace(line)
	}
	line = strings.TrimRight(line, "\r")
	// A carriage return inside a line is a progress display overwriting
	// itself; matching across it as a space keeps words apart.
	return strings.ReplaceAll(line, "\r", " ")
}

// typography undoes what a web page or a word processor made of a pasted
// line's ASCII: an ellipsis for "...", curly quotes for straight ones, a
// no-break space ("ERROR: Registering runner… failed … status=couldn’t
// execute POST", gitlab-runner commit 92ac456b). The runner printed ASCII.
var typography = strings.NewReplacer("…", "...", "’", "'", "‘", "'", "“", `"`, "”", `"`, "\u00a0", " ")

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// Redact is a matched line as doctor prints it: redact.Text's secrets
// and URL credentials (git prints `fatal: unable to access
// 'https://gitlab-ci-token:…@host/…'`) removed.
func Redact(line string) string {
	return redact.Text(line)
}
