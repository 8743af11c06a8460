package keep

import (
	"fmt"
	"sync/atomic"
)

// The bounds on the work an answer makes, checked while it is cut, before
// client-go decodes a byte of it. The byte bounds (kubefacts.MaxResponseBytes
// and the rest) do not bound this: an empty object is two bytes of
// protobuf and a corev1.Pod of 1,240 bytes once decoded, so a 16 MiB
// answer of "{}" items is billions of bytes of structs.
const (
	// MaxRepeated bounds the elements of any one repeated field that is
	// kept (a pod's containers, a node's conditions, a rules review's
	// rules), and the items of a list asked for with no limit. What a
	// real object holds is a few dozen at most.
	MaxRepeated = 10_000
	// MaxRunDecoded bounds what the kept objects of every answer of the
	// run take once decoded: each kept struct by its Go size, each string
	// by its length, each slice slot and map entry by theirs. The lists
	// hold their objects for the whole run, so this is the bound on the
	// run's API memory. What a run lists of a cluster of 60,000 pods
	// (6,000 of them in kube-system, 2,000 nodes) decodes to 22 MiB
	// (TestDecodedBudgetHoldsALargeCluster). A trace's watch events count
	// too: it ends at the bound, as at the byte bounds. It was 64 MiB until
	// issue 29: analyze holds a bundle's tape beside what it decodes, and
	// a crafted tape of empty objects decoded to that bound took analyze
	// past 150 MiB.
	MaxRunDecoded = 48 << 20
	// MaxString bounds one kept string: a name, a message, a quantity, a
	// certificate. An apiserver's are far shorter (an event's message is at
	// most 1 KiB, a termination message 4 KiB, a certificate a few); a
	// longer one is a hostile answer, or a bundle no doctor wrote.
	MaxString = 64 << 10
	// MaxEvents bounds the events of the run's lists: a namespace's Warning
	// events are at most a few thousand on a busy cluster; each is decoded
	// and sorted by checks, so this bounds their work as much as memory.
	MaxEvents = 50_000
	// MaxConditions bounds the conditions of every object the run reads
	// (a pod's, a node's, a CSR's, a VM's: a few each), together: 2,000
	// nodes and 10,000 pods hold about 70,000.
	MaxConditions = 100_000
)

// budget names a count a run keeps of the elements of some fields.
type budget int8

const (
	noBudget budget = iota
	eventsBudget
	conditionsBudget
	numBudgets
)

// budgetLimits and budgetNames are each budget's bound and its words.
var (
	budgetLimits = [numBudgets]int64{0, MaxEvents, MaxConditions}
	budgetNames  = [numBudgets]string{"", "events", "conditions"}
)

// Run is the budget of one run: every answer's decoded objects count
// against it. The process has one (run); tests make their own.
type Run struct {
	decoded atomic.Int64
	counts  [numBudgets]atomic.Int64 // events, conditions
	spent   atomic.Bool              // the bound was met: what meets it again fails too
}

// Decoded is what the run's answers have decoded to so far.
func (r *Run) Decoded() int64 { return r.decoded.Load() }

// process is the budget of this process's run, shared by every client.
var process Run

// Spent says the process's budget was met: a watch that goes on would
// meet it again with every event (trace ends instead of retrying).
func Spent() bool { return process.spent.Load() }

// ErrTooMuch is an answer past one of the bounds on work. The checks that
// needed it are unknown, as with a body past the byte bounds.
type ErrTooMuch struct {
	URL   string
	What  string // "items", "elements of spec.containers", "decoded"
	Limit int64
}

