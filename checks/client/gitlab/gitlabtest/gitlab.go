package gitlabtest

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/socialwebcomputer/doctor/testkit/testpki"
)

// Host is the name every fake GitLab's certificate is for; NewDNS maps it
// to 127.0.0.1. .invalid can never resolve anywhere else.
const Host = "gitlab.example.invalid"

// Verify is one POST /api/v4/runners/verify as the server saw it.
type Verify struct {
	HeaderToken, BodyToken string
	SystemID               bool // a system_id was sent (doctor must not)
}

// GitLab is a loopback HTTPS server speaking the runner contract of
// gitlab-runner's network/gitlab.go: GET /api/v4/version is 401 without
// authentication; POST /api/v4/runners/verify answers Tokens[token], or 403.
type GitLab struct {
	*httptest.Server
	CA     *testpki.CA
	Port   string
	Tokens map[string]int

	mu       sync.Mutex
	verifies []Verify
	// The Jobs API (jobs.go).
	users     map[string]Access
	runnerIDs map[string]int64
	jobs      []Job
	jobReqs   []JobRequest
}

// Options shape the server certificate and the version handler.
type Options struct {
	Names     []string     // DNS names of the certificate; default Host
	NotBefore time.Time    // default an hour ago
	NotAfter  time.Time    // default in a year
	Version   http.Handler // replaces the /api/v4/version handler
	Verify    http.Handler // replaces the /api/v4/runners/verify handler
	Tokens    map[string]int
	// DateSkew sets every answer's Date header this far from the wall
	// clock, as a GitLab whose clock is wrong sends it.
	DateSkew time.Duration
	// Users are the access tokens the Jobs API knows (jobs.go).
	Users map[string]Access
	// RunnerIDs are the ids a 200 of runners/verify gives, by runner
	// token (1 for a token not listed).
	RunnerIDs map[string]int64
}

// NewGitLab starts the server on 127.0.0.1.
func NewGitLab(t testing.TB, o Options) *GitLab {
	now := time.Now()
	if o.NotBefore.IsZero() {
		o.NotBefore = now.Add(-time.Hour)
	}
	if o.NotAfter.IsZero() {
		o.NotAfter = now.Add(365 * 24 * time.Hour)
	}
	if len(o.Names) == 0 {
		o.Names = []string{Host}
	}
	ca := NewCA(t)
	certPEM, keyPEM, err := ca.Server(o.Names, []net.IP{net.IPv4(127, 0, 0, 1)}, o.NotBefore, o.NotAfter)
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	g := &GitLab{CA: ca, Tokens: o.Tokens, users: o.Users, runnerIDs: o.RunnerIDs}
	version := o.Version
	if version == nil {
		version = http.HandlerFunc(unauthorized)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /api/v4/version", version)
	verify := o.Verify
	if verify == nil {
		verify = http.HandlerFunc(g.verify)
	}
	mux.Handle("POST /api/v4/runners/verify", verify)
	mux.HandleFunc("GET /api/v4/projects/{id}/jobs/{job}", g.getJob)
	mux.HandleFunc("GET /api/v4/projects/{id}/jobs/{job}/trace", g.getTrace)
	var h http.Handler = mux
	if o.DateSkew != 0 {
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			// net/http keeps a Date the handler set.
			w.Header().Set("Date", time.Now().Add(o.DateSkew).UTC().Format(http.TimeFormat))
			mux.ServeHTTP(w, r)
		})
	}
	g.Server = httptest.NewUnstartedServer(h)
	g.Server.TLS = &tls.Config{Certificates: []tls.Certificate{pair}}
	// Refused handshakes are what the tests are about, not log noise.
	g.Server.Config.ErrorLog = log.New(io.Discard, "", 0)
	g.Server.StartTLS()
	t.Cleanup(g.Server.Close)
	_, g.Port, _ = net.SplitHostPort(g.Listener.Addr().String())
	return g
}

// unauthorized is GitLab's answer to /api/v4/version without a token.
func unauthorized(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusUnauthorized)
	fmt.Fprint(w, `{"message":"401 Unauthorized"}`)
}

// NewCA mints a CA for a fake GitLab's certificate.
func NewCA(t testing.TB) *testpki.CA {
	ca, err := testpki.NewCA("gitlab test CA", time.Now().Add(-48*time.Hour), time.Now().Add(10*365*24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

// URL is the server's url as config.toml names it.
func (g *GitLab) URL() string { return "https://" + Host + ":" + g.Port + "/" }

// Verifies returns the verify calls seen so far.
func (g *GitLab) Verifies() []Verify {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]Verify(nil), g.verifies...)
}

func (g *GitLab) verify(w http.ResponseWriter, r *http.Request) {
	var body map[string]any
	_ = json.NewDecoder(io.LimitReader(r.Body, 1<<16)).Decode(&body)
	tok, _ := body["token"].(string)
	_, sys := body["system_id"]
	g.mu.Lock()
	g.verifies = append(g.verifies, Verify{HeaderToken: r.Header.Get("RUNNER-TOKEN"), BodyToken: tok, SystemID: sys})
	g.mu.Unlock()
	status, ok := g.Tokens[tok]
	if !ok || r.Header.Get("RUNNER-TOKEN") != tok {
		status = http.StatusForbidden
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if status == http.StatusOK {
		// GitLab echoes the token: a client that printed the body would leak it.
		g.mu.Lock()
		id, ok := g.runnerIDs[tok]
		g.mu.Unlock()
		if !ok {
			id = 1
		}
		fmt.Fprintf(w, `{"id":%d,"token":%q,"token_expires_at":null}`, id, tok)
		return
	}
	fmt.Fprintf(w, `{"message":"%d %s"}`, status, strings.ToLower(http.StatusText(status)))
}
