package hostio

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"reflect"
	"sort"
	"sync"
	"syscall"
	"time"
)

// A Tape is what a run looked at, so that `doctor analyze` can run the same
// checks on it elsewhere: every file operation through the Env, every probe
// of the network (DNS exchanges, GitLab connections and answers, exec
// upgrades, API responses) and the clock. `doctor run --bundle` records one;
// analyze replays it, and then nothing reaches the host or the network:
// whatever the live run did not look at does not exist.
//
// The tape holds what the checks saw, secrets included; cmd/doctor/app/bundle
// redacts it at the point it is written, and replaying a redacted tape gives
// the same findings because the checks never print those values.
type Tape struct {
	Replay bool

	mu     sync.Mutex
	Files  map[string]*FileRecord   `json:"files"`  // by host path
	Probes map[string]*ProbeRecord  `json:"probes"` // by kind and key
	HTTP   map[string][]*HTTPRecord `json:"http"`   // by request key, in order
	next   map[string]int           // replay: the next answer of each HTTP key
}

// NewTape returns an empty tape to record on.
func NewTape() *Tape {
	return &Tape{Files: map[string]*FileRecord{}, Probes: map[string]*ProbeRecord{}, HTTP: map[string][]*HTTPRecord{}}
}

// FileRecord is everything the run learnt about one host path.
type FileRecord struct {
	Stat     *StatRecord `json:"stat,omitempty"`
	StatErr  *ErrRecord  `json:"statErr,omitempty"`
	Lstat    *StatRecord `json:"lstat,omitempty"`
	LstatErr *ErrRecord  `json:"lstatErr,omitempty"`
	Read     bool        `json:"read,omitempty"` // Content holds what was read
	Content  []byte      `json:"-"`              // written as a file of the bundle
	ReadErr  *ErrRecord  `json:"readErr,omitempty"`
	Entries  []DirEntry  `json:"entries,omitempty"`
	DirErr   *ErrRecord  `json:"dirErr,omitempty"`
	Listed   bool        `json:"listed,omitempty"`
	Link     string      `json:"link,omitempty"`
	LinkErr  *ErrRecord  `json:"linkErr,omitempty"`
	Linked   bool        `json:"linked,omitempty"`
	Redacted []string    `json:"redacted,omitempty"` // what the bundle writer removed, described
	// Kind is what the reader took the file for (ReadFileAs), so the
	// bundle writer redacts it by decoding it the same way.
	Kind FileKind `json:"kind,omitempty"`
	// Undecodable is why the file, read as its Kind, did not decode
	// (Decode): the bundle keeps a description in place of its content,
	// and replay answers the decode with this.
	Undecodable *DecodeRecord `json:"undecodable,omitempty"`
}

// StatRecord is a FileInfo as the checks use it: mode, size, owner, time.
type StatRecord struct {
	Name    string      `json:"name"`
	Mode    fs.FileMode `json:"mode"`
	Size    int64       `json:"size"`
	UID     uint32      `json:"uid"`
	GID     uint32      `json:"gid"`
	ModTime time.Time   `json:"modTime"`
}

// DirEntry is one entry of a listed directory.
type DirEntry struct {
	Name string      `json:"name"`
	Type fs.FileMode `json:"type"`
}

// ProbeRecord is one probe's result: its value as JSON, or its error.
type ProbeRecord struct {
	Value json.RawMessage `json:"value,omitempty"`
	Err   *ErrRecord      `json:"err,omitempty"`
}

// ErrRecord keeps of an error what the checks test: its text, its errno,
// the sentinel it wraps, whether it is a timeout.
type ErrRecord struct {
	Msg      string `json:"msg"`
	Errno    int    `json:"errno,omitempty"`
	Sentinel string `json:"sentinel,omitempty"`
	Timeout  bool   `json:"timeout,omitempty"`
}

var sentinels = map[string]error{"too-large": ErrTooLarge, "not-regular": ErrNotRegular, "offline": ErrOffline,
	"not-exist": fs.ErrNotExist, "permission": fs.ErrPermission}

