package keep

import (
	"encoding/binary"
	"errors"
)

// The protobuf wire format, as much of it as the cut reads and writes
// (https://protobuf.dev/programming-guides/encoding/). Not
// google.golang.org/protobuf's protowire: that module's internal/detrand
// hashes the executable when it initialises, a cost every run would pay
// before its first request (cmd/doctor's TestDoctorDoesNotLink).

// wireType is a field's wire type.
type wireType int8

const (
	varintType     wireType = 0
	fixed64Type    wireType = 1
	bytesType      wireType = 2
	startGroupType wireType = 3
	endGroupType   wireType = 4
	fixed32Type    wireType = 5
)

// fieldNum is a field's number.
type fieldNum int32

var errWire = errors.New("truncated or malformed field")

// maxGroupDepth bounds the nesting of (deprecated) groups a skipped field
// may hold.
const maxGroupDepth = 64

// consumeVarint reads a varint; n < 0 when b does not hold one.
func consumeVarint(b []byte) (v uint64, n int) {
	v, n = binary.Uvarint(b)
	if n <= 0 {
		return 0, -1
	}
	return v, n
}

// consumeTag reads a field's tag.
func consumeTag(b []byte) (fieldNum, wireType, int) {
	v, n := consumeVarint(b)
	if n < 0 || v>>3 == 0 || v>>3 > 1<<29-1 {
		return 0, 0, -1
	}
	return fieldNum(v >> 3), wireType(v & 7), n
}

// consumeFieldValue is the length of the value of a field of type typ at
// the start of b, -1 when b does not hold one.
func consumeFieldValue(num fieldNum, typ wireType, b []byte) int {
	return consumeValue(num, typ, b, maxGroupDepth)
}

func consumeValue(num fieldNum, typ wireType, b []byte, depth int) int {
	switch typ {
	case varintType:
		_, n := consumeVarint(b)
		return n
	case fixed32Type:
		if len(b) < 4 {
			return -1
		}
		return 4
	case fixed64Type:
		if len(b) < 8 {
			return -1
		}
		return 8
	case bytesType:
		l, n := consumeVarint(b)
		if n < 0 || l > uint64(len(b)-n) {
			return -1
		}
		return n + int(l)
	case startGroupType:
		if depth == 0 {
			return -1
		}
		total := 0
		for {
			gnum, gtyp, tl := consumeTag(b[total:])
			if tl < 0 {
				return -1
			}
			total += tl
			if gtyp == endGroupType {
				if gnum != num {
					return -1
				}
				return total
			}
			vl := consumeValue(gnum, gtyp, b[total:], depth-1)
			if vl < 0 {
				return -1
			}
			total += vl
		}
	}
	return -1
}

// consumeBytes is the content of a length-delimited value.
func consumeBytes(b []byte) []byte {
	l, n := consumeVarint(b)
	if n < 0 || l > uint64(len(b)-n) {
		return nil
	}
	return b[n : n+int(l)]
}

func appendVarint(b []byte, v uint64) []byte { return binary.AppendUvarint(b, v) }

func appendTag(b []byte, num fieldNum, typ wireType) []byte {
	return appendVarint(b, uint64(num)<<3|uint64(typ))
}

func appendBytes(b, v []byte) []byte { return append(appendVarint(b, uint64(len(v))), v...) }

func appendString(b []byte, v string) []byte { return append(appendVarint(b, uint64(len(v))), v...) }
