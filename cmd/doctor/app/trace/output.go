package trace

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/socialwebcomputer/doctor/internal/text/safetext"
	"github.com/socialwebcomputer/doctor/internal/text/wrap"
)

// Output is where a trace prints. On a terminal (TTY) it is a live view:
// one line per stage, and a last line, rewritten every second, for the
// stage it waits for. Anywhere else it is JSON lines, one object per line:
//
//	{"event":"start","at":…,"namespace":…,"pod":…,"next":…,"nodes":N,"pollTimeoutMs":…}
//	{"event":"stage","stage":"node-ready","n":4,"at":…,"sincePrevMs":…,"detail":…[,"skipped":true|"inferred":true]}
//	{"event":"over-budget","stage":…,"n":…,"at":…,"waitedMs":…,"budgetMs":…,"detail":…,"checks":[…]}
//	{"event":"explain","stage":…,"n":…,"at":…,"checks":[…],"lines":[…]}
//	{"event":"note","at":…,"detail":…}
//	{"event":"verdict","at":…,"verdict":"completed"|"stuck","stage":…,"n":…,"reason":…,"detail":…,
//	 "waitedMs":…,"pod":…,"phase":…,"durationMs":…,"exitCode":0|2,"timeline":[{stage lines}]}
type Output struct {
	W    io.Writer
	TTY  bool
	UTF8 bool // √ ‼ × … glyphs; ASCII otherwise
	// Width is the terminal's, in columns: the live view wraps a line
	// longer than it at a space (0 does not wrap).
	Width int
}

// OutputFor is the output for w: the live view when w is a terminal, and
// UTF-8 glyphs when the locale (LC_ALL, LC_CTYPE, LANG, as getenv reads
// them) says UTF-8.
func OutputFor(w io.Writer, getenv func(string) string) Output {
	o := Output{W: w}
	if f, ok := w.(*os.File); ok {
		o.TTY = term.IsTerminal(int(f.Fd()))
	}
	if getenv == nil {
		getenv = os.Getenv
	}
	for _, k := range []string{"LC_ALL", "LC_CTYPE", "LANG"} {
		if v := getenv(k); v != "" {
			v = strings.ToLower(v)
			o.UTF8 = strings.Contains(v, "utf-8") || strings.Contains(v, "utf8")
			break
		}
	}
	return o
}

type renderer interface {
	render(Record)
	// waiting redraws the live line of the stage waited for (TTY only).
	waiting(now time.Time, m *machine)
}

func newRenderer(o Output) renderer {
	if o.TTY {
		g := asciiGlyphs
		if o.UTF8 {
			g = utf8Glyphs
		}
		return &ttyRenderer{w: o.W, g: g, width: o.Width}
	}
	return &jsonRenderer{w: o.W}
}

func renderAll(r renderer, recs []Record) {
	for _, rec := range recs {
		r.render(rec)
	}
}

// --- JSON lines ---

type jsonRenderer struct {
	mu sync.Mutex
	w  io.Writer
}

func (j *jsonRenderer) waiting(time.Time, *machine) {}

type jsonStep struct {
	Event       string    `json:"event,omitempty"`
	Stage       Stage     `json:"stage"`
	N           int       `json:"n"`
	At          time.Time `json:"at"`
	SincePrevMs int64     `json:"sincePrevMs"`
	Detail      string    `json:"detail"`
	Skipped     bool      `json:"skipped,omitempty"`
	Inferred    bool      `json:"inferred,omitempty"`
}

func stepJSON(event string, s Step) jsonStep {
	return jsonStep{Event: event, Stage: s.Stage, N: int(s.Stage), At: s.At.UTC(), SincePrevMs: s.SincePrev.Milliseconds(),
		Detail: s.Detail, Skipped: s.Skipped, Inferred: s.Inferred}
}

