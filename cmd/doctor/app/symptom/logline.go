package symptom

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// The runner writes its log in one of three formats (log_format,
// log/configuration.go, gitlab-runner v15.0.0 to v19.3.0):
//
//	runner  FATAL: Service run failed   error=decoding configuration file: …
//	text    time="…" level=fatal msg="Service run failed" error="decoding configuration file: …"
//	json    {"error":"decoding configuration file: …","level":"fatal","msg":"Service run failed","time":"…"}
//
// text is logrus' TextFormatter, json its JSONFormatter (keys sorted, so
// "error" comes before "msg"). A pattern quotes the runner format
// (log/runner_formatter.go: the level's prefix, the message, then the
// fields), so logLine rewrites the other two into it: the level's prefix,
// msg, and the remaining fields sorted as key=value, time dropped. What
// precedes the record (a journald prefix) stays. A line that is neither
// is returned as it is.
func logLine(line string) string {
	if strings.Contains(line, `"msg":`) {
		return jsonLine(line)
	}
	if i := logfmtStart(line); i >= 0 {
		if fields, ok := parseLogfmt(line[i:]); ok {
			return line[:i] + runnerFormat(fields)
		}
	}
	return line
}

// jsonLine decodes the record from the line's first '{'; a record pasted
// without its braces ("level":"error","msg":…) is tried inside a pair of
// them. A record cut short (a paste that stops mid-value) cannot be
// decoded: its JSON string escapes are undone, so `\"` reads as `"` as in
// the runner format.
func jsonLine(line string) string {
	if i := strings.IndexByte(line, '{'); i >= 0 {
		if fields, ok := decodeJSON(line[i:]); ok {
			return line[:i] + runnerFormat(fields)
		}
	}
	if i := strings.IndexByte(line, '"'); i >= 0 {
		if fields, ok := decodeJSON("{" + line[i:] + "}"); ok {
			return line[:i] + runnerFormat(fields)
		}
	}
	return jsonUnescape.Replace(line)
}

var jsonUnescape = strings.NewReplacer(`\"`, `"`, `\\`, `\`, `\/`, `/`, `\n`, " ", `\t`, " ")

func decodeJSON(s string) (map[string]string, bool) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var record map[string]any
	if err := dec.Decode(&record); err != nil {
		return nil, false
	}
	if _, ok := record["msg"].(string); !ok {
		return nil, false
	}
	fields := make(map[string]string, len(record))
	for k, v := range record {
		switch v := v.(type) {
		case string:
			fields[k] = v
		case json.Number:
			fields[k] = v.String()
		default:
			b, err := json.Marshal(v)
			if err != nil {
				return nil, false
			}
			fields[k] = string(b)
		}
	}
	return fields, true
}

// logfmtStart is where a TextFormatter record begins: at `time="` or
// `level=`, when the line also has a msg.
func logfmtStart(line string) int {
	if !strings.Contains(line, "msg=") {
		return -1
	}
	for _, key := range []string{`time="`, "level="} {
		if i := strings.Index(line, key); i >= 0 && (i == 0 || line[i-1] == ' ') {
			return i
		}
	}
	return -1
}

// parseLogfmt reads key=value pairs, a value bare up to the next space or
// quoted as strconv.Quote writes it (logrus' TextFormatter, needsQuoting).
func parseLogfmt(s string) (map[string]string, bool) {
	fields := map[string]string{}
	for s = strings.TrimLeft(s, " "); s != ""; s = strings.TrimLeft(s, " ") {
		eq := strings.IndexByte(s, '=')
		if eq <= 0 || strings.ContainsAny(s[:eq], ` "`) {
			return nil, false
		}
		key, rest := s[:eq], s[eq+1:]
		if strings.HasPrefix(rest, `"`) {
			q, err := strconv.QuotedPrefix(rest)
			if err != nil {
				return nil, false
			}
			v, _ := strconv.Unquote(q)
			fields[key], s = v, rest[len(q):]
			continue
		}
		end := strings.IndexByte(rest, ' ')
		if end < 0 {
			end = len(rest)
		}
		fields[key], s = rest[:end], rest[end:]
	}
	_, ok := fields["msg"]
	return fields, ok
}

// levelPrefix is log/runner_formatter.go's prefix of each level
// (gitlab-runner v15.0.0 to v19.3.0): info has none.
var levelPrefix = map[string]string{
	"panic": "PANIC: ", "fatal": "FATAL: ", "error": "ERROR: ",
	"warning": "WARNING: ", "warn": "WARNING: ", "debug": "DEBUG: ",
}

func runnerFormat(fields map[string]string) string {
	var b bytes.Buffer
	b.WriteString(levelPrefix[strings.ToLower(fields["level"])])
	b.WriteString(fields["msg"])
	keys := make([]string, 0, len(fields))
	for k := range fields {
		if k != "level" && k != "msg" && k != "time" {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for i, k := range keys {
		sep := " "
		if i == 0 {
			sep = "  "
		}
		fmt.Fprintf(&b, "%s%s=%s", sep, k, fields[k])
	}
	return b.String()
}