func (e *ErrTooMuch) Error() string {
	switch e.What {
	case "events", "conditions":
		return fmt.Sprintf("%s: the objects of this run's API answers hold more than %d %s; doctor stopped reading", e.URL, e.Limit, e.What)
	case "string":
		return fmt.Sprintf("%s: the answer holds a string of more than %d bytes; doctor stopped reading (a broken or hostile server)", e.URL, e.Limit)
	case "items":
		return fmt.Sprintf("%s: the answer lists more than the %d items asked for (limit=%d); doctor stopped reading (a broken or hostile server)", e.URL, e.Limit, e.Limit)
	case "decoded":
		return fmt.Sprintf("%s: the objects of this run's API answers would take more than %d MiB decoded; doctor stopped reading", e.URL, e.Limit>>20)
	}
	return fmt.Sprintf("%s: the answer holds more than %d %s; doctor stopped reading (a broken or hostile server)", e.URL, e.Limit, e.What)
}

// ErrNotRead is an answer of a kind doctor does not read: nothing of it is
// kept (a server that answers a metadata-only read with the whole Secret).
type ErrNotRead struct {
	URL              string
	APIVersion, Kind string
}

func (e *ErrNotRead) Error() string {
	if e.Kind == "" {
		return fmt.Sprintf("%s: the answer names no kind; doctor keeps nothing of it", e.URL)
	}
	return fmt.Sprintf("%s: the answer is a %s %s, which doctor does not read; it keeps nothing of it", e.URL, shown(e.APIVersion), shown(e.Kind))
}

// shown is a server's word as an error quotes it: cut, and quoted when it
// is not a plain word, so no control character or line of its own passes.
func shown(s string) string {
	if len(s) > 64 {
		s = s[:64] + "…"
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '/' || r == '-') {
			return fmt.Sprintf("%q", s)
		}
	}
	return s
}

// ErrMalformed is an answer that does not parse as its encoding says.
type ErrMalformed struct {
	URL, Encoding, Why string
}

func (e *ErrMalformed) Error() string {
	return fmt.Sprintf("%s: the answer is not valid %s (%s)", e.URL, e.Encoding, e.Why)
}

// meter counts one answer's work against its bounds.
type meter struct {
	req     *Request
	run     *Run
	decoded int64 // this answer's, added to the run's as it grows
	counted [numBudgets]int64
}

func newMeter(req *Request) *meter {
	run := req.Run
	if run == nil {
		run = &process
	}
	return &meter{req: req, run: run}
}

// add counts n bytes of decoded objects.
func (m *meter) add(n int64) error {
	if n <= 0 {
		return nil
	}
	m.decoded += n
	if m.run.decoded.Add(n) > MaxRunDecoded {
		m.run.spent.Store(true)
		return &ErrTooMuch{URL: m.req.URL, What: "decoded", Limit: MaxRunDecoded}
	}
	return nil
}

// release gives back what a failed answer counted: it is not decoded.
func (m *meter) release() {
	m.run.decoded.Add(-m.decoded)
	m.decoded = 0
	for b := range m.counted {
		m.run.counts[b].Add(-m.counted[b])
		m.counted[b] = 0
	}
}

// str checks the length of one kept string.
func (m *meter) str(n int) error {
	if n > MaxString {
		return &ErrTooMuch{URL: m.req.URL, What: "string", Limit: MaxString}
	}
	return nil
}

// elements checks the count of one repeated field's elements.
func (m *meter) elements(f *field, n int) error {
	limit := int64(MaxRepeated)
	what := "elements of " + f.json
	switch {
	case f.items && m.req.Limit > 0:
		what, limit = "items", m.req.Limit
	case f.items:
		what = "list items"
	}
	if int64(n) > limit {
		return &ErrTooMuch{URL: m.req.URL, What: what, Limit: limit}
	}
	if b := f.budget; b != noBudget {
		// One more element of a field the run counts (elements is called
		// once per element).
		m.counted[b]++
		if m.run.counts[b].Add(1) > budgetLimits[b] {
			m.run.spent.Store(true)
			return &ErrTooMuch{URL: m.req.URL, What: budgetNames[b], Limit: budgetLimits[b]}
		}
	}
	return nil
}
