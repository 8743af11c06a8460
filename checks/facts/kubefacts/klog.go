package kubefacts

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
)

// client-go and apimachinery log through klog, with URLs and server text
// in their lines: a body it could not read ("Unexpected error when reading
// response body", rest/request.go, each time a bound of bounded.go cut a
// body), a retry, an apiserver's Warning header. Left to itself klog
// writes every line of ERROR severity to stderr even with its output set
// elsewhere (its -stderrthreshold), and a contextual logger (klog.FromContext,
// which client-go's rest package uses) takes that path. doctor reports what
// it learnt as findings, and its stderr is pasted into tickets, so klog gets
// a logger of doctor's: every line of it goes to the -v logger the CLI
// names (LogClientGoTo), redacted there, or nowhere.

// clientGoLevel is the -v level klog's lines are logged at: with the dials,
// below every API request (6), since they are rarer and say what went wrong.
const clientGoLevel = 2

var clientGoLog atomic.Pointer[func(level int, format string, args ...any)]

// LogClientGoTo sends what client-go logs through klog to log, doctor's -v
// logger, at level 2; nil (the default) sends it nowhere.
func LogClientGoTo(log func(level int, format string, args ...any)) {
	if log == nil {
		clientGoLog.Store(nil)
		return
	}
	clientGoLog.Store(&log)
}

func init() {
	// Every klog call, legacy (klog.ErrorS) or contextual (klog.FromContext,
	// klog.Background), reaches klogSink; the verbosity of klog's own V(n)
	// stays at its default 0, so client-go's V(2) and above are dropped
	// before they are formatted.
	klog.SetLoggerWithOptions(logr.New(klogSink{}))
	// A second net, should anything clear the logger: klog's files are
	// discarded (and never created under /tmp).
	klog.LogToStderr(false)
	klog.SetOutput(io.Discard)
}

// klogSink is the logr sink klog writes to.
type klogSink struct {
	name   string
	values []any
}

func (klogSink) Init(logr.RuntimeInfo) {}

func (klogSink) Enabled(int) bool { return clientGoLog.Load() != nil }

func (s klogSink) Info(_ int, msg string, kv ...any) { s.write(msg, nil, kv) }

func (s klogSink) Error(err error, msg string, kv ...any) { s.write(msg, err, kv) }

func (s klogSink) WithValues(kv ...any) logr.LogSink {
	s.values = append(slices.Clip(s.values), kv...)
	return s
}

func (s klogSink) WithName(name string) logr.LogSink {
	if s.name != "" {
		name = s.name + "/" + name
	}
	s.name = name
	return s
}

func (s klogSink) write(msg string, err error, kv []any) {
	log := clientGoLog.Load()
	if log == nil {
		return
	}
	var b strings.Builder
	b.WriteString("client-go")
	if s.name != "" {
		b.WriteString(" " + s.name)
	}
	b.WriteString(": " + strings.TrimSuffix(msg, "\n"))
	if err != nil {
		b.WriteString(": " + err.Error())
	}
	all := append(slices.Clip(s.values), kv...)
	for i := 0; i+1 < len(all); i += 2 {
		fmt.Fprintf(&b, " %v=%v", all[i], all[i+1])
	}
	(*log)(clientGoLevel, "%s", b.String())
}
