package gitlab

import (
	"bytes"
	"net/url"
	"strings"
	"testing"
	"time"
)

// tail keeps a log's end from a line's start, whatever its length.
func TestTailKeepsTheEnd(t *testing.T) {
	line := []byte("section_start:1:step_script\rrunning 0123456789 abcdefghij\n")
	big := bytes.Repeat(line, (10<<20)/len(line))
	big = append(big, "ERROR: Job failed: exit code 1\n"...)
	tr, err := tail(bytes.NewReader(big), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if !tr.Cut || len(tr.Tail) > TraceTail || tr.Read != int64(len(big)) {
		t.Errorf("cut %v, kept %d, read %d of %d", tr.Cut, len(tr.Tail), tr.Read, len(big))
	}
	if !bytes.HasPrefix(tr.Tail, []byte("section_start")) || !bytes.HasSuffix(tr.Tail, []byte("ERROR: Job failed: exit code 1\n")) {
		t.Errorf("the tail starts %q and ends %q", tr.Tail[:20], tr.Tail[len(tr.Tail)-20:])
	}
	small, err := tail(strings.NewReader("a\nb\n"), time.Second)
	if err != nil || small.Cut || string(small.Tail) != "a\nb\n" {
		t.Errorf("a short log: %+v, %v", small, err)
	}
}

func TestProjectPath(t *testing.T) {
	for in, want := range map[string]string{"12": "12", "group/project": "group%2Fproject", "a/b/c.d": "a%2Fb%2Fc.d", "g/p q": "g%2Fp%20q"} {
		if got := ProjectPath(in); got != want {
			t.Errorf("ProjectPath(%q) = %q, want %q", in, got, want)
		}
	}
	j := &Jobs{Target: &Target{Base: mustURL(t, "https://gitlab.example.invalid/gitlab/")}}
	u := j.endpoint("group/sub/project", 42, "/trace")
	if got := u.String(); got != "https://gitlab.example.invalid/gitlab/api/v4/projects/group%2Fsub%2Fproject/jobs/42/trace" {
		t.Errorf("endpoint: %s", got)
	}
}

// GitLab's own words are kept: its message when it says the status, the
// status line else.
func TestAPIErrorWords(t *testing.T) {
	for body, want := range map[string]string{
		`{"message":"404 Project Not Found"}`: "404 Project Not Found",
		`{"message":"401 Unauthorized"}`:      "401 Unauthorized",
		`{"error":"insufficient_scope"}`:      "403 Forbidden (insufficient_scope)",
		`not json`:                            "403 Forbidden",
	} {
		status, line := 403, "403 Forbidden"
		if strings.HasPrefix(want, "404") {
			status, line = 404, "404 Not Found"
		}
		if strings.HasPrefix(want, "401") {
			status, line = 401, "401 Unauthorized"
		}
		if got := apiError(status, line, []byte(body)).Error(); got != want {
			t.Errorf("%s: %q, want %q", body, got, want)
		}
	}
}

func mustURL(t *testing.T, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
