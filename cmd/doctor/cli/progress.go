package cli

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/jedib0t/go-pretty/v6/progress"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/internal/text/safetext"
)

// slowAfter is when a running check is named in the progress line: most
// end in milliseconds, and one that does not is what the operator waits on.
const slowAfter = 750 * time.Millisecond

// liveProgress is doctor run's progress on a terminal's stderr: one line
// with checks pending, running and done, naming the slow ones, drawn by
// go-pretty's progress writer. It is never used when stderr is not a TTY.
type liveProgress struct {
	pw      progress.Writer
	out     *trackingWriter
	tracker *progress.Tracker
	done    chan struct{}

	mu      sync.Mutex
	pending int
	ended   int
	running map[string]time.Time // "check" or "check #2" -> started
	stop    chan struct{}
}

func startProgress(w io.Writer, width int) *liveProgress {
	pw := progress.NewWriter()
	tw := &trackingWriter{w: w}
	pw.SetOutputWriter(tw)
	pw.SetAutoStop(false)
	pw.SetUpdateFrequency(100 * time.Millisecond)
	// The line must stay shorter than the terminal: a wrapped line would
	// defeat the cursor moves that redraw it.
	pw.SetTrackerLength(12)
	pw.SetMessageLength(max(20, width-24))
	pw.SetStyle(progress.StyleDefault)
	pw.Style().Visibility.ETA = false
	pw.Style().Visibility.Percentage = false
	pw.Style().Visibility.Value = false
	pw.Style().Visibility.Time = false
	pw.Style().Options.DoneString = "done"
	lp := &liveProgress{pw: pw, out: tw, running: map[string]time.Time{}, done: make(chan struct{}), stop: make(chan struct{}),
		tracker: &progress.Tracker{Message: "checks", Total: 1, Units: progress.UnitsDefault}}
	pw.AppendTracker(lp.tracker)
	go func() { defer close(lp.done); pw.Render() }()
	go lp.tick()
	return lp
}

// hear is the engine's Options.Progress.
func (lp *liveProgress) hear(e checks.ProgressEvent) {
	name := e.Check
	if e.Runner != nil {
		name += fmt.Sprintf(" #%d", e.Runner.Index)
	}
	lp.mu.Lock()
	switch e.Step {
	case checks.Scheduled:
		lp.pending++
	case checks.Started:
		lp.pending--
		lp.running[name] = time.Now()
	case checks.Ended:
		if _, ok := lp.running[name]; ok {
			delete(lp.running, name)
		} else {
			lp.pending-- // ended without starting: skipped
		}
		lp.ended++
	}
	lp.mu.Unlock()
	lp.update()
}

func (lp *liveProgress) update() {
	lp.mu.Lock()
	defer lp.mu.Unlock()
	total := int64(lp.pending + len(lp.running) + lp.ended)
	var slow []string
	for n, t0 := range lp.running {
		if d := time.Since(t0); d >= slowAfter {
			slow = append(slow, fmt.Sprintf("%s (%s)", n, d.Round(100*time.Millisecond)))
		}
	}
	sort.Strings(slow)
	msg := fmt.Sprintf("checks: %d pending, %d running, %d done", lp.pending, len(lp.running), lp.ended)
	if len(slow) > 0 {
		msg += "; slow: " + strings.Join(slow, ", ")
	}
	lp.tracker.UpdateTotal(max(total, 1))
	lp.tracker.SetValue(int64(lp.ended))
	lp.tracker.UpdateMessage(safetext.Line(msg))
}

// tick redraws the slow checks' times between events.
func (lp *liveProgress) tick() {
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-lp.stop:
			return
		case <-t.C:
			lp.update()
		}
	}
}

// finish stops the progress line and erases it, before the report is
// printed: the report is what stays on the screen.
func (lp *liveProgress) finish() {
	close(lp.stop)
	lp.update()
	lp.tracker.MarkAsDone()
	lp.pw.Stop() // the writer draws the last state before it returns
	<-lp.done
	lp.out.erase()
}

// trackingWriter is the progress writer's terminal, remembering whether a
// line is on it and whether the cursor is past its end, so that it can be
// erased.
type trackingWriter struct {
	w       io.Writer
	wrote   bool
	newline bool // the last byte written was a newline
}

func (t *trackingWriter) Write(p []byte) (int, error) {
	if len(p) > 0 {
		t.wrote, t.newline = true, p[len(p)-1] == '\n'
	}
	return t.w.Write(p)
}

// erase clears the progress line: the line above the cursor when the last
// drawing ended with a newline (cursor up, ECMA-48 CUU), else the cursor's
// own line (carriage return); then erase line (EL 2).
func (t *trackingWriter) erase() {
	switch {
	case !t.wrote:
	case t.newline:
		io.WriteString(t.w, "\x1b[1A\r\x1b[2K")
	default:
		io.WriteString(t.w, "\r\x1b[2K")
	}
}
