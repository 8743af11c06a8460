// Package sshkey tells what an SSH key file holds — private or public, its
// type, format and whether a passphrase protects it — without ever
// returning its secret bytes: findings describe a key (type, SHA256
// fingerprint of its public half), never print it.
//
// The formats are those golang.org/x/crypto/ssh's ParseRawPrivateKey reads
// (ssh/keys.go, v0.54.0, the version gitlab-runner v19.3.0's go.mod
// requires): PEM blocks "RSA PRIVATE KEY" (PKCS#1), "EC PRIVATE KEY"
// (SEC1), "DSA PRIVATE KEY", "PRIVATE KEY" (PKCS#8) and "OPENSSH PRIVATE
// KEY" (openssh-key-v1, what `ssh-keygen` writes); another PEM block type
// it refuses with `ssh: unsupported key type %q`, input with no PEM block
// with `ssh: no key found`, and a passphrase-protected key
// with `ssh: this private key is passphrase protected`.
package sshkey

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/binary"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"strings"
)

// Key describes a key file.
type Key struct {
	Private   bool
	Type      string // "Ed25519", "RSA", "ECDSA P-256", "DSA", "ECDSA security key", ...
	Format    string // "OpenSSH", "PEM PKCS#1", "PEM SEC1", "PEM PKCS#8", "authorized_keys"
	Bits      int    // RSA modulus size, when known
	Encrypted bool   // a passphrase protects it
	// Fingerprint is the SHA256 fingerprint of the public half, as
	// `ssh-keygen -l` prints it, when the file reveals the public half.
	Fingerprint string
	// Authorized is the public half as an authorized_keys line carries it
	// ("ssh-ed25519 AAAA…", no comment): public, for comparing with the
	// keys a VM accepts.
	Authorized string
}

// String is the key as evidence names it: "an Ed25519 private key in
// OpenSSH format, SHA256:…".
func (k Key) String() string {
	kind := "public key"
	if k.Private {
		kind = "private key"
	}
	t := k.Type
	if t == "" {
		t = "unknown-type" // a description block without its Type header
	}
	if k.Bits > 0 {
		t = fmt.Sprintf("%s %d-bit", t, k.Bits)
	}
	s := fmt.Sprintf("%s %s %s in %s format", article(t), t, kind, k.Format)
	if k.Encrypted {
		s += ", protected by a passphrase"
	}
	if k.Fingerprint != "" {
		s += ", " + k.Fingerprint
	}
	return s
}

func article(word string) string {
	if word != "" && strings.ContainsRune("AEIOUaeiou", rune(word[0])) {
		return "an"
	}
	return "a"
}

// ErrNotAKey is what a file that holds no SSH key at all gives.
var ErrNotAKey = errors.New("no SSH key (neither a PEM private key block nor an authorized_keys line)")

// Parse describes the key in b.
func Parse(b []byte) (Key, error) {
	if k, ok := parseAuthorized(b); ok {
		return k, nil
	}
	block, _ := pem.Decode(b)
	if block == nil {
		return Key{}, ErrNotAKey
	}
	encrypted := strings.Contains(block.Headers["Proc-Type"], "ENCRYPTED")
	switch block.Type {
	case DescriptionType:
		return parseDescription(block), nil
	case "OPENSSH PRIVATE KEY":
		return parseOpenSSH(block.Bytes)
	case "RSA PRIVATE KEY":
		k := Key{Private: true, Type: "RSA", Format: "PEM PKCS#1", Encrypted: encrypted}
		if !encrypted {
			rk, err := x509.ParsePKCS1PrivateKey(block.Bytes)
			if err != nil {
				return k, fmt.Errorf("RSA PRIVATE KEY block does not parse: %w", err)
			}
			k.fromPublic(&rk.PublicKey)
		}
		return k, nil
	case "EC PRIVATE KEY":
		k := Key{Private: true, Type: "ECDSA", Format: "PEM SEC1", Encrypted: encrypted}
		if !encrypted {
			ek, err := x509.ParseECPrivateKey(block.Bytes)
			if err != nil {
				return k, fmt.Errorf("EC PRIVATE KEY block does not parse: %w", err)
			}
			k.fromPublic(&ek.PublicKey)
		}
		return k, nil
	case "DSA PRIVATE KEY":
		return Key{Private: true, Type: "DSA", Format: "PEM", Encrypted: encrypted}, nil
	case "PRIVATE KEY":
		pk, err := x509.ParsePKCS8PrivateKey(block.Bytes)
		if err != nil {
			return Key{Private: true, Format: "PEM PKCS#8", Type: "unknown"}, fmt.Errorf("PRIVATE KEY block does not parse: %w", err)
		}
		k := Key{Private: true, Format: "PEM PKCS#8"}
		switch pk := pk.(type) {
		case *rsa.PrivateKey:
			k.fromPublic(&pk.PublicKey)
		case *ecdsa.PrivateKey:
			k.fromPublic(&pk.PublicKey)
		case ed25519.PrivateKey:
			k.fromPublic(pk.Public())
		default:
			k.Type = fmt.Sprintf("%T", pk)
		}
		return k, nil
	case "ENCRYPTED PRIVATE KEY":
		return Key{Private: true, Type: "unknown", Format: "encrypted PKCS#8", Encrypted: true}, nil
	}
	return Key{}, fmt.Errorf("a PEM %q block, not a private key", block.Type)
}

