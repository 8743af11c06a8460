package testpki

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/binary"
	"fmt"

	"github.com/socialwebcomputer/doctor/internal/source/sshkey"
)

// SSHKeyFromSeed is the ed25519 key of SSHKey made from a seed: the same
// seed gives the same key and fingerprint, so a golden output that names
// the fingerprint stays put.
func SSHKeyFromSeed(seed []byte, comment string) (private []byte, authorized string) {
	priv := ed25519.NewKeyFromSeed(seed)
	pub := priv.Public().(ed25519.PublicKey)
	blob := sshkey.Wire([]byte("ssh-ed25519"), pub)
	return openSSHEd25519(blob, pub, priv, comment, seed[:4]), authorizedLine(blob, comment)
}

// SSHKey mints an SSH key pair of kind "ed25519" (openssh-key-v1, what
// `ssh-keygen -t ed25519` writes), "ecdsa" (PEM SEC1) or "rsa" (PEM
// PKCS#1, 2048 bits), and returns the private key file and its public half
// as an authorized_keys line ("<type> <base64> <comment>").
func SSHKey(kind, comment string) (private []byte, authorized string, err error) {
	switch kind {
	case "ed25519":
		pub, priv, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			return nil, "", err
		}
		blob := sshkey.Wire([]byte("ssh-ed25519"), pub)
		check := make([]byte, 4)
		if _, err := rand.Read(check); err != nil {
			return nil, "", err
		}
		return openSSHEd25519(blob, pub, priv, comment, check), authorizedLine(blob, comment), nil
	case "ecdsa":
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return nil, "", err
		}
		der, err := x509.MarshalECPrivateKey(k)
		if err != nil {
			return nil, "", err
		}
		pt, err := k.PublicKey.Bytes()
		if err != nil {
			return nil, "", err
		}
		blob := sshkey.Wire([]byte("ecdsa-sha2-nistp256"), []byte("nistp256"), pt)
		return PEM("EC PRIVATE KEY", der), authorizedLine(blob, comment), nil
	case "rsa":
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			return nil, "", err
		}
		e := []byte{1, 0, 1} // 65537
		n := k.N.Bytes()
		if n[0]&0x80 != 0 {
			n = append([]byte{0}, n...)
		}
		blob := sshkey.Wire([]byte("ssh-rsa"), e, n)
		return PEM("RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(k)), authorizedLine(blob, comment), nil
	}
	return nil, "", fmt.Errorf("testpki.SSHKey: unknown kind %q", kind)
}

func authorizedLine(blob []byte, comment string) string {
	name := blob[4 : 4+binary.BigEndian.Uint32(blob)]
	return fmt.Sprintf("%s %s %s", name, base64.StdEncoding.EncodeToString(blob), comment)
}

// openSSHEd25519 writes PROTOCOL.key's unencrypted format: the magic,
// cipher and KDF "none", one public key, and the private section (two
// equal check words, the key, its comment, padding 1, 2, 3… to the
// cipher's block size of 8).
func openSSHEd25519(blob []byte, pub ed25519.PublicKey, priv ed25519.PrivateKey, comment string, check []byte) []byte {
	section := append(append([]byte{}, check...), check...)
	section = append(section, sshkey.Wire([]byte("ssh-ed25519"), pub, priv, []byte(comment))...)
	for i := byte(1); len(section)%8 != 0; i++ {
		section = append(section, i)
	}
	body := append([]byte("openssh-key-v1\x00"), sshkey.Wire([]byte("none"), []byte("none"), nil)...)
	body = binary.BigEndian.AppendUint32(body, 1)
	body = append(body, sshkey.Wire(blob, section)...)
	return PEM("OPENSSH PRIVATE KEY", body)
}