// RecordErr describes err for the tape; nil stays nil.
func RecordErr(err error) *ErrRecord {
	if err == nil {
		return nil
	}
	r := &ErrRecord{Msg: err.Error(), Timeout: IsTimeout(err)}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		r.Errno = int(errno)
	}
	names := make([]string, 0, len(sentinels))
	for n := range sentinels {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if errors.Is(err, sentinels[n]) {
			r.Sentinel = n
			break
		}
	}
	return r
}

// Err is the replayed error: the same text, and the same answers to
// errors.Is, IsTimeout and net.Error.
func (r *ErrRecord) Err() error {
	if r == nil {
		return nil
	}
	return &replayedErr{r}
}

type replayedErr struct{ r *ErrRecord }

func (e *replayedErr) Error() string   { return e.r.Msg }
func (e *replayedErr) Timeout() bool   { return e.r.Timeout }
func (e *replayedErr) Temporary() bool { return false }
func (e *replayedErr) Is(target error) bool {
	if e.r.Errno != 0 && errors.Is(syscall.Errno(e.r.Errno), target) {
		return true
	}
	return e.r.Sentinel != "" && sentinels[e.r.Sentinel] == target
}

// errNotInBundle is what replay answers for a path the live run never
// looked at: to the checks, it does not exist.
var errNotInBundle = fmt.Errorf("not in the bundle: %w", fs.ErrNotExist)

func (t *Tape) file(p string) *FileRecord {
	r := t.Files[p]
	if r == nil {
		r = &FileRecord{}
		t.Files[p] = r
	}
	return r
}

// recordOp stores under the lock what one file operation saw.
func (t *Tape) recordOp(p string, f func(r *FileRecord)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	f(t.file(p))
}

func (t *Tape) lookup(p string) *FileRecord {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.Files[p]
}

func statRecord(st fs.FileInfo) *StatRecord {
	r := &StatRecord{Name: st.Name(), Mode: st.Mode(), Size: st.Size(), ModTime: st.ModTime().UTC()}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		r.UID, r.GID = sys.Uid, sys.Gid
	}
	return r
}

// replayInfo is a recorded FileInfo; Sys gives the owner as the kernel's
// Stat_t would, so ownership checks read it the same way.
type replayInfo struct{ r *StatRecord }

func (i replayInfo) Name() string       { return i.r.Name }
func (i replayInfo) Size() int64        { return i.r.Size }
func (i replayInfo) Mode() fs.FileMode  { return i.r.Mode }
func (i replayInfo) ModTime() time.Time { return i.r.ModTime }
func (i replayInfo) IsDir() bool        { return i.r.Mode.IsDir() }
func (i replayInfo) Sys() any           { return &syscall.Stat_t{Uid: i.r.UID, Gid: i.r.GID, Size: i.r.Size} }

type replayEntry struct{ e DirEntry }

func (d replayEntry) Name() string               { return d.e.Name }
func (d replayEntry) IsDir() bool                { return d.e.Type.IsDir() }
func (d replayEntry) Type() fs.FileMode          { return d.e.Type }
func (d replayEntry) Info() (fs.FileInfo, error) { return nil, errNotInBundle }

// Probe runs fn once, or on replay returns what it returned when recorded.
// kind and key name the probe ("dns", "udp 127.0.0.1:53 gitlab.invalid. A");
// the key must hold no secret, and T must survive encoding/json (a result
// that carries an error: ProbeErr). Without a tape it is fn.
func Probe[T any](env *Env, kind, key string, fn func() (T, error)) (T, error) {
	t := env.Tape
	if t == nil {
		return fn()
	}
	id := kind + " " + key
	if t.Replay {
		var zero T
		t.mu.Lock()
		r := t.Probes[id]
		t.mu.Unlock()
		if r == nil {
			return zero, fmt.Errorf("%s %s: not recorded in the bundle", kind, key)
		}
		var v T
		if len(r.Value) > 0 {
			if err := json.Unmarshal(r.Value, &v); err != nil {
				return zero, fmt.Errorf("%s %s: the bundle's record does not decode: %v", kind, key, err)
			}
		}
		return v, r.Err.Err()
	}
	v, err := fn()
	raw, merr := json.Marshal(v)
	if merr != nil {
		raw = nil
	}
	t.mu.Lock()
	t.Probes[id] = &ProbeRecord{Value: raw, Err: RecordErr(err)}
	t.mu.Unlock()
	return v, err
}

