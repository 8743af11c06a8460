package runnermetrics

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts/configfacts"
	"github.com/socialwebcomputer/doctor/internal/hostio"
)

// Bounds on what doctor reads of an exposition. A runner's /metrics is a
// few hundred KiB (the Go and process collectors, its histograms); what
// doctor keeps of it, the families of Defs, a few KiB.
const (
	MaxBody   = 8 << 20  // bytes of the answer read; more is an error, never read
	maxLine   = 64 << 10 // one line of the exposition
	maxSeries = 10000    // samples kept of the families doctor reads
)

// Scrape is the answer of /metrics as doctor keeps it: the samples of the
// families it reads, each with the [[runners]] entry its runner label
// names, never the label itself (the runner's short token). A bundle
// records this, not the answer.
type Scrape struct {
	Took   time.Duration `json:"took"`
	Status int           `json:"status,omitempty"` // an answer other than 200
	Err    error         `json:"err,omitempty"`    // no answer, or not an exposition
	// Version is gitlab_runner_version_info's version label: the runner
	// actually running. "" when the family is absent.
	Version string   `json:"version,omitempty"`
	Samples []Sample `json:"samples,omitempty"`
	// Mismatches are families doctor reads whose type or labels are not
	// the runner version's (Defs): their samples are dropped, not judged.
	Mismatches []string `json:"mismatches,omitempty"`
	// Unchecked says the labels could not be checked (the version is
	// unknown, or older than Oldest): the names and types were.
	Unchecked string `json:"unchecked,omitempty"`
}

// Sample is one series of a family doctor reads.
type Sample struct {
	Name string `json:"name"`
	// Labels are the series' labels but runner and system_id.
	Labels map[string]string `json:"labels,omitempty"`
	// Runner is the [[runners]] entry the runner label (or runner_name)
	// names; nil when the family has no such label, or Stranger.
	Runner *checks.RunnerRef `json:"runner,omitempty"`
	// Stranger is a runner label that names no [[runners]] entry of
	// config.toml (one removed since the process started).
	Stranger bool    `json:"stranger,omitempty"`
	Value    float64 `json:"value"`
}

// Series is the sample as evidence shows it: the family, its labels
// sorted, and its runner as the [[runners]] entry it names.
func (s Sample) Series() string {
	keys := make([]string, 0, len(s.Labels))
	for k := range s.Labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%q", k, s.Labels[k]))
	}
	out := s.Name
	if len(parts) > 0 {
		out += "{" + strings.Join(parts, ",") + "}"
	}
	out += " " + model.SampleValue(s.Value).String()
	switch {
	case s.Runner != nil:
		out += " (runner: " + s.Runner.String() + ")"
	case s.Stranger:
		out += " (runner: none of config.toml's [[runners]])"
	}
	return out
}

// runner is a [[runners]] entry as its metrics name it.
type runner struct {
	ref    checks.RunnerRef
	shorts []string // its token shortened as each runner version does
}

// runnersOf lists config.toml's runners with the short forms of their
// tokens the metrics carry in their runner label.
func runnersOf(cfg *configfacts.ConfigFile) []runner {
	if !cfg.Decoded() {
		return nil
	}
	var out []runner
	for i, r := range cfg.Config.Runners {
		out = append(out, runner{ref: *configfacts.RefOf(i, r), shorts: ShortTokens(r.Token)})
	}
	return out
}

// shortPrefixes are the prefixes gitlab-runner v18.2.0 to v19.3.0 strips
// before it keeps 9 characters (helpers/shorten_token.go, prefixRes).
var shortPrefixes = []*regexp.Regexp{
	regexp.MustCompile(`^glrt-(t[123]_)?|^t[123]_|^glrtr-`),
	regexp.MustCompile(`^glcbt-`),
	regexp.MustCompile(`^GR[0-9A-Fa-f]{7}`),
}

