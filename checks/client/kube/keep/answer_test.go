package keep

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/watch"
	restwatch "k8s.io/client-go/rest/watch"
)

// answer is a transport that answers every request with one response.
type answer struct {
	status int
	media  string
	header http.Header
	body   []byte
	err    error
}

func (a answer) RoundTrip(r *http.Request) (*http.Response, error) {
	if a.err != nil {
		return nil, a.err
	}
	h := a.header.Clone()
	if h == nil {
		h = http.Header{}
	}
	if a.media != "" {
		h.Set("Content-Type", a.media)
	}
	return &http.Response{StatusCode: a.status, Header: h, Body: io.NopCloser(bytes.NewReader(a.body)), Request: r}, nil
}

const reflectedToken = "reflected-bearer-0123456789abcdef"

func get(t *testing.T, rt http.RoundTripper, rawURL string) (*http.Response, []byte, error) {
	t.Helper()
	u, _ := url.Parse(rawURL)
	r := &http.Request{Method: "GET", URL: u, Header: http.Header{"Authorization": {"Bearer " + reflectedToken}}}
	resp, err := rt.RoundTrip(r)
	if err != nil {
		return nil, nil, err
	}
	b, err := io.ReadAll(resp.Body)
	return resp, b, err
}

// A server that reflects the request's Authorization in its body, its
// headers or its error text gives the checks (and the tape) the stand-in,
// byte for byte in every form it wrote it.
func TestReflectedCredentialIsReplaced(t *testing.T) {
	body := []byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","code":401,"reason":"Unauthorized",` +
		`"message":"seen: Bearer ` + reflectedToken + `; escaped: reflected\u002dbearer-0123456789abcdef"}`)
	rt := Transport(answer{status: 401, media: "application/json", body: body,
		header: http.Header{"Www-Authenticate": {"Bearer realm=" + reflectedToken}, "Warning": {`299 - "` + reflectedToken + `"`}}}, &Run{})
	resp, got, err := get(t, rt, "https://api.invalid/api/v1/namespaces/ci/pods")
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(got, []byte("0123456789abcdef")) || !bytes.Contains(got, []byte("REDACTED-")) {
		t.Errorf("body: %s", got)
	}
	for k, vs := range resp.Header {
		if strings.Contains(strings.Join(vs, ","), reflectedToken) {
			t.Errorf("header %s: %v", k, vs)
		}
	}
	// A transport error that quotes the server (net/http's "malformed
	// HTTP response") loses the credential, and keeps its kind.
	_, _, err = get(t, Transport(answer{err: &timeoutErr{"malformed HTTP response \"" + reflectedToken + "\""}}, &Run{}), "https://api.invalid/x")
	var te interface{ Timeout() bool }
	if err == nil || strings.Contains(err.Error(), reflectedToken) || !errors.As(err, &te) || !te.Timeout() {
		t.Errorf("error: %v", err)
	}
}

type timeoutErr struct{ s string }

func (e *timeoutErr) Error() string { return e.s }
func (e *timeoutErr) Timeout() bool { return true }

// Basic auth: the header's base64, the user:password and a password long
// enough to be told from words are replaced.
func TestRequestSecretsOfBasicAuth(t *testing.T) {
	cred := base64.StdEncoding.EncodeToString([]byte("admin:correct-horse-battery"))
	s := RequestSecrets(&http.Request{Header: http.Header{"Authorization": {"Basic " + cred}}})
	for _, in := range []string{cred, "admin:correct-horse-battery", "correct-horse-battery"} {
		if out := s.ReplaceString("x " + in + " y"); strings.Contains(out, "correct-horse") || strings.Contains(out, cred) {
			t.Errorf("%q: %q", in, out)
		}
	}
	if out := s.ReplaceString("cluster-admin"); out != "cluster-admin" {
		t.Errorf("a user name replaced in a word: %q", out)
	}
}

