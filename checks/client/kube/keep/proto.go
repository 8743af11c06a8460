package keep

import (
	"bytes"
	"fmt"
)

// The protobuf cut walks the apiserver's encoding field by field: a kept
// field is copied (its strings with the credential replaced), a kept
// message is walked in turn, anything else is skipped by its length,
// unread. It is what a live run does to every answer before client-go
// decodes it.

// magic starts every protobuf answer of the apiserver
// (k8s.io/apimachinery/pkg/runtime/serializer/protobuf, protoEncodingPrefix).
var magic = []byte{0x6b, 0x38, 0x73, 0x00}

// Protobuf cuts one protobuf answer: the magic, then a runtime.Unknown
// whose typeMeta names the kind and whose raw holds the object.
func Protobuf(body []byte, req Request) ([]byte, error) {
	m := newMeter(&req)
	c := &protoCut{m: m, sec: req.Secrets}
	out, err := c.envelope(body, make([]byte, 0, len(body)/4+64))
	if err != nil {
		m.release()
		return nil, err
	}
	return out, nil
}

type protoCut struct {
	m   *meter
	sec *Secrets
}

func (c *protoCut) bad(why string, args ...any) error {
	return &ErrMalformed{URL: c.m.req.URL, Encoding: "protobuf", Why: fmt.Sprintf(why, args...)}
}

