package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/testkit/cmdtest"
	"github.com/socialwebcomputer/doctor/testkit/testenv"
)

// Crafted bundles: what anyone can write by hand into a bundle's tape, which
// no doctor run records (issue 29 measured analyze of the first three at
// 160 to 210 MiB). analyze of each either refuses the bundle, saying which
// bound it is over, or reads it; either way within its deadline and under
// 150 MiB of peak RSS (getrusage of the child, started from a small
// process: testkit/testenv/peakrss).
//
//   - one very long message: a 60,000,000-byte event message, a 70 KB
//     bundle (tape.json past its bound), and one of 14,000,000 bytes within
//     it (a string past keep.MaxString);
//   - 300,000 events: 300 pages of 1,000 Warning events chained by their
//     continue tokens (tape.json past its bound), and 60 pages within it
//     (past keep.MaxEvents);
//   - 10,000 conditions: pods of 10,000 conditions each, as many as
//     tape.json holds (within every bound: read);
//   - empty pods: pages of 1,000 empty pods chained to the tape's bound,
//     each 2 bytes of JSON and a corev1.Pod of 1,240 bytes decoded (past the
//     decoded bound), and 40 pages of them, just within it: the most memory
//     a bundle analyze reads makes it hold.
func TestCraftedBundlesAreBoundedInMemory(t *testing.T) {
	bin := cmdtest.BuildDoctor(t)
	peak := peakRSSBin(t)
	base := baseBundle(t, bin)
	for _, c := range []struct {
		name    string
		craft   func(t *testing.T, answers map[string][]*hostio.HTTPRecord)
		refused string // what stderr says; "" when analyze reads it
	}{
		{"one very long message, 60 MB", func(t *testing.T, a map[string][]*hostio.HTTPRecord) { craftLongMessage(t, a, 60_000_000) }, "tape.json is"},
		{"one long message, 14 MB", func(t *testing.T, a map[string][]*hostio.HTTPRecord) { craftLongMessage(t, a, 14_000_000) }, "a string of more than 65536 bytes"},
		{"300,000 events", func(t *testing.T, a map[string][]*hostio.HTTPRecord) { craftEvents(t, a, 300) }, "tape.json is"},
		{"60,000 events", func(t *testing.T, a map[string][]*hostio.HTTPRecord) { craftEvents(t, a, 60) }, "more than 50000 events"},
		{"10,000 conditions", craftConditions, ""},
		{"empty pods to the tape's bound", func(t *testing.T, a map[string][]*hostio.HTTPRecord) { craftEmptyPods(t, a, 0) }, "more than 48 MiB decoded"},
		{"empty pods to the decoded bound", func(t *testing.T, a map[string][]*hostio.HTTPRecord) { craftEmptyPods(t, a, 40) }, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			crafted := craftBundle(t, base, c.craft)
			if keep := os.Getenv("DOCTOR_KEEP_BUNDLES"); keep != "" {
				b, _ := os.ReadFile(crafted)
				_ = os.WriteFile(filepath.Join(keep, strings.ReplaceAll(t.Name(), "/", "_")+".tar.gz"), b, 0o600)
			}
			out, errs, code, rss, took := runMeasured(t, peak, bin, "analyze", crafted, "-o", "json", "--timeout", hostileTimeout.String())
			t.Logf("%s: exit %d in %s, peak RSS %.1f MiB; stderr %.300s", c.name, code, took.Round(time.Millisecond), float64(rss)/(1<<20), errs)
			if rss > hostileMaxRSS {
				t.Errorf("peak RSS %d MiB, want under %d MiB", rss>>20, hostileMaxRSS>>20)
			}
			if limit := hostileTimeout + hostileTimeout/10; took > limit {
				t.Errorf("took %s, want within --timeout %s + 10%%", took, hostileTimeout)
			}
			switch {
			case c.refused != "" && (code != 3 || !strings.Contains(errs, c.refused)):
				t.Errorf("exit %d, stderr %q: want the bundle refused (exit 3) saying %q", code, errs, c.refused)
			case c.refused == "" && code == 3:
				t.Errorf("refused: %s", errs)
			case code == 0:
				t.Errorf("exit 0 on a crafted bundle: %.500s", out)
			}
		})
	}
}

