package keep

import (
	"bytes"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// Request is what a cut knows of the request an answer is for.
type Request struct {
	URL     string   // the request's URL without userinfo, for errors
	Limit   int64    // the list limit asked for; 0 for none
	Secrets *Secrets // the credential the request presented
	Run     *Run     // the run's budget; nil for the process's
}

// Transport cuts every answer rt gives to what doctor keeps of it, and
// bounds the work of it, before anything above reads a byte:
//
//   - an API object (protobuf or JSON, 2xx) to its kind's fields; a kind
//     doctor does not read, or a body that does not parse, is a read error;
//   - a watch stream event by event, the same way;
//   - an error answer to what client-go reads of it: a Status object cut
//     like any object, the first 2 KiB of text (client-go's
//     maxUnstructuredResponseTextBytes), nothing of any other type;
//   - any other 2xx body (a pod's log, a proxy's page) to nothing: no
//     check reads one;
//   - the request's own credential, wherever it is echoed in the headers,
//     the kept bytes or the error text, to its stand-in.
//
// Switching protocols (exec) passes untouched. run is the budget the
// answers count against (nil: the process's).
func Transport(rt http.RoundTripper, run *Run) http.RoundTripper {
	return &transport{rt: rt, run: run}
}

type transport struct {
	rt  http.RoundTripper
	run *Run
}

// maxErrorText is what client-go keeps of a text error answer
// (k8s.io/client-go/rest/request.go, maxUnstructuredResponseTextBytes,
// v0.37.2).
const maxErrorText = 2048

func (t *transport) RoundTrip(r *http.Request) (*http.Response, error) {
	sec := RequestSecrets(r)
	resp, err := t.rt.RoundTrip(r)
	if err != nil {
		return nil, sec.wrap(err)
	}
	sec.Header(resp.Header)
	if resp.StatusCode == http.StatusSwitchingProtocols || resp.Body == nil {
		return resp, nil
	}
	q := r.URL.Query()
	req := Request{URL: r.URL.Redacted(), Secrets: sec, Run: t.run}
	req.Limit, _ = strconv.ParseInt(q.Get("limit"), 10, 64)
	ok := resp.StatusCode >= 200 && resp.StatusCode <= 206
	media, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if ok && (q.Get("watch") == "true" || q.Get("watch") == "1") {
		resp.Body = newWatchBody(resp.Body, media, req)
	} else {
		resp.Body = &cutBody{rc: resp.Body, size: resp.ContentLength, cut: func(b []byte) ([]byte, error) { return cutAnswer(b, media, ok, req) }}
	}
	resp.ContentLength = -1
	resp.Header.Del("Content-Length")
	return resp, nil
}

// cutAnswer is what is kept of one whole answer body.
func cutAnswer(b []byte, media string, ok bool, req Request) ([]byte, error) {
	kind := encodingOf(media, b)
	switch {
	case ok && len(b) == 0:
		return nil, nil
	case ok && kind == "protobuf":
		return Protobuf(b, req)
	case ok && kind == "json":
		return JSON(b, req)
	case ok:
		return nil, nil // not an API object: nothing of it is read
	case kind == "protobuf":
		out, err := Protobuf(b, req)
		if err != nil {
			return nil, nil // client-go then says the status alone
		}
		return out, nil
	case kind == "json":
		out, err := JSON(b, req)
		if err != nil {
			return nil, nil
		}
		return out, nil
	case media == "" || strings.HasPrefix(media, "text/"):
		// client-go quotes this much of a text error (isTextResponse).
		b = req.Secrets.Replace(b)
		if len(b) > maxErrorText {
			b = b[:maxErrorText]
		}
		return b, nil
	}
	return nil, nil
}

// encodingOf is "protobuf", "json" or "" for the answer's media type; an
// answer without one is what its first bytes say, as client-go then
// decodes it with the client's own content type.
func encodingOf(media string, b []byte) string {
	switch {
	case media == "application/vnd.kubernetes.protobuf":
		return "protobuf"
	case media == "application/json" || strings.HasSuffix(media, "+json"):
		return "json"
	case media != "":
		return ""
	case bytes.HasPrefix(b, magic):
		return "protobuf"
	case bytes.HasPrefix(bytes.TrimLeft(b, " \t\r\n"), []byte("{")):
		return "json"
	}
	return ""
}

// maxPrealloc is the most a body's Content-Length makes the cut set aside
// before reading: the per-response byte bound (kubefacts.MaxResponseBytes).
const maxPrealloc = 16 << 20

// cutBody reads the whole answer on its first Read (the byte bounds below
// bound it), cuts it, and gives the cut bytes; a failed read or cut is its
// error, after no bytes.
type cutBody struct {
	rc   io.ReadCloser
	size int64 // the answer's Content-Length, -1 when unknown
	cut  func([]byte) ([]byte, error)
	once sync.Once
	r    *bytes.Reader
	err  error
}

func (b *cutBody) Read(p []byte) (int, error) {
	b.once.Do(func() {
		var buf bytes.Buffer
		if b.size > 0 && b.size <= maxPrealloc {
			buf.Grow(int(b.size) + bytes.MinRead) // one buffer, not a doubling series of them
		}
		if _, err := buf.ReadFrom(b.rc); err != nil {
			b.err = err
			return
		}
		out, err := b.cut(buf.Bytes())
		count(buf.Len(), len(out))
		b.r, b.err = bytes.NewReader(out), err
	})
	if b.err != nil {
		return 0, b.err
	}
	return b.r.Read(p)
}

func (b *cutBody) Close() error { return b.rc.Close() }

// Err is err with the credential replaced in its text: net/http quotes what
// a server sent that it could not parse. The error's kind stays (Unwrap,
// Timeout).
func (s *Secrets) Err(err error) error { return s.wrap(err) }

func (s *Secrets) wrap(err error) error {
	if err == nil || !s.In([]byte(err.Error())) {
		return err
	}
	return &replacedErr{msg: s.ReplaceString(err.Error()), err: err}
}

type replacedErr struct {
	msg string
	err error
}

func (e *replacedErr) Error() string { return e.msg }
func (e *replacedErr) Unwrap() error { return e.err }
func (e *replacedErr) Timeout() bool {
	var t interface{ Timeout() bool }
	return errors.As(e.err, &t) && t.Timeout()
}