// envelope cuts magic+Unknown, appending the cut one to out.
func (c *protoCut) envelope(body, out []byte) ([]byte, error) {
	if !bytes.HasPrefix(body, magic) {
		return nil, c.bad("no protobuf magic")
	}
	var apiVersion, kind string
	var raw []byte
	err := c.fieldsOf(body[len(magic):], func(num fieldNum, typ wireType, val []byte) error {
		switch {
		case num == 1 && typ == bytesType: // typeMeta
			return c.fieldsOf(val, func(num fieldNum, typ wireType, v []byte) error {
				if typ == bytesType && num == 1 {
					apiVersion = string(v)
				}
				if typ == bytesType && num == 2 {
					kind = string(v)
				}
				return nil
			})
		case num == 2 && typ == bytesType:
			raw = val
		case num == 3 && typ == bytesType && len(val) > 0:
			return c.bad("content encoding %s", shown(string(c.sec.Replace(val))))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	n := kindNode(apiVersion, kind)
	if n == nil {
		return nil, &ErrNotRead{URL: c.m.req.URL, APIVersion: c.sec.ReplaceString(apiVersion), Kind: c.sec.ReplaceString(kind)}
	}
	if n.goType == nil {
		return nil, c.bad("%s %s is read as JSON only", shown(apiVersion), shown(kind))
	}
	if err := c.m.add(n.size()); err != nil {
		return nil, err
	}
	out = append(out, magic...)
	var tm []byte
	tm = appendTag(tm, 1, bytesType)
	tm = appendString(tm, apiVersion)
	tm = appendTag(tm, 2, bytesType)
	tm = appendString(tm, kind)
	out = appendTag(out, 1, bytesType)
	out = appendBytes(out, tm)
	out = appendTag(out, 2, bytesType)
	return c.nested(n, raw, out, 0)
}

// fieldsOf calls fn for each field of msg, in order.
func (c *protoCut) fieldsOf(msg []byte, fn func(fieldNum, wireType, []byte) error) error {
	for len(msg) > 0 {
		num, typ, tl := consumeTag(msg)
		if tl < 0 {
			return c.bad("%v", errWire)
		}
		vl := consumeFieldValue(num, typ, msg[tl:])
		if vl < 0 {
			return c.bad("%v", errWire)
		}
		val := msg[tl : tl+vl]
		if typ == bytesType {
			val = consumeBytes(val)
		}
		if err := fn(num, typ, val); err != nil {
			return err
		}
		msg = msg[tl+vl:]
	}
	return nil
}

// nested appends msg cut to n, preceded by its length, to out: the length
// is known only once it is cut, so room is made for the longest and the
// message moved back over what the length did not need.
func (c *protoCut) nested(n *node, msg, out []byte, depth int) ([]byte, error) {
	const room = 4 // lengths below 2^28: every answer is under 16 MiB
	at := len(out)
	out = append(out, make([]byte, room)...)
	out, err := c.message(n, msg, out, depth)
	if err != nil {
		return nil, err
	}
	size := len(out) - at - room
	if size >= 1<<28 {
		return nil, c.bad("a message past 256 MiB")
	}
	l := appendVarint(nil, uint64(size))
	copy(out[at:], l)
	copy(out[at+len(l):], out[at+room:])
	return out[:len(out)-(room-len(l))], nil
}

// message appends the kept fields of msg, a message of n, to out.
func (c *protoCut) message(n *node, msg, out []byte, depth int) ([]byte, error) {
	if depth > maxDepth {
		return nil, c.bad("nested deeper than %d", maxDepth)
	}
	var small [24]int
	counts := small[:]
	if len(n.byNum) > len(small) {
		counts = make([]int, len(n.byNum))
	}
	for len(msg) > 0 {
		num, typ, tl := consumeTag(msg)
		if tl < 0 {
			return nil, c.bad("%v", errWire)
		}
		vl := consumeFieldValue(num, typ, msg[tl:])
		if vl < 0 {
			return nil, c.bad("%v", errWire)
		}
		whole, val := msg[:tl+vl], msg[tl:tl+vl]
		msg = msg[tl+vl:]
		f := n.byNum[num]
		if f == nil {
			continue
		}
		packed := f.repeated && f.shape == scalar && f.wire != bytesType && typ == bytesType
		if typ != f.wire && !packed {
			return nil, c.bad("field %d of %s has wire type %d, not %d", num, n.name, typ, f.wire)
		}
		if f.repeated {
			counts[f.idx]++
			if err := c.m.elements(f, counts[f.idx]); err != nil {
				return nil, err
			}
		}
		if err := c.m.add(f.elemSize); err != nil {
			return nil, err
		}
		var err error
		switch {
		case packed:
			// Packed scalars (none of the kept fields today): kept as
			// they are, each of their bytes counted as an element.
			b := consumeBytes(val)
			if len(b) > MaxRepeated {
				return nil, c.m.elements(f, MaxRepeated+1)
			}
			err = c.m.add(int64(len(b)) * f.elemSize)
			out = append(out, whole...)
		case f.shape == scalar && typ == bytesType:
			b := consumeBytes(val)
			if err := c.m.str(len(b)); err != nil {
				return nil, err
			}
			if f.transform != nil {
				b = []byte(f.transform(string(b)))
			}
			b = c.sec.Replace(b)
			err = c.m.add(int64(len(b)))
			out = appendTag(out, num, typ)
			out = appendBytes(out, b)
		case f.shape == scalar:
			out = append(out, whole...)
		case f.shape == opaque:
			// A time or quantity, kept whole unless the credential is in
			// it: a quantity that holds a token is no quantity.
			if c.sec.In(val) {
				continue
			}
			err = c.m.add(int64(len(val)))
			out = append(out, whole...)
		case f.shape == message:
			b := consumeBytes(val)
			out = appendTag(out, num, typ)
			out, err = c.nested(f.child, b, out, depth+1)
		case f.shape == mapping:
			b := consumeBytes(val)
			out, err = c.entry(f, num, b, out)
		}
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// entry appends one map entry (key 1, value 2): the key, and the value
// unless only keys are kept.
func (c *protoCut) entry(f *field, num fieldNum, e, out []byte) ([]byte, error) {
	var key, val []byte
	var hasVal bool
	err := c.fieldsOf(e, func(n fieldNum, typ wireType, v []byte) error {
		switch {
		case typ != bytesType:
			return c.bad("a map entry of %s has wire type %d", f.json, typ)
		case n == 1:
			key = v
		case n == 2:
			val, hasVal = v, true
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := c.m.str(max(len(key), len(val))); err != nil {
		return nil, err
	}
	key = c.sec.Replace(key)
	var ent []byte
	ent = appendTag(ent, 1, bytesType)
	ent = appendBytes(ent, key)
	size := int64(len(key))
	if hasVal && !f.keysOnly && !(f.valOpaque && c.sec.In(val)) && (f.keepValue == nil || f.keepValue(string(key))) {
		if !f.valOpaque {
			val = c.sec.Replace(val)
		}
		size += int64(len(val))
		ent = appendTag(ent, 2, bytesType)
		ent = appendBytes(ent, val)
	}
	if err := c.m.add(size); err != nil {
		return nil, err
	}
	out = appendTag(out, num, bytesType)
	return appendBytes(out, ent), nil
}