// An error answer keeps what client-go reads of it: a Status cut like any
// object, 2 KiB of text, nothing of another type; a 2xx body that is not
// an API object (a log) keeps nothing.
func TestErrorAndOtherBodies(t *testing.T) {
	for _, tc := range []struct {
		name   string
		a      answer
		url    string
		want   string
		errStr string
	}{
		{"log", answer{status: 200, media: "text/plain", body: []byte("SMTP_PASS=hunter2 from the job's log")}, "https://a/api/v1/namespaces/kube-system/pods/p/log?limitBytes=1", "", ""},
		{"text error", answer{status: 502, media: "text/plain; charset=utf-8", body: []byte(strings.Repeat("x", 3000))}, "https://a/api/v1/pods", strings.Repeat("x", 2048), ""},
		{"html error", answer{status: 502, media: "text/html", body: []byte("<html>proxy page</html>")}, "https://a/api/v1/pods", "<html>proxy page</html>", ""},
		{"binary error", answer{status: 502, media: "application/octet-stream", body: []byte("\x00\x01 whatever")}, "https://a/api/v1/pods", "", ""},
		{"broken Status", answer{status: 500, media: "application/json", body: []byte(`{"kind":"Status",`)}, "https://a/api/v1/pods", "", ""},
		{"Secret", answer{status: 200, media: "application/json", body: []byte(`{"kind":"Secret","apiVersion":"v1","data":{"k":"dmFsdWU="}}`)},
			"https://a/api/v1/namespaces/ci/secrets/s", "", "does not read"},
		{"proxy page for a list", answer{status: 200, media: "text/html", body: []byte("<html>login</html>")}, "https://a/api/v1/pods", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, got, err := get(t, Transport(tc.a, &Run{}), tc.url)
			if tc.errStr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errStr) {
					t.Fatalf("error %v, want one that says %q", err, tc.errStr)
				}
				return
			}
			if err != nil || string(got) != tc.want {
				t.Errorf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

// watchStream is the body an apiserver writes for a watch of these events,
// in media ("application/json" or protobuf).
func watchStream(t *testing.T, media string, objs ...runtime.Object) []byte {
	t.Helper()
	info, _ := runtime.SerializerInfoForMediaType(codecs.SupportedMediaTypes(), media)
	var buf bytes.Buffer
	enc := streaming.NewEncoder(info.StreamSerializer.Framer.NewFrameWriter(&buf), info.StreamSerializer.Serializer)
	for _, o := range objs {
		raw := encode(t, o, media)
		if err := enc.Encode(&metav1.WatchEvent{Type: string(watch.Added), Object: runtime.RawExtension{Raw: raw}}); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

// A watch stream is cut event by event, and client-go's watch decoder
// reads the cut stream: each event's object with its kind's fields only.
func TestWatchStreamsAreCutEventByEvent(t *testing.T) {
	pod := func(name string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: "9", Annotations: map[string]string{"a": "secret-annotation"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "build", Env: []corev1.EnvVar{{Name: "E", Value: "secret-env"}}}}}}
	}
	for _, media := range []string{mediaJSON, mediaProto} {
		stream := watchStream(t, media, pod("a"), pod("b"))
		rt := Transport(answer{status: 200, media: media, body: stream}, &Run{})
		u, _ := url.Parse("https://a/api/v1/namespaces/ci/pods?watch=true")
		resp, err := rt.RoundTrip(&http.Request{Method: "GET", URL: u, Header: http.Header{}})
		if err != nil {
			t.Fatal(err)
		}
		info, _ := runtime.SerializerInfoForMediaType(codecs.SupportedMediaTypes(), media)
		frames := info.StreamSerializer.Framer.NewFrameReader(resp.Body)
		dec := restwatch.NewDecoder(streaming.NewDecoder(frames, info.StreamSerializer.Serializer), codecs.UniversalDeserializer())
		for _, want := range []string{"a", "b"} {
			typ, obj, err := dec.Decode()
			if err != nil {
				t.Fatalf("%s: %v", media, err)
			}
			p := obj.(*corev1.Pod)
			if typ != watch.Added || p.Name != want || p.ResourceVersion != "9" || len(p.Annotations) != 0 || len(p.Spec.Containers[0].Env) != 0 {
				t.Errorf("%s: event %s %+v", media, typ, p)
			}
		}
		if _, _, err := dec.Decode(); err != io.EOF {
			t.Errorf("%s: after the last event: %v", media, err)
		}
	}
}

// A flood of watch events stops at the run's bound on decoded objects.
func TestWatchFloodIsBounded(t *testing.T) {
	for _, media := range []string{mediaJSON, mediaProto} {
		var objs []runtime.Object
		for range 200 {
			objs = append(objs, &corev1.Pod{})
		}
		run := &Run{}
		run.decoded.Store(MaxRunDecoded - 100*1240)
		rt := Transport(answer{status: 200, media: media, body: watchStream(t, media, objs...)}, run)
		u, _ := url.Parse("https://a/api/v1/pods?watch=1")
		resp, err := rt.RoundTrip(&http.Request{Method: "GET", URL: u, Header: http.Header{}})
		if err != nil {
			t.Fatal(err)
		}
		_, err = io.ReadAll(resp.Body)
		var tm *ErrTooMuch
		if !errors.As(err, &tm) || tm.What != "decoded" {
			t.Errorf("%s: %v", media, err)
		}
	}
}

// A protobuf watch frame longer than any event is refused before it is
// read.
func TestWatchFrameBounded(t *testing.T) {
	big := binary.BigEndian.AppendUint32(nil, maxFrame+1)
	rt := Transport(answer{status: 200, media: mediaProto, body: big}, &Run{})
	u, _ := url.Parse("https://a/api/v1/pods?watch=true")
	resp, _ := rt.RoundTrip(&http.Request{Method: "GET", URL: u, Header: http.Header{}})
	if _, err := io.ReadAll(resp.Body); err == nil || !strings.Contains(err.Error(), "one watch event") {
		t.Errorf("%v", err)
	}
}

// The cloud-init a pool carries keeps its users' names and public keys
// only: a password, a registration reflectedToken in runcmd, never.
func TestCloudConfigUsers(t *testing.T) {
	in := "#cloud-config\nusers:\n  - default\n  - name: gitlab-runner\n    passwd: $6$secret-hash\n    ssh_authorized_keys:\n      - ssh-ed25519 AAAAC3 key\nruncmd:\n  - gitlab-runner register --token glrt-secret-token\n"
	out := CloudConfigUsers(in)
	if strings.Contains(out, "secret") || !strings.Contains(out, "gitlab-runner") || !strings.Contains(out, "ssh-ed25519 AAAAC3 key") || !strings.HasPrefix(out, "#cloud-config") {
		t.Errorf("%q", out)
	}
	if got := CloudConfigUsers("runcmd: [x]"); strings.HasPrefix(got, "#cloud-config") {
		t.Errorf("not cloud-config became it: %q", got)
	}
	if got := CloudConfigUsers("#cloud-config\nusers: [\n"); !strings.HasPrefix(got, "#cloud-config") || strings.Contains(got, "[") {
		t.Errorf("not YAML: %q", got)
	}
}

// A kind doctor does not read is named in the error quoted and cut: a
// hostile server's kind carries no control character or credential out.
func TestNotReadKindIsShownSafely(t *testing.T) {
	body := []byte(`{"kind":"X\u001b[2J` + reflectedToken + `","apiVersion":"v1"}`)
	_, _, err := get(t, Transport(answer{status: 200, media: "application/json", body: body}, &Run{}), "https://a/api/v1/pods")
	if err == nil || strings.ContainsRune(err.Error(), 0x1b) || strings.Contains(err.Error(), reflectedToken) || !strings.Contains(err.Error(), "does not read") {
		t.Errorf("%v", err)
	}
}