func (j *jsonRenderer) render(r Record) {
	var v any
	at := r.At.UTC()
	switch r.Kind {
	case KindStart:
		v = struct {
			Event         string    `json:"event"`
			At            time.Time `json:"at"`
			Namespace     string    `json:"namespace"`
			Pod           string    `json:"pod,omitempty"`
			Next          bool      `json:"next"`
			Nodes         int       `json:"nodes"`
			PollTimeoutMs int64     `json:"pollTimeoutMs"`
		}{"start", at, r.Start.Namespace, r.Start.Pod, r.Start.Next, r.Start.Nodes, r.Start.Poll.Milliseconds()}
	case KindStage:
		v = stepJSON("stage", r.Step)
	case KindOverBudget:
		v = struct {
			Event    string    `json:"event"`
			Stage    Stage     `json:"stage"`
			N        int       `json:"n"`
			At       time.Time `json:"at"`
			WaitedMs int64     `json:"waitedMs"`
			BudgetMs int64     `json:"budgetMs"`
			Detail   string    `json:"detail"`
			Checks   []string  `json:"checks"`
		}{"over-budget", r.Stage, int(r.Stage), at, r.Waited.Milliseconds(), r.Budget.Milliseconds(), r.Detail, nonNil(r.Checks)}
	case KindExplain:
		v = struct {
			Event  string    `json:"event"`
			Stage  Stage     `json:"stage"`
			N      int       `json:"n"`
			At     time.Time `json:"at"`
			Checks []string  `json:"checks"`
			Lines  []string  `json:"lines"`
		}{"explain", r.Stage, int(r.Stage), at, nonNil(r.Checks), nonNil(r.Explain)}
	case KindNote:
		v = struct {
			Event  string    `json:"event"`
			At     time.Time `json:"at"`
			Detail string    `json:"detail"`
		}{"note", at, r.Detail}
	case KindVerdict:
		vd := r.Verdict
		tl := make([]jsonStep, len(vd.Timeline))
		for i, s := range vd.Timeline {
			tl[i] = stepJSON("", s)
		}
		out := struct {
			Event      string     `json:"event"`
			At         time.Time  `json:"at"`
			Verdict    string     `json:"verdict"`
			Stage      *Stage     `json:"stage,omitempty"`
			N          int        `json:"n,omitempty"`
			Reason     string     `json:"reason,omitempty"`
			Detail     string     `json:"detail,omitempty"`
			WaitedMs   int64      `json:"waitedMs,omitempty"`
			Pod        string     `json:"pod"`
			Phase      string     `json:"phase,omitempty"`
			DurationMs int64      `json:"durationMs"`
			ExitCode   int        `json:"exitCode"`
			Timeline   []jsonStep `json:"timeline"`
		}{Event: "verdict", At: vd.At.UTC(), Verdict: "completed", Pod: vd.Pod, Phase: string(vd.Phase),
			DurationMs: vd.Duration.Milliseconds(), ExitCode: vd.ExitCode(), Timeline: tl}
		if !vd.Completed {
			s := vd.Stuck
			out.Verdict, out.Stage, out.N, out.Reason, out.Detail, out.WaitedMs = "stuck", &s, int(s), vd.Reason, vd.Detail, vd.Waited.Milliseconds()
		}
		v = out
	default:
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	// Pod names, messages and details are the cluster's: written with the
	// characters encoding/json leaves raw escaped too.
	_, _ = j.w.Write(append(safetext.JSON(b), '\n'))
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// --- the live view ---

type glyphs struct{ ok, skipped, inferred, over, waiting, stuck, bar string }

var (
	utf8Glyphs  = glyphs{ok: "√", skipped: "–", inferred: "≈", over: "‼", waiting: "…", stuck: "×", bar: "│"}
	asciiGlyphs = glyphs{ok: "ok", skipped: "-", inferred: "~", over: "!!", waiting: "..", stuck: "x", bar: "|"}
)

type ttyRenderer struct {
	mu    sync.Mutex
	w     io.Writer
	g     glyphs
	width int
	live  bool // the waiting line is on screen, without its newline
}

// hang is the indent of a wrapped line's continuation: under the stage's
// name, past the clock and glyph.
const hang = "               "

// clearLine is carriage return and erase line (ECMA-48 EL 2).
const clearLine = "\r\x1b[2K"

// line prints one line of the live view. Its text (a pod's name, an
// event's message, a check's finding) is the cluster's: every character a
// terminal would obey is shown escaped, so the renderer's own clearLine
// and newline are the only controls written.
func (t *ttyRenderer) line(format string, args ...any) {
	t.lineUnder(hang, format, args...)
}

// lineUnder is line with the continuation indented by rest.
func (t *ttyRenderer) lineUnder(rest, format string, args ...any) {
	if t.live {
		io.WriteString(t.w, clearLine)
		t.live = false
	}
	for _, l := range wrap.Hang(safetext.Line(fmt.Sprintf(format, args...)), t.width, rest) {
		io.WriteString(t.w, l+"\n")
	}
}

func (t *ttyRenderer) render(r Record) {
	t.mu.Lock()
	defer t.mu.Unlock()
	clock := r.At.Local().Format("15:04:05")
	switch r.Kind {
	case KindStart:
		s := r.Start
		what := "pod " + s.Namespace + "/" + s.Pod
		if s.Next {
			what = "the next job pod in " + s.Namespace
		}
		nodes := fmt.Sprintf("%d nodes", s.Nodes)
		if s.Nodes == 1 {
			nodes = "1 node"
		}
		t.lineUnder("  ", "doctor trace: following %s; %s now; poll_timeout %s. Ctrl-C stops and names the stage it is in.", what, nodes, s.Poll)
		// Two clocks: machine.go's reach calls take an object's or an
		// event's timestamp where one exists, and now otherwise.
		t.lineUnder("  ", "Each stage's time and its +time since the previous stage come from the cluster's timestamps (objects and events) where there is one, and from this host's clock otherwise (finished, scaled down, budgets, the verdict): the two differ by the clock skew between them.")
	case KindStage:
		g := t.g.ok
		switch {
		case r.Skipped:
			g = t.g.skipped
		case r.Inferred:
			g = t.g.inferred
		}
		t.line("%s  %-2s %2d %-15s %9s  %s", clock, g, int(r.Stage), r.Stage, "+"+round(r.SincePrev).String(), r.Detail)
	case KindOverBudget:
		t.line("%s  %-2s %2d %-15s waited %s, over its budget of %s: %s", clock, t.g.over, int(r.Stage), r.Stage, round(r.Waited), round(r.Budget), r.Detail)
		if len(r.Checks) > 0 {
			t.line("%12s %s checks that explain it: %s", "", t.g.bar, strings.Join(r.Checks, ", "))
		}
	case KindExplain:
		for _, l := range r.Explain {
			for _, sub := range strings.Split(l, "\n") {
				t.line("%12s %s %s", "", t.g.bar, sub)
			}
		}
	case KindNote:
		t.line("%s  %-2s %s", clock, "", r.Detail)
	case KindVerdict:
		v := r.Verdict
		if v.Completed {
			t.line("%s  %-2s completed in %s: pod %s %s; the cluster is back at its nodes", clock, t.g.ok, round(v.Duration), v.Pod, v.Phase)
			return
		}
		t.line("%s  %-2s stuck in %d %s after %s: %s", clock, t.g.stuck, int(v.Stuck), v.Stuck, round(v.Waited), v.Reason)
		if v.Detail != "" {
			t.line("%12s %s %s", "", t.g.bar, v.Detail)
		}
		var parts []string
		for _, s := range v.Timeline {
			parts = append(parts, fmt.Sprintf("%s +%s", s.Stage, round(s.SincePrev)))
		}
		if len(parts) == 0 {
			parts = []string{"no stage reached"}
		}
		t.line("%12s %s timeline so far: %s", "", t.g.bar, strings.Join(parts, ", "))
	}
}

func (t *ttyRenderer) waiting(now time.Time, m *machine) {
	if m.end != nil || m.cur > NumStages {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	budget := ""
	if dl, b, _, ok := m.deadline(); ok {
		budget = " of " + round(b).String()
		if now.After(dl) {
			budget += ", over"
		}
	}
	// Short enough for any terminal: a wrapped line cannot be rewritten.
	io.WriteString(t.w, clearLine+safetext.Line(fmt.Sprintf("%s  %-2s %2d %-15s waiting %s%s", now.Local().Format("15:04:05"), t.g.waiting,
		int(m.cur), m.cur, now.Sub(m.curSince).Truncate(time.Second), budget)))
	t.live = true
}
