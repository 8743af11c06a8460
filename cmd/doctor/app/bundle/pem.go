package bundle

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"

	"github.com/socialwebcomputer/doctor/internal/source/sshkey"
	"github.com/socialwebcomputer/doctor/internal/text/lazyre"
)

// standIns replaces private keys by fresh keys of the same type and size,
// and re-issues the certificates of those keys for the fresh ones with the
// same subject, issuer, serial and validity: what a check reads of them
// (type, subject, expiry, whether key and certificate match) stays, and
// nothing of the original key is kept. One per bundle, so a certificate in
// one file and its key in another still match.
type standIns struct {
	keys  map[string]crypto.Signer // by the original public key (PKIX DER)
	certs map[string]bool          // public keys (PKIX DER) some certificate certifies
	notes []string
}

func newStandIns() *standIns {
	return &standIns{keys: map[string]crypto.Signer{}, certs: map[string]bool{}}
}

// prepareCerts notes the public keys of every certificate in b: a private
// key of one of them is a TLS key and gets a fresh stand-in; any other is
// an SSH key and gets its description (sshkey.Description), which keeps
// its public half for the checks that compare it.
func (s *standIns) prepareCerts(b []byte) {
	for _, m := range pemBlock().FindAll(b, -1) {
		blk, _ := pem.Decode(m)
		if blk == nil || blk.Type != "CERTIFICATE" {
			continue
		}
		if c, err := x509.ParseCertificate(blk.Bytes); err == nil {
			if pub, err := x509.MarshalPKIXPublicKey(c.PublicKey); err == nil {
				s.certs[string(pub)] = true
			}
		}
	}
}

var pemBlock = lazyre.MustCompile(`(?s)-----BEGIN ([A-Z0-9 ]+)-----.*?-----END [A-Z0-9 ]+-----\n?`)

// prepareTLSKeys notes the private keys in b as TLS keys whether or not a
// certificate certifies them: a kubeconfig's client-key (data or file) is
// one, and a key that is another key's must stay a key that matches no
// certificate, so that analyze meets client-go's refusal ("tls: private
// key does not match public key") as the live run did.
func (s *standIns) prepareTLSKeys(b []byte) {
	for _, m := range pemBlock().FindAll(b, -1) {
		blk, _ := pem.Decode(m)
		if blk == nil || !strings.Contains(blk.Type, "PRIVATE KEY") {
			continue
		}
		if key, err := parseKey(blk); err == nil {
			if pub, err := x509.MarshalPKIXPublicKey(key.Public()); err == nil {
				s.certs[string(pub)] = true
			}
		}
	}
}

// prepare finds every private key in b, so certificates anywhere can be
// re-issued for its stand-in.
func (s *standIns) prepare(b []byte) {
	for _, m := range pemBlock().FindAll(b, -1) {
		blk, _ := pem.Decode(m)
		if blk == nil || !strings.Contains(blk.Type, "PRIVATE KEY") {
			continue
		}
		key, err := parseKey(blk)
		if err != nil {
			continue
		}
		pub, err := x509.MarshalPKIXPublicKey(key.Public())
		if err != nil || s.keys[string(pub)] != nil || !s.certs[string(pub)] {
			continue
		}
		if fresh, err := freshLike(key); err == nil {
			s.keys[string(pub)] = fresh
		}
	}
}

// replace rewrites every PEM block of b: private keys to their stand-ins
// (or, of a type doctor cannot make, to a description), certificates of a
// replaced key re-issued, other certificates (CAs, servers) kept, since
// they are public.
func (s *standIns) replace(b []byte) []byte {
	return pemBlock().ReplaceAllFunc(b, func(m []byte) []byte {
		blk, _ := pem.Decode(m)
		if blk == nil {
			return []byte("-----BEGIN REDACTED-----\n-----END REDACTED-----\n")
		}
		switch {
		case strings.Contains(blk.Type, "PRIVATE KEY"):
			key, err := parseKey(blk)
			if err == nil {
				pub, _ := x509.MarshalPKIXPublicKey(key.Public())
				if fresh := s.keys[string(pub)]; fresh != nil {
					if der, err := x509.MarshalPKCS8PrivateKey(fresh); err == nil {
						t := "PRIVATE KEY"
						if blk.Type == "EC PRIVATE KEY" || blk.Type == "RSA PRIVATE KEY" {
							der, t = legacyDER(fresh, blk.Type, der)
						}
						return pem.EncodeToMemory(&pem.Block{Type: t, Bytes: der})
					}
				}
			}
			if k, err := sshkey.Parse(m); err == nil {
				s.notes = append(s.notes, "an SSH private key ("+k.String()+"), kept as its description")
				return sshkey.Description(k)
			}
			s.notes = append(s.notes, blk.Type+" of "+fmt.Sprint(len(blk.Bytes))+" bytes, not kept")
			return pem.EncodeToMemory(&pem.Block{Type: blk.Type, Headers: map[string]string{
				"Doctor-Redacted": fmt.Sprintf("a %s of %d bytes; doctor cannot make a stand-in of it", blk.Type, len(blk.Bytes))}})
		case blk.Type == "CERTIFICATE":
			c, err := x509.ParseCertificate(blk.Bytes)
			if err != nil {
				return m
			}
			pub, _ := x509.MarshalPKIXPublicKey(c.PublicKey)
			fresh := s.keys[string(pub)]
			if fresh == nil {
				return m
			}
			der, err := reissue(c, fresh)
			if err != nil {
				return []byte("-----BEGIN REDACTED-----\n-----END REDACTED-----\n")
			}
			return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
		}
		return m
	})
}

