package keep

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"
)

// fuzzSecrets are what a request with fuzzSecret as its bearer token
// presents.
func fuzzSecrets() *Secrets {
	return RequestSecrets(&http.Request{Header: http.Header{"Authorization": {"Bearer " + fuzzSecret}}})
}

// fuzzSecret is the credential the fuzzed requests present; an input may
// hold it anywhere, escaped or not.
const fuzzSecret = "fuzz-bearer-token-0123456789"

// Whatever the bytes, the JSON cut ends with an error or with valid JSON
// that holds no credential, keeps its own cut unchanged (analyze replays
// exactly what was recorded) and stays within the bounds.
func FuzzJSON(f *testing.F) {
	for _, s := range []string{
		`{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p","annotations":{"a":"b"}},"spec":{"containers":[{"name":"c","env":[{"name":"X","value":"y"}]}]}}`,
		`{"apiVersion":"v1","kind":"PodList","metadata":{"continue":"c"},"items":[{},{"metadata":{"name":"fuzz-bearer-token-0123456789"}}]}`,
		`{"metadata":{"labels":{"fuzz-bearer-token-0123456789":"v"}},"kind":"Node","apiVersion":"v1"}`,
		`{"kind":"Status","apiVersion":"v1","message":"Bearer fuzz\u002dbearer-token-0123456789","code":401}`,
		`{"kind":"VirtualMachinePool","apiVersion":"virtualization.deckhouse.io/v1alpha2","spec":{"virtualMachineTemplate":{"spec":{"provisioning":{"type":"UserData","userData":"#cloud-config\nusers:\n- name: u\n  passwd: x\n"}}},"virtualDiskTemplates":[1,{"name":"d"}]}}`,
		`{"kind":"Secret","apiVersion":"v1","data":{"a":"b"}}`,
		`{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a\u0000b\"c"}}`,
		`[`, `{"kind":`, `{"kind":"Pod","apiVersion":"v1",}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		req := Request{URL: "fuzz", Limit: 5, Secrets: fuzzSecrets(), Run: &Run{}}
		out, err := JSON(in, req)
		if err != nil {
			if req.Run.Decoded() != 0 {
				t.Fatalf("a failed cut left %d bytes counted", req.Run.Decoded())
			}
			return
		}
		if !json.Valid(out) {
			t.Fatalf("the cut is not JSON: %q", out)
		}
		if bytes.Contains(out, []byte(fuzzSecret)) {
			t.Fatalf("the credential is in the cut: %q", out)
		}
		again, err := JSON(out, Request{URL: "fuzz", Limit: 5, Secrets: req.Secrets, Run: &Run{}})
		if err != nil || !bytes.Equal(out, again) {
			t.Fatalf("the cut cut again: %v\n%q\n%q", err, out, again)
		}
	})
}

// Whatever the bytes, the protobuf cut ends with an error or with a cut
// that cuts to itself and holds no credential.
func FuzzProtobuf(f *testing.F) {
	for _, obj := range typedKinds() {
		filler(1).Fill(obj)
		// Seeds of a few KiB: larger ones (a list of random pods is 40 KiB)
		// stall Go's fuzzing engine at its first mutations.
		if b := encode(f, obj, mediaProto); len(b) <= 4<<10 {
			f.Add(b)
		}
	}
	f.Add(append(append([]byte{}, magic...), 0x0a, 0x04, 0x0a, 0x02, 'v', '1'))
	f.Fuzz(func(t *testing.T, in []byte) {
		sec := fuzzSecrets()
		out, err := Protobuf(in, Request{URL: "fuzz", Limit: 5, Secrets: sec, Run: &Run{}})
		if err != nil {
			return
		}
		if bytes.Contains(out, []byte(fuzzSecret)) {
			t.Fatalf("the credential is in the cut: %q", out)
		}
		again, err := Protobuf(out, Request{URL: "fuzz", Limit: 5, Secrets: sec, Run: &Run{}})
		if err != nil || !bytes.Equal(out, again) {
			t.Fatalf("the cut cut again: %v\n%q\n%q", err, out, again)
		}
	})
}
