//go:build integration

package testenv

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"time"
)

// AuditEvent is the part of an audit.k8s.io/v1 Event the tests read. It is
// declared here rather than imported so the main module does not depend on
// k8s.io/apiserver.
type AuditEvent struct {
	Stage          string         `json:"stage"`
	Verb           string         `json:"verb"`
	RequestURI     string         `json:"requestURI"`
	User           AuditUser      `json:"user"`
	ObjectRef      AuditObjectRef `json:"objectRef"`
	ResponseStatus struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
	UserAgent string `json:"userAgent"`
}

// AuditUser is the authenticated user of a request (empty when
// authentication failed).
type AuditUser struct {
	Username string   `json:"username"`
	Groups   []string `json:"groups"`
}

// AuditObjectRef names the object a request was about.
type AuditObjectRef struct {
	Resource    string `json:"resource"`
	Subresource string `json:"subresource"`
	Namespace   string `json:"namespace"`
	Name        string `json:"name"`
	APIGroup    string `json:"apiGroup"`
}

// AuditEvents parses the audit log written so far: one event per completed
// request (the policy omits the RequestReceived stage), oldest first. A
// partially written last line is ignored.
func (e *Env) AuditEvents() ([]AuditEvent, error) {
	b, err := os.ReadFile(e.AuditLogPath)
	if err != nil {
		return nil, err
	}
	var events []AuditEvent
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	for sc.Scan() {
		line := sc.Bytes()
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var ev AuditEvent
		if err := json.Unmarshal(line, &ev); err != nil {
			if !bytes.HasSuffix(b, []byte("\n")) && len(line) > 0 && bytes.HasSuffix(b, line) {
				break // the apiserver is still writing this line
			}
			return nil, fmt.Errorf("audit log line %q: %w", line, err)
		}
		events = append(events, ev)
	}
	return events, sc.Err()
}

// WaitAuditEvent returns the first audit event that match accepts, polling
// for up to 10s: the log backend writes an event just after the response, so
// a test that reads right after a request may otherwise miss it.
func (e *Env) WaitAuditEvent(match func(AuditEvent) bool) AuditEvent {
	e.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		events, err := e.AuditEvents()
		e.check(err)
		for _, ev := range events {
			if match(ev) {
				return ev
			}
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("testenv: no matching audit event among %d in %s", len(events), e.AuditLogPath)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
