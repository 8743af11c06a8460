// Package bundle writes what a run looked at into a .tar.gz for a ticket
// (doctor run --bundle), redacted as it is written, and reads one back for
// doctor analyze, bounded, whatever the file holds.
//
// Layout, under doctor-bundle/:
//
//	README.txt      what this is and how to re-examine it
//	manifest.json   doctor's version, the flags, the host, the clock
//	report.json     the report of the run
//	tape.json       every file operation, probe and API answer (hostio.Tape)
//	root/<path>     the content of every file read, redacted
package bundle

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	cut "github.com/socialwebcomputer/doctor/checks/client/kube/keep"
	"github.com/socialwebcomputer/doctor/checks/facts/hostfacts"
	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/internal/hostio/atomicfile"
	"github.com/socialwebcomputer/doctor/internal/redact"
	"github.com/socialwebcomputer/doctor/internal/source/systemd"
	"github.com/socialwebcomputer/doctor/internal/text/lazyre"
	"github.com/socialwebcomputer/doctor/report"
)

// Format is the bundle layout's version; analyze refuses others.
const Format = 1

const dir = "doctor-bundle/"

// Bounds on reading a bundle: doctor's own are a few MiB, and Write keeps
// every bundle within them (capTape). Variables, so a test can lower them.
// analyze holds what it reads of a bundle while it replays it, beside what
// the replayed answers decode to (keep.MaxRunDecoded): these keep the two
// together, and what replaying takes at once, under the 150 MiB analyze
// promises (TestCraftedBundlesAreBoundedInMemory). The objects of the API
// answers are bounded as a run bounds them (keep's MaxString, MaxEvents,
// MaxConditions: Read measures them before anything is decoded).
var (
	maxEntries = 20000
	maxTotal   = 40 << 20
	maxMeta    = 16 << 20 // tape.json, report.json
)

// Manifest is what analyze needs to repeat the run.
type Manifest struct {
	Format int       `json:"format"`
	Doctor string    `json:"doctor"`
	Args   []string  `json:"args"` // doctor's flags, redacted
	Host   string    `json:"host"`
	Root   string    `json:"root"`
	Clock  time.Time `json:"clock"` // the run's --now, or when it started
	Env    EnvInputs `json:"env"`
	// What the run was asked to diagnose and to hide: analyze does the
	// same unless told otherwise.
	Only     []string        `json:"only,omitempty"`
	Skip     []string        `json:"skip,omitempty"`
	Runner   string          `json:"runner,omitempty"`
	Ignores  []report.Ignore `json:"ignores,omitempty"`
	Redacted []string        `json:"redacted"` // what was replaced, described, never the values
	// LeftOut is what the bundle's bounds left no room for, described:
	// analyze answers those requests and files as not recorded.
	LeftOut []string `json:"leftOut,omitempty"`
}

// EnvInputs are the flags that chose the run's input (hostio.Env): analyze
// sets the same, so every probe it asks for has the key the live run's had.
type EnvInputs struct {
	Offline        bool              `json:"offline"`
	RunnerPID      int               `json:"runnerPid,omitempty"`
	ConfigPath     string            `json:"config,omitempty"`
	KubeconfigPath string            `json:"kubeconfig,omitempty"`
	Context        string            `json:"context,omitempty"`
	Namespace      string            `json:"namespace,omitempty"`
	RequestTimeout time.Duration     `json:"requestTimeout,omitempty"`
	Settings       map[string]string `json:"settings,omitempty"`
}

