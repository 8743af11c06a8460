package keep

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
)

// A watch stream is cut event by event, as client-go frames it: JSON
// events one after another (k8s.io/apimachinery/pkg/runtime/serializer/
// json, Framer), protobuf events each after its 4-byte length
// (protobuf.LengthDelimitedFramer). Each event's object is cut like an
// answer; its work counts against the run's budget, so a flood of events
// ends in an error, not in memory.

// maxFrame bounds one event: an object is far smaller, and the stream's
// bytes are bounded as any answer's below.
const maxFrame = 16 << 20

type watchBody struct {
	rc   io.ReadCloser
	br   *bufio.Reader
	req  Request
	json bool
	out  []byte // the cut event not yet read
	err  error
}

func newWatchBody(rc io.ReadCloser, media string, req Request) io.ReadCloser {
	return &watchBody{rc: rc, br: bufio.NewReaderSize(rc, 32<<10), req: req, json: media != "application/vnd.kubernetes.protobuf"}
}

func (w *watchBody) Read(p []byte) (int, error) {
	for len(w.out) == 0 {
		if w.err != nil {
			return 0, w.err
		}
		w.out, w.err = w.next()
	}
	n := copy(p, w.out)
	w.out = w.out[n:]
	return n, nil
}

func (w *watchBody) Close() error { return w.rc.Close() }

// next is the next event, cut, or the stream's end.
func (w *watchBody) next() ([]byte, error) {
	if w.json {
		frame, err := w.jsonFrame()
		if err != nil {
			return nil, err
		}
		return cutJSONEvent(frame, w.req)
	}
	var l [4]byte
	if _, err := io.ReadFull(w.br, l[:]); err != nil {
		if err == io.ErrUnexpectedEOF {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, err
	}
	n := binary.BigEndian.Uint32(l[:])
	if n > maxFrame {
		return nil, &ErrTooMuch{URL: w.req.URL, What: "bytes in one watch event", Limit: maxFrame}
	}
	frame := make([]byte, n)
	if _, err := io.ReadFull(w.br, frame); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	ev, err := cutProtoEvent(frame, w.req)
	if err != nil {
		return nil, err
	}
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(ev))), ev...), nil
}

// jsonFrame reads one JSON value of the stream: it follows strings and
// nesting byte by byte, so a value's end is found in one pass.
func (w *watchBody) jsonFrame() ([]byte, error) {
	var frame []byte
	depth, inString, escape, started := 0, false, false, false
	for {
		b, err := w.br.ReadByte()
		if err != nil {
			if err == io.EOF && started {
				return nil, io.ErrUnexpectedEOF
			}
			return nil, err
		}
		if !started {
			switch b {
			case ' ', '\t', '\r', '\n':
				continue
			case '{':
				started = true
			default:
				return nil, &ErrMalformed{URL: w.req.URL, Encoding: "JSON", Why: "a watch event that is not an object"}
			}
		}
		if len(frame) >= maxFrame {
			return nil, &ErrTooMuch{URL: w.req.URL, What: "bytes in one watch event", Limit: maxFrame}
		}
		frame = append(frame, b)
		switch {
		case escape:
			escape = false
		case inString && b == '\\':
			escape = true
		case b == '"':
			inString = !inString
		case inString:
		case b == '{' || b == '[':
			depth++
		case b == '}' || b == ']':
			depth--
			if depth == 0 {
				return frame, nil
			}
		}
	}
}

// cutJSONEvent cuts {"type": ..., "object": {...}}: the type kept, the
// object cut by its own kind.
func cutJSONEvent(frame []byte, req Request) ([]byte, error) {
	m := newMeter(&req)
	c := &jsonCut{in: frame, m: m, sec: req.Secrets}
	out, err := c.event()
	if err != nil {
		m.release()
		return nil, err
	}
	return append(out, '\n'), nil
}

func (c *jsonCut) event() ([]byte, error) {
	c.ws()
	wrote := false
	err := c.members('{', func(int) error {
		name, err := c.key()
		if err != nil {
			return err
		}
		if name != "type" && name != "object" {
			return c.skip()
		}
		c.member(&wrote, name)
		if name == "type" {
			return c.scalar(nil)
		}
		return c.object()
	})
	return c.out, err
}

// cutProtoEvent cuts a metav1.WatchEvent: type (1) kept, object (2, a
// RawExtension whose raw, 1, is an enveloped object) cut.
func cutProtoEvent(frame []byte, req Request) ([]byte, error) {
	m := newMeter(&req)
	c := &protoCut{m: m, sec: req.Secrets}
	var out []byte
	err := c.fieldsOf(frame, func(num fieldNum, typ wireType, val []byte) error {
		switch {
		case num == 1 && typ == bytesType:
			out = appendTag(out, 1, bytesType)
			out = appendBytes(out, val)
		case num == 2 && typ == bytesType:
			var raw []byte
			if err := c.fieldsOf(val, func(n fieldNum, t wireType, v []byte) error {
				if n == 1 && t == bytesType {
					raw = v
				}
				return nil
			}); err != nil {
				return err
			}
			obj, err := c.envelope(raw, nil)
			if err != nil {
				return err
			}
			var ext []byte
			ext = appendTag(ext, 1, bytesType)
			ext = appendBytes(ext, obj)
			out = appendTag(out, 2, bytesType)
			out = appendBytes(out, ext)
		}
		return nil
	})
	if err != nil {
		m.release()
		return nil, fmt.Errorf("a watch event: %w", err)
	}
	return out, nil
}
