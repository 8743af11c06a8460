package cli

import (
	"fmt"
	"io"
	"sync"

	"github.com/socialwebcomputer/doctor/internal/redact"
	"github.com/socialwebcomputer/doctor/internal/text/safetext"
)

// newLogger is -v/--v=N: it prints what the checks log at level N or
// below to w, one line each, every line through the redactor and then
// safetext.Line (a request's URL, a header, a server's answer are the
// outside's). It is nil (nothing logged) at level 0.
func newLogger(w io.Writer, level int) func(int, string, ...any) {
	if level <= 0 {
		return nil
	}
	var mu sync.Mutex
	return func(l int, format string, args ...any) {
		if l > level {
			return
		}
		msg := safetext.Line(redact.Text(fmt.Sprintf(format, args...)))
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(w, "doctor[v%d]: %s\n", l, msg)
	}
}
