package sshkey

import (
	"bytes"
	"encoding/pem"
	"strings"
	"testing"
)

// FuzzParse describes arbitrary key files: PEM blocks of every type Parse
// knows, openssh-key-v1 bodies, authorized_keys lines, and the description
// block a bundle keeps in a key's place (which a hostile bundle controls).
// No panic, in Parse or in String; a key's description parses back to the
// same key; nothing of the file's private body is in the description.
func FuzzParse(f *testing.F) {
	f.Add([]byte("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl fuzz@host\n"))
	f.Add(Description(Key{Private: true, Type: "Ed25519", Format: "OpenSSH", Fingerprint: "SHA256:x"}))
	f.Add(pem.EncodeToMemory(&pem.Block{Type: DescriptionType, Headers: map[string]string{"Bits": "x"}}))
	for _, typ := range []string{"OPENSSH PRIVATE KEY", "RSA PRIVATE KEY", "EC PRIVATE KEY", "DSA PRIVATE KEY", "PRIVATE KEY", "ENCRYPTED PRIVATE KEY"} {
		f.Add(pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: []byte("openssh-key-v1\x00\x00\x00\x00\x04none\x00\x00\x00\x04none")}))
	}
	f.Add(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Headers: map[string]string{"Proc-Type": "4,ENCRYPTED", "DEK-Info": "AES-128-CBC,00"}, Bytes: []byte{1}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		k, err := Parse(b)
		if err != nil {
			if len(err.Error()) > 512 {
				t.Fatalf("error of %d bytes", len(err.Error()))
			}
		}
		s := k.String()
		if err == nil && len(s) > 2*len(b)+256 {
			t.Fatalf("description of %d bytes for %d bytes", len(s), len(b))
		}
		if err != nil {
			return
		}
		d := Description(k)
		back, err := Parse(d)
		if err != nil {
			t.Fatalf("the description of %+v does not parse: %v", k, err)
		}
		// Description headers are one line each: a value with a newline
		// cannot come back the same.
		if back != k && !strings.ContainsAny(k.Type+k.Format+k.Fingerprint+k.Authorized, "\r\n:") {
			t.Fatalf("description round trip: %+v became %+v", k, back)
		}
		if blk, _ := pem.Decode(b); blk != nil && blk.Type != DescriptionType && len(blk.Bytes) >= 16 && bytes.Contains(d, blk.Bytes) {
			t.Fatal("the description keeps the key's body")
		}
	})
}
