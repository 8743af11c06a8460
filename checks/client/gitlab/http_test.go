package gitlab

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/internal/redact"
)

// A GitLab (or whatever answers in its place) that echoes the runner token
// it was sent, in its headers and its body: the check, and the tape, get
// the status, the Date and Location headers and GitLab's version, with the
// token's stand-in wherever it was echoed; nothing else of the answer.
func TestRequestKeepsWhatChecksReadAndNoToken(t *testing.T) {
	const token = "glrt-EchoTk4Qm8Zp2Xw6Lc9Vb3Nh7"
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		r, err := http.ReadRequest(bufio.NewReader(c))
		if err != nil {
			return
		}
		tok := r.Header.Get("RUNNER-TOKEN")
		body := fmt.Sprintf(`{"version":"17.5.0","echo":%q,"secret_note":"other data"}`, tok)
		fmt.Fprintf(c, "HTTP/1.1 302 Found %s\r\nDate: %s\r\nLocation: https://gitlab.invalid/?t=%s\r\nX-Echo: %s\r\nSet-Cookie: s=%s\r\nContent-Length: %d\r\n\r\n%s",
			tok, time.Now().UTC().Format(http.TimeFormat), tok, tok, tok, len(body), body)
	}()
	nc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	env := &hostio.Env{Tape: hostio.NewTape()}
	conn := &Conn{Conn: nc, Addr: ln.Addr().String(), env: env, origin: "https://gitlab.invalid"}
	u, _ := url.Parse("https://gitlab.invalid/api/v4/version")
	body, _ := json.Marshal(map[string]string{"token": token})
	resp, err := conn.Request(t.Context(), http.MethodPost, u, http.Header{"Runner-Token": {token}}, body, true, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != 302 || resp.Header.Get("Date") == "" || !strings.Contains(resp.Header.Get("Location"), redact.StandIn(token)) {
		t.Errorf("what the check reads is gone: %d %v", resp.Status, resp.Header)
	}
	if len(resp.Header) != 2 || string(resp.Body) != `{"version":"17.5.0"}` {
		t.Errorf("more than the checks read is kept: %v %q", resp.Header, resp.Body)
	}
	recorded, _ := json.Marshal(env.Tape.Snapshot().Probes)
	for what, s := range map[string]string{"the answer": fmt.Sprint(resp), "the tape": string(recorded)} {
		if strings.Contains(s, token[5:]) || strings.Contains(s, "other data") {
			t.Errorf("%s holds the token or what no check reads: %s", what, s)
		}
	}
}
