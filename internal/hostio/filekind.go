package hostio

import "errors"

// A FileKind is what a reader takes a file for. The tape notes it beside
// the content, so the bundle writer redacts each file by decoding it as
// the checks did (config.toml by its TOML keys, a kubeconfig by its YAML
// nodes, an environ by its variables) rather than by the shape of its
// lines. A file read without a kind is redacted by patterns alone.
type FileKind string

const (
	KindConfigTOML FileKind = "config.toml"
	KindKubeconfig FileKind = "kubeconfig"
	// KindEnviron is NAME=value pairs separated by NUL: /proc/<pid>/environ.
	KindEnviron FileKind = "environ"
	// KindPEM is certificates and keys in PEM (a CA, a client certificate,
	// its key, an SSH private key).
	KindPEM FileKind = "pem"
	// KindToken is a file that is one secret whole: a bearer token, a
	// service account's token.
	KindToken FileKind = "token"
	// KindSystemdUnit is a unit file or a drop-in; KindEnvironmentFile is
	// what its EnvironmentFile= names.
	KindSystemdUnit     FileKind = "systemd-unit"
	KindEnvironmentFile FileKind = "environment-file"
)

// ReadFileAs is ReadFile of a file the caller decodes as kind.
func (e *Env) ReadFileAs(p string, kind FileKind) ([]byte, error) {
	e.noteKind(p, kind)
	return e.ReadFile(p)
}

// ReadProcAs is ReadProc of a /proc entry the caller decodes as kind.
func (e *Env) ReadProcAs(p string, kind FileKind) ([]byte, error) {
	e.noteKind(p, kind)
	return e.ReadProc(p)
}

func (e *Env) noteKind(p string, kind FileKind) {
	if t := e.Tape; t != nil && !t.Replay {
		t.recordOp(p, func(r *FileRecord) { r.Kind = kind })
	}
}

// A DecodeFailure is why a file the checks read does not decode: the
// error as they report it (no value of the file quoted), the line it
// names (0 when none) and what evidence shows of that line.
type DecodeFailure struct {
	Err  error
	Line int
	Text string
}

// DecodeRecord is a DecodeFailure on the tape.
type DecodeRecord struct {
	Err  *ErrRecord `json:"err"`
	Line int        `json:"line,omitempty"`
	Text string     `json:"text,omitempty"`
}

// Decode runs decode, the caller's decoding of the file p it has read,
// through the tape. A file that does not decode cannot be redacted by
// decoding it, so a bundle keeps a description of it instead of its
// content: recording, Decode notes the failure for the bundle writer;
// replaying, it returns the failure the live run noted without calling
// decode (the content is not in the bundle to decode), and otherwise
// calls decode on the bundle's redacted content. Without a tape it is
// decode.
func Decode(env *Env, p string, decode func() *DecodeFailure) *DecodeFailure {
	t := env.Tape
	if t == nil {
		return decode()
	}
	if t.Replay {
		if r := t.lookup(p); r != nil && r.Undecodable != nil {
			return &DecodeFailure{Err: r.Undecodable.Err.Err(), Line: r.Undecodable.Line, Text: r.Undecodable.Text}
		}
		return decode()
	}
	f := decode()
	if f != nil {
		err := f.Err
		if err == nil {
			err = errors.New("does not decode")
		}
		t.recordOp(p, func(r *FileRecord) {
			r.Undecodable = &DecodeRecord{Err: RecordErr(err), Line: f.Line, Text: f.Text}
		})
	}
	return f
}

// Error is the failure as the checks report it.
func (f *DecodeFailure) Error() string {
	if f == nil || f.Err == nil {
		return "does not decode"
	}
	return f.Err.Error()
}