// replaceBase64 is replace for a kubeconfig's *-data value: base64 of PEM.
func (s *standIns) replaceBase64(v string) string {
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(v))
	if err != nil {
		// Not kept, but failing where it failed (a cut file): "A"s, which
		// decode to zero bytes, up to the byte the decode stopped at, then
		// one that is no base64, so analyze reports the same error.
		var at base64.CorruptInputError
		if errors.As(err, &at) {
			return strings.Repeat("A", int(at)) + "!"
		}
		return "!"
	}
	return base64.StdEncoding.EncodeToString(s.replace(raw))
}

func parseKey(blk *pem.Block) (crypto.Signer, error) {
	var k any
	var err error
	switch blk.Type {
	case "RSA PRIVATE KEY":
		k, err = x509.ParsePKCS1PrivateKey(blk.Bytes)
	case "EC PRIVATE KEY":
		k, err = x509.ParseECPrivateKey(blk.Bytes)
	default:
		k, err = x509.ParsePKCS8PrivateKey(blk.Bytes)
	}
	if err != nil {
		return nil, err
	}
	sg, ok := k.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("not a signing key")
	}
	return sg, nil
}

func freshLike(k crypto.Signer) (crypto.Signer, error) {
	switch k := k.(type) {
	case *rsa.PrivateKey:
		return rsa.GenerateKey(rand.Reader, k.N.BitLen())
	case *ecdsa.PrivateKey:
		return ecdsa.GenerateKey(k.Curve, rand.Reader)
	case ed25519.PrivateKey:
		_, fresh, err := ed25519.GenerateKey(rand.Reader)
		return fresh, err
	}
	return nil, fmt.Errorf("unknown key type %T", k)
}

// legacyDER keeps the PEM type the original had (PKCS#1, SEC 1).
func legacyDER(k crypto.Signer, typ string, pkcs8 []byte) ([]byte, string) {
	switch k := k.(type) {
	case *rsa.PrivateKey:
		if typ == "RSA PRIVATE KEY" {
			return x509.MarshalPKCS1PrivateKey(k), typ
		}
	case *ecdsa.PrivateKey:
		if typ == "EC PRIVATE KEY" {
			if der, err := x509.MarshalECPrivateKey(k); err == nil {
				return der, typ
			}
		}
	}
	return pkcs8, "PRIVATE KEY"
}

// reissue makes c again for the stand-in key, self-signed under c's issuer
// name: subject, groups, serial, validity and usages are what checks read.
func reissue(c *x509.Certificate, key crypto.Signer) ([]byte, error) {
	tmpl := &x509.Certificate{
		SerialNumber: c.SerialNumber, Subject: c.Subject, NotBefore: c.NotBefore, NotAfter: c.NotAfter,
		KeyUsage: c.KeyUsage, ExtKeyUsage: c.ExtKeyUsage, BasicConstraintsValid: c.BasicConstraintsValid, IsCA: c.IsCA,
		DNSNames: c.DNSNames, IPAddresses: c.IPAddresses, URIs: c.URIs, EmailAddresses: c.EmailAddresses,
	}
	parent := &x509.Certificate{Subject: c.Issuer, SerialNumber: c.SerialNumber}
	return x509.CreateCertificate(rand.Reader, tmpl, parent, key.Public(), key)
}

// describeBase64 says what a kubeconfig's *-data value held and what the
// bundle keeps of it, never the value: the type, subject, issuer and
// validity of a certificate, the type of a key.
func (s *standIns) describeBase64(v string) string {
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(v))
	if err != nil {
		return "not base64, not kept"
	}
	var parts []string
	for _, m := range pemBlock().FindAll(raw, -1) {
		blk, _ := pem.Decode(m)
		if blk == nil {
			continue
		}
		switch {
		case blk.Type == "CERTIFICATE":
			c, err := x509.ParseCertificate(blk.Bytes)
			if err != nil {
				parts = append(parts, "a certificate that does not parse")
				continue
			}
			pub, _ := x509.MarshalPKIXPublicKey(c.PublicKey)
			how := "kept: it is public"
			if s.keys[string(pub)] != nil {
				how = "re-issued for a stand-in key"
			}
			parts = append(parts, fmt.Sprintf("x509 certificate %s, issuer %s, valid %s to %s, %s", c.Subject, c.Issuer,
				c.NotBefore.UTC().Format("2006-01-02T15:04Z"), c.NotAfter.UTC().Format("2006-01-02T15:04Z"), how))
		case strings.Contains(blk.Type, "PRIVATE KEY"):
			kind := blk.Type
			if k, err := parseKey(blk); err == nil {
				kind = fmt.Sprintf("%T", k.Public())
				switch pk := k.Public().(type) {
				case *rsa.PublicKey:
					kind = fmt.Sprintf("RSA %d-bit", pk.N.BitLen())
				case *ecdsa.PublicKey:
					kind = "ECDSA " + pk.Curve.Params().Name
				case ed25519.PublicKey:
					kind = "Ed25519"
				}
			}
			parts = append(parts, kind+" private key, not kept: a fresh key of the same type stands in")
		}
	}
	if len(parts) == 0 {
		return "no PEM block"
	}
	return strings.Join(parts, "; ")
}