// peakRSSBin is testkit/testenv/peakrss, built once for the test
// binary, which runs a command and writes its peak RSS: started from that
// small process, the child's getrusage figure is its own, not this test's
// (which may hold crafted bundles, a 100 MB log) carried over the exec.
func peakRSSBin(t *testing.T) string {
	t.Helper()
	peakRSS.once.Do(func() {
		dir, err := os.MkdirTemp("", "peakrss")
		if err != nil {
			peakRSS.err = err
			return
		}
		peakRSS.path = filepath.Join(dir, "peakrss")
		if out, err := exec.Command("go", "build", "-o", peakRSS.path, "github.com/socialwebcomputer/doctor/testkit/testenv/peakrss").CombinedOutput(); err != nil {
			peakRSS.err = fmt.Errorf("go build peakrss: %v\n%s", err, out)
		}
	})
	if peakRSS.err != nil {
		t.Fatal(peakRSS.err)
	}
	return peakRSS.path
}

var peakRSS struct {
	once sync.Once
	path string
	err  error
}

// runMeasured runs bin with args under peakrss: its output, exit code,
// peak RSS and wall time.
func runMeasured(t *testing.T, peak, bin string, args ...string) (stdout, stderr string, code int, rss int64, took time.Duration) {
	t.Helper()
	rssFile := filepath.Join(t.TempDir(), "rss")
	cmd := exec.Command(peak, append([]string{bin}, args...)...)
	cmd.Env = append(os.Environ(), "DOCTOR_LOOPBACK_ONLY=1", "KUBECONFIG=", "CI_REPOSITORY_URL=", "PEAKRSS_OUT="+rssFile)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killer := time.AfterFunc(4*hostileTimeout, func() { _ = cmd.Process.Kill() })
	_ = cmd.Wait()
	killer.Stop()
	took = time.Since(start)
	b, err := os.ReadFile(rssFile)
	cmdtest.NoErr(t, err)
	kib, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	cmdtest.NoErr(t, err)
	return out.String(), errb.String(), cmd.ProcessState.ExitCode(), kib << 10, took
}

// baseBundle is a bundle of a run against a front that answers every list
// with one empty object: its tape holds an answer for every list a run
// asks, which the crafts replace.
func baseBundle(t *testing.T, bin string) string {
	t.Helper()
	conf, ca := hostileTLS(t)
	addr := testenv.HostileHTTP{TLS: conf, Honest: testenv.ObjectFlood{Items: 1}.Answer}.Serve(t)
	p := filepath.Join(t.TempDir(), "base.tar.gz")
	args := append([]string{"run", "--root", guideRoot(t, "https://"+addr, ca), "-o", "json", "--bundle", p}, quietDNS(t)...)
	if _, errs, code, _, _ := runMeasured(t, peakRSSBin(t), bin, args...); code == 3 {
		t.Fatalf("doctor run: exit 3: %s", errs)
	}
	return p
}

// craftBundle is the bundle at p with its API answers changed by craft.
func craftBundle(t *testing.T, p string, craft func(*testing.T, map[string][]*hostio.HTTPRecord)) string {
	t.Helper()
	raw, err := os.ReadFile(p)
	cmdtest.NoErr(t, err)
	var tape map[string]json.RawMessage
	for name, b := range bundleContents(t, p) {
		if strings.HasSuffix(name, "/tape.json") {
			cmdtest.NoErr(t, json.Unmarshal([]byte(b), &tape))
		}
	}
	var answers map[string][]*hostio.HTTPRecord
	cmdtest.NoErr(t, json.Unmarshal(tape["http"], &answers))
	craft(t, answers)
	tape["http"], err = json.Marshal(answers)
	cmdtest.NoErr(t, err)
	tj, err := json.Marshal(tape)
	cmdtest.NoErr(t, err)
	out := withTape(t, raw, tj)
	crafted := filepath.Join(t.TempDir(), "crafted.tar.gz")
	cmdtest.NoErr(t, os.WriteFile(crafted, out, 0o600))
	t.Logf("the crafted bundle is %d KB (tape.json %d MB)", len(out)>>10, len(tj)>>20)
	return crafted
}