// fromPublic sets type, size and fingerprint from a crypto public key.
func (k *Key) fromPublic(pub any) {
	var blob []byte
	switch pub := pub.(type) {
	case *rsa.PublicKey:
		k.Type, k.Bits = "RSA", pub.N.BitLen()
		blob = Wire([]byte("ssh-rsa"), mpint(big.NewInt(int64(pub.E))), mpint(pub.N))
	case *ecdsa.PublicKey:
		name := pub.Curve.Params().Name // "P-256"
		k.Type = "ECDSA " + name
		nist := "nistp" + strings.TrimPrefix(name, "P-")
		pt, err := pub.Bytes()
		if err == nil {
			blob = Wire([]byte("ecdsa-sha2-"+nist), []byte(nist), pt)
		}
	case ed25519.PublicKey:
		k.Type = "Ed25519"
		blob = Wire([]byte("ssh-ed25519"), pub)
	}
	if blob != nil {
		k.setBlob(blob)
	}
}

func (k *Key) setBlob(blob []byte) {
	sum := sha256.Sum256(blob)
	k.Fingerprint = "SHA256:" + base64.RawStdEncoding.EncodeToString(sum[:])
	name, _, _ := readString(blob)
	k.Authorized = wireName(name) + " " + base64.StdEncoding.EncodeToString(blob)
}

// wireName is a key blob's type name as a line may carry it: a name of
// printable ASCII ("ssh-ed25519"), or "unknown" for anything else a
// hostile file put there (a newline would break the description's header).
func wireName(name []byte) string {
	if len(name) == 0 || len(name) > 64 {
		return "unknown"
	}
	for _, c := range name {
		if c < 0x21 || c > 0x7e {
			return "unknown"
		}
	}
	return string(name)
}

// typeNames maps the SSH wire names to what an operator calls them.
var typeNames = map[string]string{
	"ssh-ed25519":                        "Ed25519",
	"ssh-rsa":                            "RSA",
	"ssh-dss":                            "DSA",
	"ecdsa-sha2-nistp256":                "ECDSA P-256",
	"ecdsa-sha2-nistp384":                "ECDSA P-384",
	"ecdsa-sha2-nistp521":                "ECDSA P-521",
	"sk-ssh-ed25519@openssh.com":         "Ed25519 security key",
	"sk-ecdsa-sha2-nistp256@openssh.com": "ECDSA security key",
}