// ShortTokens are the forms of a token a runner's metrics carry in their
// runner label (RunnerCredentials.ShortDescription, helpers.ShortenToken):
// gitlab-runner v18.2.0 to v19.3.0 strip the known prefixes and keep 9
// characters; v15.0.0 to v18.1.x keep token[5:14] of a glrt- token,
// token[6:15] of a glcbt- one, 17 characters of a GR one, else 8.
func ShortTokens(token string) []string {
	if token == "" {
		return nil
	}
	in := token
	for _, re := range shortPrefixes {
		in = re.ReplaceAllString(in, "")
	}
	out := []string{in[:min(9, len(in))]}
	var old string
	switch {
	case len(token) < 8:
		old = token
	case strings.HasPrefix(token, "glrt-"):
		old = token[5:min(14, len(token))]
	case strings.HasPrefix(token, "glcbt-"):
		old = token[6:min(15, len(token))]
	case strings.HasPrefix(token, "GR") && len(token) >= 17:
		old = token[:17]
	default:
		old = token[:8]
	}
	if old != out[0] {
		out = append(out, old)
	}
	return out
}

// scrape asks url once, under timeout, and keeps what Defs names.
func scrape(ctx context.Context, env *hostio.Env, url string, timeout time.Duration, runners []runner) *Scrape {
	s := &Scrape{}
	start := time.Now()
	defer func() { s.Took = time.Since(start) }()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tr := &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return env.Dial(ctx, network, addr)
		},
		DisableKeepAlives: true,
		// An answer is read as sent: a compressed one would be inflated
		// past the bound before it is counted.
		DisableCompression:     true,
		MaxResponseHeaderBytes: 64 << 10,
		ResponseHeaderTimeout:  timeout,
		Proxy:                  nil,
	}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		s.Err = err
		return s
	}
	// The text format, which promhttp serves when asked for it.
	req.Header.Set("Accept", string(expfmt.NewFormat(expfmt.TypeTextPlain)))
	req.Header.Set("User-Agent", "doctor (gitlab-runner diagnosis)")
	resp, err := client.Do(req)
	if err != nil {
		s.Err = describe(err, timeout)
		return s
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		s.Status, s.Err = resp.StatusCode, fmt.Errorf("GET %s answered %s, not the metrics", url, resp.Status)
		return s
	}
	kept, err := keep(io.LimitReader(resp.Body, MaxBody+1))
	if err != nil {
		s.Err = describe(err, timeout)
		return s
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(kept))
	if err != nil {
		s.Err = fmt.Errorf("not a Prometheus text exposition: %v", err)
		return s
	}
	judge(s, fams, runners)
	return s
}

// keep reads an exposition line by line and keeps the lines of the
// families Defs names: their # HELP and # TYPE, and their samples. Memory
// is bounded by what it keeps, whatever the answer holds.
func keep(r io.Reader) ([]byte, error) {
	br := bufio.NewReaderSize(r, 32<<10)
	var out bytes.Buffer
	read, lines := 0, 0
	for {
		line, err := readLine(br)
		read += len(line) + 1
		if read > MaxBody {
			return nil, fmt.Errorf("the answer is longer than %d MiB; doctor read that much and stopped", MaxBody>>20)
		}
		if len(line) > 0 && wanted(line) {
			if lines++; lines > maxSeries {
				return nil, fmt.Errorf("more than %d series of the families doctor reads: not a runner's exposition", maxSeries)
			}
			out.Write(line)
			out.WriteByte('\n')
		}
		if err == io.EOF {
			return out.Bytes(), nil
		}
		if err != nil {
			return nil, err
		}
	}
}

var errLongLine = fmt.Errorf("a line longer than %d KiB: not a Prometheus exposition", maxLine>>10)

// readLine is one line without its end, at most maxLine bytes.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, isPrefix, err := br.ReadLine()
		line = append(line, chunk...)
		if len(line) > maxLine {
			return nil, errLongLine
		}
		if err != nil || !isPrefix {
			return line, err
		}
	}
}

// wanted says whether a line belongs to a family of Defs.
func wanted(line []byte) bool {
	s := string(line)
	if rest, ok := strings.CutPrefix(s, "#"); ok {
		f := strings.Fields(rest)
		return len(f) >= 2 && (f[0] == "HELP" || f[0] == "TYPE") && DefOf(f[1]) != nil
	}
	name := s
	if i := strings.IndexAny(s, "{ \t"); i >= 0 {
		name = s[:i]
	}
	return DefOf(name) != nil
}