// listKey is the recorded key of a list of resource in pages of 1,000
// (cluster.PageSize), the first in order, and its URL.
func listKey(t *testing.T, answers map[string][]*hostio.HTTPRecord, resource string) (string, *url.URL) {
	t.Helper()
	keys := slices.Sorted(maps.Keys(answers))
	for _, key := range keys {
		for _, f := range strings.Fields(key) {
			u, err := url.Parse(f)
			if err == nil && u.Host != "" && path.Base(u.Path) == resource && u.Query().Get("continue") == "" && u.Query().Get("limit") == "1000" {
				return key, u
			}
		}
	}
	t.Fatalf("the bundle recorded no list of %s in pages of 1000", resource)
	return "", nil
}

func event(i int, message string) string {
	return fmt.Sprintf(`{"metadata":{"name":"e%d","namespace":"gitlab-runner","creationTimestamp":"2026-11-29T11:00:00Z"},`+
		`"involvedObject":{"kind":"Pod","name":"runner-abc-project-1-concurrent-%d","namespace":"gitlab-runner"},`+
		`"reason":"FailedScheduling","message":%q,"type":"Warning","lastTimestamp":"2026-11-29T11:00:00Z"}`, i, i, message)
}

func craftLongMessage(t *testing.T, answers map[string][]*hostio.HTTPRecord, n int) {
	key, _ := listKey(t, answers, "events")
	body := `{"kind":"EventList","apiVersion":"v1","metadata":{},"items":[` + event(0, strings.Repeat("x", n)) + `]}`
	answers[key] = []*hostio.HTTPRecord{{Status: 200, Header: jsonHeader, Body: body}}
}

var jsonHeader = map[string][]string{"Content-Type": {"application/json"}}

func craftEvents(t *testing.T, answers map[string][]*hostio.HTTPRecord, pages int) {
	key, u := listKey(t, answers, "events")
	const per = 1000
	for p := range pages {
		var b strings.Builder
		next := ""
		if p < pages-1 {
			next = fmt.Sprintf("page-%d", p+1)
		}
		fmt.Fprintf(&b, `{"kind":"EventList","apiVersion":"v1","metadata":{"continue":%q},"items":[`, next)
		for i := range per {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"metadata":{"name":"e%d"},"involvedObject":{"name":"runner-x-project-1-concurrent-%d","namespace":"gitlab-runner"},"reason":"Evicted","message":"m"}`, p*per+i, i)
		}
		b.WriteString("]}")
		answers[pageKey(key, u, p)] = []*hostio.HTTPRecord{{Status: 200, Header: jsonHeader, Body: b.String()}}
	}
}

// pageKey is the key of page p of the list recorded under key: its URL
// with the continue token of the page before.
func pageKey(key string, u *url.URL, p int) string {
	if p == 0 {
		return key
	}
	q := u.Query()
	q.Set("continue", fmt.Sprintf("page-%d", p))
	v := *u
	v.RawQuery = q.Encode()
	return strings.Replace(key, u.String(), v.String(), 1)
}

// craftEmptyPods chains pages of 1,000 empty pods: n pages, or 0 for as
// many as 14 MiB of tape.json holds.
func craftEmptyPods(t *testing.T, answers map[string][]*hostio.HTTPRecord, pages int) {
	key, u := listKey(t, answers, "pods")
	items := strings.TrimSuffix(strings.Repeat("{},", 1000), ",")
	if pages == 0 {
		pages = (14 << 20) / len(items)
	}
	for p := range pages {
		next := ""
		if p < pages-1 {
			next = fmt.Sprintf("page-%d", p+1)
		}
		body := fmt.Sprintf(`{"kind":"PodList","apiVersion":"v1","metadata":{"continue":%q},"items":[%s]}`, next, items)
		answers[pageKey(key, u, p)] = []*hostio.HTTPRecord{{Status: 200, Header: jsonHeader, Body: body}}
	}
}

func craftConditions(t *testing.T, answers map[string][]*hostio.HTTPRecord) {
	key, _ := listKey(t, answers, "pods")
	var b strings.Builder
	b.WriteString(`{"kind":"PodList","apiVersion":"v1","metadata":{},"items":[`)
	for p := range 10 {
		if p > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"metadata":{"name":"runner-abc-project-1-concurrent-%d","namespace":"gitlab-runner"},"status":{"phase":"Pending","conditions":[`, p)
		for i := range 10_000 {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"type":"DisruptionTarget","status":"True","message":"m%d"}`, i)
		}
		b.WriteString(`]}}`)
	}
	b.WriteString("]}")
	answers[key] = []*hostio.HTTPRecord{{Status: 200, Header: jsonHeader, Body: b.String()}}
}