// Elapsed is a measured duration a check shows (how long a read took
// before it failed): on replay the one the live run measured, so the
// evidence reads the same. key names the measurement within the run.
func Elapsed(env *Env, key string, d time.Duration) time.Duration {
	v, _ := Probe(env, "elapsed", key, func() (time.Duration, error) { return d, nil })
	return v
}

// Snapshot copies the tape's records under its lock: the bundle writer
// reads the copy while requests the run gave up on may still end.
func (t *Tape) Snapshot() *Tape {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := NewTape()
	c.Replay = t.Replay
	for k, v := range t.Files {
		r := *v
		c.Files[k] = &r
	}
	for k, v := range t.Probes {
		r := *v
		c.Probes[k] = &r
	}
	for k, vs := range t.HTTP {
		for _, v := range vs {
			r := *v
			c.HTTP[k] = append(c.HTTP[k], &r)
		}
	}
	return c
}

// Recorded is a value the tape keeps with its error: T is a struct, or a
// pointer to one, with a field `Err error`, which encoding/json alone would
// drop (an error's own fields do not survive it, and some errors do not
// encode at all). Recorded encodes that field as the tape records errors
// (RecordErr) and replays it as ErrRecord.Err, which answers errors.Is,
// IsTimeout and net.Error as the live error did; the other fields encode
// as encoding/json encodes them. ProbeErr records a probe's result so; a
// result that holds such a value in a field (a GitLab connection's
// Failure) declares the field Recorded.
type Recorded[T any] struct{ Value T }

func (r Recorded[T]) MarshalJSON() ([]byte, error)  { return marshalErrField(r.Value) }
func (r *Recorded[T]) UnmarshalJSON(b []byte) error { return unmarshalErrField(b, &r.Value) }

// ProbeErr is Probe of a result that carries its own error in a field
// `Err error` (a DNS answer, an upgrade's answer), recorded as Recorded.
func ProbeErr[T any](env *Env, kind, key string, fn func() (T, error)) (T, error) {
	r, err := Probe(env, kind, key, func() (Recorded[T], error) {
		v, err := fn()
		return Recorded[T]{v}, err
	})
	return r.Value, err
}

// marshalErrField encodes v, a struct with an `Err error` field or a
// pointer to one (nil: null), with that field as the tape records errors:
// the others as encoding/json does, the keys in order.
func marshalErrField(v any) ([]byte, error) {
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return []byte("null"), nil
		}
		rv = rv.Elem()
	}
	cp := reflect.New(rv.Type()).Elem()
	cp.Set(rv)
	f := cp.FieldByName("Err")
	err, _ := f.Interface().(error)
	f.Set(reflect.Zero(f.Type()))
	b, jerr := json.Marshal(cp.Interface())
	if jerr != nil {
		return nil, jerr
	}
	var m map[string]json.RawMessage
	if jerr := json.Unmarshal(b, &m); jerr != nil {
		return nil, jerr
	}
	if m["Err"], jerr = json.Marshal(RecordErr(err)); jerr != nil {
		return nil, jerr
	}
	return json.Marshal(m)
}

// unmarshalErrField decodes what marshalErrField wrote into v, a pointer
// to the struct (or to a pointer to it, left nil for null), and sets its
// Err to the replayed error.
func unmarshalErrField(b []byte, v any) error {
	rv := reflect.ValueOf(v).Elem()
	if rv.Kind() == reflect.Pointer {
		if string(bytes.TrimSpace(b)) == "null" {
			rv.Set(reflect.Zero(rv.Type()))
			return nil
		}
		rv.Set(reflect.New(rv.Type().Elem()))
		rv = rv.Elem()
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	var rec *ErrRecord
	if raw, ok := m["Err"]; ok {
		if err := json.Unmarshal(raw, &rec); err != nil {
			return err
		}
		delete(m, "Err")
	}
	rest, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(rest, rv.Addr().Interface()); err != nil {
		return err
	}
	if e := rec.Err(); e != nil {
		rv.FieldByName("Err").Set(reflect.ValueOf(e))
	}
	return nil
}