// parseOpenSSH reads openssh-key-v1's cleartext header (PROTOCOL.key in
// OpenSSH): magic, cipher name, KDF name, KDF options, key count, then
// the public keys, which are never encrypted, then the private section.
func parseOpenSSH(b []byte) (Key, error) {
	k := Key{Private: true, Format: "OpenSSH", Type: "unknown"}
	const magic = "openssh-key-v1\x00"
	if !bytes.HasPrefix(b, []byte(magic)) {
		return k, errors.New("OPENSSH PRIVATE KEY block without the openssh-key-v1 magic")
	}
	rest := b[len(magic):]
	var cipher []byte
	var err error
	for i, field := range []string{"cipher name", "KDF name", "KDF options"} {
		var v []byte
		if v, rest, err = readString(rest); err != nil {
			return k, fmt.Errorf("openssh-key-v1 %s: %w", field, err)
		}
		if i == 0 {
			cipher = v
		}
	}
	k.Encrypted = string(cipher) != "none"
	if len(rest) < 4 || binary.BigEndian.Uint32(rest) != 1 {
		return k, errors.New("openssh-key-v1 holds other than one key")
	}
	blob, _, err := readString(rest[4:])
	if err != nil {
		return k, fmt.Errorf("openssh-key-v1 public key: %w", err)
	}
	name, body, err := readString(blob)
	if err != nil {
		return k, fmt.Errorf("openssh-key-v1 public key type: %w", err)
	}
	k.Type = typeNames[string(name)]
	if k.Type == "" {
		k.Type = string(name)
	}
	if string(name) == "ssh-rsa" {
		if _, rest, err := readString(body); err == nil { // e
			if n, _, err := readString(rest); err == nil {
				k.Bits = new(big.Int).SetBytes(n).BitLen()
			}
		}
	}
	k.setBlob(blob)
	return k, nil
}

// parseAuthorized reads an authorized_keys line ("ssh-ed25519 AAAA… c"),
// which is a public key, whatever file name it has.
func parseAuthorized(b []byte) (Key, bool) {
	f := strings.Fields(string(bytes.TrimSpace(b)))
	if len(f) < 2 || typeNames[f[0]] == "" {
		return Key{}, false
	}
	blob, err := base64.StdEncoding.DecodeString(f[1])
	if err != nil {
		return Key{}, false
	}
	k := Key{Type: typeNames[f[0]], Format: "authorized_keys"}
	k.setBlob(blob)
	return k, true
}

func readString(b []byte) (v, rest []byte, err error) {
	if len(b) < 4 {
		return nil, nil, errors.New("truncated")
	}
	n := binary.BigEndian.Uint32(b)
	if uint64(n) > uint64(len(b)-4) {
		return nil, nil, errors.New("truncated")
	}
	return b[4 : 4+n], b[4+n:], nil
}

// Wire is SSH's encoding of strings, each length-prefixed (RFC 4251 §5).
func Wire(parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = binary.BigEndian.AppendUint32(out, uint32(len(p)))
		out = append(out, p...)
	}
	return out
}

// mpint is RFC 4251's two's-complement big-endian integer, without the
// length prefix wire adds: a leading zero byte when the top bit is set.
func mpint(n *big.Int) []byte {
	b := n.Bytes()
	if len(b) > 0 && b[0]&0x80 != 0 {
		b = append([]byte{0}, b...)
	}
	return b
}

// DescriptionType is the PEM type of a key's description: what a doctor
// bundle keeps in place of an SSH private key. It holds the Key, public
// parts only, so a check reading the bundle describes the key as it
// described the original, and compares its public half the same way.
const DescriptionType = "DOCTOR SSH KEY DESCRIPTION"

// Description is k as a PEM block of DescriptionType.
func Description(k Key) []byte {
	h := map[string]string{
		"Private": fmt.Sprint(k.Private), "Type": k.Type, "Format": k.Format, "Encrypted": fmt.Sprint(k.Encrypted),
		"Note": "a doctor bundle: the private key was not kept",
	}
	if k.Bits > 0 {
		h["Bits"] = fmt.Sprint(k.Bits)
	}
	if k.Fingerprint != "" {
		h["Fingerprint"] = k.Fingerprint
	}
	if k.Authorized != "" {
		h["Authorized"] = k.Authorized
	}
	return pem.EncodeToMemory(&pem.Block{Type: DescriptionType, Headers: h})
}

func parseDescription(block *pem.Block) Key {
	h := block.Headers
	k := Key{Private: h["Private"] == "true", Type: h["Type"], Format: h["Format"], Encrypted: h["Encrypted"] == "true",
		Fingerprint: h["Fingerprint"], Authorized: h["Authorized"]}
	fmt.Sscan(h["Bits"], &k.Bits)
	return k
}