// judge checks each family against the version's definitions and keeps the
// samples of those that agree.
func judge(s *Scrape, fams map[string]*dto.MetricFamily, runners []runner) {
	if vi := fams[VersionInfo]; vi != nil && len(vi.GetMetric()) > 0 {
		for _, lp := range vi.GetMetric()[0].GetLabel() {
			if lp.GetName() == "version" {
				s.Version = lp.GetValue()
			}
		}
	}
	switch {
	case s.Version == "":
		s.Unchecked = "the exposition has no " + VersionInfo + ", so its labels are not checked against a runner version's"
	case Less(s.Version, Oldest):
		s.Unchecked = fmt.Sprintf("gitlab-runner %s is older than v%s, the oldest whose metric definitions doctor holds: its labels are not checked", s.Version, Oldest)
	}
	names := make([]string, 0, len(fams))
	for n := range fams {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		f, d := fams[name], DefOf(name)
		if d == nil {
			continue
		}
		if why := mismatch(f, d, s.Version); why != "" {
			s.Mismatches = append(s.Mismatches, why)
			continue
		}
		for _, m := range f.GetMetric() {
			s.Samples = append(s.Samples, sample(name, f.GetType(), m, runners))
		}
	}
}

// mismatch says how a family differs from its definition at version v.
func mismatch(f *dto.MetricFamily, d *Def, v string) string {
	if f.GetType() != d.Type {
		return fmt.Sprintf("%s is a %s, gitlab-runner defines a %s", d.Name, typeName(f.GetType()), typeName(d.Type))
	}
	want, exists, known := d.LabelsAt(v)
	if !known {
		return ""
	}
	if !exists {
		return fmt.Sprintf("%s is served, but gitlab-runner %s does not define it", d.Name, v)
	}
	for _, m := range f.GetMetric() {
		var got []string
		for _, lp := range m.GetLabel() {
			got = append(got, lp.GetName())
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			return fmt.Sprintf("%s has labels {%s}, gitlab-runner %s defines {%s}", d.Name, strings.Join(got, ","), v, strings.Join(want, ","))
		}
	}
	return ""
}

func typeName(t dto.MetricType) string { return strings.ToLower(t.String()) }

// sample keeps a series: its value, its labels but runner and system_id,
// and the runner entry they name.
func sample(name string, t dto.MetricType, m *dto.Metric, runners []runner) Sample {
	s := Sample{Name: name, Labels: map[string]string{}}
	switch t {
	case dto.MetricType_COUNTER:
		s.Value = m.GetCounter().GetValue()
	case dto.MetricType_GAUGE:
		s.Value = m.GetGauge().GetValue()
	}
	var short, runnerName string
	hasRunner := false
	for _, lp := range m.GetLabel() {
		switch lp.GetName() {
		case "runner":
			short, hasRunner = lp.GetValue(), true
		case "system_id":
		default:
			if lp.GetName() == "runner_name" {
				runnerName = lp.GetValue()
			}
			s.Labels[lp.GetName()] = lp.GetValue()
		}
	}
	if !hasRunner {
		return s
	}
	s.Runner = match(runners, short, runnerName)
	s.Stranger = s.Runner == nil
	return s
}

// match is the entry whose token shortens to short (and whose name is
// runnerName, when the series has one): two runners of one token are
// told apart by name.
func match(runners []runner, short, runnerName string) *checks.RunnerRef {
	var found []checks.RunnerRef
	for _, r := range runners {
		if slices.Contains(r.shorts, short) && (runnerName == "" || runnerName == r.ref.Name) {
			found = append(found, r.ref)
		}
	}
	if len(found) == 0 {
		return nil
	}
	return &found[0]
}

// describe says a deadline in words.
func describe(err error, d time.Duration) error {
	if hostio.IsTimeout(err) {
		return fmt.Errorf("no answer within %s", d.Round(time.Millisecond))
	}
	var ue interface{ Unwrap() error }
	if errors.As(err, &ue) && strings.HasPrefix(err.Error(), "Get ") {
		if inner := errors.Unwrap(err); inner != nil {
			return inner
		}
	}
	return err
}