// Write writes the bundle to path atomically (a temporary file renamed),
// with mode 0600: it describes a host's runner configuration.
func Write(p string, m Manifest, tape *hostio.Tape, reportJSON []byte) error {
	m.Format = Format
	settings := map[string]string{}
	for k, v := range m.Env.Settings {
		settings[k] = redactFreeText(v)
	}
	m.Env.Settings = settings
	files, probes, http, notes := redactTape(tape)
	m.Redacted = notes
	parts := &tapeParts{Files: files, Probes: probes, HTTP: http}
	m.LeftOut = append(capWork(parts), capTape(parts, &reportJSON)...)
	files = parts.Files
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	add := func(name string, b []byte) error {
		if err := tw.WriteHeader(&tar.Header{Name: dir + name, Mode: 0o600, Size: int64(len(b)), ModTime: m.Clock, Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		_, err := tw.Write(b)
		return err
	}
	manifest, _ := json.MarshalIndent(m, "", "  ")
	tj, err := json.MarshalIndent(parts, "", "  ")
	if err != nil {
		return err
	}
	for _, e := range []struct {
		name string
		b    []byte
	}{{"README.txt", []byte(readme)}, {"manifest.json", manifest}, {"report.json", reportJSON}, {"tape.json", tj}} {
		if err := add(e.name, e.b); err != nil {
			return err
		}
	}
	names := make([]string, 0, len(files))
	for n, r := range files {
		if r.Read {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		if err := add("root"+n, files[n].Content); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := gz.Close(); err != nil {
		return err
	}
	// In a directory only its owner may write, through no symlinked
	// directory, sweeping what a killed write left (atomicfile.Publish).
	return atomicfile.Publish(p, buf.Bytes(), 0o600)
}

const readme = `This is a doctor bundle: what one run of doctor looked at on a GitLab Runner
host, so that the run can be re-examined elsewhere:

    doctor analyze THIS-FILE.tar.gz

gives the same findings, offline, touching neither this machine's files nor
any network. Secrets were replaced as the bundle was written: tokens and
passwords by a stand-in (their kind's prefix and a short hash keyed by a
random key drawn for this bundle and never stored, so the same secret has
the same stand-in here, and no stand-in can be tested against a guess),
private keys
by fresh keys of the same type, client certificates by certificates of the
same subject, issuer and validity for those keys; config.toml, kubeconfigs
and environs keep only the values the checks read, and one that does not
decode is described, not copied. manifest.json lists what was replaced, and
what the bundle's bounds left out. report.json is the run's report; tape.json lists each file
doctor read, stat'ed or listed, each probe (DNS, GitLab, exec upgrade) and
each API answer; root/ holds the files' contents.
`

// redactTape copies the tape with every content redacted.
func redactTape(t *hostio.Tape) (map[string]*hostio.FileRecord, map[string]*hostio.ProbeRecord, map[string][]*hostio.HTTPRecord, []string) {
	// A request past its check's deadline may still be filling its record.
	t = t.Snapshot()
	si := newStandIns()
	notes := map[string]bool{}
	files := redactFiles(si, t.Files, notes)
	probes := map[string]*hostio.ProbeRecord{}
	for k, r := range t.Probes {
		c := *r
		if len(c.Value) > 0 && strings.HasPrefix(k, systemd.ProbeKind+" ") {
			c.Value = redactSystemdShow(c.Value)
		} else if len(c.Value) > 0 {
			c.Value = redactJSON(c.Value)
			if strings.HasPrefix(k, "gitlab-http ") {
				c.Value = redactResponseBody(c.Value)
			}
		}
		if c.Err != nil {
			e := *c.Err
			e.Msg = redact.Text(redactFreeText(e.Msg))
			c.Err = &e
		}
		probes[k] = &c
	}
	http := map[string][]*hostio.HTTPRecord{}
	for k, rs := range t.HTTP {
		for _, r := range rs {
			c := *r
			if len(c.Body) > 0 {
				c.Body = string(redactAPIBody([]byte(c.Body)))
			}
			http[k] = append(http[k], &c)
		}
	}
	for _, n := range si.notes {
		notes[n] = true
	}
	out := make([]string, 0, len(notes))
	for n := range notes {
		out = append(out, n)
	}
	sort.Strings(out)
	return files, probes, http, out
}

// withinBounds refuses a tape whose API answers hold more than a run
// reads: each recorded answer is cut again, as replay will cut it, against
// one budget for them all (keep.Run: the items a list asked for, the
// elements of a field, the run's decoded objects, strings, events,
// conditions). Those are the bounds every answer of a live run passes
// before the tape records it (and Write leaves out what would not, capWork),
// so no bundle doctor run writes is refused; one over them was written by
// hand, and analyze decodes nothing of it.
func withinBounds(t *hostio.Tape) error {
	if _, err := overBounds(t.HTTP); err != nil {
		return fmt.Errorf("tape.json: its API answers are more than a run reads, and more than doctor run records: %v; analyze does not read them", err)
	}
	return nil
}

// overBounds cuts the answers, key by key in order, against one budget,
// and returns the first key whose answers meet a bound, and the bound's
// error; "" and nil when none does.
func overBounds(http map[string][]*hostio.HTTPRecord) (string, error) {
	run := &cut.Run{}
	keys := make([]string, 0, len(http))
	for k := range http {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		u := keyURL(key)
		if u == nil || strings.Contains(u.RawQuery, "watch=") {
			continue
		}
		req := cut.Request{URL: u.Redacted(), Run: run}
		req.Limit, _ = strconv.ParseInt(u.Query().Get("limit"), 10, 64)
		for _, r := range http[key] {
			if r == nil || r.Body == "" || r.Status < 200 || r.Status > 206 {
				continue
			}
			_, err := cut.JSON([]byte(r.Body), req)
			var much *cut.ErrTooMuch
			if errors.As(err, &much) {
				return key, err
			}
		}
	}
	return "", nil
}

// keyURL is the URL of a recorded request's key (hostio's httpKey: who,
// method, URL, body hash).
func keyURL(key string) *url.URL {
	for _, f := range strings.Fields(key) {
		if u, err := url.Parse(f); err == nil && u.Host != "" {
			return u
		}
	}
	return nil
}

// redactSystemdShow keeps of the running manager's answer for the unit what
// a unit file's copy keeps: the values of the variables a check reads,
// stand-ins for the others, ExecStart='s words through the pattern net. An
// answer that does not decode is described by redactJSON's net alone.
func redactSystemdShow(b []byte) []byte {
	var s *systemd.Show
	if err := json.Unmarshal(b, &s); err != nil || s == nil {
		return redactJSON(b)
	}
	out, err := json.Marshal(s.Redacted(hostfacts.ProcessVariableRead, redact.StandIn, redactFreeText))
	if err != nil {
		return redactJSON(b)
	}
	return out
}

// dataLine is a kubeconfig's inline certificate or key.
var dataLine = lazyre.MustCompile(`(?m)^(\s*(?:client-certificate-data|client-key-data|certificate-authority-data)\s*:\s*)("?)([A-Za-z0-9+/=]+)("?)\s*$`)

// redactFile redacts one file's content by what it is.
func redactFile(si *standIns, p string, b []byte) ([]byte, []string) {
	switch {
	case strings.HasPrefix(p, "/proc/") && strings.HasSuffix(p, "/environ"):
		return redactNulList(b, false), []string{"secret-named variables"}
	case strings.HasPrefix(p, "/proc/") && strings.HasSuffix(p, "/cmdline"):
		return redactNulList(b, true), nil
	case secretFile(p):
		return []byte(redact.StandIn(strings.TrimSpace(string(b)))), []string{"the whole file"}
	}
	var what []string
	if bytes.Contains(b, []byte("-----BEGIN")) {
		b = si.replace(b)
		what = append(what, "PEM keys and certificates")
	}
	if dataLine().Match(b) {
		b = dataLine().ReplaceAllFunc(b, func(m []byte) []byte {
			sub := dataLine().FindSubmatch(m)
			// The line keeps its place; a YAML comment says what stood there.
			return []byte(string(sub[1]) + string(sub[2]) + si.replaceBase64(string(sub[3])) + string(sub[4]) +
				" # doctor bundle: " + si.describeBase64(string(sub[3])))
		})
		what = append(what, "inline certificates and keys")
	}
	b, keys := redactOutsidePEM(b)
	for _, k := range keys {
		what = append(what, "the value of "+k)
	}
	return b, what
}

// redactOutsidePEM is redactText on everything but the PEM blocks, which
// replace has made safe already (a key description's "Authorized:" header
// is a public key, not an assignment of a secret).
func redactOutsidePEM(b []byte) ([]byte, []string) {
	var out []byte
	var keys []string
	last := 0
	for _, loc := range pemBlock().FindAllIndex(b, -1) {
		seg, k := redactText(b[last:loc[0]])
		out, keys = append(append(out, seg...), b[loc[0]:loc[1]]...), append(keys, k...)
		last = loc[1]
	}
	seg, k := redactText(b[last:])
	return append(out, seg...), append(keys, k...)
}

// redactAPIBody is the second net under an API answer the tape recorded:
// the answer is already cut to the fields the checks read, with no env
// value, argument, annotation or Secret data in it, and the request's
// credential replaced (keep.Transport). What is left are names, states and
// messages; in their strings a URL's password and a GitLab token become
// stand-ins. No value is replaced for its key's name: a quota's
// count/secrets is a quantity the check reads, not a secret.
func redactAPIBody(b []byte) []byte {
	var v any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		return []byte(redactFreeText(string(b)))
	}
	var walk func(any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				x[k] = walk(e)
			}
		case []any:
			for i := range x {
				x[i] = walk(x[i])
			}
		case string:
			return redactFreeText(x)
		}
		return v
	}
	out, err := json.Marshal(walk(v))
	if err != nil {
		return []byte(redactFreeText(string(b)))
	}
	return out
}

// redactResponseBody redacts a GitLab answer's body, which the probe keeps
// as text inside its JSON (gitlab.Response.MarshalJSON).
func redactResponseBody(v []byte) []byte {
	var m map[string]any
	if json.Unmarshal(v, &m) != nil {
		return v
	}
	if s, ok := m["Body"].(string); ok {
		m["Body"] = string(redactJSON([]byte(s)))
	}
	out, err := json.Marshal(m)
	if err != nil {
		return v
	}
	return out
}

// Read opens a bundle for analyze: the manifest, the report and the tape,
// set to replay. Everything is bounded; a file that is not a bundle, or of
// another format, is an error that says so.
func Read(p string) (*Manifest, []byte, *hostio.Tape, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, nil, nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, nil, nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, nil, nil, fmt.Errorf("%s: %s, not a bundle file", p, hostio.FileType(st.Mode()))
	}
	gz, err := gzip.NewReader(f)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%s: not a doctor bundle (not gzip: %v)", p, err)
	}
	tr := tar.NewReader(io.LimitReader(gz, int64(maxTotal)+1))
	var m *Manifest
	var rep, tj []byte
	contents := map[string][]byte{}
	total, n := 0, 0
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, nil, fmt.Errorf("%s: not a doctor bundle (tar: %v)", p, err)
		}
		if n++; n > maxEntries {
			return nil, nil, nil, fmt.Errorf("%s: more than %d entries: not a doctor bundle", p, maxEntries)
		}
		if h.Typeflag != tar.TypeReg || !strings.HasPrefix(h.Name, dir) {
			continue
		}
		name := strings.TrimPrefix(h.Name, dir)
		limit := int64(hostio.MaxFileSize)
		if name == "tape.json" || name == "report.json" {
			limit = int64(maxMeta)
		}
		if h.Size > limit {
			return nil, nil, nil, fmt.Errorf("%s: %s is %d bytes, over the bound of %d", p, name, h.Size, limit)
		}
		b, err := io.ReadAll(io.LimitReader(tr, limit+1))
		if err != nil {
			return nil, nil, nil, fmt.Errorf("%s: %s: %v", p, name, err)
		}
		if total += len(b); total > maxTotal {
			return nil, nil, nil, fmt.Errorf("%s: over %d MiB uncompressed: not a doctor bundle", p, maxTotal>>20)
		}
		switch {
		case name == "manifest.json":
			m = &Manifest{}
			if err := json.Unmarshal(b, m); err != nil {
				return nil, nil, nil, fmt.Errorf("%s: manifest.json: %v", p, err)
			}
		case name == "report.json":
			rep = b
		case name == "tape.json":
			tj = b
		case strings.HasPrefix(name, "root/"):
			contents[path.Clean("/"+strings.TrimPrefix(name, "root/"))] = b
		}
	}
	if m == nil || tj == nil {
		return nil, nil, nil, fmt.Errorf("%s: not a doctor bundle (no manifest.json or tape.json)", p)
	}
	if m.Format != Format {
		return nil, nil, nil, fmt.Errorf("%s: bundle format %d; this doctor reads format %d", p, m.Format, Format)
	}
	t := hostio.NewTape()
	if err := json.Unmarshal(tj, t); err != nil {
		return nil, nil, nil, fmt.Errorf("%s: tape.json: %v", p, err)
	}
	tj = nil
	if err := withinBounds(t); err != nil {
		return nil, nil, nil, fmt.Errorf("%s: %w", p, err)
	}
	for fp, r := range t.Files {
		if r == nil {
			delete(t.Files, fp)
			continue
		}
		if r.Read {
			r.Content = contents[fp]
		}
	}
	t.Replay = true
	return m, rep, t, nil
}
